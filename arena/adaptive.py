"""``lineups: {adaptive: ...}``: lineups chosen round by round where the table is least certain.

The design (docs/ratings.md, "Adaptive lineups") is a sequence of **rounds**. Round 0 is the
``sample`` design (:func:`arena.schedule.mixing_sample`) with ``first`` lineups per bot. After
round ``r`` is complete — every match of it recorded — the batch fit of the records of rounds
``0..r`` (the table's Plackett–Luce model, :mod:`arena.batchfit`, with the normal approximation
of its Fisher information instead of the table's bootstrap: :func:`certainty`) decides round
``r + 1`` (:func:`plan_round`):

* a pair of bots is **unsure** when the 95% interval of their difference includes 0 (the
  pairs that widen rank intervals, "2–5");
* a bot's **demand** is its number of unsure pairs: the round's seats go to bots in proportion
  to it (a bot surely placed against everyone plays only exploration lineups);
* a lineup is built around the bot with the most demand left, filled with bots unsure against
  it (and against each other), those met least often first — Swiss-like, among bots whose
  rank intervals overlap;
* ``explore`` of the round's lineups (the exploration floor) are built by the ``sample`` rule
  from the bots with the fewest appearances so far, so every bot keeps meeting varied opponents.

Rounds are barriers: round ``r + 1`` is computed from complete rounds only, from records (never
from the order they arrived in), so the same journal always gives the same schedule and table,
and a run interrupted mid-round resumes into the same rounds. Round ``r`` plays the deals
``r·deals .. r·deals + deals − 1``, so the ordered replay (deal, rotation, lineup) plays the
rounds in order. The design stops when the next round would exceed ``max_matches`` (the last
round is cut to fit) or when the mean rank-interval width is at most ``width``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena import batchfit
from arena.batchfit import Z95, BatchFit
from arena.config import AdaptiveLineups, LineupsAdaptive
from arena.specs import MatchSpec


def is_adaptive(model: Any) -> bool:
    """Whether a tournament model (:class:`arena.config.TournamentModel`) uses ``lineups: {adaptive: ...}``."""
    return isinstance(getattr(model, "lineups", None), LineupsAdaptive)


# ---------------------------------------------------------------------------- the planner


def _counts(lineups: Sequence[Sequence[int]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(met, seen)``: ``(n, n)`` times two bots shared a lineup, ``(n,)`` lineups per bot."""
    met = np.zeros((n, n), dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)
    for lu in lineups:
        idx = np.asarray(lu, dtype=np.int64)
        seen[idx] += 1
        met[np.ix_(idx, idx)] += 1
    np.fill_diagonal(met, 0)
    return met, seen


@dataclass(frozen=True)
class Certainty:
    """How sure the fit that plans a round is of each pair: its normal approximation.

    :ivar theta: ``(n,)`` log-strengths of the batch fit (``nan`` unrated).
    :ivar z: ``(n, n)`` ``(θ_i − θ_j) / sd`` with ``sd`` from the inverse Fisher information
        (0 for pairs with an unrated bot): the planner's cheap stand-in for the table's bootstrap.
    :ivar rated: ``(n,)`` whether the bot has rated results.
    """

    theta: np.ndarray
    z: np.ndarray
    rated: np.ndarray

    def unsure(self) -> np.ndarray:
        """``(n, n)`` bool: pairs whose 95% interval of the difference includes 0 (diagonal False)."""
        u = np.abs(self.z) <= Z95
        np.fill_diagonal(u, False)
        return u

    def mean_width(self) -> float:
        """Mean rank-interval width (high − low, as :meth:`arena.batchfit.BatchFit.rank_intervals`) over
        the rated bots (``inf`` when none is rated)."""
        return width_of(self.z, self.rated)


def width_of(z: np.ndarray, rated: np.ndarray) -> float:
    """Mean rank-interval width of a pairwise ``z`` matrix (surely = ``|z| > 1.96``) over the rated bots."""
    if not rated.any():
        return math.inf
    above = (z.T > Z95).sum(axis=1)
    below = (z > Z95).sum(axis=1)
    lo, hi = 1 + above, int(rated.sum()) - below
    return float(np.mean((hi - lo)[rated]))


