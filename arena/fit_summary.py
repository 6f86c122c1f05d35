"""A batch fit's summaries (:class:`BatchFit`): intervals, rank intervals, P(stronger), P(win).

Everything here reads one estimate and its spread (the block bootstrap's replicates or the block
sandwich covariance, :func:`arena.batchfit.fit`), so the table's order, intervals and P(>next)
agree (docs/ratings.md). Moved out of :mod:`arena.batchfit` (issue 18, tenth pass); imported
from there as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

Z95 = 1.959963984540054  #: the two-sided 95% normal quantile


#: strengths closer than this (log-strength units, ~4e-7 Elo) are equal: all-tied or symmetric
#: results leave only rounding noise between bots (±1e-11), which must not read as "surely above"
RESOLUTION = 1e-9


@dataclass(frozen=True)
class BatchFit:
    """A batch fit and its bootstrap, in log-strength units (``θ``, mean 0 over the rated bots).

    :ivar theta: ``(n,)`` estimates (``nan`` for a bot without rated results).
    :ivar boot: ``(B, n)`` bootstrap replicates of ``theta`` (centred the same way).
    :ivar tie: ``{k: δ_k}`` tie parameters (empty without ties).
    :ivar rated: ``(n,)`` whether the bot has rated results.
    :ivar blocks: duplicate blocks resampled.
    :ivar cov: ``(n, n)`` the block sandwich covariance of ``theta`` when it replaces the
        bootstrap (then ``boot`` is empty); None with the bootstrap.
    :ivar beta: the fitted parameters (bots, then ``log δ``), uncentred: a later fit's start.
    :ivar info: ``(P, P)`` the information (negative Hessian) at ``beta`` for large fields (a
        later fit's :func:`chord` preconditioner), else None.
    """

    theta: np.ndarray
    boot: np.ndarray
    tie: dict[int, float]
    rated: np.ndarray
    blocks: int
    cov: np.ndarray | None = None
    beta: np.ndarray | None = None
    info: np.ndarray | None = None

    @property
    def has_spread(self) -> bool:
        """Whether the fit has a measure of its uncertainty (replicates or a covariance)."""
        return self.cov is not None or len(self.boot) > 0

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Per bot, the interval of ``θ`` (relative to the field's mean): the bootstrap's
        percentiles, or ``θ ± z·sd`` with the sandwich covariance."""
        a = (1 - level) / 2
        if self.cov is not None:
            from scipy.special import ndtri

            half = float(ndtri(1 - a)) * np.sqrt(np.maximum(np.diag(self.cov), 0.0))
            return self.theta - half, self.theta + half
        lo, hi = np.quantile(self.boot, [a, 1 - a], axis=0)
        return lo, hi

    def diff_sd(self) -> np.ndarray:
        """``(n, n)`` standard deviation of ``θ_i − θ_j`` (bootstrap, or the sandwich covariance)."""
        if self.cov is not None:
            cov = self.cov
        elif len(self.boot) < 2:
            return np.full((len(self.theta),) * 2, np.inf)
        else:
            cov = np.cov(self.boot, rowvar=False).reshape(len(self.theta), len(self.theta))
        v = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
        return np.sqrt(np.maximum(v, 0.0))

    def z(self) -> np.ndarray:
        """``(n, n)`` ``(θ_i − θ_j) / sd``: > 1.96 means i is above j at the 95% level (two-sided)
        (computed once per fit: the rank intervals and P(stronger) both read it; a copy each call)."""
        return self._z.copy()

    @cached_property
    def _z(self) -> np.ndarray:
        d = self.theta[:, None] - self.theta[None, :]
        d[np.abs(d) < RESOLUTION] = 0.0  # equal to the fit's resolution: neither is above (order() ties them too)
        sd = self.diff_sd()
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, d / np.where(sd > 0, sd, 1.0), np.where(d > 0, np.inf, np.where(d < 0, -np.inf, 0.0)))
        if self.cov is None and len(self.boot) >= 2:
            z = _with_sure_percentiles(z, self.boot)
        z[d == 0.0] = 0.0  # (the replicates' last bits do not separate bots the estimate cannot)
        if self.blocks < 2:
            z = np.zeros_like(z)  # one block: no measure of the variation, nothing separates
        z[~self.rated, :] = 0.0
        z[:, ~self.rated] = 0.0
        return z

    def p_stronger(self) -> np.ndarray:
        """``(n, n)`` P(θ_i > θ_j): the normal approximation ``Φ(z)`` with the bootstrap's sd."""
        return 0.5 * (1 + _erf(self.z() / math.sqrt(2)))

    def p_win(self) -> np.ndarray:
        """``(n, n)`` the model's expected score of i against j head to head (a tie counts half)."""
        t = self.theta
        d2 = self.tie.get(2, 0.0)
        a = np.exp(t - np.nanmax(t)) if self.rated.any() else np.ones_like(t)
        num = a[:, None] + 0.5 * d2 * np.sqrt(a[:, None] * a[None, :])
        return num / (a[:, None] + a[None, :] + d2 * np.sqrt(a[:, None] * a[None, :]))

    def order(self) -> np.ndarray:
        """Bot indices best first: rated bots by ``θ`` (descending, to 1e-9), then the unrated."""
        # strengths within 1e-9 (equal results, or a warm start's last bits) rank by index
        key = np.where(self.rated, np.round(-self.theta, 9), np.inf)  # 9 digits: RESOLUTION
        return np.argsort(key, kind="stable")

    def rank_intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Per bot, the 1-based rank interval ``[1 + #bots surely above, #rated − #bots surely below]``.

        "Surely" = the 95% interval of the difference excludes 0 (``|z| > 1.96``); the
        true rank of a bot falls inside unless some other bot is placed surely on the
        wrong side of it. Unrated bots get ``(0, 0)``.
        """
        z = self.z()
        n = int(self.rated.sum())
        above = (z.T > Z95).sum(axis=1)  # j surely above i: z[j, i] > 1.96
        below = (z > Z95).sum(axis=1)
        lo = np.where(self.rated, 1 + above, 0)
        hi = np.where(self.rated, n - below, 0)
        return lo, hi


def _with_sure_percentiles(z: np.ndarray, boot: np.ndarray) -> np.ndarray:
    """``z`` where the bootstrap's percentile interval of ``θ_i − θ_j`` excludes 0 but
    ``|z| ≤ 1.96``, replaced by the normal quantile of the share of replicates on that side
    (clipped to ``1 − 1/(2B)``). When one bot wins almost everything its replicates' far tail is
    long (quasi-separation: a replicate where it never loses sends its ``θ`` towards the
    ridge's bound) and the standard deviation makes a sure gap look unsure (a bot with 179
    wins of 180 matches was ranked "1–3" with P(>next) 0.94 although every replicate put it
    first); elsewhere the two agree and ``z`` is unchanged."""
    from scipy.special import ndtri

    b = len(boot)
    share = ((boot[:, :, None] - boot[:, None, :]) > 0).mean(axis=0)
    share = np.clip(share, 0.5 / b, 1 - 0.5 / b)
    zp = ndtri(share)
    every = (share >= 1 - 0.5 / b) | (share <= 0.5 / b)  # every replicate on one side
    upgrade = every & (np.abs(z) <= Z95) & (np.sign(zp) == np.sign(z))
    return np.where(upgrade, zp, z)


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf
    return erf(x)
