"""Shared by the RL tests: every (game, players, options) built at collection time."""

from __future__ import annotations

import random

from engine import registry
from engine.core import Game, State

try:
    from bots.rl.env import env_configs
    CONFIGS = list(env_configs())
except ImportError:  # the rl extra is missing: the autouse fixture skips (or fails under CI)
    CONFIGS = [(g, registry.get_game(g).min_players, {}) for g in registry.names()]


def config_id(cfg: tuple[str, int, dict]) -> str:
    """``agram-2`` / ``agram-4-first_dealer=random,match_wins=3``."""
    g, n, o = cfg
    return f"{g}-{n}" + ("-" + ",".join(f"{k}={v}" for k, v in sorted(o.items())) if o else "")


def positions(game: Game, n: int, options: dict, seed: int, count: int) -> list[State]:
    """``count`` non-terminal positions of random matches (at random depths, first 300 moves)."""
    rng = random.Random(seed)
    out: list[State] = []
    while len(out) < count:
        state = game.new_match(n, rng.getrandbits(62), **options)
        stops = []
        while not state.is_terminal() and len(stops) < 300:
            stops.append(state.clone())
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        out.append(stops[rng.randrange(len(stops))])
    return out
