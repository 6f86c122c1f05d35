"""Agram's rollout policy: a uniformly random legal card, drawn from the legal mask."""

from __future__ import annotations

import random

from engine.games.agram.state import AgramState


def rollout_action(state: AgramState, rng: random.Random) -> int:
    """A uniformly random legal card of ``state``, without building the legal-action list."""
    m = state.legal_mask()
    r = int(rng.random() * m.bit_count())  # twice as fast as randrange
    while r:
        m &= m - 1
        r -= 1
    return (m & -m).bit_length() - 1
