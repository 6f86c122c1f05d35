"""Guiñote card tables and action encoding (rules §1.1, §1.3).

Cards are the Spanish ids of :mod:`engine.cards` (``suit * 10 + rank_index``, rank
indices 0..9 for ranks 1..7, 10, 11, 12; suits ``o c e b``). Everything here is a
tuple indexed by card id, built once at import.

Actions are small ints (state-independent, DESIGN "Engine contract"):

* ``0..39``: ``play <card>`` (the card id);
* ``SWAP7`` (40): ``swap7``;
* ``CALL + suit`` (41..44): ``call o`` / ``call c`` / ``call e`` / ``call b``;
* ``PROCEED`` (45): ``proceed``.
"""

from __future__ import annotations

from engine.cards import (
    SPANISH_SUIT_MASKS,
    SPANISH_SUITS,
    iter_cards,
    parse_spanish,
    spanish,
    spanish_str,
)
from engine.errors import ActionParseError

NCARDS = 40
DECK: tuple[int, ...] = tuple(range(NCARDS))

# rank indices (0..9 = ranks 1 2 3 4 5 6 7 10 11 12)
ACE, THREE, SEVEN, JACK, KNIGHT, KING = 0, 2, 6, 7, 8, 9

#: trick-taking order within a suit, high -> low: A 3 K Kn J 7 6 5 4 2 (rules §1.1)
_ORDER_HIGH_TO_LOW = (ACE, THREE, KING, KNIGHT, JACK, SEVEN, 5, 4, 3, 1)
_POWER_OF_RANK = {r: 9 - i for i, r in enumerate(_ORDER_HIGH_TO_LOW)}
_POINTS_OF_RANK = {ACE: 11, THREE: 10, KING: 4, KNIGHT: 3, JACK: 2}

#: per card id: its suit (0..3 = o c e b)
SUIT: tuple[int, ...] = tuple(c // 10 for c in DECK)
#: per card id: strength within its suit, 0 (the 2) .. 9 (the ace)
POWER: tuple[int, ...] = tuple(_POWER_OF_RANK[c % 10] for c in DECK)
#: per card id: card points (A 11, 3 10, K 4, Kn 3, J 2, others 0)
POINTS: tuple[int, ...] = tuple(_POINTS_OF_RANK.get(c % 10, 0) for c in DECK)
#: per suit: the mask of its ten cards
SUIT_MASK: tuple[int, ...] = SPANISH_SUIT_MASKS
#: per card id: the mask of the cards of the same suit that rank higher
ABOVE: tuple[int, ...] = tuple(
    sum(1 << d for d in range(SUIT[c] * 10, SUIT[c] * 10 + 10) if POWER[d] > POWER[c]) for c in DECK)
#: per suit: the 7 of that suit
SEVEN_OF: tuple[int, ...] = tuple(spanish(SEVEN, s) for s in range(4))
#: per suit: the mask of its King and Knight (a call, rules §1.1)
PAIR_MASK: tuple[int, ...] = tuple((1 << spanish(KING, s)) | (1 << spanish(KNIGHT, s)) for s in range(4))
#: per card id: its notation (``'12o'``)
CARD_STR: tuple[str, ...] = tuple(spanish_str(c) for c in DECK)

TOTAL_POINTS = 120  # card points in the pack
LAST_TRICK = 10     # "diez de últimas" (rules §1.4)

SWAP7 = 40
CALL = 41           # CALL + suit
PROCEED = 45

_ACTION_STR: tuple[str, ...] = (
    tuple("play " + CARD_STR[c] for c in DECK)
    + ("swap7",)
    + tuple("call " + s for s in SPANISH_SUITS)
    + ("proceed",))
_STR_ACTION = {s: a for a, s in enumerate(_ACTION_STR)}


def format_action(action: int) -> str:
    """The protocol string of an action int (``'play 12o'``, ``'swap7'``, ``'call o'``, ``'proceed'``).

    :raises ActionParseError: if ``action`` is not a Guiñote action value.
    """
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < len(_ACTION_STR):
        return _ACTION_STR[action]
    raise ActionParseError(f"guinote: {action!r} is not a Guiñote action value (0..45)")


def parse_action(text: str) -> int:
    """The action int of a protocol string (inverse of :func:`format_action`).

    Accepts exactly DESIGN's notation; a card may also be written with an upper-case suit.

    :raises ActionParseError: naming the text and the expected notation.
    """
    if isinstance(text, str):
        got = _STR_ACTION.get(text)
        if got is not None:
            return got
        parts = text.split()
        if len(parts) == 2 and parts[0] == "play":
            return parse_spanish(parts[1])
        if len(parts) == 2 and parts[0] == "call" and parts[1].lower() in SPANISH_SUITS:
            return CALL + SPANISH_SUITS.index(parts[1].lower())
    raise ActionParseError(
        f"guinote: {text!r} is not an action; expected 'play <card>' (card = rank 1-7, 10, 11, 12 + "
        "suit o c e b, e.g. 'play 12o'), 'swap7', 'call <suit>' (e.g. 'call o') or 'proceed'")


def card_list(mask: int) -> list[str]:
    """The cards of ``mask`` as notation strings, ascending by id (suit o c e b, then rank)."""
    return [CARD_STR[c] for c in iter_cards(mask)]
