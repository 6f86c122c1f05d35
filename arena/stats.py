"""Statistics shared by reports, strength measurements and regression tests.

* :func:`block_weights` — the bootstrap's resampling of whole duplicate blocks, as weights
  (used by :mod:`arena.batchfit`).
* :func:`bootstrap_ci` — percentile bootstrap of a mean score over duplicate blocks
  (resampling whole blocks keeps the pairing that duplicate deals create).
* :func:`block_t_ci` / :func:`block_t_cis` — the same mean's interval from its blocks' sums and
  sizes (Wilson's at the blocks' effective size): mergeable, for entities with many blocks.
* :class:`SPRT` — a sequential probability ratio test on paired results with score
  hypotheses (H0 score = ``p0`` vs H1 score = ``p1``): the GSPRT of :mod:`arena.gsprt`.
* :func:`duplicate_efficiency` — how many unpaired games one duplicate block is worth.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def mean(xs: Sequence[float]) -> float:
    """Arithmetic mean (``nan`` for an empty sequence)."""
    return sum(xs) / len(xs) if xs else float("nan")


def block_weights(n_blocks: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """How often each duplicate block is drawn in each bootstrap replicate.

    A replicate draws ``n_blocks`` blocks with replacement (whole blocks: a deal's matches
    over its rotations stay together, keeping the pairing that duplicate deals create).

    :returns: ``(n_boot, n_blocks)`` integer counts, each row summing to ``n_blocks``.
    """
    rng = np.random.default_rng(seed)
    if n_blocks == 0:
        return np.zeros((n_boot, 0), dtype=np.int64)
    idx = rng.integers(0, n_blocks, size=(n_boot, n_blocks)) + np.arange(n_boot)[:, None] * n_blocks
    return np.bincount(idx.ravel(), minlength=n_boot * n_blocks).reshape(n_boot, n_blocks)


def bootstrap_ci(blocks: Mapping[object, Sequence[float]] | Sequence[Sequence[float]], level: float = 0.95,
                 n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of all values and its percentile bootstrap interval, resampling whole blocks.

    :param blocks: per duplicate block (one deal of one lineup, all rotations), the scores
        in [0, 1] of the entity in that block's matches.
    :returns: ``(mean, low, high)``; ``(nan, nan, nan)`` without data; a single block gives
        ``(m, m, m)``.
    """
    groups = [list(v) for v in (blocks.values() if isinstance(blocks, Mapping) else blocks) if len(v)]
    if not groups:
        return (float("nan"),) * 3
    sums = np.array([sum(g) for g in groups], dtype=float)
    counts = np.array([len(g) for g in groups], dtype=float)
    m = float(sums.sum() / counts.sum())
    if len(groups) == 1:
        return m, m, m
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(groups), size=(n_boot, len(groups)))
    boot = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return m, float(lo), float(hi)


#: from this many duplicate blocks on, the tables use :func:`block_t_cis` instead of the bootstrap
T_FROM = 30


