"""Whiskey Poker: five-card poker with a widow to exchange with (``docs/rules/whiskey_poker.md``).

Modules: ``actions`` (action codes and notation), ``hands`` (hand strength, via
phevaluator), ``state`` (the rules), ``observation`` (what a seat has seen), ``rollout``
(the card-aware rollout policy and its kernel), ``infoset`` (determinization), ``game``
(options, documentation, factories).
"""

from engine.games.whiskey_poker.game import WhiskeyPoker

__all__ = ["WhiskeyPoker"]
