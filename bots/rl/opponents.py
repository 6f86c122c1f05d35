"""Reference bots played in-process by the Gymnasium env (no subprocess, no protocol).

An opponent is a callable ``(observation, legal, rng) -> action string`` taking the seat's
observation dict, the legal protocol strings and a :class:`random.Random`. :func:`opponent`
builds one from a spec:

* ``"random"``: a uniformly random legal action (as ``bots/random_bot.py``);
* ``"greedy"``: the game's heuristic in ``bots/greedy/<game>.py`` (as ``bots/greedy_bot.py``);
* ``"ismcts"`` or ``"ismcts:N"``: :class:`engine.search.ismcts.ISMCTS` with ``N`` iterations
  per decision (default 200), as ``bots/ismcts_bot.py --iterations N``;
* any callable of the signature above.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bots.greedy_bot import heuristic
from bots.ismcts_bot import choose
from engine.core import Game
from engine.search.ismcts import ISMCTS

Opponent = Callable[[dict, list[str], random.Random], str]


def random_opponent(observation: dict, legal: list[str], rng: random.Random) -> str:
    """A uniformly random element of ``legal``."""
    return legal[rng.randrange(len(legal))]


def greedy_opponent(game: Game) -> Opponent:
    """The greedy heuristic of ``game`` (random where the game has none)."""
    fn = heuristic(game.name)
    return fn if fn is not None else random_opponent


def ismcts_opponent(game: Game, iterations: int = 200) -> Opponent:
    """SO-ISMCTS with ``iterations`` per decision (the reference bot's defaults otherwise)."""
    search = ISMCTS(game)

    def act(observation: dict, legal: list[str], rng: random.Random) -> str:
        """The search's choice among ``legal`` (the only legal action without searching)."""
        if len(legal) == 1:
            return legal[0]
        res = search.search(observation, rng, iterations=iterations)
        return choose(res.action, res.visits, legal, game.format_action)
    return act


def opponent(spec: str | Opponent, game: Game) -> Opponent:
    """The opponent named by ``spec`` for ``game`` (see the module docstring).

    :raises ValueError: for an unknown name or a bad iteration count, naming the spec.
    """
    if callable(spec):
        return spec
    name, _, arg = str(spec).partition(":")
    if name == "random" and not arg:
        return random_opponent
    if name == "greedy" and not arg:
        return greedy_opponent(game)
    if name == "ismcts":
        if not arg:
            return ismcts_opponent(game)
        if arg.isdigit() and int(arg) >= 1:
            return ismcts_opponent(game, int(arg))
    raise ValueError(f"unknown opponent {spec!r}; expected 'random', 'greedy', 'ismcts' or "
                     "'ismcts:N' (N iterations >= 1), or a callable (observation, legal, rng) -> action")
