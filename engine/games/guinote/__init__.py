"""Guiñote (rules/guinote.md): the game object is :class:`Guinote`.

Modules: ``tables`` (card tables, action encoding), ``rules`` (strict play and its
inferences), ``state`` (the world), ``public`` (a hand's public record), ``infoset``
(determinization), ``game`` (options, docs, factory).
"""

from engine.games.guinote.game import Guinote

__all__ = ["Guinote"]
