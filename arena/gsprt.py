"""The generalised SPRT on a finite set of block outcomes (the statistic of ``arena sprt``).

A block outcome is a score ``x`` in [0, 1] (0.5: candidate and baseline equal). Its
distribution is left free — any finite set of values, as many as the design produces: the
five of fishtest's pentanomial for a two-player game pair, thirteen or more for duplicate
replacement in three or four players. The test follows Michel Van den Bergh's GSPRT
("A GSPRT for multinomial distributions", the method of fishtest's ``LLRcalc``): after ``n``
blocks with empirical distribution ``p̂``, the log-likelihood ratio is

    ``LLR = n · Σ p̂ᵢ log(p1ᵢ / p0ᵢ)``,

where ``p0``/``p1`` are the maximum-likelihood distributions on the observed support under
the constraint of H0/H1. Two kinds of hypothesis:

* ``nelo``: the normalized Elo of the block score, ``t = (μ − 0.5)/σ`` (``nElo = t · 800/ln 10``)
  — the default of ``arena sprt`` (``docs/regression.md`` says why);
* ``score``: the mean block score ``μ`` itself.

The MLE under ``Σ pᵢ aᵢ = 0`` is ``pᵢ = p̂ᵢ / (1 + λ aᵢ)`` with ``λ`` the root of the secular
equation ``Σ p̂ᵢ aᵢ / (1 + λ aᵢ) = 0``; for the t-constraint ``aᵢ = xᵢ − 0.5 − t (σ² + (xᵢ − μ)²)
/ (2σ)`` depends on the fitted ``μ, σ``, found by fixed-point iteration. Regularisation: a
weight of 1e-3 blocks at each end of the score range (0 and 1), so the MLE exists whatever the
sample (an all-0.5 sample is weak evidence about ``t``, not a proof of H0).

Everything is vectorised over rows (many streams at once) with numpy; :class:`GSPRT` is the
one-stream interface the runner uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

NELO_PER_T = 800 / math.log(10)  # 347.4...: normalized Elo per unit of t = (μ − 0.5)/σ
REG = 1e-3  # pseudo-blocks at each end of the score range (0 and 1)
_FIXED_POINT = 200
_SECULAR = 60


def _secular(w: np.ndarray, a: np.ndarray, lam0: np.ndarray | None = None) -> np.ndarray:
    """Per row, the root λ of ``Σ wᵢ aᵢ / (1 + λ aᵢ) = 0`` with every ``1 + λ aᵢ > 0`` (where wᵢ > 0).

    :param w, a: ``(M, K)`` weights (rows sum to 1) and constraint coefficients.
    :returns: ``(M,)``; rows without a sign change of ``a`` on their support get the bracket edge.
    """
    live = w > 0
    a = np.where(live, a, 0.0)  # cells without weight play no part (and never make 1 + λa vanish)
    amax = np.where(live, a, -np.inf).max(axis=1)
    amin = np.where(live, a, np.inf).min(axis=1)
    with np.errstate(divide="ignore"):
        lo = np.where(amax > 0, -1.0 / amax, -1e12)
        hi = np.where(amin < 0, -1.0 / amin, 1e12)
    span = hi - lo
    lo = lo + 1e-12 * np.maximum(1.0, np.abs(span))
    hi = hi - 1e-12 * np.maximum(1.0, np.abs(span))
    lam = np.zeros(len(w)) if lam0 is None else np.where((lam0 > lo) & (lam0 < hi), lam0, 0.0)
    wa, waa = w * a, w * a * a
    prev = np.full(len(w), np.inf)
    todo = np.arange(len(w))  # rows whose root is not found yet
    for _ in range(_SECULAR):
        r = lam[todo]
        d = 1.0 + r[:, None] * a[todo]
        f = (wa[todo] / d).sum(axis=1)
        fp = -(waa[todo] / (d * d)).sum(axis=1)
        # f decreases in λ: keep the bracket; Newton's step while it stays inside and halves |f|
        lo_t = np.where(f > 0, r, lo[todo])
        hi_t = np.where(f < 0, r, hi[todo])
        with np.errstate(divide="ignore", invalid="ignore"):
            step = r - f / fp
        af = np.abs(f)
        newton = np.isfinite(step) & (step >= lo_t) & (step <= hi_t) & (af <= 0.5 * prev[todo])
        lo[todo], hi[todo], prev[todo] = lo_t, hi_t, af
        lam[todo] = np.where(af <= 1e-12, r, np.where(newton, step, 0.5 * (lo_t + hi_t)))
        todo = todo[af > 1e-12]
        if not len(todo):
            break
    return lam


def mle(values: np.ndarray, w: np.ndarray, t: float | np.ndarray | None = None,
        mean: float | np.ndarray | None = None) -> np.ndarray:
    """The maximum-likelihood distribution on ``values`` under ``t`` (normalized) or ``mean``.

    :param values: ``(K,)`` block scores in [0, 1].
    :param w: ``(M, K)`` empirical distributions (rows sum to 1; regularised, see :func:`weights`).
    :param t: constraint ``(μ − 0.5)/σ = t`` (scalar or ``(M,)``); or
    :param mean: constraint ``μ = mean``.
    :returns: ``(M, K)`` distributions maximising ``Σ wᵢ log pᵢ`` under the constraint.
    :raises ValueError: unless exactly one of ``t`` and ``mean`` is given.
    """
    if (t is None) == (mean is None):
        raise ValueError("give exactly one of t (normalized) and mean (score)")
    x = np.asarray(values, dtype=float)[None, :]
    if t is not None and np.ndim(t) == 0 and float(t) == 0.0:
        mean, t = 0.5, None  # t = 0 is the mean constraint μ = 0.5
    if mean is not None:
        a = x - np.asarray(mean, dtype=float).reshape(-1, 1)
        lam = _secular(w, a)
        return w / (1.0 + lam[:, None] * a)
    tt = np.broadcast_to(np.asarray(t, dtype=float), (len(w),)).copy()
    out = np.empty_like(w)
    neg = tt < 0  # t < 0 is t > 0 for the mirrored scores 1 − x
    if neg.any():
        out[neg] = _mle_t(1.0 - x[:, ::-1], w[neg][:, ::-1], -tt[neg])[:, ::-1]
    if (~neg).any():
        out[~neg] = _mle_t(x, w[~neg], tt[~neg])
    return out


def _fit_at(x: np.ndarray, w: np.ndarray, t: np.ndarray, mu: np.ndarray,
            lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For a trial mean ``mu`` (σ = (μ − 0.5)/t), the secular fit: ``(g = μ' − μ, p, λ)``.

    ``g`` is +1 where no fit exists (every ``aᵢ < 0``: σ too small, the mean must grow).
    """
    sigma = ((mu - 0.5) / t)[:, None]
    a = x - 0.5 - t[:, None] * (sigma ** 2 + (x - mu[:, None]) ** 2) / (2 * sigma)
    ok = np.where(w > 0, a, -np.inf).max(axis=1) > 0
    lam = _secular(w, a, lam)
    p = w / (1.0 + lam[:, None] * a)
    tot = p.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        g = np.where(ok, (p * x).sum(axis=1) / tot - mu, 1.0)
    return g, p / np.where(tot > 0, tot, 1.0)[:, None], lam


