"""Cuttle: the classic two-player combat card game (``docs/rules/cuttle.md``).

Modules: ``actions`` (card tables, action values and notation), ``state`` (the
table model and turn flow), ``infoset`` (information sets), ``game`` (options,
docs, factory).
"""

from engine.games.cuttle.game import Cuttle

__all__ = ["Cuttle"]
