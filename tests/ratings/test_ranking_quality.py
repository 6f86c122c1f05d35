"""Ranking quality by simulation: fields of known classes (a third strong, two thirds weak).

The table's order (the batch fit) must put at least as many strong bots in its top k as
sorting by mean score does (one-sided, α = 0.001 over tournaments: with sampled lineups the
fit adjusts for who met whom, which a mean score cannot), and the rank intervals must cover
the true classes at least 95% of the time (a strong bot's interval reaches into the top k, a
weak bot's below it).
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import batchfit as bf
from tests.ratings import sim

STRONG = 0.5


def _quality(players: int, n: int, deals: int, per_bot: int | None, reps: int, n_boot: int = 60):
    k = n // 3
    truth = np.where(np.arange(n) < k, STRONG, 0.0)
    diffs, covered, fit_top, score_top = [], [], [], []
    for rep in range(reps):
        rng = np.random.default_rng(3000 + rep)
        res = sim.simulate_ffa(truth, sim.ffa_lineups(n, players, per_bot, salt=f"q{rep}"), deals, rng, tie_width=0.2)
        f = bf.fit(res.design(), n_boot=n_boot, seed=rep)
        top_fit = int((f.order()[:k] < k).sum())
        top_score = int((np.argsort(-res.mean_scores(), kind="stable")[:k] < k).sum())
        diffs.append(top_fit - top_score)
        fit_top.append(top_fit)
        score_top.append(top_score)
        lo, hi = f.rank_intervals()
        ok = np.where(np.arange(n) < k, lo <= k, hi >= k + 1)
        covered.append(ok.mean())
    return diffs, covered, float(np.mean(fit_top)), float(np.mean(score_top)), k


def _check(diffs, covered, fit_top, k):
    mean, err = sim.mc_bound(diffs, z=3.09)
    assert mean >= -err, (mean, err)
    cmean, cerr = sim.mc_bound(covered, z=3.09)
    assert cmean >= 0.95 - cerr, (cmean, cerr)
    assert fit_top > k / 3 + 1  # far above chance (k/3 strong bots in a random top k)


def test_two_players_full_lineups():
    diffs, covered, fit_top, _, k = _quality(2, 9, 4, None, reps=20)
    _check(diffs, covered, fit_top, k)


@pytest.mark.slow
@pytest.mark.parametrize("players,n,deals", [(3, 9, 2), (4, 9, 1)])
def test_full_lineups(players, n, deals):
    diffs, covered, fit_top, _, k = _quality(players, n, deals, None, reps=16)
    _check(diffs, covered, fit_top, k)


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4])
def test_sampled_lineups(players):
    """30 bots, ``sample: {per_bot: 8}``, 2 deals: the fit's top 10 holds at least as many
    strong bots as the mean score's."""
    diffs, covered, fit_top, score_top, k = _quality(players, 30, 2, 8, reps=12)
    _check(diffs, covered, fit_top, k)