def _mle_t(x: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The t-constrained MLE for t > 0: the better of two root searches in μ.

    On sparse samples (a few blocks) the constrained likelihood can have several local maxima,
    and each search may stop at another one: secant steps started at ``μ = 0.5 + t σ̂`` and a
    bracketing search over the whole interval (:func:`_mle_t_bracketed`) both run, and the fit
    with the higher likelihood is kept (a root at an end of the interval is found by the latter).
    """
    m = len(w)
    top = t / (2 * np.sqrt(1 + t * t))
    lo, hi = 0.5 + 1e-9 * top, 0.5 + (1 - 1e-9) * top
    mu_hat = (w * x).sum(axis=1)
    sd_hat = np.sqrt((w * (x - mu_hat[:, None]) ** 2).sum(axis=1))
    a = np.clip(0.5 + t * sd_hat, lo, hi)
    ga, pa, lam = _fit_at(x, w, t, a, np.zeros(m))
    b = np.clip(a + ga, lo, hi)
    gb, pb, lam = _fit_at(x, w, t, b, lam)
    out = pb
    ok = np.abs(gb) < 1e-12
    todo = np.flatnonzero(~ok)
    for _ in range(8):
        if not len(todo):
            break
        a_, b_, ga_, gb_ = a[todo], b[todo], ga[todo], gb[todo]
        with np.errstate(invalid="ignore", divide="ignore"):
            c = b_ - gb_ * (b_ - a_) / (gb_ - ga_)
        c = np.where(np.isfinite(c), np.clip(c, lo[todo], hi[todo]), b_)
        gc, pc, lam_c = _fit_at(x, w[todo], t[todo], c, lam[todo])
        a[todo], ga[todo], b[todo], gb[todo] = b_, gb_, c, gc
        lam[todo] = lam_c
        out[todo] = pc
        settled = (np.abs(gc) < 1e-12) | (np.abs(c - b_) < 1e-13)
        ok[todo[settled]] = True
        todo = todo[~settled]
    other = _mle_t_bracketed(x, w, t)
    live = w > 0
    with np.errstate(divide="ignore"):
        la = np.where(live, w * np.log(np.where(live, out, 1.0)), 0.0).sum(axis=1)
        lb = np.where(live, w * np.log(np.where(live, other, 1.0)), 0.0).sum(axis=1)
    keep = ok & np.isfinite(la) & (la >= lb)
    return np.where(keep[:, None], out, other)


def _mle_t_bracketed(x: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The t-constrained MLE for t > 0, as a root in μ alone.

    At the solution σ = (μ − 0.5)/t, and σ² ≤ μ(1 − μ) on [0, 1], so μ − 0.5 ∈ (0, t/(2√(1 + t²))]. For a trial
    μ the secular equation gives the fit and its mean μ'; the MLE is the root of μ' − μ,
    found per row by bisection safeguarding regula falsi (Illinois). Every step of the
    fixed-point iteration in μ and σ jointly can be slow or lose its way on sparse samples.
    """
    m = len(w)
    top = t / (2 * np.sqrt(1 + t * t))
    lam = np.zeros(m)
    # both ends first, a hair inside: a root at an end (a two-point sample, σ → 0) ends there
    lo, hi = 0.5 + 1e-9 * top, 0.5 + (1 - 1e-9) * top
    glo, p_lo, lam_lo = _fit_at(x, w, t, lo, lam)
    ghi, p_hi, lam_hi = _fit_at(x, w, t, hi, lam)
    out = np.where((ghi >= 0)[:, None], p_hi, p_lo)
    lam = np.where(ghi >= 0, lam_hi, lam_lo)
    side = np.zeros(m)
    todo = np.flatnonzero((glo > 0) & (ghi < 0))
    for _ in range(_FIXED_POINT):
        if not len(todo):
            break
        a, b, ga, gb = lo[todo], hi[todo], glo[todo], ghi[todo]
        with np.errstate(invalid="ignore", divide="ignore"):
            sec = b - gb * (b - a) / (gb - ga)
        mid = 0.5 * (a + b)
        trial = np.where(np.isfinite(sec) & (sec > a) & (sec < b), sec, mid)
        g, p, lam_t = _fit_at(x, w[todo], t[todo], trial, lam[todo])
        lam[todo] = lam_t
        out[todo] = p
        pos = g > 0
        # Illinois: halve the value kept at the end that did not move twice in a row
        lo[todo] = np.where(pos, trial, a)
        glo[todo] = np.where(pos, g, np.where(side[todo] < 0, ga / 2, ga))
        hi[todo] = np.where(pos, b, trial)
        ghi[todo] = np.where(pos, np.where(side[todo] > 0, gb / 2, gb), g)
        side[todo] = np.where(pos, 1.0, -1.0)
        settled = (np.abs(g) < 1e-12) | (hi[todo] - lo[todo] < 1e-12)
        todo = todo[~settled]
    return out


def weights(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Regularised empirical distributions: ``counts`` plus :data:`REG` at the scores 0 and 1.

    :param counts: ``(M, K)`` block counts per value; ``values`` ``(K,)`` must hold 0 and 1.
    :raises ValueError: if ``values`` lacks 0 or 1.
    """
    values = np.asarray(values, dtype=float)
    ends = (values == 0.0) | (values == 1.0)
    if ends.sum() != 2:
        raise ValueError("the value grid must contain the scores 0 and 1 (once each)")
    c = np.asarray(counts, dtype=float) + REG * ends[None, :]
    return c / c.sum(axis=1, keepdims=True)


def llr(counts: np.ndarray, values: np.ndarray, h0: float, h1: float, kind: str = "nelo") -> np.ndarray | float:
    """Log-likelihood ratio of H1 against H0 per row (GSPRT, module docstring).

    :param counts: ``(M, K)`` (or ``(K,)``) block counts per value of ``values``.
    :param h0, h1: normalized Elo (``kind="nelo"``) or mean scores (``kind="score"``).
    :returns: ``(M,)`` (or a float for one row); 0 for a row without blocks.
    """
    one = np.ndim(counts) == 1
    c = np.atleast_2d(np.asarray(counts, dtype=float))
    w = weights(c, values)
    n = c.sum(axis=1)
    if kind == "nelo":
        p0 = mle(values, w, t=h0 / NELO_PER_T)
        p1 = mle(values, w, t=h1 / NELO_PER_T)
    elif kind == "score":
        p0 = mle(values, w, mean=h0)
        p1 = mle(values, w, mean=h1)
    else:
        raise ValueError(f"kind must be 'nelo' or 'score', got {kind!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log(p1 / p0), 0.0)
    out = n * terms.sum(axis=1)
    return float(out[0]) if one else out


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's stopping bounds ``(log(β/(1−α)), log((1−β)/α))`` of the LLR.

    :raises ValueError: unless 0 < α, β < 0.5.
    """
    if not (0 < alpha < 0.5 and 0 < beta < 0.5):
        raise ValueError(f"alpha and beta must be in (0, 0.5), got {alpha}, {beta}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


@dataclass
class Estimate:
    """Point estimates with 95 % normal intervals after ``n`` blocks (``nan`` before 2 blocks).

    :ivar score: mean block score and ``(low, high)``.
    :ivar nelo: normalized Elo ``(μ − 0.5)/σ · 800/ln 10`` and ``(low, high)``
        (``± 1.96 · 800/ln 10 / √n``, the interval of ``μ`` divided by ``σ``).
    """

    n: int
    score: float
    score_ci: tuple[float, float]
    nelo: float
    nelo_ci: tuple[float, float]
    sigma: float


def estimate(xs: list[float] | np.ndarray) -> Estimate:
    """Mean score, normalized Elo and their 95 % intervals of block scores ``xs``."""
    x = np.asarray(xs, dtype=float)
    n = len(x)
    nan = float("nan")
    if n < 2:
        m = float(x.mean()) if n else nan
        return Estimate(n, m, (nan, nan), nan, (nan, nan), nan)
    m = float(x.mean())
    s = float(x.std(ddof=1))
    half = 1.96 * s / math.sqrt(n)
    if s <= 0:
        return Estimate(n, m, (m, m), nan, (nan, nan), s)
    ne = (m - 0.5) / s * NELO_PER_T
    dh = 1.96 * NELO_PER_T / math.sqrt(n)
    return Estimate(n, m, (m - half, m + half), ne, (ne - dh, ne + dh), s)


def grid(xs: list[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The value grid (observed scores, rounded to 1e-9, with 0 and 1) and the counts on it."""
    x = np.round(np.asarray(xs, dtype=float), 9)
    values = np.unique(np.concatenate([x, [0.0, 1.0]]))
    counts = np.zeros(len(values))
    idx = np.searchsorted(values, x)
    np.add.at(counts, idx, 1.0)
    return values, counts


@dataclass
class GSPRT:
    """One sequential test fed block by block (the ordered prefix; module docstring).

    :ivar h0, h1: the hypotheses, normalized Elo (``kind="nelo"``) or mean score (``"score"``).
    :ivar alpha, beta: error rates of H1 and of H0 wrongly accepted.
    """

    h0: float = 0.0
    h1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    kind: str = "nelo"
    counts: dict[float, int] = field(default_factory=dict)
    n: int = 0
    stopped_at: int | None = None
    verdict: str | None = None
    last_llr: float = 0.0

    def __post_init__(self) -> None:
        self.lower, self.upper = bounds(self.alpha, self.beta)
        if self.kind not in ("nelo", "score"):
            raise ValueError(f"kind must be 'nelo' or 'score', got {self.kind!r}")
        if not self.h1 > self.h0:
            raise ValueError(f"H1 must lie above H0, got {self.h0} and {self.h1}")
        if self.kind == "score" and not (0 < self.h0 < 1 and 0 < self.h1 < 1):
            raise ValueError(f"score hypotheses lie in (0, 1), got {self.h0} and {self.h1}")

    def llr(self) -> float:
        """The LLR of the blocks so far (0 without blocks)."""
        if not self.n:
            return 0.0
        values = np.unique(np.array([*self.counts, 0.0, 1.0]))
        counts = np.array([self.counts.get(float(v), 0) for v in values], dtype=float)
        return float(llr(counts, values, self.h0, self.h1, self.kind))

    def add(self, x: float) -> str | None:
        """Record the next block score; returns ``"H1"``, ``"H0"`` or None (continue).

        Once a bound is crossed the verdict is final: later blocks are ignored.
        :raises ValueError: if ``x`` is not in [0, 1].
        """
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"a block score lies in [0, 1], got {x}")
        if self.verdict is not None:
            return self.verdict
        key = round(float(x), 9)
        self.counts[key] = self.counts.get(key, 0) + 1
        self.n += 1
        v = self.last_llr = self.llr()
        if v >= self.upper:
            self.verdict, self.stopped_at = "H1", self.n
        elif v <= self.lower:
            self.verdict, self.stopped_at = "H0", self.n
        return self.verdict
