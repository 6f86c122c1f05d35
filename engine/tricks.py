"""Shared trick-taking mechanics: following suit and the winner of a trick.

Card tables (``suit_of``, ``power``) are precomputed per game as tuples indexed by card
id, so these functions are a few list look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence


def follow_mask(hand: int, led_suit_mask: int) -> int:
    """The cards of ``hand`` a player may play when a suit is led (rules: follow suit if able).

    :param hand: the player's hand as a card mask.
    :param led_suit_mask: the mask of every card of the led suit.
    :returns: ``hand & led_suit_mask`` if non-empty, else the whole hand.
    """
    m = hand & led_suit_mask
    return m if m else hand


def trick_winner(plays: Sequence[int], suit_of: Sequence[int], power: Sequence[int],
                 trump: int | None = None) -> int:
    """Index in ``plays`` of the card that wins the trick.

    The highest trump wins if any trump was played; else the highest card of the suit
    led (the first card's suit). Off-suit cards never win.

    :param plays: card ids in the order played (``plays[0]`` led).
    :param suit_of: per card id, its suit.
    :param power: per card id, its strength within its suit (higher wins).
    :param trump: the trump suit, or ``None``.
    """
    best = 0
    best_card = plays[0]
    best_suit = suit_of[best_card]
    for i in range(1, len(plays)):
        c = plays[i]
        s = suit_of[c]
        if s == best_suit:
            if power[c] > power[best_card]:
                best, best_card = i, c
        elif trump is not None and s == trump:
            best, best_card, best_suit = i, c, s
    return best
