"""Guiñote strict play (rules §1.5) and the inference it allows (rules §1.6).

Both functions work on card masks and the current trick (card ids in play order).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.games.guinote.actions import ABOVE, POWER, SUIT, SUIT_MASK
from engine.tricks import trick_winner


def strict_mask(hand: int, trick: Sequence[int], leader: int, seat: int, n: int, trump: int,
                must_under: bool) -> int:
    """The cards ``seat`` may play to a non-empty trick once the stock is gone (``legal_strict``, §1.5).

    :param hand: the player's hand as a card mask.
    :param trick: the cards played so far in this trick, ``trick[0]`` led (non-empty).
    :param leader: the seat that led the trick.
    :param seat: the seat to act; ``n``: 2 or 4 (partner winning only exists with 4).
    :param trump: the trump suit (0..3); ``must_under``: the ``must_undertrump`` option.
    :returns: a non-empty sub-mask of ``hand`` (if ``hand`` is non-empty).
    """
    wi = trick_winner(trick, SUIT, POWER, trump)
    win = trick[wi]
    partner = n == 4 and (leader + wi) % n == (seat + 2) % n
    led = SUIT[trick[0]]
    follow = hand & SUIT_MASK[led]
    if follow:
        if partner or SUIT[win] != led:
            return follow
        return (follow & ABOVE[win]) or follow
    if partner:
        return hand
    trumps = hand & SUIT_MASK[trump]
    if trumps:
        if SUIT[win] == trump:
            over = trumps & ABOVE[win]
            if over:
                return over
            return trumps if must_under else hand
        return trumps
    return hand


def strict_forbidden(card: int, trick: Sequence[int], leader: int, seat: int, n: int, trump: int,
                     must_under: bool) -> int:
    """The cards ``seat`` cannot have held when it played ``card`` to ``trick`` in strict play (§1.6).

    ``card`` is legal for a hand ``H`` containing it exactly when ``H`` holds none of the
    returned mask (voids, "could not beat", "could not over-trump", "no trumps").

    :param trick: the cards played before ``card`` in this trick (non-empty: leads carry
        no information).
    :returns: a card mask (0 when the play tells nothing).
    """
    wi = trick_winner(trick, SUIT, POWER, trump)
    win = trick[wi]
    partner = n == 4 and (leader + wi) % n == (seat + 2) % n
    led = SUIT[trick[0]]
    suit = SUIT[card]
    if suit == led:
        if partner or SUIT[win] != led or POWER[card] > POWER[win]:
            return 0
        return ABOVE[win]                       # could not beat the winning card
    forbidden = SUIT_MASK[led]                  # void in the suit led
    if partner:
        return forbidden
    if suit == trump:
        if SUIT[win] == trump and POWER[card] < POWER[win]:
            forbidden |= ABOVE[win]             # could not over-trump
        return forbidden
    if SUIT[win] == trump and not must_under:
        return forbidden | ABOVE[win]           # no trump above the winning trump
    return forbidden | SUIT_MASK[trump]         # no trumps at all
