"""Guiñote (rules/guinote.md): the game object is :class:`Guinote`.

Modules: ``actions`` (card tables, action encoding), ``rules`` (strict play and its
inferences), ``public`` (a hand's public record), ``state`` (the world), ``infoset``
(determinization), ``game`` (options, docs, factory).
"""

from engine.games.guinote.game import Guinote

__all__ = ["Guinote"]
