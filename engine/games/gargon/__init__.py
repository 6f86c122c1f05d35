"""Gargon (Rüdiger Dorn, 2001) for 3–5 players: docs/rules/gargon.md.

Modules: ``actions`` (cards, faces, notation), ``rules`` (patterns, the selection
combinatorics, battles, scoring), ``record`` (an observation's public record replayed
over card slots), ``state`` (the match), ``rollout`` (uniform legal
action without the list copy), ``infoset`` (determinization within public colours),
``game`` (options, docs, factory).
"""

from engine.games.gargon.game import Gargon

__all__ = ["Gargon"]
