"""Reference values of the batch fit (arena.batchfit): hand-solved cases, choix, a brute-force likelihood."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from arena import batchfit as bf

LAM = 1e-8  # next to no ridge: the hand-solved cases are the plain maximum likelihood


def _fit_beta(sides, ranks, n, lam=LAM, blocks=None):
    d = bf.build_design(sides, ranks, blocks if blocks is not None else list(range(len(sides))), n)
    beta, _ = bf.newton(d, lam=lam)
    return d, beta


def test_davidson_two_bots_by_hand():
    """Two sides with ties (Davidson): the model is saturated, so the fit reproduces the
    frequencies — θ_A − θ_B = log(wins_A / wins_B), δ = ties / sqrt(wins_A · wins_B)."""
    res = [([[0], [1]], [0, 1])] * 30 + [([[0], [1]], [1, 0])] * 10 + [([[1], [0]], [0, 0])] * 10
    d, beta = _fit_beta([s for s, _ in res], [r for _, r in res], 2)
    assert d.max_tie == 2
    assert beta[0] - beta[1] == pytest.approx(math.log(3), abs=1e-6)
    assert math.exp(beta[2]) == pytest.approx(10 / math.sqrt(300), abs=1e-6)
    f = bf.fit(d, n_boot=0, lam=LAM)
    assert f.p_win()[0, 1] == pytest.approx((30 + 5) / 50, abs=1e-6)  # expected score = observed


def test_teams_sum_of_members_by_hand():
    """Two-bot teams, three pairings (AB–CD 6:2, AC–BD 5:5, AD–BC 2:6): three logits for three
    free differences, so θ = (0, log 3 / 2, 0, −log 3 / 2) with Σθ = 0, solved by hand."""
    res = ([([[0, 1], [2, 3]], [0, 1])] * 6 + [([[0, 1], [2, 3]], [1, 0])] * 2
           + [([[0, 2], [1, 3]], [0, 1])] * 5 + [([[0, 2], [1, 3]], [1, 0])] * 5
           + [([[0, 3], [1, 2]], [0, 1])] * 2 + [([[0, 3], [1, 2]], [1, 0])] * 6)
    _, beta = _fit_beta([s for s, _ in res], [r for _, r in res], 4)
    want = np.array([0.0, math.log(3) / 2, 0.0, -math.log(3) / 2])
    np.testing.assert_allclose(beta - beta.mean(), want, atol=1e-6)


def test_pairwise_and_rankings_agree_with_choix():
    """Without ties or teams the model is plain Bradley–Terry / Plackett–Luce: the same data
    through ``choix`` (same ridge: choix's ``alpha`` is half our λ) gives the same θ."""
    choix = pytest.importorskip("choix")
    rng = np.random.default_rng(3)
    truth = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    rankings = []
    for _ in range(80):
        lu = rng.choice(5, size=3, replace=False)
        perf = truth[lu] + rng.gumbel(size=3)
        rankings.append([int(x) for x in lu[np.argsort(-perf)]])
    sides = [[[b] for b in r] for r in rankings]
    ranks = [[0, 1, 2]] * len(rankings)
    _, beta = _fit_beta(sides, ranks, 5, lam=0.02)
    ref = choix.opt_rankings(5, rankings, alpha=0.01)
    np.testing.assert_allclose(beta - beta.mean(), ref - ref.mean(), atol=1e-5)
    pairs = [(r[0], r[1]) for r in rankings]
    _, beta2 = _fit_beta([[[a], [b]] for a, b in pairs], [[0, 1]] * len(pairs), 5, lam=0.02)
    ref2 = choix.opt_pairwise(5, pairs, alpha=0.01)
    np.testing.assert_allclose(beta2 - beta2.mean(), ref2 - ref2.mean(), atol=1e-5)


def _brute_nll(params, data, n, max_tie, lam):
    """The PL-with-ties likelihood written out stage by stage (Turner et al. 2020)."""
    theta, logd = params[:n], np.concatenate([[0.0], params[n:]])
    nll = 0.5 * lam * float(params @ params)
    for sides, ranks in data:
        strength = [sum(theta[b] for b in s) for s in sides]
        left = list(range(len(sides)))
        for r in sorted(set(ranks)):
            group = [i for i in left if ranks[i] == r]
            worth = {c: logd[len(c) - 1] + np.mean([strength[i] for i in c])
                     for k in range(1, min(max_tie, len(left)) + 1) for c in itertools.combinations(left, k)}
            if len(worth) > 1:
                nll -= worth[tuple(group)] - np.log(sum(np.exp(v) for v in worth.values()))
            left = [i for i in left if ranks[i] != r]
    return nll


def test_ties_and_teams_against_a_brute_force_likelihood():
    """Three two-bot sides with ties of two and of three sides: the Newton fit equals a general
    optimiser (BFGS) on the likelihood written out separately."""
    rng = np.random.default_rng(5)
    truth = np.array([0.6, 0.2, 0.0, -0.1, -0.3, -0.4])
    data = []
    for _ in range(30):
        bots = rng.permutation(6)
        sides = [[int(bots[0]), int(bots[1])], [int(bots[2]), int(bots[3])], [int(bots[4]), int(bots[5])]]
        perf = np.floor([truth[s].sum() + rng.gumbel() for s in sides])  # coarse: many ties
        ranks = [int((perf > p).sum()) for p in perf]
        data.append((sides, ranks))
    d, beta = _fit_beta([s for s, _ in data], [r for _, r in data], 6, lam=1e-3)
    assert d.max_tie == 3
    assert any(len(set(r)) == 1 for _, r in data) and any(len(set(r)) == 2 for _, r in data)
    ref = minimize(_brute_nll, np.zeros(6 + 2), args=(data, 6, 3, 1e-3), method="BFGS", options={"gtol": 1e-8})
    np.testing.assert_allclose(beta, ref.x, atol=1e-4)


def test_block_bootstrap_keeps_a_block_together():
    """Four copies of each result inside its own block carry no more evidence than one: the
    estimate and the block bootstrap's spread are unchanged (a match-level bootstrap would
    halve the spread)."""
    rng = np.random.default_rng(7)
    pairs = [tuple(rng.choice(4, size=2, replace=False)) for _ in range(200)]
    wins = [rng.random() < 0.6 for _ in pairs]
    sides = [[[int(a)], [int(b)]] for a, b in pairs]
    ranks = [[0, 1] if w else [1, 0] for w in wins]
    one = bf.fit(bf.build_design(sides, ranks, list(range(200)), 4), n_boot=200, seed=1, lam=LAM)
    four = bf.fit(bf.build_design([s for s in sides for _ in range(4)], [r for r in ranks for _ in range(4)],
                                  [i for i in range(200) for _ in range(4)], 4), n_boot=200, seed=1, lam=LAM)
    np.testing.assert_allclose(one.theta, four.theta, atol=1e-6)
    np.testing.assert_allclose(one.diff_sd(), four.diff_sd(), rtol=1e-4, atol=1e-6)


def test_rank_intervals_and_p_stronger_agree_with_the_order():
    """The order, P(stronger) and the rank intervals come from one estimate: the bot placed
    higher always has P > 0.5 over the next, and two bots share a rank interval exactly when
    the 95% interval of their difference holds 0."""
    rng = np.random.default_rng(11)
    truth = np.array([1.0, 0.9, 0.0, -1.0])
    pairs = [tuple(rng.choice(4, size=2, replace=False)) for _ in range(600)]
    sides = [[[int(a)], [int(b)]] for a, b in pairs]
    ranks = [[0, 1] if rng.random() < 1 / (1 + math.exp(truth[b] - truth[a])) else [1, 0] for a, b in pairs]
    f = bf.fit(bf.build_design(sides, ranks, [i // 3 for i in range(600)], 4), n_boot=200, seed=2)
    order = f.order()
    p = f.p_stronger()
    lo, hi = f.rank_intervals()
    for i, j in zip(order, order[1:]):
        assert p[i, j] >= 0.5
        separated = f.z()[i, j] > bf.Z95
        assert separated == (hi[i] < lo[j])
    assert list(order[:2]) in ([0, 1], [1, 0]) and list(order[2:]) == [2, 3]
    assert (lo[order[0]], hi[order[0]]) == (1, 2)  # 1.0 vs 0.9 cannot be told apart in 600 matches
    assert (lo[3], hi[3]) == (4, 4)


def test_unrated_bot_and_empty_input():
    """A bot without results gets no estimate and rank (0, 0); no results at all is no error."""
    f = bf.fit(bf.build_design([[[0], [1]]] * 4, [[0, 1], [1, 0], [0, 1], [0, 0]], [0, 1, 2, 3], 3), n_boot=50)
    assert math.isnan(f.theta[2]) and not f.rated[2]
    assert tuple(x[2] for x in f.rank_intervals()) == (0, 0)
    empty = bf.fit(bf.build_design([], [], [], 2), n_boot=10)
    assert not empty.rated.any()
    with pytest.raises(ValueError, match="result 0"):
        bf.build_design([[[0], [1]]], [[0, 1, 2]], [0], 2)
