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


def playout(state: AgramState, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """``Agram.playout``: :func:`engine.search.rollout.rollout_rewards`'s result, deal by deal.

    Each deal is played out by :meth:`AgramState.finish_hand` (the typed kernel when built:
    exactly the moves and ``rng.random()`` draws of the :func:`rollout_action` loop); with
    ``hand_rollouts`` that is all (the next deal is not dealt), else the next deal is dealt
    as :meth:`AgramState.apply` would deal it and played out too, to the end of the match.

    :param state: changed in place; ``teams``: the sides, for :meth:`Outcome.rewards`.
    """
    if state.is_terminal():
        return state.outcome().rewards(teams)
    if hand_rollouts:
        if state.hand_index() != hand0:
            return state.hand_rewards()
        return state.finish_hand(rng, teams)
    while True:
        got = state.finish_hand(rng, teams)
        if state.is_terminal():
            return got
        state._deal()  # what apply does after a deal that did not end the match (§4.5)
