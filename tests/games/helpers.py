"""Helpers shared by the game tests (not a test module)."""

from __future__ import annotations

import random
from collections.abc import Callable, Collection

from engine.core import Action, Game, State
from tests import conformance as cf

#: a bot's ``act(observation, legal, rng) -> action string`` (the greedy bots' signature).
Act = Callable[[dict, list[str], random.Random], str]


def play_out(state: State, act: Act, seats: Collection[int], rng: random.Random,
             opponent: Callable[[State, random.Random], Action] | None = None) -> State:
    """Play ``state`` to the end and return it.

    The seats in ``seats`` choose with ``act`` (asserted legal); the others pick uniformly
    among ``legal_strings()`` with ``rng`` or, with ``opponent``, apply ``opponent(state, rng)``.
    """
    while not state.is_terminal():
        p = state.current_player()
        if p in seats:
            legal = state.legal_strings()
            a = act(state.observation(p), legal, rng)
            assert a in legal
            state.apply_string(a)
        elif opponent is not None:
            state.apply(opponent(state, rng))
        else:
            legal = state.legal_strings()
            state.apply_string(legal[rng.randrange(len(legal))])
    return state


def conformance_suite(game: Game, n: int, opts: dict, *, playouts: int, determinism_seed: int,
                      public_seed: int, positions_seed: int, samples: int, positions: int = 4) -> None:
    """The conformance checks of ``tests/conformance.py`` on one config.

    ``playouts`` random matches (seeds ``0..playouts-1``) with their final observations,
    determinism, public actions, and the determinization audit of every seat in
    ``positions`` random positions (``samples`` worlds each).
    """
    for seed in range(playouts):
        final = cf.random_playout(game, n, opts, seed)
        cf.check_observation_shape(game, final)
    cf.check_determinism(game, n, opts, determinism_seed)
    cf.check_public_actions(game, n, opts, public_seed)
    for i, state in enumerate(cf.random_positions(game, n, opts, seed=positions_seed, count=positions)):
        for seat in range(n):
            cf.audit_position(game, state, seat, samples=samples, seed=i)
