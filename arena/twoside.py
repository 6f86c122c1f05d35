"""The batch fit's fast path for two-side fields (issue 18): per-result arrays, no sparse design.

Nearly every large field is two sides a result (two players, or two partnerships of ``size``
bots). Each result is then one stage of :mod:`arena.batchfit`'s model with the candidates
``{A}``, ``{B}`` and, when the field has ties, ``{A, B}`` (score ``(θ_A + θ_B)/2 + log δ₂``,
``θ_X`` the sum of the side's members). In the basis ``(x_A, x_B, e_δ)`` of the side sums
(``x_A`` has a 1 for each member of A) the candidates' rows are ``a = (1,0,0)``, ``(0,1,0)``
and ``(½,½,1)``, so a stage's score, softmax, gradient and information are a few numbers
(``3 × 3`` at most) that :func:`numpy.bincount` scatters onto the members' indices. The same
likelihood as the generic :class:`arena.batchfit.Design` (tests/ratings/test_twoside.py: the
same optimum to ~1e-12, the same sandwich to ~1e-10), at a fraction of its time and memory:
the arrays are ``(R, 2, size)`` member indices, an ``int8`` outcome and a block id per result,
and everything is summed :data:`CHUNK` results at a time (bounded transients).

:class:`TwoSide` is built by :func:`arena.batchfit.design`; :func:`arena.batchfit.fit` uses it
for large fields (the warm-started, grid-rounded, sandwich regime) and the generic design
(:meth:`TwoSide.generic`) for everything else, so small fields' tables are as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from arena import leverage

#: results of a gradient or likelihood pass at a time: each temporary 64 KB, under the C library's
#: mmap threshold and in the cache (chunks of 65,536 results took ~3× the CPU: a fresh mapping per array)
CHUNK = 1 << 13
#: results of an information pass at a time (each pass adds a ``(P, P)`` scatter: fewer, larger chunks)
INFO_CHUNK = 1 << 16


@dataclass(frozen=True)
class TwoSide:
    """Two-side results as arrays (one stage each).

    :ivar sides: ``(R, 2, size)`` the bots of each result's two sides.
    :ivar outcome: ``(R,)`` int8: 0 = side 0 placed first, 1 = side 1 first, 2 = a tie.
    :ivar block: ``(R,)`` int64 the result's duplicate block (0 .. n_blocks−1).
    :ivar n_bots, max_tie, n_blocks: sizes (``max_tie`` 2 when any result is a tie, else 1).
    :ivar generic: a function building the equivalent :class:`arena.batchfit.Design`.
    :ivar cols: ``(2·size, R)`` int32 the members again, one contiguous row per seat of a side
        (side 0's seats first): the gathers and scatters of every pass read these (int32: 8 MB
        less at 1M results than intp, for ~3 ms more a pass).
    """

    sides: np.ndarray
    outcome: np.ndarray
    block: np.ndarray
    n_bots: int
    max_tie: int
    n_blocks: int
    generic: Callable[[], Any]
    cols: np.ndarray

    @property
    def n_stages(self) -> int:
        """Stages (= results) of the likelihood."""
        return len(self.outcome)

    @property
    def n_params(self) -> int:
        """Bots plus the tie parameter (when there are ties)."""
        return self.n_bots + self.max_tie - 1

    @property
    def size(self) -> int:
        """Bots a side."""
        return int(self.sides.shape[2])

    def chunks(self, size: int = CHUNK) -> list[slice]:
        """The chunks of ``size`` results."""
        n = self.n_stages
        return [slice(lo, min(lo + size, n)) for lo in range(0, n, size)]

    def slots(self, idx: Any) -> list[tuple[np.ndarray, int]]:
        """Results ``idx``'s members: ``(column (n,) int64, side 0 or 1)`` per seat of a side."""
        return [(self.cols[q][idx].astype(np.intp), q // self.size) for q in range(2 * self.size)]


def outcomes(pats: list[tuple[int, ...]]) -> np.ndarray:
    """Per rank pattern, its outcome code (0: side 0 first, 1: side 1 first, 2: a tie; -1: not
    two sides)."""
    out = [-1 if len(p) != 2 else 0 if p[0] < p[1] else 1 if p[1] < p[0] else 2 for p in pats]
    return np.array(out, dtype=np.int8)


def _stage(d: TwoSide, beta: np.ndarray, idx: Any, ll: bool = False) -> tuple[list[np.ndarray], Any]:
    """Results ``idx`` (a slice or indices): each candidate's ``(n,)`` probability (``{A}``, ``{B}``, ``{A, B}``) and,
    with ``ll``, ``(n,)`` the log-probability of what happened (else None)."""
    th = beta[: d.n_bots]
    c, n = d.cols, d.size
    sa, sb = th.take(c[0][idx]), th.take(c[n][idx])
    for t in range(1, n):
        sa, sb = sa + th.take(c[t][idx]), sb + th.take(c[n + t][idx])
    oc = d.outcome[idx]
    if d.max_tie == 1:  # P(A) = 1 / (1 + exp(θ_B − θ_A)), from exp(−|x|) (no overflow)
        x = sb - sa
        e = np.exp(-np.abs(x))
        one = 1.0 / (1.0 + e)
        other = e * one
        up = x > 0
        p = [np.where(up, other, one), np.where(up, one, other)]
        if not ll:
            return p, None
        return p, -(np.maximum(np.where(oc == 0, x, -x), 0.0) + np.log1p(e))
    st = 0.5 * (sa + sb) + beta[d.n_bots]
    mx = np.maximum(np.maximum(sa, sb), st)
    ea, eb, et = np.exp(sa - mx), np.exp(sb - mx), np.exp(st - mx)
    z = ea + eb + et
    p = [ea / z, eb / z, et / z]
    if not ll:
        return p, None
    return p, np.where(oc == 0, sa, np.where(oc == 1, sb, st)) - mx - np.log(z)


def objective(d: TwoSide, beta: np.ndarray, lam: float) -> float:
    """The penalised log-likelihood at ``beta`` (every result weight 1)."""
    tot = 0.0
    for idx in d.chunks():
        tot += float(np.sum(_stage(d, beta, idx, True)[1]))
    return tot - 0.5 * lam * float(beta @ beta)


def _coefs(d: TwoSide, p: list[np.ndarray], idx: Any) -> list[np.ndarray]:
    """A chunk's score in the basis ``(x_A, x_B, e_δ)``: chosen − probability per candidate, the
    tie candidate's half on each side."""
    oc = d.outcome[idx]
    r = [(oc == c) - q for c, q in enumerate(p)]
    if len(r) == 2:
        return r
    return [r[0] + 0.5 * r[2], r[1] + 0.5 * r[2], r[2]]


def _info_coefs(p: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Each stage's information in the basis, ``Σ_c p_c a_c a_cᵀ − ā āᵀ`` (``[i][j]`` an ``(n,)`` array)."""
    if len(p) == 2:
        q = p[0] * p[1]
        return [[q, -q], [-q, q]]
    pa, pb, pt = p
    ma, mb = pa + 0.5 * pt, pb + 0.5 * pt
    m01, m02, m12 = 0.25 * pt - ma * mb, 0.5 * pt - ma * pt, 0.5 * pt - mb * pt
    return [[pa + 0.25 * pt - ma * ma, m01, m02], [m01, pb + 0.25 * pt - mb * mb, m12], [m02, m12, pt - pt * pt]]


def gradient(d: TwoSide, beta: np.ndarray, lam: float) -> np.ndarray:
    """``(P,)`` the gradient of the penalised log-likelihood at ``beta``."""
    g = np.zeros(d.n_params)
    if d.max_tie == 1:
        _gradient_no_ties(d, beta, g)
    else:
        for idx in d.chunks():
            _grad_add(d, g, _coefs(d, _stage(d, beta, idx)[0], idx), d.slots(idx))
    return g - lam * beta


def _gradient_no_ties(d: TwoSide, beta: np.ndarray, g: np.ndarray) -> None:
    """``g +=`` the log-likelihood's gradient without ties, in the fewest passes (the chord's every
    step): ``r = [A first] − P(A first)`` per result, ``+r`` on side A's members, ``−r`` on side B's
    (the two candidates' residuals sum to 0)."""
    th, n, nb = beta[: d.n_bots], d.size, d.n_bots
    with np.errstate(over="ignore"):  # exp(θ_B − θ_A) = inf: P(A first) = 0, as it should
        for idx in d.chunks():
            c = d.cols[:, idx]
            x = th.take(c[n]) - th.take(c[0])
            for t in range(1, n):
                x += th.take(c[n + t]) - th.take(c[t])
            np.exp(x, out=x)
            x += 1.0
            r = (d.outcome[idx] == 0) - np.reciprocal(x, out=x)
            for t in range(n):
                g[:nb] += np.bincount(c[t], r, nb)
                g[:nb] -= np.bincount(c[n + t], r, nb)


def _grad_add(d: TwoSide, g: np.ndarray, c: list[np.ndarray], slots: list[tuple[np.ndarray, int]]) -> None:
    """``g += `` a chunk's score, scattered onto its members (and the tie parameter)."""
    nb = d.n_bots
    g[:nb] += np.bincount(np.concatenate([col for col, _ in slots]), np.concatenate([c[a] for _, a in slots]), nb)
    if d.max_tie > 1:
        g[nb] += np.sum(c[2])


def grad_info(d: TwoSide, beta: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``(P,)`` gradient and ``(P, P)`` dense penalised information (negative Hessian) at ``beta``:
    each stage's ``c × c`` basis information scattered onto its members' pairs of columns."""
    n_p, nb = d.n_params, d.n_bots
    g = np.zeros(n_p)
    h = np.zeros((n_p, n_p))
    flat = h.reshape(-1)
    for idx in d.chunks(INFO_CHUNK):
        p = _stage(d, beta, idx)[0]
        slots = d.slots(idx)
        _grad_add(d, g, _coefs(d, p, idx), slots)
        m = _info_coefs(p)
        key = np.concatenate([ci * n_p + cj for ci, _ in slots for cj, _ in slots])
        flat += np.bincount(key, np.concatenate([m[a][b] for _, a in slots for _, b in slots]), n_p * n_p)
        if d.max_tie > 1:
            for col, a in slots:
                e = np.bincount(col, m[a][2], nb)
                h[nb, :nb] += e
                h[:nb, nb] += e
            h[nb, nb] += np.sum(m[2][2])
    h[np.diag_indices(n_p)] += lam
    return g - lam * beta, h


def rated(d: TwoSide) -> np.ndarray:
    """``(n_bots,)`` whether the bot has results."""
    out = np.zeros(d.n_bots, bool)
    for col in d.cols:
        out[col] = True
    return out


def sandwich(d: TwoSide, beta: np.ndarray, lam: float, hess: list | None, adjusted: bool) -> np.ndarray:
    """:func:`arena.batchfit.sandwich` for two-side results: ``H⁻¹ (Σ_b G̃_b G̃_bᵀ) H⁻¹`` over the
    bots (tie parameter held), ``G̃_b`` each block's score, leverage-adjusted (CR3) when
    ``adjusted``; summed whole blocks of about :data:`CHUNK` results at a time (bounded
    memory). ``hess``: the whole ``(P, P)`` information at ``beta`` is appended to it."""
    nb = d.n_bots
    full = grad_info(d, beta, lam)[1]
    if hess is not None:
        hess.append(full)
    inv = np.linalg.inv(full[:nb, :nb])
    ordered = bool(np.all(d.block[1:] >= d.block[:-1]))  # the canonical order (arena.tallies): by block
    order = None if ordered else np.argsort(d.block, kind="stable")
    blk = d.block if order is None else d.block[order]
    meat = np.zeros(nb * nb)
    keys: list[np.ndarray] = []
    wts: list[np.ndarray] = []
    cuts = np.unique(np.append(np.searchsorted(blk, blk[::CHUNK]), len(blk)))
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        idx = slice(lo, hi) if order is None else order[lo:hi]
        _meat(d, beta, idx, blk[lo:hi] - blk[lo], inv, adjusted, keys, wts)
        if sum(map(len, keys)) >= INFO_CHUNK * 4 or hi == len(blk):  # one scatter per ~260k entries
            meat += np.bincount(np.concatenate(keys), np.concatenate(wts), nb * nb)
            keys, wts = [], []
    out = inv @ meat.reshape(nb, nb)
    del meat
    out = out @ inv
    np.add(out, out.T, out=out)  # (out + outᵀ) / 2 without two more n × n arrays (numpy buffers the overlap)
    out *= 0.5
    return out


def _meat(d: TwoSide, beta: np.ndarray, idx: Any, blk: np.ndarray, inv: np.ndarray, adjusted: bool,
          keys: list[np.ndarray], wts: list[np.ndarray]) -> None:
    """The terms of ``Σ_b G̃_b G̃_bᵀ`` over the blocks of results ``idx`` (every result of those
    blocks; ``blk`` their block numbered from 0), appended to ``keys`` (flat ``(n_bots²)`` index)
    and ``wts``."""
    nb, per, n_blk = d.n_bots, 2 * d.size, int(blk[-1]) + 1
    p = _stage(d, beta, idx)[0]
    mem = d.cols[:, idx].T  # (n, per) a result's members, in order
    loc, bots = leverage.block_slots(np.repeat(blk, per), mem.ravel(), n_blk, nb)
    loc = loc.reshape(-1, per)
    k = bots.shape[1]
    side = [a for a in (0, 1) for _ in range(d.size)]
    base = blk.astype(np.int64) * k
    c = _coefs(d, p, idx)
    g = np.bincount(np.concatenate([base + loc[:, q] for q in range(per)]), np.concatenate([c[a] for a in side]),
                    n_blk * k).reshape(n_blk, k)
    if adjusted:
        m = _info_coefs(p)
        key = np.concatenate([(base + loc[:, q]) * k + loc[:, r] for q in range(per) for r in range(per)])
        wt = np.concatenate([m[side[q]][side[r]] for q in range(per) for r in range(per)])
        g = leverage.adjust(np.bincount(key, wt, n_blk * k * k).reshape(n_blk, k, k), g, bots, inv)
    for a in range(k):
        for b in range(k):
            on = (bots[:, a] >= 0) & (bots[:, b] >= 0)
            keys.append(bots[on, a] * nb + bots[on, b])
            wts.append(g[on, a] * g[on, b])


def build(sides: np.ndarray, codes: np.ndarray, pats: list[tuple[int, ...]], blocks: Any, n_bots: int,
          generic: Callable[[], Any]) -> TwoSide | None:
    """The :class:`TwoSide` of two-side results (``sides`` ``(R, 2, size)``, ``pats[codes[i]]`` the
    side ranks of result ``i``); None when they are not all of two non-empty sides (the generic
    design then, with its errors)."""
    if sides.ndim != 3 or sides.shape[1] != 2 or sides.shape[2] == 0 or not len(codes):
        return None
    outcome = outcomes(pats)[np.asarray(codes)]
    if (outcome < 0).any():
        return None
    block = np.asarray(blocks, dtype=np.int64)
    max_tie = 2 if (outcome == 2).any() else 1
    flat = sides.reshape(len(sides), -1)
    cols = np.empty((flat.shape[1], len(sides)), np.int32)
    for q in range(flat.shape[1]):
        cols[q] = flat[:, q]
    return TwoSide(sides, outcome, block, n_bots, max_tie, int(block.max()) + 1, generic, cols)
