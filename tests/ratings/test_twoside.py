"""The batch fit's two-side fast path (arena/twoside.py, issue 18 tenth pass) against the generic
sparse design (arena/batchfit.py): the same likelihood, gradient and information, the same
optimum (to ~1e-12, then the same GRID point), the same CR3 sandwich (to ~1e-10 relative), on
random fields with ties, two-bot partnerships, forfeit-like one-sided results, blocks of several
results in any order, sparse and dense fields; warm and cold starts give the same bits."""

from __future__ import annotations

import numpy as np
import pytest

from arena import batchfit, leverage, twoside
from arena.batchfit import RankCodes

LAM = batchfit.RIDGE


def _field(seed: int, n_bots: int, n: int, size: int = 1, ties: float = 0.15, per_block: int = 2,
           shuffle: bool = False, spread: float = 0.8) -> tuple[np.ndarray, RankCodes, np.ndarray]:
    """``n`` two-side results of ``size`` bots a side drawn from the model (strengths ``N(0, spread)``),
    ties at about rate ``ties``, ``per_block`` results a duplicate block (blocks shuffled if asked)."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, spread, n_bots)
    sides = np.array([rng.choice(n_bots, 2 * size, replace=False) for _ in range(n)]).reshape(n, 2, size)
    d = theta[sides[:, 0]].sum(axis=1) - theta[sides[:, 1]].sum(axis=1)
    u = rng.random(n)
    tie = u < ties
    first = rng.random(n) < 1 / (1 + np.exp(-d))
    pats = [(0, 1), (1, 0), (0, 0), (1, 2), (2, 1)]  # (1, 2): ranks not dense, the same as (0, 1)
    codes = np.where(tie, 2, np.where(first, np.where(rng.random(n) < 0.5, 0, 3), np.where(rng.random(n) < 0.5, 1, 4)))
    blocks = np.arange(n) // per_block
    if shuffle:
        blocks = rng.permutation(blocks)
    return sides.astype(np.int32), RankCodes(codes.astype(np.int64), pats), blocks


CASES = {
    "pairs, ties": dict(seed=1, n_bots=30, n=3000),
    "pairs, no ties": dict(seed=2, n_bots=30, n=3000, ties=0.0),
    "partnerships, ties": dict(seed=3, n_bots=24, n=2500, size=2),
    "sparse, shuffled blocks": dict(seed=4, n_bots=300, n=900, per_block=3, shuffle=True),
    "one result a block, lopsided": dict(seed=5, n_bots=40, n=2000, per_block=1, spread=2.0, ties=0.05),
}


def _both(case: dict) -> tuple[twoside.TwoSide, batchfit.Design]:
    sides, ranks, blocks = _field(**case)
    fast = batchfit.design(sides, ranks, blocks, case["n_bots"])
    assert isinstance(fast, twoside.TwoSide)
    return fast, batchfit.build_design(sides, ranks, blocks, case["n_bots"])


@pytest.mark.parametrize("name", list(CASES))
def test_the_likelihood_gradient_and_information_equal_the_generic_design(name):
    fast, gen = _both(CASES[name])
    assert (fast.n_params, fast.n_stages, fast.n_blocks, fast.max_tie) == (gen.n_params, gen.n_stages, gen.n_blocks,
                                                                          gen.max_tie)
    beta = np.random.default_rng(9).normal(0, 0.7, gen.n_params)
    one = np.ones(gen.n_stages)
    f_fast, f_gen = batchfit._objective(fast, one, beta, LAM), batchfit._objective(gen, one, beta, LAM)
    assert abs(f_fast - f_gen) <= 1e-12 * abs(f_gen)
    g_fast, h_fast = batchfit._grad_hess(fast, one, beta, LAM)
    g_gen, h_gen = batchfit._grad_hess(gen, one, beta, LAM)
    assert np.abs(g_fast - g_gen).max() <= 1e-11 * np.abs(g_gen).max()
    assert np.abs(batchfit._gradient(fast, beta, LAM) - g_gen).max() <= 1e-11 * np.abs(g_gen).max()
    assert isinstance(h_fast, np.ndarray)  # dense: the two-side path never imports scipy.sparse
    hf, hg = h_fast, h_gen.toarray()
    assert np.abs(hf - hg).max() <= 1e-12 * np.abs(hg).max()
    assert batchfit._nnz(h_fast) == h_gen.nnz  # the same sparsity: the same dense-or-sparse solve
    assert not np.signbit(hf[hf == 0]).any()  # -0.0 as a CSC copy gives it back: 0.0
    assert (twoside.rated(fast) == (np.abs(hg[:fast.n_bots, :fast.n_bots]).sum(axis=1) > LAM)).all()


def _centred(cov: np.ndarray) -> np.ndarray:
    """The covariance of the bots' strengths relative to their mean (what the table reports): the
    raw sandwich's component along "every bot stronger by the same" is held only by the tiny ridge
    (``1/λ²``, ill-conditioned: its last digits differ with any summation order)."""
    c = np.eye(len(cov)) - 1.0 / len(cov)
    return c @ cov @ c.T


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("adjusted", [True, False])
def test_the_optimum_and_the_sandwich_equal_the_generic_path(name, adjusted, monkeypatch):
    monkeypatch.setattr(batchfit, "LEVERAGE_ADJUSTED", adjusted)
    fast, gen = _both(CASES[name])
    b_fast = batchfit.newton(fast, tol=0.0, info=False)[0]
    b_gen = batchfit.newton(gen, tol=0.0, info=False)[0]
    assert np.abs(b_fast - b_gen).max() <= 1e-12
    beta = np.round(b_gen * batchfit.GRID) / batchfit.GRID
    h_fast: list = []
    h_gen: list = []
    c_fast = _centred(batchfit.sandwich(fast, beta, LAM, h_fast))
    c_gen = _centred(batchfit.sandwich(gen, beta, LAM, h_gen))
    assert np.abs(c_fast - c_gen).max() <= 1e-10 * np.abs(c_gen).max()
    assert np.abs(h_fast[0] - h_gen[0]).max() <= 1e-12 * np.abs(h_gen[0]).max()
    f_fast, f_gen = batchfit.fit(fast, method="sandwich"), batchfit.fit(gen, method="sandwich")
    assert f_fast.beta.tobytes() == f_gen.beta.tobytes()  # the same grid point
    assert np.abs(f_fast.cov - f_gen.cov).max() <= 1e-10 * np.abs(f_gen.cov).max()
    assert (f_fast.rated == f_gen.rated).all() and f_fast.tie.keys() == f_gen.tie.keys()
    if adjusted:  # CR3 is not the plain sandwich (the test would pass with either otherwise)
        plain = _centred(twoside.sandwich(fast, beta, LAM, None, False))
        assert np.abs(plain - c_fast).max() > 1e-3 * np.abs(c_fast).max()


@pytest.mark.parametrize("name", ["pairs, ties", "partnerships, ties", "sparse, shuffled blocks"])
def test_a_warm_start_lands_on_the_cold_fits_grid_point_bit_for_bit(name):
    case = CASES[name]
    sides, ranks, blocks = _field(**case)
    n, nb = len(sides), case["n_bots"]
    first = int(n * 0.9)
    before = batchfit.fit(batchfit.design(sides[:first], RankCodes(ranks.codes[:first], ranks.pats), blocks[:first], nb),
                          method="sandwich")
    d = batchfit.design(sides, ranks, blocks, nb)
    if name != "sparse, shuffled blocks":  # there 10% more results change the information too much
        assert batchfit.chord(d, before.beta, before.info) is not None  # the chord converged (no fallback)
    warm = batchfit.fit(d, method="sandwich", beta0=before.beta, info0=before.info)
    cold = batchfit.fit(d, method="sandwich")
    assert warm.beta.tobytes() == cold.beta.tobytes()
    assert warm.cov.tobytes() == cold.cov.tobytes() and warm.info.tobytes() == cold.info.tobytes()


def test_other_shapes_and_small_fields_keep_the_generic_path():
    three = batchfit.design(np.zeros((4, 3, 1), np.int32) + np.arange(3)[None, :, None],
                            [(0, 1, 2)] * 4, [0, 1, 2, 3], 3)
    assert isinstance(three, batchfit.Design)
    nested = batchfit.design([[[0], [1]], [[1], [2]]], [(0, 1), (1, 0)], [0, 1], 3)
    assert isinstance(nested, batchfit.Design)
    with pytest.raises(ValueError, match="result 0"):  # a rank pattern of another length: the generic error
        batchfit.design(np.array([[[0], [1]]], np.int32), [(0, 1, 2)], [0], 2)
    # a small field (bootstrap regime) is fitted on the generic design: the same bits as before
    sides, ranks, blocks = _field(seed=7, n_bots=8, n=400)
    fast = batchfit.design(sides, ranks, blocks, 8)
    assert isinstance(fast, twoside.TwoSide)
    a = batchfit.fit(fast, n_boot=30, seed=3)
    b = batchfit.fit(batchfit.build_design(sides, ranks, blocks, 8), n_boot=30, seed=3)
    assert a.beta.tobytes() == b.beta.tobytes() and a.boot.tobytes() == b.boot.tobytes() and a.cov is None
    # and a large field's bootstrap when asked for (method="bootstrap"): the generic design's
    sides, ranks, blocks = _field(seed=7, n_bots=120, n=600)
    a = batchfit.fit(batchfit.design(sides, ranks, blocks, 120), n_boot=5, seed=3, method="bootstrap")
    b = batchfit.fit(batchfit.build_design(sides, ranks, blocks, 120), n_boot=5, seed=3, method="bootstrap")
    assert a.boot.shape == (5, 120) and a.boot.tobytes() == b.boot.tobytes() and a.beta.tobytes() == b.beta.tobytes()


def test_list_ranks_take_the_fast_path_too():
    sides, ranks, blocks = _field(seed=8, n_bots=20, n=600)
    listed = [ranks.pats[c] for c in ranks.codes.tolist()]
    a = batchfit.design(sides, listed, blocks, 20)
    b = batchfit.design(sides, ranks, blocks, 20)
    assert isinstance(a, twoside.TwoSide) and a.outcome.tobytes() == b.outcome.tobytes()


def test_cramer_and_the_stable_slot_sort_equal_their_references():
    rng = np.random.default_rng(11)
    n_bots, n_blocks = 50, 400
    bots = np.array([rng.choice(n_bots, 2, replace=False) for _ in range(n_blocks)])
    bots[::7, 1] = -1  # a block of one bot: a padded slot
    j = rng.normal(0, 0.1, (n_blocks, 2, 2))
    j = j @ j.transpose(0, 2, 1)
    j[bots[:, 1] < 0, 1, :] = 0.0
    j[bots[:, 1] < 0, :, 1] = 0.0
    g = rng.normal(size=(n_blocks, 2)) * (bots >= 0)
    a = rng.normal(size=(n_bots, n_bots))
    hinv = np.linalg.inv(a @ a.T + n_bots * np.eye(n_bots))
    got = leverage.adjust(j, g, bots, hinv)
    safe = np.where(bots < 0, 0, bots)
    on = bots >= 0
    hl = hinv[safe[:, :, None], safe[:, None, :]] * (on[:, :, None] & on[:, None, :])
    ref = np.linalg.solve(np.eye(2)[None] - j @ hl, g[:, :, None])[:, :, 0]
    assert np.abs(got - ref).max() <= 1e-13 * np.abs(ref).max()
    blk = np.sort(rng.integers(0, 90, 1000))
    bot = rng.integers(0, n_bots, 1000)
    loc, slots = leverage.block_slots(blk, bot, 90, n_bots)
    key = blk * n_bots + bot
    ukey, inverse = np.unique(key, return_inverse=True)
    first = np.searchsorted(ukey // n_bots, np.arange(90))
    assert (loc == inverse - first[blk]).all()
    assert (slots[blk, loc] == bot).all() and slots.shape[1] == int(loc.max()) + 1


@pytest.mark.slow
def test_a_large_field_fits_in_bounded_memory():
    """1,000 bots: the fast path's peak of traced allocations grows little with the results (its
    ``(P, P)`` matrices are most of it), where the generic design grows by its sparse matrices."""
    import tracemalloc

    peaks: dict = {}
    for n in (100_000, 300_000):
        sides, ranks, blocks = _field(seed=12, n_bots=1000, n=n, per_block=1, spread=0.5)
        for make in (batchfit.design, batchfit.build_design):
            tracemalloc.start()
            f = batchfit.fit(make(sides, ranks, blocks, 1000), method="sandwich")
            peaks[make.__name__, n] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            assert f.cov is not None
    grow_fast = peaks["design", 300_000] - peaks["design", 100_000]
    grow_gen = peaks["build_design", 300_000] - peaks["build_design", 100_000]
    assert peaks["design", 300_000] < 80 and grow_fast < 20 and grow_fast < grow_gen / 5, peaks


@pytest.mark.slow
def test_a_tables_fit_takes_the_fast_path_and_matches_the_generic_one(tmp_path, monkeypatch):
    """``arena leaderboard``'s standings of a 120-bot journal (faults, rated forfeits, ties: the
    sandwich regime) go through :mod:`arena.twoside`; the generic design gives the same order and strengths
    bit for bit and intervals to ~1e-9 relative."""
    import json

    from arena.results import standings
    from tests.scale.test_tallies import journal_lines

    lines, meta = journal_lines(tmp_path, 2500, 120, 5)
    meta["ratings"]["draw_probability"] = 0.1
    meta["rate_forfeits"] = True  # the forfeits' results (each faulty side losing) fitted too
    rows = {}
    calls: list[int] = []
    real = twoside.sandwich

    def observed(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(twoside, "sandwich", observed)
    for path in ("fast", "generic"):
        if path == "generic":
            monkeypatch.setattr(batchfit, "design", batchfit.build_design)
        folder = tmp_path / path
        folder.mkdir()
        (folder / "tournament.json").write_text(json.dumps(meta))
        (folder / "matches.jsonl").write_bytes(b"".join(lines))
        got = standings(folder, history=False)
        assert got.strength is not None and got.strength.fit.cov is not None
        rows[path] = got.rows
    assert len(calls) == 1  # the fast path once, the generic run without it
    fast, gen = rows["fast"], rows["generic"]
    assert [r["bot"] for r in fast] == [r["bot"] for r in gen]
    assert [(r["strength"], r["rank_low"], r["rank_high"]) for r in fast] == [
        (r["strength"], r["rank_low"], r["rank_high"]) for r in gen]
    for a, b in zip(fast, gen):
        if b["strength_low"] is not None:
            assert abs(a["strength_low"] - b["strength_low"]) <= 1e-9 * abs(b["strength_high"] - b["strength_low"])
