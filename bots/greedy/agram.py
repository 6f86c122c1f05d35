"""Greedy Agram heuristic (``docs/rules/agram.md``): only the sixth trick counts.

Keep the card most likely to win the sixth trick (the fewest unseen higher cards of its
suit, then the highest rank) and, before the sixth trick, play the lowest legal card
that is not that keeper.
"""

from __future__ import annotations

import random

from engine.games.agram.actions import DECK, parse_play

_RANK_ORDER = "3456789TA"


def _rank(card: int) -> int:
    """Strength of a card within its suit (card ids grow with strength in Agram)."""
    return card % 13


def keeper(hand: list[int], gone: set[int]) -> int:
    """The card of ``hand`` to keep for the sixth trick.

    :param hand: own card ids.
    :param gone: card ids seen already this deal (own hand and every card played).
    :returns: the card with the fewest unseen higher cards of its suit, then the highest rank.
    """
    def key(c: int) -> tuple[int, int]:
        """Sort key ``(unseen higher cards of its suit, -rank)`` of card ``c``; the minimum is kept."""
        higher = sum(1 for d in DECK if d // 13 == c // 13 and d > c and d not in gone)
        return (higher, -_rank(c))
    return min(hand, key=key)


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """Choose one of ``legal`` (``play <card>`` strings) for an Agram observation."""
    if len(legal) == 1:
        return legal[0]
    hand = [parse_play("play " + c) for c in observation["hand"]]
    gone = set(hand)
    for _, text in observation["actions"]:
        gone.add(parse_play(text))
    keep = keeper(hand, gone)
    cards = {parse_play(t): t for t in legal}
    candidates = [c for c in cards if c != keep] or list(cards)
    # lowest rank first; among equal ranks, shed the suit we hold fewest of (towards a void)
    held = {s: sum(1 for c in hand if c // 13 == s) for s in range(4)}
    best = min(candidates, key=lambda c: (_rank(c), held[c // 13], c))
    return cards[best]
