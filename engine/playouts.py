"""Random playouts: a match played to its end by a uniformly random legal move per decision.

What ``bench/engine_playouts.py`` measures against OpenSpiel's all-C++ random-playout loop
(issue 19), and what a Monte-Carlo baseline or a sanity run needs: one draw ``rng.random()``
per decision, the ``int(rng.random() * len(legal))``-th action of ``state.legal_actions()``
(:meth:`engine.core.Game.rollout_action`'s default policy). A game whose rollout policy is
that uniform policy (:func:`uniform_rollout`) is played by
:func:`engine.search.rollout.rollout_rewards`, i.e. by its rollout kernel when it has one
(``Game.playout``: Agram, Argute, Guiñote, Sedma), which makes exactly the loop's moves and
draws; any other game (Cuckoo and Whiskey Poker roll out with their own policies) by the loop.
"""

from __future__ import annotations

import random

from engine.core import Game, State
from engine.search.rollout import rollout_rewards


def uniform_rollout(game: Game) -> bool:
    """Whether ``game.rollout_action`` is the uniform policy (the same moves and draws).

    True when the game declares ``uniform_rollout = True`` (an override that only avoids the
    list, as Agram's) or keeps :meth:`Game.rollout_action`; False for a game that overrides it
    without declaring it uniform.
    """
    declared = getattr(game, "uniform_rollout", None)
    if declared is not None:
        return bool(declared)
    return type(game).rollout_action is Game.rollout_action


def random_playout(game: Game, state: State, rng: random.Random) -> list[float]:
    """Play ``state`` (changed in place) to the end of the match by uniformly random legal
    moves; the rewards per seat (``state.outcome().rewards(game.teams(n))``).

    :param rng: one ``rng.random()`` is drawn per decision (also a forced one).
    :raises GameOverError: never; a finished ``state`` returns its rewards at once.
    """
    teams = game.teams(state.num_players)
    if uniform_rollout(game):
        return rollout_rewards(game, state, rng, teams, state.hand_index(), False)
    rand = rng.random
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply(legal[int(rand() * len(legal))])
    return state.outcome().rewards(teams)