def certainty(d: batchfit.Design) -> Certainty:
    """The batch fit of ``d`` (no bootstrap) with its Fisher-information pairwise z (:class:`Certainty`)."""
    beta, info = batchfit.newton(d)
    assert info is not None  # asked for (info=True)
    nb = d.n_bots
    rated = np.zeros(nb, bool)
    rated[np.unique(d.x[:, :nb].nonzero()[1])] = True
    cov = np.linalg.inv(info[:nb, :nb])
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    theta = beta[:nb]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (theta[:, None] - theta[None, :]) / np.sqrt(np.maximum(var, 1e-300))
    z[~rated, :] = 0.0
    z[:, ~rated] = 0.0
    np.fill_diagonal(z, 0.0)
    return Certainty(np.where(rated, theta, np.nan), np.round(z, 9), rated)


def mean_width(fit: BatchFit) -> float:
    """Mean rank-interval width (high − low) of a table's batch fit over the rated bots (``inf`` when none)."""
    lo, hi = fit.rank_intervals()
    r = fit.rated
    return float(np.mean(hi[r] - lo[r])) if r.any() else math.inf


def _quotas(demand: np.ndarray, seats: int, cap: int) -> np.ndarray:
    """``seats`` split in proportion to ``demand`` (largest remainders, each at most ``cap``)."""
    q = np.zeros(len(demand), dtype=np.int64)
    d = demand.astype(float)
    while seats > 0 and d.sum() > 0:
        share = d / d.sum() * seats
        add = np.minimum(np.floor(share).astype(np.int64), cap - q)
        if add.sum() == 0:  # hand out one seat per bot in order of remainder
            order = np.lexsort((np.arange(len(d)), -share))
            for i in order[:seats]:
                if q[i] < cap and d[i] > 0:
                    q[i] += 1
                    seats -= 1
            break
        q += add
        seats -= int(add.sum())
        d = np.where(q >= cap, 0.0, d)
    return q


def _exclude_repeats(score: np.ndarray, pick: list[int], out: list[tuple[int, ...]], worst: float) -> None:
    """Set ``score`` to ``worst`` for the bots that would complete a lineup already in ``out``
    (a round lists each lineup once: two copies would play the same deals, i.e. the same
    matches, once — the round would be smaller than planned), unless that leaves no choice."""
    taken = set(out)
    bad = [c for c in range(len(score)) if c not in pick and tuple(sorted([*pick, c])) in taken]
    if bad and len(bad) < int(np.isfinite(score).sum()):
        score[bad] = worst


def plan_round(fit: Certainty, past: Sequence[Sequence[int]], n_lineups: int, players: int, explore: float,
               rng: np.random.Generator) -> list[tuple[int, ...]]:
    """The lineups of the next round (bot indices, sorted tuples, sorted).

    :param fit: the :class:`Certainty` of the complete rounds' batch fit (its unsure pairs).
    :param past: every lineup played so far (bot indices), for meetings and appearances.
    :param n_lineups: lineups in the round; :param players: bots per lineup.
    :param explore: share of the lineups built by the mixing rule from the least-seen bots.
    :param rng: the round's generator (seeded from the salt and the round: ties only).
    """
    n = len(fit.theta)
    met, seen = _counts(past, n)
    u = fit.unsure()
    n_explore = min(n_lineups, int(round(explore * n_lineups)))
    demand = u.sum(axis=1)
    if demand.sum() == 0:  # every pair is sure: only exploration is left
        n_explore = n_lineups
    quota = _quotas(demand, (n_lineups - n_explore) * players, n_lineups - n_explore)
    out: list[tuple[int, ...]] = []
    noise = rng.random((n_lineups, players, n))  # ties broken at random, from the salt
    for li in range(n_lineups - n_explore):
        if quota.max() <= 0:
            n_explore = n_lineups - li
            break
        focal = int(np.argmax(quota * 4.0 + noise[li, 0]))
        pick = [focal]
        for place in range(1, players):
            # unsure against more of the lineup first, then demand left, then met least often
            together = u[pick].sum(axis=0) * (4 * n_lineups * players + 4)
            score = together * 4.0 + np.minimum(quota, 1) * 2.0 * (4 * n_lineups * players + 4)
            score = score - met[pick].sum(axis=0) * 4.0 + noise[li, place]
            score[pick] = -np.inf
            if place == players - 1:
                _exclude_repeats(score, pick, out, -np.inf)
            best = int(np.argmax(score))
            pick.append(best)
        key = tuple(sorted(pick))
        out.append(key)
        idx = np.array(key)
        quota[idx] -= 1
        seen[idx] += 1
        met[np.ix_(idx, idx)] += 1
        met[idx, idx] -= 1
    for li in range(n_lineups - n_explore, n_lineups):  # the exploration floor: the sample rule
        pick = []
        acc = seen * float(16 * n * n * players)
        for place in range(players):
            score = acc + noise[li, place] * 4 * n
            score[pick] = np.inf
            if place == players - 1:
                _exclude_repeats(score, pick, out, np.inf)
            best = int(np.argmin(score))
            pick.append(best)
            acc = acc + met[best] * (4.0 * n)
        key = tuple(sorted(pick))
        out.append(key)
        idx = np.array(key)
        seen[idx] += 1
        met[np.ix_(idx, idx)] += 1
        met[idx, idx] -= 1
    return sorted(out)


