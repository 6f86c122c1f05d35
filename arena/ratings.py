"""TrueSkill ratings from journal records (DESIGN "Ratings").

* Sides are rated entities: a free-for-all seat's bot; a ``partners: self`` side's one
  bot; a ``partners: mixed`` side's two bots as a TrueSkill team.
* Ties are equal ranks. ``draw_probability: auto`` = the share of tied adjacent-rank
  side pairs over all rated results, clipped to [0.01, 0.9] (a zero draw margin makes
  ``trueskill`` raise on ties).
* On ``FloatingPointError`` (an extreme upset) the update is retried with the mpmath
  backend; the match stays recorded either way.
* The final table is an **ordered replay**: records sorted by (deal_index, rotation,
  lineup key), so it depends neither on worker count nor on finishing order.
* ``fixed`` bots (anchors) keep their prior; ``tau`` is TrueSkill's dynamics factor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import trueskill

from arena.schedule import replay_key
from engine.core import rank_rewards


@lru_cache(maxsize=64)
def _teams(game: str, n: int) -> tuple[tuple[int, ...], ...]:
    from engine import registry
    return tuple(tuple(t) for t in registry.get_game(game).teams(n))


def sides_of(record: dict[str, Any]) -> list[list[str]]:
    """Per side (``Game.teams``), the distinct bots on it in seat order."""
    seats = record["seats"]
    out = []
    for t in _teams(record["game"], len(seats)):
        names: list[str] = []
        for s in t:
            if seats[s] not in names:
                names.append(seats[s])
        out.append(names)
    return out


def side_ranks(record: dict[str, Any]) -> list[int]:
    """Per side, the rank of the side (taken from its first seat)."""
    ranks = record["outcome"]["ranks"]
    return [ranks[t[0]] for t in _teams(record["game"], len(record["seats"]))]


def is_rated(record: dict[str, Any], rate_forfeits: bool = False) -> bool:
    """``ok`` records are rated; forfeits only with ``rate_forfeits`` (and not ``disabled``); aborted never."""
    if record.get("status") == "ok":
        return True
    if record.get("status") == "forfeit" and rate_forfeits:
        return not any(f.get("class") == "disabled" for f in record.get("faults", []))
    return False


def auto_draw_probability(records: Iterable[dict[str, Any]]) -> float:
    """Share of tied adjacent-rank side pairs over all results, clipped to [0.01, 0.9]."""
    tied = pairs = 0
    for rec in records:
        r = sorted(side_ranks(rec))
        for a, b in zip(r, r[1:]):
            pairs += 1
            tied += a == b
    p = tied / pairs if pairs else 0.1
    return min(0.9, max(0.01, p))


@dataclass
class RatingResult:
    """Ratings after the replay.

    :ivar ratings: ``bot -> (mu, sigma)``.
    :ivar history: per rated match in replay order, ``{bot: (mu, sigma)}`` of the bots it moved.
    :ivar draw_probability: the value used.
    :ivar fallbacks: number of updates that needed the mpmath backend.
    """

    ratings: dict[str, tuple[float, float]]
    history: list[dict[str, tuple[float, float]]] = field(default_factory=list)
    draw_probability: float = 0.1
    fallbacks: int = 0


def rate(records: Sequence[dict[str, Any]], bots: Sequence[str], draw_probability: float | str = "auto",
         tau: float | str = "default", fixed: Sequence[str] = (), mu: float = 25.0, sigma: float = 25.0 / 3,
         rate_forfeits: bool = False) -> RatingResult:
    """Ordered TrueSkill replay of ``records``.

    :param bots: every bot of the tournament (unrated bots keep the prior).
    :param draw_probability: a probability in (0, 1) or ``"auto"``.
    :param tau: dynamics factor, or ``"default"`` (``sigma / 100``).
    :param fixed: anchor bots held at their prior.
    :returns: :class:`RatingResult`.
    """
    rated = sorted((r for r in records if is_rated(r, rate_forfeits)), key=replay_key)
    dp = auto_draw_probability(rated) if draw_probability == "auto" else float(draw_probability)
    dp = min(0.9, max(0.01, dp))
    t = sigma / 100 if tau == "default" else float(tau)
    env = trueskill.TrueSkill(mu=mu, sigma=sigma, beta=sigma / 2, tau=t, draw_probability=dp)
    env_mp = None
    cur = {b: env.create_rating() for b in bots}
    fixed_set = set(fixed)
    result = RatingResult({}, draw_probability=dp)
    for rec in rated:
        sides = sides_of(rec)
        ranks = side_ranks(rec)
        for side in sides:
            for b in side:
                cur.setdefault(b, env.create_rating())
        if rec.get("status") == "forfeit":
            faulty = {f["seat"] for f in rec.get("faults", [])}
            teams = _teams(rec["game"], len(rec["seats"]))
            bad = [i for i, tm in enumerate(teams) if faulty & set(tm)]
            good = [i for i in range(len(teams)) if i not in bad]
            updates = []
            for i in bad:
                for j in good:
                    updates.append(([sides[i], sides[j]], [1, 0], {j}))
        else:
            updates = [(sides, ranks, set())]
        moved = {}
        for groups_names, rks, frozen_sides in updates:
            groups = [tuple(cur[b] for b in names) for names in groups_names]
            try:
                new = env.rate(groups, ranks=rks)
            except (FloatingPointError, ValueError, ZeroDivisionError):
                if env_mp is None:
                    env_mp = trueskill.TrueSkill(mu=mu, sigma=sigma, beta=sigma / 2, tau=t,
                                                 draw_probability=dp, backend="mpmath")
                result.fallbacks += 1
                try:
                    new = env_mp.rate(groups, ranks=rks)
                    new = [tuple(trueskill.Rating(float(r.mu), float(r.sigma)) for r in g) for g in new]
                except (FloatingPointError, ValueError, ZeroDivisionError):
                    continue
            for si, (names, ratings) in enumerate(zip(groups_names, new)):
                if si in frozen_sides:
                    continue
                for b, r in zip(names, ratings):
                    if b in fixed_set or not (math.isfinite(r.mu) and math.isfinite(r.sigma)):
                        continue
                    cur[b] = r
                    moved[b] = (r.mu, r.sigma)
        result.history.append(moved)
    result.ratings = {b: (r.mu, r.sigma) for b, r in cur.items()}
    return result


def seat_rewards(record: dict[str, Any]) -> list[float]:
    """Per seat reward in [0, 1] (ties count half) from the record's ranks and the game's sides."""
    return rank_rewards(record["outcome"]["ranks"], _teams(record["game"], len(record["seats"])))
