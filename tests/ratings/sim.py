"""Synthetic tournaments for the rating tests: known strengths, duplicate deals, vectorised.

A match's sides are ranked by performance ``side strength + hand effect + Gumbel noise``:
side strength is the sum of its bots' ``θ``; the hand effect is the luck of the deal, the
same for a seat's hand in every rotation and lineup of one deal (the thing duplicate deals
cancel); with ``tie_width`` > 0 performances are rounded to that grid and equal ones tie.
Without hand effects or ties this is exactly the Plackett–Luce model.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from arena import batchfit
from arena.schedule import mixing_sample


@dataclass
class Results:
    """Simulated results: ``sides`` ``(M, K, T)`` bot indices, ``ranks`` ``(M, K)``, ``blocks`` ``(M,)``."""

    sides: np.ndarray
    ranks: np.ndarray
    blocks: np.ndarray
    n_bots: int

    def design(self) -> batchfit.Design:
        """The batch fit's design of these results."""
        return batchfit.build_design(self.sides.tolist(), self.ranks.tolist(), self.blocks.tolist(), self.n_bots)

    def mean_scores(self) -> np.ndarray:
        """Per bot, the mean of its side's reward (beating every other side = 1, ties half)."""
        k = self.ranks.shape[1]
        r = self.ranks
        beaten = (r[:, :, None] < r[:, None, :]).sum(axis=2) + 0.5 * ((r[:, :, None] == r[:, None, :]).sum(axis=2) - 1)
        reward = beaten / (k - 1)
        tot = np.zeros(self.n_bots)
        cnt = np.zeros(self.n_bots)
        for t in range(self.sides.shape[2]):
            np.add.at(tot, self.sides[:, :, t], reward)
            np.add.at(cnt, self.sides[:, :, t], 1)
        return tot / np.maximum(cnt, 1)


def ffa_lineups(n: int, players: int, per_bot: int | None = None, salt: str = "s") -> np.ndarray:
    """``(L, players)`` lineups of a free-for-all field: all of them, or the ``sample`` design."""
    if per_bot is None:
        return np.array(list(itertools.combinations(range(n), players)))
    names = [f"b{i:03d}" for i in range(n)]
    return np.array([[names.index(b) for b in lu] for lu in mixing_sample(names, per_bot, players, salt)])


def simulate_ffa(theta: np.ndarray, lineups: np.ndarray, deals: int, rng: np.random.Generator,
                 hand_sd: float = 0.5, tie_width: float = 0.0) -> Results:
    """Every lineup plays every deal in every cyclic rotation (seat ``i`` of rotation ``r``
    holds the lineup's bot ``(i + r) mod k``); one block = one (lineup, deal)."""
    n_l, k = lineups.shape
    rot = (np.arange(k)[None, :] + np.arange(k)[:, None]) % k  # (r, seat) -> lineup position
    seats = np.broadcast_to(lineups[:, rot][:, None], (n_l, deals, k, k))  # (L, D, R, seat)
    hands = rng.normal(0, hand_sd, size=(deals, k))[None, :, None, :]
    perf = theta[seats] + hands + rng.gumbel(size=seats.shape)
    blocks = np.broadcast_to(np.arange(n_l * deals).reshape(n_l, deals, 1), seats.shape[:3])
    return _ranked(seats.reshape(-1, k, 1), perf.reshape(-1, k), blocks.reshape(-1), len(theta), tie_width)


def simulate_teams(theta: np.ndarray, deals: int, rng: np.random.Generator, hand_sd: float = 0.5,
                   tie_width: float = 0.0) -> Results:
    """``partners: mixed``: every pair of disjoint two-bot teams, 4 rotations (sides and partner
    order swap) per deal; a side's strength is the sum of its two bots'."""
    n = len(theta)
    pairs = list(itertools.combinations(range(n), 2))
    lus = [(a, b) for a, b in itertools.combinations(pairs, 2) if not set(a) & set(b)]
    rows, blocks = [], []
    for li, (t1, t2) in enumerate(lus):
        for d in range(deals):
            for sides in ((t1, t2), (t2, t1), (t1[::-1], t2[::-1]), (t2[::-1], t1[::-1])):
                rows.append(sides)
                blocks.append(li * deals + d)
    sides_a = np.array(rows)  # (M, 2, 2)
    deal_of = np.array(blocks) % deals
    hands = rng.normal(0, hand_sd, size=(deals, 2))
    # rotations 0/2 put team 1 on side 0, 1/3 on side 1: the hand stays with the side (seat)
    perf = theta[sides_a].sum(axis=2) + hands[deal_of] + rng.gumbel(size=(len(rows), 2))
    return _ranked(sides_a, perf, np.array(blocks), n, tie_width)


def _ranked(sides: np.ndarray, perf: np.ndarray, blocks: np.ndarray, n: int, tie_width: float) -> Results:
    if tie_width > 0:
        perf = np.floor(perf / tie_width)
    ranks = (perf[:, None, :] > perf[:, :, None]).sum(axis=2)  # number of sides strictly better
    return Results(sides, ranks, blocks, n)


def pair_exclusion_share(fit: batchfit.BatchFit) -> float:
    """Share of bot pairs whose 95% interval of the difference excludes 0."""
    z = fit.z()
    iu = np.triu_indices(len(fit.theta), 1)
    return float(np.mean(np.abs(z[iu]) > batchfit.Z95))


def mc_bound(xs: list[float] | np.ndarray, z: float = 3.29) -> tuple[float, float]:
    """Mean of per-tournament figures and ``z`` standard errors of it (α = 0.001 two-sided for 3.29)."""
    a = np.asarray(xs, dtype=float)
    return float(a.mean()), float(z * a.std(ddof=1) / np.sqrt(len(a)))
