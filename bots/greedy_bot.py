"""The greedy bot: one simple heuristic per game, in ``bots/greedy/<game>.py``.

Each heuristic module defines ``act(observation, legal, rng) -> str``. A game without a
module falls back to a uniformly random legal action.

Run: ``python bots/greedy_bot.py`` (speaks protocol v1 on stdin/stdout).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bots import sdk  # noqa: E402

_cache: dict[str, Callable | None] = {}


def heuristic(game: str) -> Callable | None:
    """``bots.greedy.<game>.act``, or None when the game has no module."""
    if game not in _cache:
        try:
            mod = importlib.import_module(f"bots.greedy.{game}")
            _cache[game] = getattr(mod, "act", None)
        except ModuleNotFoundError as e:
            if e.name != f"bots.greedy.{game}":
                raise
            _cache[game] = None
    return _cache[game]


def act(observation: dict, legal: list[str], ctx: sdk.Context) -> str:
    """The game's heuristic move, or a random legal one for a game without a heuristic."""
    fn = heuristic(ctx.game)
    if fn is None:
        return legal[ctx.rng.randrange(len(legal))]
    return fn(observation, legal, ctx.rng)


if __name__ == "__main__":
    sys.exit(sdk.run(act, name="greedy", version="1"))
