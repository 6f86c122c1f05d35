"""Cards as ints, card sets as int bitmasks, and the notations of DESIGN.

A card is an ``int`` id (``Card``); a set of cards is an ``int`` bitmask
(``CardMask``) with bit ``c`` set for card ``c``. Hot loops use the raw ints and
the helpers below; :class:`CardSet` is a friendly wrapper for users and tests.

Decks:

* **French** (Agram, Cuttle, Whiskey Poker, Cuckoo, Sedma's physical cards):
  id = ``suit * 13 + rank`` with rank ``0`` = 2 … ``12`` = A and suits ``c d h s``.
  Notation ``Ah Td 7s`` (rank ``A K Q J T 9..2`` + suit).
* **Spanish** (Guiñote): id = ``suit * 10 + rank_index`` with ranks
  ``1 2 3 4 5 6 7 10 11 12`` and suits ``o c e b``; notation ``12o``, ``1b``.

Games with copies of a face (Argute values, Sedma ranks, Gargon zeros) give each
physical copy its own id and map ids to faces themselves; the sampler is uniform
over physical ids, hence over physical deals (DESIGN "Information sets").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from engine.errors import ActionParseError

Card = int
CardMask = int
Seat = int

FRENCH_RANKS = "23456789TJQKA"
FRENCH_SUITS = "cdhs"
SPANISH_RANKS = ("1", "2", "3", "4", "5", "6", "7", "10", "11", "12")
SPANISH_SUITS = "oceb"


# ---------------------------------------------------------------- bitmask helpers

def bit(card: Card) -> CardMask:
    """The mask holding only ``card``."""
    return 1 << card


def mask_of(cards: Iterable[Card]) -> CardMask:
    """The mask of an iterable of card ids."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: CardMask) -> list[Card]:
    """The card ids in ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def iter_cards(mask: CardMask) -> Iterator[Card]:
    """Iterate the card ids in ``mask``, ascending, without building a list."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: CardMask) -> int:
    """Number of cards in ``mask``."""
    return mask.bit_count()


def lowest(mask: CardMask) -> Card:
    """The lowest card id in a non-empty ``mask``."""
    return (mask & -mask).bit_length() - 1


def highest(mask: CardMask) -> Card:
    """The highest card id in a non-empty ``mask``."""
    return mask.bit_length() - 1


# ---------------------------------------------------------------- French cards

def french(rank: int, suit: int) -> Card:
    """French card id from rank (0 = 2 … 12 = A) and suit (0..3 = c d h s)."""
    return suit * 13 + rank


def french_rank(card: Card) -> int:
    """Rank index of a French card: 0 = 2 … 12 = A."""
    return card % 13


def french_suit(card: Card) -> int:
    """Suit index of a French card: 0..3 = c d h s."""
    return card // 13


def french_str(card: Card) -> str:
    """``'Ah'``-style notation of a French card id."""
    return FRENCH_RANKS[card % 13] + FRENCH_SUITS[card // 13]


def parse_french(text: str) -> Card:
    """Parse ``'Ah'``, ``'Td'``, ``'7s'`` (also ``'10d'``) to a French card id.

    :raises ActionParseError: naming the text when it is not a French card.
    """
    t = text.strip()
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2 or t[0].upper() not in FRENCH_RANKS or t[1].lower() not in FRENCH_SUITS:
        raise ActionParseError(f"{text!r} is not a French card (expected rank A K Q J T 9..2 + suit c d h s, e.g. 'Ah')")
    return french(FRENCH_RANKS.index(t[0].upper()), FRENCH_SUITS.index(t[1].lower()))


FRENCH_SUIT_MASKS: tuple[CardMask, ...] = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))


# ---------------------------------------------------------------- Spanish cards

def spanish(rank_index: int, suit: int) -> Card:
    """Spanish card id from rank index (0..9 for ranks 1..7, 10, 11, 12) and suit (0..3 = o c e b)."""
    return suit * 10 + rank_index


def spanish_str(card: Card) -> str:
    """``'12o'``-style notation of a Spanish card id."""
    return SPANISH_RANKS[card % 10] + SPANISH_SUITS[card // 10]


def parse_spanish(text: str) -> Card:
    """Parse ``'12o'``, ``'1b'`` to a Spanish card id.

    :raises ActionParseError: naming the text when it is not a Spanish card.
    """
    t = text.strip().lower()
    if len(t) < 2 or t[-1] not in SPANISH_SUITS or t[:-1] not in SPANISH_RANKS:
        raise ActionParseError(f"{text!r} is not a Spanish card (expected rank 1-7, 10, 11, 12 + suit o c e b, e.g. '12o')")
    return spanish(SPANISH_RANKS.index(t[:-1]), SPANISH_SUITS.index(t[-1]))


SPANISH_SUIT_MASKS: tuple[CardMask, ...] = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))


# ---------------------------------------------------------------- friendly wrapper

class CardSet:
    """An immutable set of card ids backed by an int bitmask.

    ``CardSet.of([0, 5])``, ``len(cs)``, ``c in cs``, ``cs | other``, ``list(cs)`` (ascending).
    Use raw masks in hot loops; this wrapper is for users, tests and reports.
    """

    __slots__ = ("mask",)

    def __init__(self, mask: CardMask = 0) -> None:
        self.mask = mask

    @classmethod
    def of(cls, cards: Iterable[Card]) -> CardSet:
        """A set of the given card ids."""
        return cls(mask_of(cards))

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and card >= 0 and bool(self.mask >> card & 1)

    def __iter__(self) -> Iterator[Card]:
        return iter_cards(self.mask)

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __repr__(self) -> str:
        return f"CardSet({cards_of(self.mask)})"
