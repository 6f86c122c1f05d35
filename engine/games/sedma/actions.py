"""Sedma cards, tables and actions (``docs/rules/sedma.md`` §2.1, §2.3).

Cards are ranks only (§2.1, S-9), but every physical copy has its own id so that
determinization is uniform over physical deals (DESIGN "Information sets"):
``id = rank * 4 + copy`` with rank ``0..7`` = ``7 8 9 T J Q K A`` and copy ``0..3``.
The 3-player deck drops two 8s (ids 6 and 7, S-1). A hand is an int mask over ids; the
four copies of rank ``x`` are the nibble ``(mask >> 4 * x) & 0xF``. Playing rank ``x``
plays the lowest id of that rank in hand (copies are interchangeable).

Actions (state-independent ints):

* ``Play(x)`` = ``x`` (0..7), written ``play x``;
* ``Continue(x)`` = ``8 + x``, written ``continue x``;
* ``EndTrick()`` = ``16``, written ``end``.
"""

from __future__ import annotations

from engine.cards import iter_cards
from engine.errors import ActionParseError

RANKS = "789TJQKA"
#: rank strings by rank index (``T`` is the 10).
RANK_STR: tuple[str, ...] = tuple(RANKS)
SEVEN = 0
#: rank indices worth 10 card points: the 10 and the ace (§2.1).
POINT_RANKS = (3, 7)

#: physical card ids of the 4-player / 2-player deck (32 cards) and the 3-player deck (30 cards).
DECK_FULL: tuple[int, ...] = tuple(range(32))
DECK_3P: tuple[int, ...] = tuple(c for c in range(32) if c not in (6, 7))
#: mask of the cards worth 10 points (all 10s and aces).
POINT_MASK = (0xF << 12) | (0xF << 28)
NIBBLE_LOW = 0x11111111

PLAY = 0
CONTINUE = 8
END = 16

#: the protocol string of every action value.
ACTION_STR: tuple[str, ...] = tuple(
    [f"play {r}" for r in RANKS] + [f"continue {r}" for r in RANKS] + ["end"])
_PARSE = {s: a for a, s in enumerate(ACTION_STR)}
for _i, _r in enumerate(RANKS):  # "10" is accepted as a synonym of "T" on input
    if _r == "T":
        _PARSE["play 10"] = PLAY + _i
        _PARSE["continue 10"] = CONTINUE + _i


def deck_for(n: int) -> tuple[int, ...]:
    """The physical card ids in play for ``n`` players (30 with 3 players, else 32; S-1)."""
    return DECK_3P if n == 3 else DECK_FULL


def present_ranks(hand: int) -> int:
    """Mask with bit ``4 * x`` set iff ``hand`` holds a card of rank ``x``."""
    t = hand | (hand >> 1)
    t |= t >> 2
    return t & NIBBLE_LOW


def _play_lists() -> dict[int, tuple[int, ...]]:
    out = {}
    for m in range(256):
        key = 0
        acts = []
        for x in range(8):
            if m >> x & 1:
                key |= 1 << (4 * x)
                acts.append(PLAY + x)
        out[key] = tuple(acts)
    return out


#: ``present_ranks(hand)`` -> the ``Play`` actions of that hand, ascending.
PLAY_LISTS: dict[int, tuple[int, ...]] = _play_lists()


def rank_of(card: int) -> int:
    """Rank index (0..7 = 7 8 9 T J Q K A) of a physical card id."""
    return card >> 2


def ranks_str(mask: int) -> list[str]:
    """The rank strings of the cards of ``mask``, in rank order (``['7', '8', '8', 'A']``)."""
    return [RANK_STR[c >> 2] for c in iter_cards(mask)]


def parse_rank(text: str) -> int:
    """Rank index of ``'7' .. 'A'`` (``'10'`` accepted for ``'T'``).

    :raises ActionParseError: naming the text.
    """
    t = text.strip().upper()
    if t == "10":
        t = "T"
    if len(t) != 1 or t not in RANKS:
        raise ActionParseError(f"{text!r} is not a Sedma rank (expected one of 7 8 9 T J Q K A)")
    return RANKS.index(t)


def parse_action(text: str) -> int:
    """The action value of ``play x`` / ``continue x`` / ``end`` (§2.3).

    :raises ActionParseError: naming the text and the notation.
    """
    a = _PARSE.get(text) if isinstance(text, str) else None
    if a is None:
        raise ActionParseError(
            f"sedma: {text!r} is not an action (expected 'play x', 'continue x' or 'end' "
            f"with x one of 7 8 9 T J Q K A)")
    return a


def format_action(action: int) -> str:
    """The protocol string of an action value.

    :raises ActionParseError: if ``action`` is not a Sedma action value.
    """
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action <= END:
        return ACTION_STR[action]
    raise ActionParseError(f"sedma: {action!r} is not an action value (0..16)")
