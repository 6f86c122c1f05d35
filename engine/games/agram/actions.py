"""Agram's card tables and action notation (``docs/rules/agram.md`` §4.1, §4.3).

Cards are French card ids (:mod:`engine.cards`: ``suit * 13 + rank``, rank 0 = 2 …
12 = A). The 35-card deck (§4.1) keeps A, T, 9 … 3 of clubs, diamonds and hearts and
T … 3 of spades, so within a suit a higher id is a stronger card (A > T > 9 … > 3,
T♠ the top spade) and the id itself is the card's power. An action is the card id
played (``int``), written ``play Ah`` (§4.3).
"""

from __future__ import annotations

from engine.cards import FRENCH_SUIT_MASKS, french_str, parse_french
from engine.errors import ActionParseError

#: the 35 card ids of the Agram deck, ascending.
DECK: tuple[int, ...] = tuple(
    s * 13 + r for s in range(4) for r in range(13)
    if (1 <= r <= 8) or (r == 12 and s != 3)
)
DECK_MASK: int = sum(1 << c for c in DECK)
#: per suit, the mask of the deck's cards of that suit.
SUIT_MASKS: tuple[int, ...] = tuple(m & DECK_MASK for m in FRENCH_SUIT_MASKS)
#: per card id (0..51), the mask of its suit within the deck.
SUIT_MASK_OF: tuple[int, ...] = tuple(SUIT_MASKS[c // 13] for c in range(52))
#: per card id in the deck, its protocol string ``play Ah``.
ACTION_STR: dict[int, str] = {c: "play " + french_str(c) for c in DECK}
CARD_STR: dict[int, str] = {c: french_str(c) for c in DECK}
_PARSE: dict[str, int] = {s: c for c, s in ACTION_STR.items()}
TRICKS_PER_DEAL = 6
HAND_SIZE = 6


def parse_play(text: str) -> int:
    """``'play Ah'`` -> the card id (also accepts ``play 10h``).

    :raises ActionParseError: if ``text`` is not ``play <card>`` with a card of the deck.
    """
    c = _PARSE.get(text)
    if c is not None:
        return c
    parts = text.split() if isinstance(text, str) else []
    if len(parts) == 2 and parts[0].lower() == "play":
        c = parse_french(parts[1])
        if (1 << c) & DECK_MASK:
            return c
        raise ActionParseError(f"agram: {text!r}: {parts[1]} is not in the 35-card Agram deck")
    raise ActionParseError(f"agram: {text!r} is not an action; expected 'play <card>', e.g. 'play Ah'")


#: per card id (0..51), its suit index and its power (the id itself) for :func:`engine.tricks.trick_winner`.
SUIT_OF: tuple[int, ...] = tuple(c // 13 for c in range(52))
POWER: tuple[int, ...] = tuple(range(52))


def format_play(action: int) -> str:
    """The card id as ``play Ah``.

    :raises ActionParseError: if ``action`` is not a card of the deck.
    """
    s = ACTION_STR.get(action) if not isinstance(action, bool) else None
    if s is None:
        raise ActionParseError(f"agram: {action!r} is not a card of the Agram deck")
    return s
