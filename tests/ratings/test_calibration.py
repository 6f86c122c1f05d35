"""Calibration of the batch fit's intervals by simulation (fixed seeds, α = 0.001).

* Identical bots: the share of 95% intervals of a pairwise difference that exclude 0 is 5%
  within Monte Carlo error — 2, 3 and 4 players, and two-bot partnerships.
* Known different strengths: each bot's true rank falls inside its rank interval at least
  95% of the time (the construction is conservative: it fails only when a bot is placed
  surely on the wrong side of another).

The Monte Carlo error is taken over tournaments (the pairs of one tournament are correlated):
the mean of the per-tournament shares must lie within 3.29 standard errors (α = 0.001,
two-sided) of 5%. Intervals as narrow as TrueSkill's with the default ``tau`` (a share of
about 30%) or twice too wide (under 1%) fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import batchfit as bf
from tests.ratings import sim

N_BOOT = 100


def _null_share(make, reps: int) -> tuple[float, float]:
    shares = []
    for rep in range(reps):
        res = make(np.random.default_rng(1000 + rep))
        shares.append(sim.pair_exclusion_share(bf.fit(res.design(), n_boot=N_BOOT, seed=rep)))
    return sim.mc_bound(shares)


@pytest.mark.slow
def test_identical_bots_two_players():
    """6 identical bots, every pair, 6 duplicate deals of 2 rotations, ties: 5% ± MC error."""
    mean, err = _null_share(lambda rng: sim.simulate_ffa(np.zeros(6), sim.ffa_lineups(6, 2), 6, rng,
                                                         tie_width=0.3), reps=90)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.035  # the check has power: a share of 8.5% or more fails


@pytest.mark.slow
@pytest.mark.parametrize("players,n,deals,tie,reps", [(3, 4, 6, 0.1, 150), (4, 5, 4, 0.0, 60)])
def test_identical_bots_three_and_four_players(players, n, deals, tie, reps):
    """3 players (4 bots, ties) and 4 players (5 bots), every lineup, cyclic rotations: 5% ± MC error."""
    mean, err = _null_share(lambda rng: sim.simulate_ffa(np.zeros(n), sim.ffa_lineups(n, players), deals, rng,
                                                         tie_width=tie), reps=reps)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.04


@pytest.mark.slow
def test_identical_bots_partnerships():
    """5 identical bots as two-bot teams (``partners: mixed``), ties: 5% ± MC error."""
    mean, err = _null_share(lambda rng: sim.simulate_teams(np.zeros(5), 3, rng, tie_width=0.3), reps=60)
    assert abs(mean - 0.05) <= err, (mean, err)
    assert err < 0.04


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3])
def test_true_order_inside_rank_intervals(players):
    """Strengths 0, 0.3, ..., 1.5 (6 bots): the true rank is inside the rank interval for
    at least 95% of the bots (one-sided, α = 0.001), and the intervals separate (mean width
    under 4 of 6 ranks)."""
    truth = np.linspace(0, 1.5, 6)
    true_rank = 6 - np.argsort(np.argsort(truth))
    covered, widths = [], []
    for rep in range(20):
        res = sim.simulate_ffa(truth, sim.ffa_lineups(6, players), 8 if players == 2 else 3,
                               np.random.default_rng(2000 + rep), tie_width=0.2)
        lo, hi = bf.fit(res.design(), n_boot=N_BOOT, seed=rep).rank_intervals()
        covered.append(np.mean((lo <= true_rank) & (true_rank <= hi)))
        widths.append(np.mean(hi - lo + 1))
    mean, err = sim.mc_bound(covered, z=3.09)
    assert mean >= 0.95 - err, (mean, err)
    assert np.mean(widths) < 4.0
