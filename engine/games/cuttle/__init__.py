"""Cuttle: the classic two-player combat card game (``docs/rules/cuttle.md``).

Modules: ``actions`` (card tables, phases, action values and notation), ``legal``
(the legal actions of a state), ``observation`` (what a seat sees), ``state`` (the
table model and turn flow),
``infoset`` (information sets), ``game`` (options, docs, factory).
"""

from engine.games.cuttle.game import Cuttle

__all__ = ["Cuttle"]
