"""Argute: hidden bids, three count-tricks per hand (``docs/rules/argute.md``).

Modules: ``actions`` (card values, action encoding, trick winner, scoring), ``state``
(the world), ``infoset`` (determinization), ``game`` (options, docs, factory).
"""

from engine.games.argute.game import Argute

__all__ = ["Argute"]
