"""The random bot: a uniformly random legal action, reproducible from the match's ``seed``.

Run: ``python bots/random_bot.py`` (speaks protocol v1 on stdin/stdout).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bots import sdk  # noqa: E402


def act(observation: dict, legal: list[str], ctx: sdk.Context) -> str:
    """A uniformly random element of ``legal`` drawn from ``ctx.rng``."""
    return legal[ctx.rng.randrange(len(legal))]


if __name__ == "__main__":
    sys.exit(sdk.run(act, name="random", version="1"))
