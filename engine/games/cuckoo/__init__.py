"""Cuckoo (Ranter-Go-Round, Chase the Ace): keep or swap one card, avoid the lowest
(``docs/rules/cuckoo.md``).

Modules: ``actions`` (action values, notation, card values, the public trace of a
hand), ``state`` (rules and observations), ``rollout`` (the card-threshold rollout
policy), ``infoset`` (determinization), ``game`` (options, docs, factory).
"""

from engine.games.cuckoo.game import Cuckoo

__all__ = ["Cuckoo"]
