"""Adaptive lineups against ``sample`` by simulation (tests and ``bench/adaptive.py``).

A synthetic field with known log-strengths ``θ`` plays free-for-all lineups of ``players``
bots: every lineup plays ``deals`` deals in every cyclic rotation, and a match ranks the seats
by ``θ + hand + Gumbel noise`` — the hand effect (sd ``hand_sd``) is the luck of the deal, the
same for a seat in every rotation of one deal, which duplicate blocks cancel. Without hand
effects this is the Plackett–Luce model the table fits. The final table is the batch fit with
its bootstrap (:func:`arena.batchfit.fit`, the table's 200 replicates); the figure compared is
the mean rank-interval width (:func:`arena.adaptive.mean_width`) at the same number of matches.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena import adaptive, batchfit
from arena.schedule import mixing_sample


@dataclass
class Played:
    """Results so far: per match the seats' bot indices ``(M, k)``, ranks ``(M, k)``, block ids ``(M,)``."""

    seats: list[np.ndarray]
    ranks: list[np.ndarray]
    blocks: list[np.ndarray]
    lineups: list[tuple[int, ...]]
    n_blocks: int = 0

    @property
    def matches(self) -> int:
        """Matches played."""
        return sum(len(s) for s in self.seats)

    def design(self, n: int) -> batchfit.Design:
        """The batch fit's design of the results (one bot per side)."""
        seats = np.concatenate(self.seats)
        return batchfit.build_design(seats[:, :, None].tolist(), np.concatenate(self.ranks).tolist(),
                                     np.concatenate(self.blocks).tolist(), n)


def play(theta: np.ndarray, lineups: list[tuple[int, ...]], deals: int, rng: np.random.Generator,
         out: Played, hand_sd: float = 0.5) -> None:
    """Play ``lineups`` (each ``deals`` deals × every cyclic rotation) into ``out``; new deals every call."""
    if not lineups:
        return
    lus = np.array(lineups)
    n_l, k = lus.shape
    rot = (np.arange(k)[None, :] + np.arange(k)[:, None]) % k
    seats = np.broadcast_to(lus[:, rot][:, None], (n_l, deals, k, k))  # (L, D, R, seat)
    hands = rng.normal(0, hand_sd, size=(deals, k))[None, :, None, :]
    perf = theta[seats] + hands + rng.gumbel(size=seats.shape)
    ranks = (perf[..., None, :] > perf[..., :, None]).sum(axis=-1)
    blocks = out.n_blocks + np.broadcast_to(np.arange(n_l * deals).reshape(n_l, deals, 1), seats.shape[:3])
    out.seats.append(seats.reshape(-1, k))
    out.ranks.append(ranks.reshape(-1, k))
    out.blocks.append(blocks.reshape(-1))
    out.lineups.extend(tuple(int(x) for x in lu) for lu in lus)
    out.n_blocks += n_l * deals


def table(theta: np.ndarray, res: Played, n_boot: int = 200, seed: int = 0) -> dict[str, float]:
    """The final table's figures: ``matches``, ``width`` (mean rank-interval width), ``coverage``
    (share of bots whose true rank lies in its interval)."""
    fit = batchfit.fit(res.design(len(theta)), n_boot=n_boot, seed=seed)
    lo, hi = fit.rank_intervals()
    true = np.empty(len(theta), dtype=np.int64)
    true[np.argsort(-theta, kind="stable")] = np.arange(1, len(theta) + 1)
    return {"matches": float(res.matches), "width": adaptive.mean_width(fit),
            "coverage": float(np.mean((lo <= true) & (true <= hi)))}


def run_sample(theta: np.ndarray, players: int, per_bot: int, deals: int, seed: int) -> Played:
    """The ``sample`` design with ``per_bot`` lineups per bot, played once."""
    names = [f"b{i:04d}" for i in range(len(theta))]
    lus = [tuple(int(b[1:]) for b in lu) for lu in mixing_sample(names, per_bot, players, f"sim{seed}")]
    res = Played([], [], [], [])
    play(theta, lus, deals, np.random.default_rng(seed), res)
    return res


def run_adaptive(theta: np.ndarray, players: int, cfg: adaptive.AdaptiveLineups, deals: int, seed: int) -> Played:
    """The adaptive design (:func:`arena.adaptive.plan_round`) until ``cfg.max_matches`` (or ``cfg.width``)."""
    n = len(theta)
    rng = np.random.default_rng(seed)
    names = [f"b{i:04d}" for i in range(n)]
    per_lineup = deals * players
    first = adaptive.first_round(names, players, cfg, f"sim{seed}", per_lineup)
    res = Played([], [], [], [])
    play(theta, [tuple(int(b[1:]) for b in lu) for lu in first.lineups], deals, rng, res)
    r = 1
    while True:
        room = (cfg.max_matches - res.matches) // per_lineup
        if room <= 0:
            break
        fit = adaptive.certainty(res.design(n))
        if cfg.width is not None and fit.mean_width() <= cfg.width:
            break
        size = min(room, adaptive.round_lineups(n, players, cfg.per_round))
        lus = adaptive.plan_round(fit, res.lineups, size, players, cfg.explore, np.random.default_rng([seed, r]))
        play(theta, lus, deals, rng, res)
        r += 1
    return res