def block_t_cis(entity: np.ndarray, sums: np.ndarray, counts: np.ndarray, n: int,
                level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per entity, the mean score over its duplicate blocks and its interval (vectorised).

    The mean is the ratio estimator ``m = ΣS_b / ΣN_b`` over the entity's blocks (``S_b``: the
    sum of its scores in block ``b``, ``N_b``: their count); its variance is the blocks'
    linearised one, ``v = B/(B−1) · Σ(S_b − m N_b)² / (ΣN_b)²`` (blocks independent, the
    matches of a block not: the same clustering as :func:`bootstrap_ci`). The interval is
    Wilson's score interval at the **effective** number of matches ``n_eff = m(1−m) / v``
    (the design effect of the blocks; ``n_eff = ΣN_b`` when ``v`` or ``m(1−m)`` is 0) with
    Student's quantile on ``B−1`` degrees of freedom: unlike ``m ± t·se`` it keeps its
    coverage for lopsided scores (a bot winning 93% of its matches). Coverage by simulation:
    ``tests/scale/test_block_ci.py``. Every input is a sum over blocks: mergeable.

    :param entity: ``(K,)`` the entity index (0 .. n−1) of each block; :param sums, counts: ``(K,)``.
    :returns: ``(mean, low, high, blocks)``, each ``(n,)``; ``nan`` without blocks, ``low = high
        = mean`` with one block.
    """
    from scipy.special import stdtrit  # Student's t quantile (scipy.stats costs a second to import)

    entity = np.asarray(entity)
    if entity.dtype.kind not in "iu":
        entity = entity.astype(np.int64)
    sums, counts = np.asarray(sums, dtype=float), np.asarray(counts)  # counts as given: float in pieces
    nb = np.bincount(entity, minlength=n).astype(float)
    exact = exact_sums(sums, counts)
    if exact:  # every sum below exact: the same bits in any order of the blocks, and in pieces
        acc = np.zeros((5, n))
        for at in range(0, len(sums), _CHUNK):
            e, s, c = entity[at:at + _CHUNK], sums[at:at + _CHUNK], counts[at:at + _CHUNK].astype(float)
            for row, w in enumerate((s, c, s * s, s * c, c * c)):
                acc[row] += np.bincount(e, w, n)
        tot_s, tot_n, s2, sc, c2 = (np.asarray(r, dtype=float) for r in acc)
    else:
        counts = counts.astype(float)
        tot_s, tot_n = np.bincount(entity, sums, n), np.bincount(entity, counts, n)
        s2 = sc = c2 = np.zeros(0)  # not used: the deviations are summed below
    with np.errstate(invalid="ignore", divide="ignore"):
        m = tot_s / tot_n
        if exact:
            sq: np.ndarray = np.maximum(s2 - 2 * m * sc + m * m * c2, 0.0)
        else:
            dev = sums - m[entity] * counts
            sq = np.bincount(entity, dev * dev, n)
        v = nb / (nb - 1) * sq / (tot_n * tot_n)
        bv = m * (1 - m)
        neff = np.where((v > 0) & (bv > 0), bv / v, tot_n)
        z = stdtrit(np.maximum(nb - 1, 1), 0.5 + level / 2)
        z2n = z * z / neff
        centre = (m + z2n / 2) / (1 + z2n)
        half = z / (1 + z2n) * np.sqrt(np.maximum(bv, 0.0) / neff + z2n / (4 * neff))
    one = nb <= 1
    lo = np.where(one, m, np.clip(np.minimum(centre - half, m), 0.0, 1.0))
    hi = np.where(one, m, np.clip(np.maximum(centre + half, m), 0.0, 1.0))
    return m, lo, hi, nb


#: :func:`exact_sums`: fractional bits of a block's score sum, and the largest block
EXACT_FRACTION_BITS, EXACT_MAX_BLOCK = 4, 1 << 8


def exact_sums(sums: np.ndarray, counts: np.ndarray) -> bool:
    """Whether every block's score sum ``S`` is a multiple of 2⁻⁴ and it and its count ``N`` are
    below 2⁸ (two-player and partnership rewards 0, ½, 1 are) and fewer than 2²⁸ blocks are
    given: then ``S²``, ``S·N``, ``N²`` are multiples of 2⁻⁸ below 2¹⁶, and their per-entity sums
    need at most 8 + 16 + 28 bits — float64 adds them **exactly**, so their value does not depend on the blocks' order (a journal's
    line order). Otherwise :func:`block_t_cis` sums the deviations directly and its caller
    orders the blocks itself (:meth:`arena.tallies.Tallies.bot_stats`)."""
    if len(sums) >= 1 << 28:
        return False
    scale = float(1 << EXACT_FRACTION_BITS)
    for at in range(0, len(sums), _CHUNK):  # a piece at a time: its temporaries stay small
        s, c = sums[at:at + _CHUNK], counts[at:at + _CHUNK]
        if not (np.all(np.abs(s) < EXACT_MAX_BLOCK) and np.all(np.abs(c) < EXACT_MAX_BLOCK)
                and np.all(np.floor(s * scale) == s * scale) and np.all(np.floor(c) == c)):
            return False
    return True


#: blocks per piece where :func:`block_t_cis` and :func:`exact_sums` go through their input in
#: pieces (4M block slots of a four-player field made ~200 MB of whole-array temporaries)
_CHUNK = 1 << 20


def block_t_ci(sums: Sequence[float], counts: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """:func:`block_t_cis` of one entity: ``(mean, low, high)`` from its blocks' sums and sizes."""
    m, lo, hi, _ = block_t_cis(np.zeros(len(sums), dtype=np.int64), np.asarray(sums, float),
                               np.asarray(counts, float), 1, level)
    return float(m[0]), float(lo[0]), float(hi[0])


