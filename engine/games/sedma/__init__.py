"""Sedma: the last card of the starter's rank, or the last seven, takes the trick
(``docs/rules/sedma.md`` §2).

Modules: ``actions`` (card ids, tables, action values and notation), ``seats`` (a
seat's receipt model), ``state`` (rules and observations), ``infoset``
(determinization), ``game`` (options, docs, factory).
"""

from engine.games.sedma.game import Sedma

__all__ = ["Sedma"]