def round_lineups(n_bots: int, players: int, per_round: int) -> int:
    """Lineups in one round: ``per_round · n_bots / players``, rounded up."""
    return -(-per_round * n_bots // players)


@dataclass(frozen=True)
class RoundPlan:
    """One round of an adaptive schedule.

    :ivar index: the round (0 = the ``sample`` design).
    :ivar lineups: its lineups (sorted bot names).
    :ivar width: the mean rank-interval width of the fit that planned it (None for round 0).
    """

    index: int
    lineups: tuple[tuple[str, ...], ...]
    width: float | None


def _lineups_of(records: Sequence[Any]) -> list[tuple[str, ...]]:
    """The lineups played by ``records`` (one per (lineup, deal) block), in replay order."""
    seen: dict[tuple[str, int], tuple[str, ...]] = {}
    for rec in sorted(records, key=lambda r: r.replay_key()):
        seen.setdefault((rec.lineup, rec.deal_index), tuple(sorted(set(rec.seats))))
    return list(seen.values())


def design_of(records: Sequence[Any], bots: Sequence[str], rate_forfeits: bool) -> batchfit.Design:
    """The batch fit's design of ``records`` over ``bots``: the evidence of the table's fit
    (:func:`arena.strength.strength`: ok results, forfeits with ``rate_forfeits``), in replay order."""
    from arena.strength import _contests

    index = {b: i for i, b in enumerate(bots)}
    blocks: dict[tuple[str, int], int] = {}
    sides_i, ranks, block_i = [], [], []
    for rec in sorted(records, key=lambda r: r.replay_key()):
        for sides, rk in _contests(rec, rate_forfeits):
            if all(b in index for s in sides for b in s):
                sides_i.append([[index[b] for b in s] for s in sides])
                ranks.append(list(rk))
                block_i.append(blocks.setdefault((rec.lineup, rec.deal_index), len(blocks)))
    return batchfit.build_design(sides_i, ranks, block_i, len(bots))


_MEMO: dict[tuple, RoundPlan | None] = {}


def next_round(records: Sequence[Any], bots: Sequence[str], players: int, cfg: AdaptiveLineups, index: int,
               salt: str, matches_so_far: int, per_lineup: int, rate_forfeits: bool) -> RoundPlan | None:
    """Round ``index`` (≥ 1) planned from the records of the complete rounds before it; None = stop.

    :param records: the :class:`arena.record.MatchRecord` values of rounds ``0 .. index − 1`` (complete).
    :param per_lineup: matches per lineup (rotations × deals); :param matches_so_far: matches of
        those rounds. The round is cut so the total stays within ``cfg.max_matches``.
    """

    room = (cfg.max_matches - matches_so_far) // per_lineup
    if room <= 0:
        return None
    # the plan does not depend on the budget (a raised max_matches extends the cut round with the
    # same lineups, so the matches already played stay in the schedule); only the cut below does
    key = (tuple(bots), players, cfg.model_dump_json(exclude={"max_matches"}), index, salt, per_lineup,
           rate_forfeits,
           hashlib.sha256(repr(sorted((r.match_id, r.fingerprint, r.status, r.ranks, tuple(f.cls for f in r.faults))
                                      for r in records)).encode()).hexdigest())
    if key not in _MEMO:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        _MEMO[key] = _plan(records, bots, players, cfg, index, salt, rate_forfeits)
    plan = _MEMO[key]
    return None if plan is None else RoundPlan(plan.index, plan.lineups[:room], plan.width)


def _plan(records: Sequence[Any], bots: Sequence[str], players: int, cfg: AdaptiveLineups, index: int,
          salt: str, rate_forfeits: bool) -> RoundPlan:
    """Round ``index`` whole (uncut); no lineups when the width rule stops the design."""
    from engine.seeds import h64

    fit = certainty(design_of(records, bots, rate_forfeits))
    width = fit.mean_width()
    if cfg.width is not None and width <= cfg.width:
        return RoundPlan(index, (), width)  # no lineups: the design stops here
    pos = {b: i for i, b in enumerate(bots)}
    past = [tuple(pos[b] for b in lu) for lu in _lineups_of(records) if all(b in pos for b in lu)]
    n = round_lineups(len(bots), players, cfg.per_round)
    rng = np.random.default_rng(h64(salt, "adaptive-round", index))
    chosen = plan_round(fit, past, n, players, cfg.explore, rng)
    return RoundPlan(index, tuple(tuple(bots[i] for i in lu) for lu in chosen), width)


def first_round(bots: Sequence[str], players: int, cfg: AdaptiveLineups, salt: str, per_lineup: int) -> RoundPlan:
    """Round 0: the ``sample`` design with ``cfg.first`` lineups per bot (cut to the budget)."""
    from arena.schedule import mixing_sample

    lus = mixing_sample(sorted(bots), cfg.first, players, f"{salt}/adaptive")
    room = max(1, cfg.max_matches // per_lineup)
    return RoundPlan(0, tuple(lus[:room]), None)


def rounds_from_journal(bots: Sequence[str], players: int, cfg: AdaptiveLineups, salt: str, per_lineup: int,
                        match_ids: Any, recorded: Mapping[str, Any], rate_forfeits: bool,
                        ) -> tuple[list[RoundPlan], bool]:
    """Every round the journal determines: ``(rounds, finished)``.

    Round 0 always; round ``r + 1`` once every match of rounds ``0..r`` is recorded. ``finished``:
    the last round is complete and no further round is planned (budget or width reached).

    :param match_ids: ``match_ids(round) -> list of match ids`` of a round's planned matches.
    :param recorded: ``match id -> MatchRecord`` of the recorded matches (any order).
    """
    plans, _stop = _rounds(bots, players, cfg, salt, per_lineup, match_ids, recorded, rate_forfeits)
    return plans, _stop is not None


def _rounds(bots: Sequence[str], players: int, cfg: AdaptiveLineups, salt: str, per_lineup: int,
            match_ids: Any, recorded: Mapping[str, Any], rate_forfeits: bool,
            ) -> tuple[list[RoundPlan], tuple[str, float | None] | None]:
    """:func:`rounds_from_journal` with why it stopped: ``(rounds, None)`` while a round is
    being played, else ``(rounds, (reason, width))`` — reason ``"budget"`` (no whole lineup fits
    in ``max_matches`` any more) or ``"width"`` (the mean rank-interval width reached ``width``)."""
    plans = [first_round(bots, players, cfg, salt, per_lineup)]
    done: list[Any] = []
    while True:
        ids = match_ids(plans[-1])
        if any(mid not in recorded for mid in ids):
            return plans, None
        done.extend(recorded[mid] for mid in ids)
        plan = next_round(done, bots, players, cfg, len(plans), salt, len(done), per_lineup, rate_forfeits)
        if plan is None or not plan.lineups:
            if plan is None:  # the budget is spent: no round is planned
                return plans, ("budget", None)
            return plans, ("width", plan.width)
        plans.append(plan)


def _geometry(tournament) -> tuple[list[list[int]], int, int]:
    """``(teams, lineup size, matches per lineup and deal)`` of a tournament (free-for-all or ``partners: self``)."""
    from arena.schedule import lineup_of
    from engine import registry

    m = tournament.model
    teams = registry.get_game(m.game).teams(m.players)
    size = 2 if any(len(t) > 1 for t in teams) else m.players
    probe = lineup_of(sorted(m.bots)[:size], m.players, teams, m.rotations)
    return teams, size, len(probe.seatings)


def adaptive_schedule(tournament, salt: str, recorded: Mapping[str, Any],
                      status: dict[str, Any] | None = None) -> list[MatchSpec]:
    """The matches of every round the journal determines (:func:`rounds_from_journal`), in replay order.

    Round ``r`` plays deals ``r·deals .. r·deals + deals − 1``.

    :param recorded: the journal's records (``match id -> journal line``).
    :param status: filled with the design's state (:func:`design_status`) when given.
    """
    from arena.record import MatchRecord
    from arena.schedule import lineup_of, replay_key, specs_for

    m = tournament.model
    cfg = m.lineups.adaptive
    teams, size, seatings = _geometry(tournament)
    per_lineup = seatings * m.deals
    cache: dict[int, list[MatchSpec]] = {}
    records: dict[str, Any] = {}

    def specs_of(plan: RoundPlan) -> list[MatchSpec]:
        """The match specs of ``plan`` (round r: deals r·deals … (r+1)·deals − 1), built once."""
        if plan.index not in cache:
            lus = [lineup_of(lu, m.players, teams, m.rotations) for lu in plan.lineups]
            cache[plan.index] = specs_for(tournament, salt, lus, range(plan.index * m.deals, (plan.index + 1) * m.deals))
        return cache[plan.index]

    def match_ids(plan: RoundPlan) -> list[str]:
        """``plan``'s match ids; typed records of the recorded ones (fingerprint equal) go to ``records``."""
        out = []
        for s in specs_of(plan):
            raw = recorded.get(s.match_id)
            if raw is not None and s.match_id not in records and raw.get("fingerprint") == s.fingerprint:
                records[s.match_id] = MatchRecord.from_json(raw)
            out.append(s.match_id)
        return out

    plans, stop = _rounds(m.bots, size, cfg, salt, per_lineup, match_ids, records,
                          tournament.fault_policy().rate_forfeits)
    specs = [s for p in plans for s in specs_of(p)]
    specs.sort(key=replay_key)
    if status is not None:
        status.update(design_status(plans, stop, cfg, len(specs)))
    return specs


def design_status(plans: Sequence[RoundPlan], stop: tuple[str, float | None] | None, cfg: AdaptiveLineups,
                  planned: int) -> dict[str, Any]:
    """The adaptive design's state for ``tournament.json`` and the tables (:func:`design_line`).

    :returns: ``{"design": "adaptive", "rounds", "planned" (matches), "max_matches",
        "target_width", "finished", "stop" ("budget" | "width" | None), "width"}``; ``width``: the
        mean rank-interval width (ranks) of the last fit — the one that stopped the design, else
        the one that planned the last round (None after round 0 only).
    """
    width = stop[1] if stop is not None and stop[1] is not None else plans[-1].width
    return {"design": "adaptive", "rounds": len(plans), "planned": planned, "max_matches": cfg.max_matches,
            "target_width": cfg.width, "finished": stop is not None, "stop": None if stop is None else stop[0],
            "width": None if width is None else round(float(width), 4)}


def design_line(status: Mapping[str, Any] | None, rows: Sequence[Mapping[str, Any]] = ()) -> str:
    """One line under the tables saying how far the adaptive design went and why it stopped
    (``""`` for other designs), e.g. ``Design: adaptive, 6 rounds, 1,440 matches planned
    (max_matches 1,500); stopped: max_matches is spent …; the table's mean rank-interval width
    3.0 ranks``. ``rows``: the table's rows (``rank_low``/``rank_high``), for the table's own
    width — the planner's (:func:`design_status`) is of the fit before the last round."""
    if not status or status.get("design") != "adaptive":
        return ""
    head = (f"Design: adaptive, {status['rounds']} round{'s' if status['rounds'] != 1 else ''}, "
            f"{status['planned']:,} matches planned (max_matches {status['max_matches']:,})")
    spans = [r["rank_high"] - r["rank_low"] for r in rows
             if r.get("rank_low") is not None and r.get("rank_high") is not None]
    table = f"the table's mean rank-interval width {sum(spans) / len(spans):.1f} ranks" if spans else ""
    if status.get("stop") == "width":
        why = (f"stopped: the planner's mean rank-interval width {status['width']:.2f} reached the target "
               f"width {status['target_width']:g}")
        return f"{head}; {why}" + (f" ({table})" if table else "")
    if status.get("stop") == "budget":
        why = "stopped: max_matches is spent (no whole lineup fits; raise it to go on)"
    else:
        why = ("not finished: its last round is not all recorded yet (a run in progress; else run the "
               "tournament again to go on)")
    return f"{head}; {why}" + (f"; {table}" if table else "")
