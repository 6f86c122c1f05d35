"""Coverage of the tables' score interval for bots with many duplicate blocks
(:func:`arena.stats.block_t_cis`, from :data:`arena.stats.T_FROM` blocks on): by simulation with
fixed seeds, for the block-score distributions the games produce, the 95% interval holds the true
mean score within the binomial band of α = 0.001."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena import stats

REPS = 4000
BAND = 3.29 * math.sqrt(0.95 * 0.05 / REPS)  # two-sided α = 0.001 around 95%


def blocks(kind: str, rng: np.random.Generator, reps: int, b: int) -> np.ndarray:
    """``(reps, b, 2)`` scores of one bot in blocks of two rotations (``nan``: not played)."""
    if kind == "duplicate":  # the deal's luck cancels across the two seats; some draws
        d = rng.normal(0, 1.5, (reps, b, 1))
        q = 1 / (1 + np.exp(-(0.4 + d * np.array([1, -1]))))
        u = rng.random((reps, b, 2))
        x = (u < q).astype(float)
        x[(u >= q) & (u < q + 0.15 * (1 - q))] = 0.5
    elif kind == "shared_luck":  # the same luck in both matches of a block
        q = 1 / (1 + np.exp(-(-0.3 + rng.normal(0, 1.5, (reps, b, 1))))) + np.zeros((1, 1, 2))
        x = (rng.random((reps, b, 2)) < q).astype(float)
    elif kind == "four_players":  # rewards of four ranks
        x = rng.choice([0, 1 / 3, 2 / 3, 1], p=[0.1, 0.2, 0.3, 0.4], size=(reps, b, 2))
    elif kind == "lopsided":  # a bot winning 93% of its matches
        x = (rng.random((reps, b, 2)) < 0.93).astype(float)
    else:  # incomplete blocks: 30% with one match only
        x = rng.choice([0, 0.5, 1], p=[0.5, 0.2, 0.3], size=(reps, b, 2))
        x[:, :, 1][rng.random((reps, b)) < 0.3] = np.nan
    return x


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["duplicate", "shared_luck", "four_players", "lopsided", "incomplete"])
@pytest.mark.parametrize("b", [stats.T_FROM, 100])
def test_the_block_interval_covers_the_true_mean_95_percent(kind, b):
    rng = np.random.default_rng(1)
    big = blocks(kind, rng, 1, 1_000_000)
    true = np.nansum(big) / np.count_nonzero(~np.isnan(big))
    x = blocks(kind, rng, REPS, b)
    s, n = np.nansum(x, axis=2).ravel(), np.count_nonzero(~np.isnan(x), axis=2).ravel()
    m, lo, hi, nb = stats.block_t_cis(np.repeat(np.arange(REPS), b), s, n, REPS)
    assert (nb == b).all() and np.allclose(m, s.reshape(REPS, b).sum(1) / n.reshape(REPS, b).sum(1))
    cover = np.mean((lo <= true) & (true <= hi))
    assert abs(cover - 0.95) < BAND, cover


def test_the_block_interval_on_hand_values():
    # blocks (1, 2), (0.5, 1), (2, 2), (0, 2): m = 3.5 / 7; v from the block deviations
    s, n = np.array([1.0, 0.5, 2.0, 0.0]), np.array([2, 1, 2, 2])
    m, lo, hi = stats.block_t_ci(s, n)
    assert m == 0.5
    v = 4 / 3 * ((1 - 1) ** 2 + (0.5 - 0.5) ** 2 + (2 - 1) ** 2 + (0 - 1) ** 2) / 49
    neff = 0.25 / v
    z = 3.182446305284263  # Student t, 3 degrees of freedom, 97.5%
    half = z / (1 + z * z / neff) * math.sqrt(0.25 / neff + z * z / (4 * neff * neff))
    assert (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)
    assert stats.block_t_ci([1.0], [2]) == (0.5, 0.5, 0.5)
    one, none = stats.block_t_cis(np.array([0]), np.array([2.0]), np.array([2]), 2)[1:3]
    assert one[0] == none[0] == 1.0 and np.isnan(one[1])
    lo, hi = stats.block_t_ci([2.0] * 40, [2] * 40)[1:]  # every match won: the interval stays below 1
    assert 0.9 < lo < 1.0 == hi
