"""The batch fit's information and block sandwich accumulated a block of rows at a time
(arena/batchfit.py, issue 18 ninth pass): equal bit for bit to the sparse products over the whole
design they replace (the reference below is the eighth pass's code), whatever the block size,
for two-player results with ties, three-player results and partnerships mixed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from arena import batchfit


def _old_hess(d, w, beta, lam):
    p, _ = batchfit._softmax(d, d.x @ beta)
    wc = np.repeat(w, d.width)
    xp = sp.csr_matrix((p, (d.stage, np.arange(len(p)))), shape=(d.n_stages, len(p))) @ d.x
    h = (d.x.T @ sp.diags(wc * p) @ d.x - xp.T @ sp.diags(w) @ xp) + lam * sp.eye(len(beta))
    return sp.csc_matrix(h).toarray()


def _old_meat(d, beta):
    nb = d.n_bots
    p, _ = batchfit._softmax(d, d.x @ beta)
    r = -p
    r[d.chosen] += 1.0
    x = d.x.tocoo()
    bots = x.col < nb
    row, col = x.row[bots], x.col[bots]
    gb = sp.csr_matrix((r[row] * x.data[bots], (d.block[row // d.width], col)), shape=(max(d.n_blocks, 1), nb))
    return (gb.T @ gb).toarray()


def _mixed(seed: int, n_bots: int, n: int):
    """Results of two sides with ties, three sides and two-a-side partnerships, blocks shuffled."""
    rng = np.random.default_rng(seed)
    sides, ranks = [], []
    for _ in range(n):
        u = rng.random()
        if u < 0.6:
            a, b = rng.choice(n_bots, 2, replace=False).tolist()
            sides.append([[a], [b]])
            ranks.append([0, 0] if rng.random() < 0.15 else rng.permutation(2).tolist())
        elif u < 0.8:
            sides.append([[x] for x in rng.choice(n_bots, 3, replace=False).tolist()])
            ranks.append(rng.integers(0, 3, 3).tolist())
        else:
            q = rng.choice(n_bots, 4, replace=False).tolist()
            sides.append([q[:2], q[2:]])
            ranks.append(rng.permutation(2).tolist())
    blocks = rng.permutation(np.arange(n) // 3)
    return batchfit.build_design(sides, ranks, blocks.tolist(), n_bots)


@pytest.mark.parametrize("rows", [batchfit.BLOCK_ROWS, 7, 64])
@pytest.mark.parametrize("kind", ["pairs", "mixed"])
def test_the_blocked_information_and_meat_equal_the_sparse_products_bit_for_bit(rows, kind, monkeypatch):
    monkeypatch.setattr(batchfit, "BLOCK_ROWS", rows)
    rng = np.random.default_rng(5)
    if kind == "pairs":
        n_bots, n = 40, 4000
        pairs = np.array([rng.choice(n_bots, 2, replace=False) for _ in range(n)])
        ranks = [(0, 0) if rng.random() < 0.1 else (0, 1) if rng.random() < 0.6 else (1, 0) for _ in range(n)]
        d = batchfit.build_design(pairs.reshape(n, 2, 1).astype(np.int32), ranks, np.arange(n) // 2, n_bots)
    else:
        d = _mixed(3, 25, 2500)
    beta = rng.normal(0, 0.7, d.n_params)
    w = rng.integers(0, 3, d.n_stages).astype(float)  # bootstrap-like stage weights, zeros included
    for ww in (np.ones(d.n_stages), w):
        got = batchfit._grad_hess(d, ww, beta, batchfit.RIDGE)[1].toarray()
        ref = _old_hess(d, ww, beta, batchfit.RIDGE)
        assert got.tobytes() == ref.tobytes()
    p, _ = batchfit._softmax(d, d.x @ beta)
    r = -p
    r[d.chosen] += 1.0
    assert batchfit._meat(d, r).tobytes() == _old_meat(d, beta).tobytes()
    # the leverage-adjusted sandwich (CR3) keeps its own meat; its information is the blocked one
    hess: list = []
    batchfit.sandwich(d, beta, batchfit.RIDGE, hess)
    assert hess[0].tobytes() == _old_hess(d, np.ones(d.n_stages), beta, batchfit.RIDGE).tobytes()
    # and the plain sandwich is the one the two give
    monkeypatch.setattr(batchfit, "LEVERAGE_ADJUSTED", False)
    hess = []
    cv = batchfit.sandwich(d, beta, batchfit.RIDGE, hess)
    inv = np.linalg.inv(_old_hess(d, np.ones(d.n_stages), beta, batchfit.RIDGE)[:d.n_bots, :d.n_bots])
    out = inv @ _old_meat(d, beta) @ inv
    assert cv.tobytes() == ((out + out.T) / 2).tobytes() and hess[0].tobytes() == _old_hess(
        d, np.ones(d.n_stages), beta, batchfit.RIDGE).tobytes()


def test_a_sparse_field_keeps_the_sparse_hessian():
    """Few opponents each (under DENSE_FROM of the matrix filled): the sparse products, as before."""
    n_bots, n = 400, 600
    pairs = np.stack([np.arange(n) % n_bots, (np.arange(n) + 1) % n_bots], axis=1)
    d = batchfit.build_design(pairs.reshape(n, 2, 1).astype(np.int32), [(0, 1)] * n, np.arange(n), n_bots)
    beta = np.zeros(d.n_params)
    h = batchfit._grad_hess(d, np.ones(d.n_stages), beta, batchfit.RIDGE)[1]
    assert h.nnz < batchfit.DENSE_FROM * n_bots ** 2
    assert h.toarray().tobytes() == _old_hess(d, np.ones(d.n_stages), beta, batchfit.RIDGE).tobytes()
