"""Whiskey Poker: five-card poker with a widow to exchange with (``docs/rules/whiskey_poker.md``).

Modules: :mod:`.actions` (action codes and notation), :mod:`.hands` (hand strength, via
phevaluator), :mod:`.state` (the rules), :mod:`.infoset` (determinization), :mod:`.game`
(options, documentation, factories).
"""

from __future__ import annotations

from .game import WhiskeyPoker
from .infoset import WhiskeyInfoSet
from .state import WhiskeyState

__all__ = ["WhiskeyInfoSet", "WhiskeyPoker", "WhiskeyState"]
