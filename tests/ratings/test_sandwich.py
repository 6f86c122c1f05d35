"""The block sandwich covariance that replaces the bootstrap in large fields (issue 18).

Calibration by simulation with fixed seeds, α = 0.001 (the Monte Carlo error over
tournaments, as in ``test_calibration.py``): identical bots — the share of 95% intervals of a
pairwise difference that exclude 0 is 5% (two players, and two-bot partnerships); known
strengths — the true rank is inside the rank interval at least 95% of the time. The
sandwich agrees with the block bootstrap it linearises, the switch happens at
``ANALYTIC_FROM`` stages, and a warm start reaches the same fit.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import batchfit as bf
from tests.ratings import sim


def _null_share(make, reps: int) -> tuple[float, float]:
    shares = []
    for rep in range(reps):
        res = make(np.random.default_rng(5000 + rep))
        shares.append(sim.pair_exclusion_share(bf.fit(res.design(), method="sandwich")))
    return sim.mc_bound(shares)


@pytest.mark.slow
def test_sandwich_identical_bots_two_players():
    """10 identical bots, every pair, 8 duplicate deals of 2 rotations, ties: 5% ± MC error."""
    mean, err = _null_share(lambda rng: sim.simulate_ffa(np.zeros(10), sim.ffa_lineups(10, 2), 8, rng,
                                                         tie_width=0.3), reps=120)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.02  # power: a share of 7% or more fails


@pytest.mark.slow
def test_sandwich_identical_bots_partnerships():
    """6 identical bots as two-bot teams (the 4-player partnership case), ties: 5% ± MC error."""
    mean, err = _null_share(lambda rng: sim.simulate_teams(np.zeros(6), 4, rng, tie_width=0.3), reps=80)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.03  # power: a share of 8% or more fails


@pytest.mark.slow
def test_sandwich_true_order_inside_rank_intervals():
    """Strengths 0, 0.15, ..., 1.35 (10 bots), two players: the true rank is inside the rank
    interval for at least 95% of the bots (one-sided, α = 0.001); the intervals separate."""
    truth = np.linspace(0, 1.35, 10)
    true_rank = 10 - np.argsort(np.argsort(truth))
    covered, widths = [], []
    for rep in range(40):
        res = sim.simulate_ffa(truth, sim.ffa_lineups(10, 2), 8, np.random.default_rng(6000 + rep), tie_width=0.2)
        lo, hi = bf.fit(res.design(), method="sandwich").rank_intervals()
        covered.append(np.mean((lo <= true_rank) & (true_rank <= hi)))
        widths.append(np.mean(hi - lo + 1))
    mean, err = sim.mc_bound(covered, z=3.09)
    assert mean >= 0.95 - err, (mean, err)
    assert np.mean(widths) < 6.0


@pytest.mark.slow
def test_sandwich_identical_bots_large_sparse_field():
    """150 identical bots, the ``sample`` design (each bot meets about 10 others), 6 deals of 2
    rotations, ties — the large-field case the sandwich is for: 5% ± MC error."""
    lineups = sim.ffa_lineups(150, 2, per_bot=10)
    mean, err = _null_share(lambda rng: sim.simulate_ffa(np.zeros(150), lineups, 6, rng, tie_width=0.3), reps=30)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.01


@pytest.mark.slow
def test_sandwich_agrees_with_the_block_bootstrap():
    """20 bots, hand effects and ties: the sd of each difference from the sandwich is within
    10% of the bootstrap's (400 replicates: their own error is about 3.5%) for the median pair
    and within 25% for 95% of the pairs; the estimates are the same fit."""
    res = sim.simulate_ffa(np.linspace(0, 1.5, 20), sim.ffa_lineups(20, 2), 10, np.random.default_rng(11),
                           tie_width=0.3)
    d = res.design()
    boot = bf.fit(d, n_boot=400, method="bootstrap")
    sand = bf.fit(d, method="sandwich")
    assert sand.cov is not None and len(sand.boot) == 0 and boot.cov is None
    # large fields round the fit to batchfit.GRID (one path rounded, the other not): equal to the grid
    np.testing.assert_allclose(boot.theta, sand.theta, rtol=0, atol=1 / bf.GRID)
    iu = np.triu_indices(20, 1)
    ratio = sand.diff_sd()[iu] / boot.diff_sd()[iu]
    assert abs(np.median(ratio) - 1) < 0.10, np.median(ratio)
    assert np.mean(np.abs(ratio - 1) < 0.25) >= 0.95
    lo, hi = sand.interval()
    sd = np.sqrt(np.diag(sand.cov))
    np.testing.assert_allclose(hi - lo, 2 * bf.Z95 * sd, rtol=1e-12)
    assert np.all(lo < sand.theta) and np.all(sand.theta < hi)


def test_auto_switches_to_the_sandwich_at_analytic_from(monkeypatch):
    res = sim.simulate_ffa(np.zeros(6), sim.ffa_lineups(6, 2), 6, np.random.default_rng(3))
    d = res.design()
    monkeypatch.setattr(bf, "ANALYTIC_FROM", d.n_stages + 1)
    small = bf.fit(d, n_boot=50)
    monkeypatch.setattr(bf, "ANALYTIC_FROM", d.n_stages)
    large = bf.fit(d, n_boot=50)
    monkeypatch.setattr(bf, "ANALYTIC_FROM", d.n_stages + 1)
    monkeypatch.setattr(bf, "ANALYTIC_BOTS", 5)
    assert bf.fit(d, n_boot=50).cov is not None  # more bots than ANALYTIC_BOTS
    assert small.cov is None and small.boot.shape == (50, 6)
    assert large.cov is not None and large.boot.shape == (0, 6) and large.has_spread
    with pytest.raises(ValueError, match="bootstrap or sandwich"):
        bf.fit(d, method="jackknife")


def test_warm_start_reaches_the_same_fit():
    """From a previous fit of fewer results (the checkpoint's), Newton reaches the same optimum."""
    res = sim.simulate_ffa(np.linspace(0, 1, 12), sim.ffa_lineups(12, 2), 8, np.random.default_rng(4),
                           tie_width=0.3)
    d = res.design()
    cold = bf.fit(d, method="sandwich")
    m = len(res.ranks) * 3 // 4
    part = sim.Results(res.sides[:m], res.ranks[:m], res.blocks[:m], res.n_bots)
    prev = bf.fit(part.design(), method="sandwich")
    warm = bf.fit(d, method="sandwich", beta0=prev.beta)
    np.testing.assert_allclose(warm.theta, cold.theta, atol=1e-9)
    np.testing.assert_allclose(warm.cov, cold.cov, rtol=1e-6)
    assert list(warm.order()) == list(cold.order())
    bad = bf.fit(d, method="sandwich", beta0=np.zeros(3))  # another field's parameters: ignored
    np.testing.assert_array_equal(bad.theta, cold.theta)
