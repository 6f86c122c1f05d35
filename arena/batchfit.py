"""The order-independent batch fit: Plackett–Luce over all rated results, with a block bootstrap.

Model (the Plackett–Luce model with ties of Turner, Firth et al., "Modelling rankings in R:
the PlackettLuce package", 2020; for two sides it is Bradley–Terry with Davidson's ties):

* each bot has a log-strength ``θ``; a side's log-strength is the **sum** of its members'
  (teams as in TrueSkill: a ``partners: mixed`` side of two bots);
* a match's ranking is built from the top: among the sides not yet placed, the next group
  of ``k`` tied sides ``T`` is chosen with probability proportional to
  ``δ_k · exp(mean of the sides' log-strengths in T)`` (``δ_1 = 1``), over every group of
  at most ``D`` remaining sides, ``D`` = the largest tie seen. Two sides without ties:
  ``P(A beats B) = 1 / (1 + exp(θ_B − θ_A))``.

The fit is the maximum of the log-likelihood with a tiny ridge penalty ``λ/2 ‖β‖²``
(:data:`RIDGE`), which only keeps the estimate finite for a bot that lost (or won) every
match; it is concave, so Newton's method converges from 0. The likelihood is a conditional
logit: every candidate group is a sparse row of a design matrix (:class:`Design`).

Uncertainty comes from a bootstrap that resamples whole **duplicate blocks** (one deal of one
lineup, every rotation — the matches that share a deal, :func:`arena.stats.block_weights`):
each replicate is the same fit with block weights, started from the full fit and iterated
with the full fit's Hessian (exact Newton for a replicate that does not settle).
:class:`BatchFit` turns the replicates into 95% intervals, P(A stronger than B) for every
pair, and rank intervals — all from the one estimate, so they agree with its order.
Why this is written here and not taken from ``choix``: see ``docs/ratings.md``.

Large fields (issue 18): from :data:`ANALYTIC_FROM` stages or :data:`ANALYTIC_BOTS` bots on, the replicates are replaced by
the **block sandwich** covariance ``H⁻¹ (Σ_b G_b G_bᵀ) H⁻¹`` (``H`` the information over the
bots, ``G_b`` the score of block ``b`` at the fit). It is the block bootstrap linearised: a
replicate with multinomial block weights ``w_b`` moves the fit by ``H⁻¹ Σ_b (w_b − 1) G_b``
to first order, whose covariance is exactly that matrix (``Σ_b G_b`` = the ridge term ≈ 0).
The intervals become normal ones; calibration by simulation: ``tests/ratings/test_sandwich.py``.
The fit can start from a previous one (``beta0``: the checkpointed fit, :mod:`arena.strength`).

The fit's summaries (intervals, rank intervals, P(stronger)) are :class:`arena.fit_summary.BatchFit`;
two-side results have a fast path without the sparse design (:mod:`arena.twoside`, :func:`design`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena import leverage, stats, twoside
from arena.design_matrix import Design, RankCodes, build_design, dense_ranks, record_results  # noqa: F401 (re-exported)
from arena.fit_summary import RESOLUTION, Z95, BatchFit  # noqa: F401 (re-exported: arena.batchfit.BatchFit, Z95, RESOLUTION)
from arena.twoside import TwoSide

RIDGE = 1e-3  #: λ of the ridge penalty (per parameter, in log-strength units)
ELO = 400 / math.log(10)  #: Elo points per unit of log-strength
#: from this many stages on, :func:`fit` uses the block sandwich covariance, not the bootstrap
ANALYTIC_FROM = 20_000
#: and for fields of more bots than this (the bootstrap's cost grows with bots × results)
ANALYTIC_BOTS = 100
#: large fields' parameters are rounded to multiples of 1/GRID (~1e-6 in log-strength, 2e-4 Elo)
#: once converged to the floating-point floor: Newton's method stops at steps below 1e-8, which
#: leaves cold and warm starts 1e-9..1e-7 apart (mostly along the all-bots direction, where only
#: the ridge curves the likelihood: a bot within that of a rounding midpoint went to the
#: neighbour, a table's 5th digit). So both paths end in the same iteration, chord steps with the
#: bots' mean set to its exact optimum 0 (:func:`_chord_steps`), until a step is below 1e-13 or
#: stalls at the gradient's rounding. A warm-started and a cold fit then differ by ~1e-14
#: (measured: 2e-16..1e-14) and land on the same grid point unless a parameter lies within that
#: of a midpoint: about 2e-14 × GRID ≈ 2e-8 per parameter (a table in 10⁴ at 1,000 bots, where
#: Newton's stop crossed a midpoint in most tables). No rounding removes that last chance (any
#: map from a continuum to a grid has boundaries, and a shifted second grid only moves them):
#: the polish narrows the band it applies to ~10⁵ times, for two gradient passes and one LU.
GRID = float(2**20)


def design(sides: Sequence[Sequence[Sequence[int]]] | np.ndarray, ranks: Sequence[Sequence[int]] | RankCodes,
           blocks: Sequence[int], n_bots: int) -> Design | TwoSide:
    """The likelihood of a set of results (the arguments of :func:`build_design`): a
    :class:`arena.twoside.TwoSide` when every result is two sides in one ``(R, 2, size)`` array
    (:func:`fit`'s fast path for large fields), else the generic :func:`build_design`.

    :raises ValueError: as :func:`build_design`."""
    def generic() -> Design:
        """The generic sparse design of the same results (any shape)."""
        return build_design(sides, ranks, blocks, n_bots)

    if isinstance(sides, np.ndarray) and len(sides):
        codes, pats = ((ranks.codes, ranks.pats) if isinstance(ranks, RankCodes)
                       else _codes_of(ranks))
        got = twoside.build(sides, codes, pats, blocks, n_bots, generic)
        if got is not None:
            return got
    return generic()


def _codes_of(ranks: Sequence[Sequence[int]]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Rank tuples as codes into their table (:class:`RankCodes`'s form)."""
    table: dict[tuple[int, ...], int] = {}
    codes = np.array([table.setdefault(tuple(r), len(table)) for r in ranks], dtype=np.int64)
    return codes, list(table)


def _softmax(d: Design, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-stage softmax of ``scores`` (``(C,)`` or ``(C, B)``): probabilities and per-stage log-normaliser."""
    sc = scores + (d.pad if scores.ndim == 1 else d.pad[:, None])
    sh = sc.reshape((-1, d.width) + sc.shape[1:])
    mx = sh.max(axis=1)
    sh -= mx[:, None]
    np.exp(sh, out=sh)
    z = sh.sum(axis=1)
    sh /= z[:, None]
    return sc, mx + np.log(z)


def _objective(d: Design | TwoSide, w: np.ndarray, beta: np.ndarray, lam: float) -> float:
    if isinstance(d, TwoSide):  # every weight 1 (the fast path fits large fields only)
        return twoside.objective(d, beta, lam)
    s = d.x @ beta
    _, lz = _softmax(d, s)
    return float(np.dot(w, s[d.chosen] - lz) - 0.5 * lam * beta @ beta)


def _grad_hess(d: Design | TwoSide, w: np.ndarray, beta: np.ndarray, lam: float) -> tuple[np.ndarray, Any]:
    """Gradient and (sparse, CSC) Hessian of the penalised log-likelihood with stage weights ``w``.

    Up to :data:`DENSE_HESS_UPTO` parameters the Hessian is accumulated dense, stage block by
    stage block (:func:`_info_dense`: equal bit for bit to the sparse products, a block's
    temporaries instead of copies of the whole design); beyond, by sparse products. Two-side
    results (:class:`arena.twoside.TwoSide`, every weight 1): :func:`arena.twoside.grad_info`."""
    if isinstance(d, TwoSide):  # dense, as a CSC copy of it would give it back (-0.0 as 0.0): no scipy.sparse
        g, hd = twoside.grad_info(d, beta, lam)
        return g, hd + 0.0
    import scipy.sparse as sp  # only here and for the generic design (0.3 s to import)

    p, _ = _softmax(d, d.x @ beta)
    wc = np.repeat(w, d.width)
    r = -wc * p
    r[d.chosen] += w
    g = d.x.T @ r - lam * beta
    del r
    if d.n_params <= DENSE_HESS_UPTO:
        h = _info_dense(d, w, p, lam)
        if np.count_nonzero(h) >= DENSE_FROM * h.size:  # what _solve solves dense: the same matrix
            return np.asarray(g).ravel(), sp.csc_matrix(h)
    xp = sp.csr_matrix((p, (d.stage, np.arange(len(p)))), shape=(d.n_stages, len(p))) @ d.x  # (S, P) stage means
    h = (d.x.T @ sp.diags(wc * p) @ d.x - xp.T @ sp.diags(w) @ xp) + lam * sp.eye(len(beta))
    return np.asarray(g).ravel(), sp.csc_matrix(h)


#: up to this many parameters the information is accumulated dense (:func:`_info_dense`; 3000: 72 MB)
DENSE_HESS_UPTO = 3000
#: design rows per block of :func:`_info_dense` and :func:`sandwich` (~60 bytes of temporaries a row)
BLOCK_ROWS = 1 << 17


def _outer_add(out: np.ndarray, x: Any, w: np.ndarray, n_p: int) -> None:
    """``out += Σ_c w_c x_c x_cᵀ`` over the rows ``c`` of the CSR ``x`` (``out`` flat ``(P·P,)``),
    each entry summed in row order — the order of scipy's sparse product ``x.T @ diag(w) @ x``,
    so the sums are its own bit for bit."""
    ip, ind, dat = x.indptr, x.indices, x.data
    n = np.diff(ip)
    row = np.repeat(np.arange(x.shape[0]), n)
    cnt = n[row]  # per entry: the entries of its row
    e = np.repeat(np.arange(len(ind)), cnt)
    f = ip[:-1][row][e] + (np.arange(len(e)) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    np.add.at(out, ind[e].astype(np.int64) * n_p + ind[f], (dat[e] * w[row[e]]) * dat[f])


def _info_dense(d: Design, w: np.ndarray, p: np.ndarray, lam: float) -> np.ndarray:
    """``(P, P)`` the penalised information ``Xᵀ diag(w p) X − Σ_s w_s x̄_s x̄_sᵀ + λI`` (``x̄_s``
    the stage's probability-weighted mean row), accumulated a block of stages at a time."""
    import scipy.sparse as sp

    n_p = d.n_params
    h1, h2 = np.zeros(n_p * n_p), np.zeros(n_p * n_p)
    step = max(1, BLOCK_ROWS // d.width)
    for s0 in range(0, d.n_stages, step):
        s1 = min(d.n_stages, s0 + step)
        r0, r1 = s0 * d.width, s1 * d.width
        xc, pc, wc = d.x[r0:r1], p[r0:r1], np.repeat(w[s0:s1], d.width)
        _outer_add(h1, xc, wc * pc, n_p)
        stage = np.repeat(np.arange(s1 - s0), d.width)
        xp = sp.csr_matrix((pc, (stage, np.arange(r1 - r0))), shape=(s1 - s0, r1 - r0)) @ xc
        _outer_add(h2, xp, w[s0:s1], n_p)
    h1 -= h2  # in place: (h1 − h2) + λI entry for entry (no −0.0 arises: the sums start at +0.0)
    del h2
    h = h1.reshape(n_p, n_p)
    h[np.diag_indices(n_p)] += lam
    return h


#: a Hessian with more stored entries than this fraction is solved dense (LAPACK), else sparse
DENSE_FROM = 0.05


def _solve(h: Any, g: np.ndarray) -> np.ndarray:
    """``h⁻¹ g`` for the (symmetric, positive definite) negative Hessian ``h`` (sparse): a dense
    solve when it is dense enough or small (a field of 1,000 bots where everyone met hundreds
    of others: 30 ms instead of SuperLU's 0.7 s), else a sparse one (a field of few opponents each)."""
    import scipy.sparse.linalg as spla

    n = h.shape[0]
    if n <= 3000 and _nnz(h) >= DENSE_FROM * n * n:
        return np.linalg.solve(_dense(h), g)
    return spla.spsolve(_csc(h), g, permc_spec="MMD_AT_PLUS_A")


def _nnz(h: Any) -> int:
    """Stored entries of a sparse ``h``; nonzero entries of a dense one (what its CSC copy stores)."""
    return int(np.count_nonzero(h)) if isinstance(h, np.ndarray) else int(h.nnz)


def _dense(h: Any) -> np.ndarray:
    """``h`` as a dense array (a sparse one converted; a dense one as it is)."""
    return h if isinstance(h, np.ndarray) else h.toarray()


def _csc(h: Any) -> Any:
    """``h`` as a CSC matrix."""
    import scipy.sparse as sp

    return sp.csc_matrix(h) if isinstance(h, np.ndarray) else h.tocsc()


def newton(d: Design | TwoSide, w: np.ndarray | None = None, beta: np.ndarray | None = None, lam: float = RIDGE,
           tol: float = 1e-10, max_iter: int = 100, free: int | None = None,
           info: bool = True, polish: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Maximise the penalised log-likelihood with stage weights ``w`` (default all 1).

    :param free: fit only the first ``free`` parameters (the others stay as given).
    :param tol: stop when the objective moves less than this (0: only when a step is below 1e-8).
    :param info: False: the information at the result is not computed (None returned).
    :param polish: then iterate on to the floating-point floor with the last step's Hessian
        (:func:`_chord_steps`, bots centred: the fixed point :func:`chord` reaches from any
        start, gradients only); every stage weight 1 and ``free`` None only.

    :returns: ``(beta, information)``: the parameters (bots, then ``log δ``) and the negative
        Hessian at them.
    """
    w = np.ones(d.n_stages) if w is None else w
    beta = np.zeros(d.n_params) if beta is None else beta.copy()
    f = _objective(d, w, beta, lam)
    h = None
    for _ in range(max_iter):
        g, h = _grad_hess(d, w, beta, lam)
        step = np.zeros_like(beta)
        # sparse: a field of 1,000 bots meets few opponents each (a dense solve per step was
        # most of the time of a 1,000-bot table)
        step[:free] = _solve(h[:free, :free], g[:free])
        t = 1.0
        while True:
            nb = beta + t * step
            nf = _objective(d, w, nb, lam)
            if nf >= f - 1e-12 or t < 1e-8:
                break
            t /= 2
        beta, f_old, f = nb, f, nf
        if np.max(np.abs(t * step)) < 1e-8 or abs(f - f_old) < tol:
            break
    if polish and h is not None:
        got = _chord_steps(d, beta, _factor(h), lam, 40)
        beta = beta if got is None else got
    return beta, _dense(_grad_hess(d, w, beta, lam)[1]) if info else None


def chord(d: Design | TwoSide, beta: np.ndarray, info: np.ndarray, lam: float = RIDGE, max_iter: int = 40) -> np.ndarray | None:
    """Newton's iteration with a fixed information matrix ``info`` (the chord method): the
    maximum from a warm start ``beta`` with ``info`` a previous fit's negative Hessian (the
    checkpoint's), so each step costs a gradient (no Hessian over every result). Linear
    convergence at a rate of about the relative change of the Hessian (1% more results: two
    digits a step), to the floating-point floor (:func:`_chord_steps`: the same fixed point
    as :func:`newton` with ``polish``).

    :returns: the parameters, or None if ``info`` does not fit or the steps do not shrink
        (then :func:`newton`).
    """
    import scipy.linalg as sla

    if info.shape != (d.n_params, d.n_params) or not np.isfinite(info).all():
        return None
    try:
        lu = sla.lu_factor(info, check_finite=False)
    except (ValueError, np.linalg.LinAlgError):
        return None
    return _chord_steps(d, beta, lambda g: sla.lu_solve(lu, g, check_finite=False), lam, max_iter)


def _factor(h: Any) -> Any:
    """A solver ``g ↦ h⁻¹ g`` for the sparse negative Hessian ``h``, factorised once (dense LU
    where :func:`_solve` solves dense, else SuperLU)."""
    import scipy.linalg as sla

    n = h.shape[0]
    if n <= 3000 and _nnz(h) >= DENSE_FROM * n * n:
        lu = sla.lu_factor(_dense(h), check_finite=False)
        return lambda g: sla.lu_solve(lu, g, check_finite=False)
    import scipy.sparse.linalg as spla

    return spla.splu(_csc(h), permc_spec="MMD_AT_PLUS_A").solve


def _centre_bots(b: np.ndarray, nb: int) -> None:
    """``b[:nb] −= mean`` in place: the bots' parameters onto the optimum's mean, 0 exactly (the
    likelihood does not change when every bot gains the same ``c`` — a result's sides have
    equal sizes — so the ridge alone sets the mean, ``λ Σθ = 0``). Along that direction the
    curvature is only ``λ`` and the gradient's rounding noise (~1e-12 over 10⁴ results)
    moves Newton's result by ~1e-9: set exactly instead, not solved for."""
    if nb:
        b[:nb] -= b[:nb].mean()


def _chord_steps(d: Design | TwoSide, beta: np.ndarray, solve: Any, lam: float, max_iter: int) -> np.ndarray | None:
    """``θ ← centred(θ + solve(g(θ)))`` (``solve`` ≈ the inverse information) until a step is below
    1e-13 or, below 1e-10, stops halving (the gradient's rounding floor, ~1e-15 in ``θ``): the
    optimum to the last few bits from any start. None if the steps do not shrink above 1e-10
    or in ``max_iter`` steps, or become non-finite."""
    nb = d.n_bots
    b, prev = beta.astype(float).copy(), np.inf
    _centre_bots(b, nb)
    for _ in range(max_iter):
        step = solve(_gradient(d, b, lam))
        _centre_bots(step, nb)  # its all-bots part is the gradient's rounding over λ (~1e-10)
        m = float(np.max(np.abs(step))) if len(step) else 0.0
        if not np.isfinite(m) or m > 0.5 * prev and m > 1e-10:
            return None
        b += step
        if m < 1e-13 or m > 0.5 * prev:
            return b
        prev = m
    return None


def _gradient(d: Design | TwoSide, beta: np.ndarray, lam: float) -> np.ndarray:
    """``(P,)`` the gradient of the penalised log-likelihood (every stage weight 1)."""
    if isinstance(d, TwoSide):
        return twoside.gradient(d, beta, lam)
    p, _ = _softmax(d, d.x @ beta)
    r = -p
    r[d.chosen] += 1.0
    return np.asarray(d.x.T @ r).ravel() - lam * beta


def bootstrap(d: Design, beta: np.ndarray, info: np.ndarray, n_boot: int = 400, seed: int = 0,
              lam: float = RIDGE, max_iter: int = 60, chunk_cells: int = 4_000_000) -> np.ndarray:
    """Refit ``n_boot`` times with whole duplicate blocks resampled (:func:`arena.stats.block_weights`).

    Each replicate starts at ``beta`` and iterates ``θ ← θ + info⁻¹ g_b(θ)`` (the full fit's
    Hessian) until its steps are below 1e-5; a replicate that does not settle in ``max_iter``
    steps gets an exact Newton fit. The tie parameters stay at the full fit's values (a
    replicate without a rare tie order would send its ``δ`` to 0; they are nearly orthogonal
    to the differences between bots).

    :returns: ``(n_boot, P)`` replicate parameters.
    """
    bw = stats.block_weights(d.n_blocks, n_boot, seed)  # (B, n_blocks)
    nb = d.n_bots
    inv = np.linalg.inv(info[:nb, :nb])
    out = np.empty((n_boot, len(beta)))
    per = max(1, chunk_cells // max(1, d.x.shape[0]))
    xt = d.x.T.tocsr()
    for lo in range(0, n_boot, per):
        w = bw[lo:lo + per][:, d.block].T.astype(float)  # (S, b)
        bb = np.tile(beta, (w.shape[1], 1)).T  # (P, b)
        live = np.arange(w.shape[1])
        for _ in range(max_iter):
            wl = w[:, live]
            p, _ = _softmax(d, d.x @ bb[:, live])
            r = -np.repeat(wl, d.width, axis=0) * p
            r[d.chosen] += wl
            step = inv @ (xt @ r - lam * bb[:, live])[:nb]
            bb[:nb, live] += step
            live = live[np.max(np.abs(step), axis=0) >= 1e-5]
            if not len(live):
                break
        for i in live:
            bb[:, i] = newton(d, w[:, i], bb[:, i], lam, free=nb)[0]
        out[lo:lo + per] = bb.T
    return out


#: the sandwich's block scores leverage-adjusted (CR3, :mod:`arena.leverage`); False: the plain
#: sandwich, far too sure of bots that few blocks inform (kept for the tests that show it)
LEVERAGE_ADJUSTED = True


def sandwich(d: Design | TwoSide, beta: np.ndarray, lam: float = RIDGE, hess: list | None = None) -> np.ndarray:
    """``(n_bots, n_bots)`` block sandwich covariance of the bots' parameters at ``beta``:
    ``H⁻¹ (Σ_b G̃_b G̃_bᵀ) H⁻¹`` with ``H`` the penalised information over the bots (tie
    parameters held, as in :func:`bootstrap`) and ``G̃_b = (I − J_b H⁻¹)⁻¹ G_b`` the score of
    duplicate block ``b`` adjusted by its own information ``J_b`` (CR3, the jackknife's one-step
    form: :mod:`arena.leverage`; the plain ``G_b`` when :data:`LEVERAGE_ADJUSTED` is off).

    :param hess: if given, the whole ``(P, P)`` information at ``beta`` is appended to it (the
        next fit's :func:`chord` preconditioner)."""
    if isinstance(d, TwoSide):
        return twoside.sandwich(d, beta, lam, hess, LEVERAGE_ADJUSTED)
    import scipy.sparse as sp

    nb = d.n_bots
    p, _ = _softmax(d, d.x @ beta)
    r = -p  # G_b = Σ over its stages' rows of (chosen − p_row) · x_row
    r[d.chosen] += 1.0
    meat = None if LEVERAGE_ADJUSTED else _meat(d, r)  # the plain meat a range of blocks at a time
    full = _grad_hess(d, np.ones(d.n_stages), beta, lam)[1]
    if hess is not None:
        hess.append(full.toarray())
    h = full[:nb, :nb].toarray()
    inv = np.linalg.inv(h)
    if meat is None:  # CR3: each block's score through (I − J_b H⁻¹)⁻¹ (arena.leverage)
        x = d.x.tocoo()
        bots = x.col < nb
        row, col = x.row[bots], x.col[bots]
        loc, slots = leverage.block_slots(d.block[row // d.width], col, d.n_blocks, nb)
        adj = leverage.adjusted_scores(row, loc, x.data[bots], slots, p, r, d.width, d.block, inv)
        on = slots >= 0
        gb = sp.csr_matrix((adj[on], (np.nonzero(on)[0], slots[on])), shape=(max(d.n_blocks, 1), nb))
        meat = (gb.T @ gb).toarray()
    out = inv @ meat @ inv
    return np.asarray((out + out.T) / 2)


def _meat(d: Design, r: np.ndarray) -> np.ndarray:
    """``(n_bots, n_bots)`` ``Σ_b G_b G_bᵀ`` of the blocks' scores ``G_b = Σ_rows r_row x_row`` (bots'
    columns), a range of blocks at a time: each block's entries in the design's order, so each
    ``G_b`` and the sum are those of one sparse ``G`` over every block (``G.T @ G``) bit for bit."""
    import scipy.sparse as sp

    nb = d.n_bots
    out = np.zeros(nb * nb)
    order = np.argsort(d.block, kind="stable")  # stages by block, in stage order within one
    cut = np.searchsorted(d.block[order], np.arange(d.n_blocks + 1))
    step = max(1, BLOCK_ROWS // d.width)
    b0 = 0
    while b0 < d.n_blocks:
        b1 = max(b0 + 1, int(np.searchsorted(cut, cut[b0] + step, side="right")) - 1)
        b1 = min(b1, d.n_blocks)
        st = order[cut[b0]:cut[b1]]
        rows = (st[:, None] * d.width + np.arange(d.width)).ravel()
        xc = d.x[rows]
        n = np.diff(xc.indptr)
        local = np.repeat(np.arange(len(rows)), n)
        bots = xc.indices < nb
        blk = d.block[st][local[bots] // d.width] - b0
        g = sp.csr_matrix((r[rows][local[bots]] * xc.data[bots], (blk, xc.indices[bots])), shape=(b1 - b0, nb))
        _outer_add(out, g, np.ones(b1 - b0), nb)
        b0 = b1
    return np.asfortranarray(out.reshape(nb, nb))  # the layout of G.T @ G's array: the same BLAS path after


def fit(d: Design | TwoSide, n_boot: int = 400, seed: int = 0, lam: float = RIDGE, beta0: np.ndarray | None = None,
        method: str = "auto", info0: np.ndarray | None = None) -> BatchFit:
    """Fit ``d`` and measure its uncertainty; ``θ`` centred on the rated bots' mean.

    :param beta0: a start for Newton's method (a previous fit's :attr:`BatchFit.beta`; its
        length must be :attr:`Design.n_params`, else it is ignored), used for large fields
        (as for the sandwich) only, where the converged parameters are polished to the
        floating-point floor (the bots' mean set to its exact optimum) and rounded to the
        :data:`GRID` so a warm and a cold start give the same bits (why this way: the note at
        :data:`GRID`); a small field always starts
        cold (its bootstrap replicates start from the unrounded fit, as before).
    :param info0: with ``beta0``, the information (negative Hessian) of the fit it comes from
        (:attr:`BatchFit.info`): a large field's fit then iterates with it (:func:`chord`),
        without a Hessian over every result per step; the same grid point as :func:`newton`.
    :param method: ``bootstrap``, ``sandwich`` or ``auto`` (the sandwich from
        :data:`ANALYTIC_FROM` stages on or for more than :data:`ANALYTIC_BOTS` bots, when
        ``n_boot`` > 0).
    :raises ValueError: for another ``method``.
    """
    if method not in ("auto", "bootstrap", "sandwich"):
        raise ValueError(f"batch fit method must be auto, bootstrap or sandwich, got {method!r}")
    with _one_blas_thread():
        return _fit(d, n_boot, seed, lam, beta0, method, info0)


def _centred(cv: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """``C cv Cᵀ`` (in place), ``C`` the map to strengths relative to the rated bots' mean (an
    unrated bot's row 0), for the symmetric ``cv``: ``cv_ij − u_i − u_j + ū`` with ``u = cv[:, rated]``'s
    row means (O(n²), no ``n × n`` products)."""
    if rated.any():
        u = cv[:, rated].mean(axis=1)
        cv -= u[None, :]
        cv -= u[:, None]
        cv += u[rated].mean()
    cv[~rated] = 0.0
    cv[:, ~rated] = 0.0
    return cv


def _one_blas_thread() -> Any:
    """The BLAS/LAPACK calls of a fit on one thread (``threadpoolctl``): its dense solves are
    ~1,000 × 1,000, where OpenBLAS's threads cost several times the CPU of one on a loaded machine
    (0.155 against 0.024 CPU-s a solve, measured) — and the result does not depend on how many
    cores the machine has. Without ``threadpoolctl`` installed: as the library is set up."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - an optional speed-up
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _fit(d: Design | TwoSide, n_boot: int, seed: int, lam: float, beta0: np.ndarray | None, method: str,
         info0: np.ndarray | None) -> BatchFit:
    """:func:`fit` (its BLAS already limited to one thread)."""
    large = d.n_stages >= ANALYTIC_FROM or d.n_bots > ANALYTIC_BOTS
    use_cov = n_boot > 0 and (method == "sandwich" or (method == "auto" and large))
    # a warm start stops within Newton's tolerance of the cold fit, not on its last bit: only
    # where it pays (large fields); a small field's table stays bit for bit reproducible
    warm = large or method == "sandwich"
    if isinstance(d, TwoSide) and (not warm or (n_boot and not use_cov)):  # small fields, a bootstrap:
        d = d.generic()  # the generic design, as before
    start = beta0 if beta0 is not None and len(beta0) == d.n_params and warm else None
    if warm:  # cold or warm the same centred optimum to ~1e-15 (the floor), then on the grid
        got = chord(d, start, info0, lam) if start is not None and info0 is not None else None
        if got is None:
            got = newton(d, lam=lam, beta=start, tol=0.0, info=False, polish=True)[0]
        beta = np.round(got * GRID) / GRID
        info = None if use_cov else _dense(_grad_hess(d, np.ones(d.n_stages), beta, lam)[1])
    else:
        beta, info = newton(d, lam=lam, beta=start)
    if isinstance(d, TwoSide):
        rated = twoside.rated(d)
    else:
        rated = np.zeros(d.n_bots, bool)
        rated[np.unique(d.x[:, : d.n_bots].nonzero()[1])] = True
    cov = None
    if use_cov:
        boot = np.empty((0, len(beta)))
        hess: list = []
        cv = sandwich(d, beta, lam, hess)
        info = hess[0]
        cov = _centred(cv, rated)
    else:
        boot = (bootstrap(d, beta, info, n_boot, seed, lam) if n_boot and info is not None and isinstance(d, Design)
                else np.empty((0, len(beta))))
    theta, bt = beta[: d.n_bots].copy(), boot[:, : d.n_bots].copy()
    if rated.any():
        theta -= theta[rated].mean()
        bt -= bt[:, rated].mean(axis=1, keepdims=True)
    theta[~rated] = np.nan
    bt[:, ~rated] = np.nan
    tie = {k: float(np.exp(beta[d.n_bots + k - 2])) for k in range(2, d.max_tie + 1)}
    return BatchFit(theta, np.nan_to_num(bt, nan=0.0) if (~rated).any() else bt, tie, rated, d.n_blocks,
                    cov, beta, info if warm else None)
