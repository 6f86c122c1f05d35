"""Rollouts shared by the searchers (ISMCTS, the PIMC bot): play a state out, return rewards."""

from __future__ import annotations

import random

from engine.core import Game, State


def rollout_rewards(game: Game, state: State, rng: random.Random, teams: list[list[int]], hand0: int,
                    hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place with ``game.rollout_action`` and return the reward per seat.

    :param teams: the sides (``game.teams(n)``) for :meth:`Outcome.rewards`.
    :param hand0: the hand index the rollout started in.
    :param hand_rollouts: stop when hand ``hand0`` ends and return ``State.hand_rewards()``;
        otherwise play to the end of the match (``Outcome.rewards(teams)``).

    A game may define ``playout(state, rng, teams, hand0, hand_rollouts)`` (a rollout kernel
    that plays on its own data, e.g. Guiñote's) giving exactly the result, and drawing exactly
    the random numbers, of the loop below with the game's ``rollout_action`` (the uniform
    default, or the game's own policy as for Cuckoo and Whiskey Poker); it is then called instead.
    Otherwise a hand rollout uses the state's ``finish_hand(rng, teams)`` when it has one (Agram: a
    typed kernel, issue 19): it must play exactly the moves, draw exactly the random numbers
    and return exactly the rewards of the ``rollout_action`` loop below; it may skip dealing
    the next hand.
    """
    playout = getattr(game, "playout", None)
    if playout is not None:   # the game's own kernel: the same result as the loop below
        return playout(state, rng, teams, hand0, hand_rollouts)
    roll = game.rollout_action
    apply = state.apply
    is_terminal = state.is_terminal
    if hand_rollouts:
        hand_index = state.hand_index
        finish = getattr(state, "finish_hand", None)
        if finish is not None and not is_terminal() and hand_index() == hand0:
            return finish(rng, teams)
        while not is_terminal() and hand_index() == hand0:
            apply(roll(state, rng))
        if not is_terminal():
            return state.hand_rewards()
    else:
        while not is_terminal():
            apply(roll(state, rng))
    return state.outcome().rewards(teams)
