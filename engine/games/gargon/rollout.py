"""Gargon's rollout policy: uniform among the legal actions, without the list copy."""

from __future__ import annotations

import random

from engine.games.gargon.state import PLAY, GargonState


def rollout_action(state: GargonState, rng: random.Random) -> int:
    """``Gargon.rollout_action``: uniform among the legal actions, the same draw as the default
    ``legal[int(rng.random() * len(legal))]`` of ``Game.rollout_action``, without copying the list."""
    legal = state._legal
    if legal is None:
        legal = state._legal = state._play_actions() if state.phase == PLAY else state._compute_legal()
    return legal[int(rng.random() * len(legal))]