def prob_above(a_blocks: Sequence[float], b_blocks: Sequence[float], n_boot: int = 2000, seed: int = 0) -> float:
    """Bootstrap probability that entity A's mean score exceeds B's (independent resamples)."""
    if not a_blocks or not b_blocks:
        return float("nan")
    rng = random.Random(seed)
    wins = 0.0
    na, nb = len(a_blocks), len(b_blocks)
    for _ in range(n_boot):
        ma = sum(a_blocks[rng.randrange(na)] for _ in range(na)) / na
        mb = sum(b_blocks[rng.randrange(nb)] for _ in range(nb)) / nb
        wins += 1.0 if ma > mb else (0.5 if ma == mb else 0.0)
    return wins / n_boot


@dataclass
class SPRT:
    """Sequential test on paired scores in [0, 1] with score hypotheses (``bench/strength.py``).

    H0: mean block score ``p0`` (default 0.5, equal strength); H1: ``p1`` (default 0.55). The
    statistic is the GSPRT of :mod:`arena.gsprt` (``kind="score"``): the log-likelihood
    ratio of the empirical block-score distribution fitted under each mean — no normal
    approximation, no variance floor. ``arena sprt`` uses the same test with normalized-Elo
    hypotheses by default (``docs/regression.md``).

    :ivar alpha, beta: error rates (default 0.05 each).
    """

    p0: float = 0.5
    p1: float = 0.55
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        from arena.gsprt import GSPRT

        self.xs: list[float] = []
        self._test = GSPRT(self.p0, self.p1, self.alpha, self.beta, kind="score")

    @property
    def lower(self) -> float:
        """Accept-H0 bound of the LLR."""
        return self._test.lower

    @property
    def upper(self) -> float:
        """Accept-H1 bound of the LLR."""
        return self._test.upper

    def add(self, x: float) -> str | None:
        """Record one paired result; returns ``"H0"``, ``"H1"`` or ``None`` (continue).

        The first crossing is final (later results are kept in ``xs`` but not tested).
        """
        self.xs.append(float(x))
        return self._test.add(x)

    def llr(self) -> float:
        """The log-likelihood ratio at the last tested result (0 before any)."""
        return self._test.last_llr if self._test.n else 0.0

    def decision(self) -> str | None:
        """``"H1"`` or ``"H0"`` once a bound was crossed, else ``None``."""
        return self._test.verdict


def duplicate_efficiency(blocks: Sequence[Sequence[float]]) -> float:
    """Variance ratio of unpaired to block-paired results: the "games saved" factor.

    ``Var(single result) / (k * Var(block mean))`` for blocks of ``k`` matches; > 1 means
    duplicate deals saved that factor in matches for the same precision. ``nan`` if
    undefined (fewer than 3 blocks or zero variance).
    """
    groups = [list(b) for b in blocks if len(b) >= 1]
    if len(groups) < 3:
        return float("nan")
    flat = [x for g in groups for x in g]
    var_single = float(np.var(flat, ddof=1))
    means = [sum(g) / len(g) for g in groups]
    k = sum(len(g) for g in groups) / len(groups)
    var_block = float(np.var(means, ddof=1))
    if var_block <= 0:
        return float("inf") if var_single > 0 else float("nan")
    return var_single / (k * var_block)
