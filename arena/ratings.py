"""TrueSkill ratings from journal records (DESIGN "Ratings").

* Sides are rated entities: a free-for-all seat's bot; a ``partners: self`` side's one
  bot; a ``partners: mixed`` side's two bots as a TrueSkill team.
* Ties are equal ranks. ``draw_probability: auto`` = the share of tied adjacent-rank
  side pairs over the rated results played to the end (``ok``, :func:`played`), clipped to [0.01, 0.9] (a zero draw margin makes
  ``trueskill`` raise on ties).
* Each update is the ``trueskill`` package's ``env.rate``, computed by
  :class:`arena.trueskill_fast.FastRate` (the same float operations without the factor graph:
  the same ratings bit for bit, ~10× faster for two teams).
* On ``FloatingPointError`` (an extreme upset) the update is retried with the mpmath
  backend; the match stays recorded either way.
* The final table is an **ordered replay**: records sorted by (deal_index, rotation,
  lineup key), so it depends neither on worker count nor on finishing order.
* ``fixed`` bots (anchors) keep their prior; ``tau`` is TrueSkill's dynamics factor.
* Forfeits (with ``rate_forfeits``), ``disabled`` records (matches not played because a
  bot was disabled) included: every faulty side loses to every working side and only the
  faulty sides move (:meth:`Rater.record`), so a bot that never starts sinks below the
  working bots whatever order the matches finished in.
* Records are :class:`arena.record.MatchRecord` values: their sides and side ranks were
  computed once when the journal was read.
* The live provisional board (:mod:`arena.progress`) goes through the same
  :meth:`Rater.record`, only in arrival order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import trueskill

from arena.record import MatchRecord
from arena.trueskill_fast import FastRate

_new = object.__new__


def played(records: Iterable[MatchRecord]) -> list[MatchRecord]:
    """The records whose ranks come from play (``ok``): the evidence for ``draw_probability: auto``.

    A forfeit's ranks are imposed (faulty sides tied last), a ``disabled`` record was never
    played: counting their ties would push the draw probability towards 0.9.
    """
    return [r for r in records if r.played]


def auto_draw_probability(records: Iterable[MatchRecord]) -> float:
    """Share of tied adjacent-rank side pairs over all results, clipped to [0.01, 0.9]."""
    tied = pairs = 0
    for rec in records:
        r = sorted(rec.side_ranks)
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


class Rater:
    """Incremental TrueSkill updates with the mpmath fallback and anchor bots.

    :ivar cur: ``bot -> trueskill.Rating`` (bots appear at the prior on first use).
    :ivar fallbacks: updates that needed the mpmath backend.
    """

    def __init__(self, draw_probability: float, tau: float | str = "default", fixed: Sequence[str] = (),
                 mu: float = 25.0, sigma: float = 25.0 / 3) -> None:
        self.dp = min(0.9, max(0.01, float(draw_probability)))
        self.tau = sigma / 100 if tau == "default" else float(tau)
        self.mu, self.sigma = mu, sigma
        self.env = trueskill.TrueSkill(mu=mu, sigma=sigma, beta=sigma / 2, tau=self.tau, draw_probability=self.dp)
        self._fast = FastRate(self.env)
        self._env_mp = None
        self.fixed = set(fixed)
        self.cur: dict[str, trueskill.Rating] = {}
        self.fallbacks = 0

    def rating(self, bot: str) -> trueskill.Rating:
        """The bot's current rating (the prior if unseen)."""
        r = self.cur.get(bot)
        if r is None:
            r = self.cur[bot] = self.env.create_rating()
        return r

    def _rate(self, groups, ranks):
        try:
            return self._fast.rate(groups, ranks)
        except (FloatingPointError, ValueError, ZeroDivisionError):
            if self._env_mp is None:
                self._env_mp = trueskill.TrueSkill(mu=self.mu, sigma=self.sigma, beta=self.sigma / 2, tau=self.tau,
                                                   draw_probability=self.dp, backend="mpmath")
            self.fallbacks += 1
            new = self._env_mp.rate(groups, ranks=ranks)
            return [tuple(trueskill.Rating(float(r.mu), float(r.sigma)) for r in g) for g in new]

    def update(self, sides: Sequence[Sequence[str]], ranks: Sequence[int],
               frozen_sides: Iterable[int] = ()) -> dict[str, tuple[float, float]]:
        """One result: ``sides`` (bots per side) with side ``ranks`` (ties equal).

        Sides in ``frozen_sides`` and ``fixed`` bots keep their ratings; a non-finite
        result (even after the fallback) leaves the ratings unchanged.

        :returns: ``{bot: (mu, sigma)}`` of the bots that moved.
        """
        rating = self.rating
        groups = [tuple([rating(b) for b in names]) for names in sides]
        try:
            new = self._rate(groups, list(ranks))
        except (FloatingPointError, ValueError, ZeroDivisionError):
            return {}
        frozen = set(frozen_sides) if frozen_sides else ()
        fixed, cur, isfinite = self.fixed, self.cur, math.isfinite
        moved = {}
        for si, (names, ratings) in enumerate(zip(sides, new)):
            if si in frozen:
                continue
            for b, r in zip(names, ratings):
                if b in fixed:
                    continue
                mu, sigma = r.mu, r.sigma
                if not (isfinite(mu) and isfinite(sigma)):
                    continue
                cur[b] = r
                moved[b] = (mu, sigma)
        return moved

    def pair(self, a: str, b: str, rank_a: int, rank_b: int, moved: dict[str, tuple[float, float]] | None = None) -> None:
        """:meth:`update` of ``[[a], [b]]`` with ranks ``[rank_a, rank_b]`` (one bot a side), by
        :meth:`FastRate.pair` on floats: the same ratings and the same moves, bit for bit.

        :param moved: if given, gets the ``{bot: (mu, sigma)}`` that :meth:`update` returns.
        Anything :meth:`FastRate.pair` does not finish (an upset for the mpmath fallback, another
        backend) goes through :meth:`update` itself.
        """
        cur = self.cur
        ra = cur.get(a)
        if ra is None:
            ra = self.rating(a)
        rb = cur.get(b)
        if rb is None:
            rb = self.rating(b)
        fast = self._fast
        try:
            if not fast.scalar:
                raise ValueError("not the float backend")
            if rank_b < rank_a:
                pb, tb, pa, ta = fast.pair(rb.pi, rb.tau, ra.pi, ra.tau, False)
            else:
                pa, ta, pb, tb = fast.pair(ra.pi, ra.tau, rb.pi, rb.tau, rank_a == rank_b)
        except Exception:
            got = self.update(((a,), (b,)), (rank_a, rank_b))
            if moved is not None:
                moved.update(got)
            return
        fixed, isfinite, new, Rating = self.fixed, math.isfinite, _new, trueskill.Rating
        for bot, pi, tau in ((a, pa, ta), (b, pb, tb)):
            if bot in fixed:
                continue
            mu = pi and tau / pi  # Gaussian.mu and .sigma of the new rating
            sigma = math.sqrt(1 / pi) if pi else math.inf
            if not (isfinite(mu) and isfinite(sigma)):
                continue
            r = new(Rating)
            r.pi, r.tau = pi, tau
            cur[bot] = r
            if moved is not None:
                moved[bot] = (mu, sigma)

    def record(self, rec: MatchRecord) -> dict[str, tuple[float, float]]:
        """Rate one journal record (the caller decides whether it is rated, :meth:`MatchRecord.rated`).

        ``ok``: the sides by their ranks. ``forfeit`` (``disabled`` included): each side with a
        faulty seat loses to each side without one, and only the faulty sides move; when every
        side is faulty nothing moves.

        :returns: ``{bot: (mu, sigma)}`` of the bots that moved.
        """
        sides = rec.sides
        if rec.status != "forfeit":
            return self.update(sides, rec.side_ranks)
        faulty = {f.seat for f in rec.faults}
        bad = [i for i, tm in enumerate(rec.teams) if faulty & set(tm)]
        moved: dict[str, tuple[float, float]] = {}
        for i in bad:
            for j in range(len(rec.teams)):
                if j not in bad:
                    moved.update(self.update([sides[i], sides[j]], [1, 0], frozen_sides=[1]))
        return moved


