"""Agram: six tricks, only the last one counts (``docs/rules/agram.md``).

Modules: ``actions`` (the 35-card deck, notation), ``state`` (deals, tricks, match
score), ``rollout`` (uniform legal card from the mask), ``infoset`` (voids and
sampling), ``game`` (options, docs, factories).
"""

from engine.games.agram.game import Agram

__all__ = ["Agram"]
