"""The block sandwich where few blocks inform a bot (new-user finding, session 7).

A class of 150 bots early in a run: each bot has met one or two others. The plain sandwich's
meat is the blocks' scores at the optimum, which a bot's only block makes almost zero, so its
interval was almost a point (a bot with one win: +1876 [+1408, +2343] Elo) and 79% of the pairs
of 150 *identical* bots were declared different at the 95% level. The leverage-adjusted
(CR3, jackknife) sandwich must keep that share at or below 5% (one-sided, α = 0.001 over the
simulated tournaments), where the plain one fails, and leave well-measured fields as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

from arena import batchfit as bf
from tests.ratings import sim


def _shares(per_bot: int, deals: int, reps: int, n: int = 150) -> list[float]:
    lineups = sim.ffa_lineups(n, 2, per_bot=per_bot)
    out = []
    for rep in range(reps):
        res = sim.simulate_ffa(np.zeros(n), lineups, deals, np.random.default_rng(7000 + rep), tie_width=0.3)
        out.append(sim.pair_exclusion_share(bf.fit(res.design(), method="sandwich")))
    return out


@pytest.mark.parametrize("per_bot", [2, 4])
def test_identical_bots_that_met_few_others_are_not_told_apart(per_bot: int) -> None:
    mean, err = sim.mc_bound(_shares(per_bot, 1, reps=8))
    assert mean <= 0.05 + err, (mean, err)  # the plain sandwich: 0.79 (2 lineups a bot), 0.19 (4)


def test_the_plain_sandwich_is_what_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the guard detects the flaw: without the adjustment the same field's share is far above 5%
    monkeypatch.setattr(bf, "LEVERAGE_ADJUSTED", False)
    mean, err = sim.mc_bound(_shares(2, 1, reps=4))
    assert mean - err > 0.3, (mean, err)


def test_a_bot_with_one_win_is_not_surely_on_top() -> None:
    n = 150
    lineups = sim.ffa_lineups(n, 2, per_bot=2)
    res = sim.simulate_ffa(np.zeros(n), lineups, 1, np.random.default_rng(7001), tie_width=0.3)
    fit = bf.fit(res.design(), method="sandwich")
    lo, hi = fit.rank_intervals()
    top = int(np.nanargmax(fit.theta))
    assert hi[top] - lo[top] + 1 >= n // 2, (lo[top], hi[top])  # its rank is anywhere in half the field or more
    low, high = fit.interval()
    assert low[top] < 0 < high[top]  # and its strength is not told apart from the field's mean


@pytest.mark.slow
def test_well_measured_fields_change_little() -> None:
    """20 bots, every pair, 10 duplicate deals: the adjusted sd of each difference is within 5%
    of the plain sandwich's for the median pair (its leverage is small)."""
    res = sim.simulate_ffa(np.linspace(0, 1.5, 20), sim.ffa_lineups(20, 2), 10, np.random.default_rng(11),
                           tie_width=0.3)
    d = res.design()
    adjusted = bf.fit(d, method="sandwich")
    try:
        bf.LEVERAGE_ADJUSTED = False
        plain = bf.fit(d, method="sandwich")
    finally:
        bf.LEVERAGE_ADJUSTED = True
    iu = np.triu_indices(20, 1)
    ratio = adjusted.diff_sd()[iu] / plain.diff_sd()[iu]
    assert 1.0 <= np.median(ratio) < 1.05, np.median(ratio)


def test_the_adjustment_summed_a_chunk_of_stages_at_a_time_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena import leverage

    res = sim.simulate_ffa(np.linspace(0, 1.5, 30), sim.ffa_lineups(30, 3, per_bot=6), 5, np.random.default_rng(2),
                           tie_width=0.3)
    d = res.design()
    one = bf.fit(d, method="sandwich").cov
    monkeypatch.setattr(leverage, "STAGES", 7)  # ~250 chunks, blocks cut across them
    chunked = bf.fit(d, method="sandwich").cov
    assert d.n_stages > 50 * leverage.STAGES
    np.testing.assert_allclose(chunked, one, rtol=1e-10, atol=1e-14)