def rate(records: Sequence[MatchRecord], bots: Sequence[str], draw_probability: float | str = "auto",
         tau: float | str = "default", fixed: Sequence[str] = (), mu: float = 25.0, sigma: float = 25.0 / 3,
         rate_forfeits: bool = False) -> RatingResult:
    """Ordered TrueSkill replay of ``records``.

    :param bots: every bot of the tournament (unrated bots keep the prior).
    :param draw_probability: a probability in (0, 1) or ``"auto"``.
    :param tau: dynamics factor, or ``"default"`` (``sigma / 100``).
    :param fixed: anchor bots held at their prior.
    :param rate_forfeits: rate forfeits, ``disabled`` records included (only the faulty sides move,
        as a loss to each working side).
    :returns: :class:`RatingResult`.
    """
    rated = sorted((r for r in records if r.rated(rate_forfeits)), key=MatchRecord.replay_key)
    dp = auto_draw_probability(played(rated)) if draw_probability == "auto" else float(draw_probability)
    rater = Rater(dp, tau, fixed, mu, sigma)
    for b in bots:
        rater.rating(b)
    result = RatingResult({}, draw_probability=rater.dp)
    for rec in rated:
        result.history.append(rater.record(rec))
    result.ratings = {b: (r.mu, r.sigma) for b, r in rater.cur.items()}
    result.fallbacks = rater.fallbacks
    return result


#: Rating history: at most this many sampled points per bot (the first is the prior).
HISTORY_POINTS = 200


def sample_points(n_rated: int, points: int = HISTORY_POINTS) -> np.ndarray:
    """The match numbers (0 = prior … ``n_rated``) at which the history is sampled: all of them
    when there are at most ``points``, else ``points`` evenly spaced ones including both ends."""
    if n_rated + 1 <= points:
        return np.arange(n_rated + 1)
    return np.unique(np.round(np.linspace(0, n_rated, points)).astype(np.int64))
