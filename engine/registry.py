"""The explicit table of games: name -> ``module:Class`` (no import side effects).

Modules are imported on first use, so a user of one game never pays for the others.
"""

from __future__ import annotations

import difflib
import importlib
import re
import unicodedata

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


def canonical(name: str) -> str:
    """The registered spelling of a game name given in any of the README's spellings.

    Case, accents, spaces and ``-``/``_`` do not matter: ``Sedma``, ``whiskey-poker``,
    ``Whiskey Poker`` and ``guiñote`` name ``sedma``, ``whiskey_poker`` and ``guinote``.

    :raises UnknownGameError: naming the game, offering the closest name ("did you mean")
        and listing the known ones.
    """
    if name in GAMES:
        return name
    text = unicodedata.normalize("NFKD", str(name))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold().strip()
    key = re.sub(r"[\s_-]+", "_", text)
    if key in GAMES:
        return key
    close = difflib.get_close_matches(key, names(), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UnknownGameError(f"unknown game {name!r}{hint}; known games: {', '.join(names())}")


def get_game(name: str) -> Game:
    """The game registered as ``name`` in any spelling :func:`canonical` accepts (one shared instance).

    :raises UnknownGameError: naming the game and listing the known ones.
    """
    game = _cache.get(name)
    if game is not None:
        return game
    name = canonical(name)
    game = _cache.get(name)
    if game is not None:
        return game
    target = GAMES[name]
    module, cls = target.split(":")
    game = getattr(importlib.import_module(module), cls)()
    _cache[name] = game
    return game


def all_games() -> list[Game]:
    """Every registered game, in name order."""
    return [get_game(n) for n in names()]
