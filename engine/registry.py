"""The explicit table of games: name -> ``module:Class`` (no import side effects).

Modules are imported on first use, so a user of one game never pays for the others.
"""

from __future__ import annotations

import importlib

from engine.core import Game
from engine.errors import UnknownGameError

GAMES: dict[str, str] = {
    "agram": "engine.games.agram:Agram",
    "argute": "engine.games.argute:Argute",
    "cuckoo": "engine.games.cuckoo:Cuckoo",
    "cuttle": "engine.games.cuttle:Cuttle",
    "gargon": "engine.games.gargon:Gargon",
    "guinote": "engine.games.guinote:Guinote",
    "sedma": "engine.games.sedma:Sedma",
    "whiskey_poker": "engine.games.whiskey_poker:WhiskeyPoker",
}

_cache: dict[str, Game] = {}


def names() -> list[str]:
    """Every registered game name, sorted."""
    return sorted(GAMES)


def get_game(name: str) -> Game:
    """The game registered as ``name`` (one shared instance).

    :raises UnknownGameError: naming the game and listing the known ones.
    """
    game = _cache.get(name)
    if game is not None:
        return game
    target = GAMES.get(name)
    if target is None:
        raise UnknownGameError(f"unknown game {name!r}; known games: {', '.join(names())}")
    module, cls = target.split(":")
    game = getattr(importlib.import_module(module), cls)()
    _cache[name] = game
    return game


def all_games() -> list[Game]:
    """Every registered game, in name order."""
    return [get_game(n) for n in names()]
