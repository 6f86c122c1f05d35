"""A large field's table does not depend on where the fit starts (arena.batchfit: cold, warm
Newton, warm chord; the generic design and the two-side path)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import batchfit as bf
from arena.twoside import TwoSide

TRUTH = np.array([0.3, 0.1, -0.1, -0.3])


def _three_player(seed: int, n: int = 12_000) -> bf.Design:
    """4 bots, 3 a match (Plackett–Luce draws): 24,000 stages, a large field (the trial's shape)."""
    rng = np.random.default_rng(seed)
    lu = np.argsort(rng.random((n, 4)), axis=1)[:, :3]
    order = np.argsort(-(TRUTH[lu] + rng.gumbel(size=(n, 3))), axis=1)
    ranks = np.argsort(order, axis=1)  # each side's place
    return bf.build_design(lu[:, :, None], ranks.tolist(), list(range(n)), 4)


def _two_player(seed: int, n: int = 24_000) -> TwoSide:
    """4 bots, two a match (Bradley–Terry draws): the two-side fast path."""
    rng = np.random.default_rng(seed)
    lu = np.argsort(rng.random((n, 4)), axis=1)[:, :2]
    first = rng.random(n) < 1 / (1 + np.exp(TRUTH[lu[:, 1]] - TRUTH[lu[:, 0]]))
    ranks = np.where(first[:, None], [0, 1], [1, 0])
    d = bf.design(lu[:, :, None], ranks.tolist(), list(range(n)), 4)
    assert isinstance(d, TwoSide)
    return d


def _table(f: bf.BatchFit) -> tuple[bytes, ...]:
    """What a leaderboard is made of, as bytes (bit-for-bit comparison)."""
    assert f.cov is not None
    return f.beta.tobytes(), f.theta.tobytes(), f.cov.tobytes()


@pytest.mark.parametrize("make", [_three_player, _two_player])
def test_cold_and_warm_fits_give_the_same_table(make, monkeypatch):
    """Newton's method stopped at steps below 1e-8 leaves a cold and a warm start ~1e-9 apart;
    with the grid placed so that a rounding midpoint lies between the two results (the trial's
    bot near a midpoint, made certain), the fit must still give one table from every start."""
    d = make(0)
    assert d.n_stages >= bf.ANALYTIC_FROM
    start = np.random.default_rng(1).normal(0.0, 0.05, d.n_params)
    with bf._one_blas_thread():  # as bf.fit runs its Newton steps
        cold = bf.newton(d, tol=0.0, info=False)[0]
        warm = bf.newton(d, beta=start, tol=0.0, info=False)[0]
    assert cold[0] != warm[0]  # the starts' plain Newton results differ: the scenario exists
    mid = 0.5 * (cold[0] + warm[0])
    k = math.floor(mid * 2**20)
    monkeypatch.setattr(bf, "GRID", (k + 0.5) / mid)  # a midpoint of the grid at `mid`
    g = bf.GRID
    assert np.round(cold[0] * g) != np.round(warm[0] * g)  # plain Newton + rounding: two tables
    f_cold = bf.fit(d)
    f_warm = bf.fit(d, beta0=start)
    f_chord = bf.fit(d, beta0=f_cold.beta + 1e-4, info0=f_cold.info)  # the checkpoint path
    assert _table(f_cold) == _table(f_warm) == _table(f_chord)
    assert np.all(np.round(f_cold.beta * g) == f_cold.beta * g)  # on the grid
    np.testing.assert_allclose(f_cold.theta, cold[:4] - cold[:4].mean(), atol=2 / g)
