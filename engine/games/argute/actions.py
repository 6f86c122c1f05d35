"""Argute's card tables, action encoding and pure scoring helpers (``docs/rules/argute.md``).

The 42 play cards are physical ids ``0..41``; card ``c`` has value ``c // 7`` (seven
copies of each value 0..5, §1.1). Hands are 42-bit masks. Actions are by value, not by
physical id (ruling A-A11): ``PLAY(v)`` is the int ``v`` (0..5), written ``play v``;
``BID(b)`` is the int ``BID + b`` (``BID`` = 10), written ``bid b`` and seen by the other
seats as ``bid ?`` (§1.3).

Argute's count-tricks (highest total wins, ties to who reached it first) are its own
mechanic, not the follow-suit trick of :mod:`engine.tricks`, so :func:`trick_winner` lives here.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

from engine.errors import ActionParseError

COPIES = 7
VALUES = 6
DECK: tuple[int, ...] = tuple(range(COPIES * VALUES))
HAND_SIZE = 6
#: cards each player puts into tricks 1, 2, 3 (§1.3).
CARDS_PER_TRICK = (3, 2, 1)
#: action id of ``bid 0``; ``bid b`` is ``BID + b``.
BID = 10
BIDS = (BID, BID + 1, BID + 2, BID + 3)
#: per value, the mask of its 7 physical copies.
VALUE_MASKS: tuple[int, ...] = tuple(((1 << COPIES) - 1) << (COPIES * v) for v in range(VALUES))
ACTION_STR: dict[int, str] = {**{v: f"play {v}" for v in range(VALUES)}, **{BID + b: f"bid {b}" for b in range(4)}}
_PARSE: dict[str, int] = {s: a for a, s in ACTION_STR.items()}
PHASES = ("bid", "play", "over")


def value_of(card: int) -> int:
    """Value (0..5) of physical card id ``card``."""
    return card // COPIES


def parse_argute(text: str) -> int:
    """``'bid 2'`` -> ``BID + 2``; ``'play 5'`` -> ``5``.

    :raises ActionParseError: naming the text and the notation.
    """
    a = _PARSE.get(text) if isinstance(text, str) else None
    if a is None:
        raise ActionParseError(
            f"argute: {text!r} is not an action; expected 'bid b' (b = 0..3) or 'play v' (v = 0..5)")
    return a


def trick_winner(plays: Sequence[tuple[int, int]]) -> int:
    """The seat that wins a trick (§1.3 "Trick resolution", ruling A-A3).

    :param plays: ``(seat, value)`` in the order played.
    :returns: the seat with the highest total; among tied seats, the one whose running
        total reached its final total at the earliest play (a total of 0 is reached at the
        seat's first card).
    """
    total: dict[int, int] = {}
    reach: dict[int, int] = {}
    for s, (seat, v) in enumerate(plays):
        if seat not in total:
            total[seat] = 0
            reach[seat] = s
        if v:
            reach[seat] = s
            total[seat] += v
    return min(total, key=lambda p: (-total[p], reach[p]))


def hand_score(bid: int, won: int) -> int:
    """Score change of one player for one hand (§1.3 "Hand end and scoring")."""
    return bid if won == bid else -1


def win_test(scores: Sequence[int], target: int) -> bool:
    """True if exactly one player has the highest score and it is ``>= target`` (§1.3 "Match end")."""
    top = max(scores)
    return top >= target and list(scores).count(top) == 1



def copy_odds(holdings: Sequence[Sequence[int]], played: Sequence[Sequence[int]]) -> int:
    """How many times more often a uniform draw of the unseen copies gives these holdings than
    the physical deals behind them do (``infoset`` module docstring, ruling CA-R4).

    :param holdings: per location, the physical card ids it holds now.
    :param played: per location, per value, how many cards of that value its seat played this hand.
    :returns: ``prod C(c + p, p)`` over locations and values, ``c`` the held copies and ``p`` the played ones (>= 1).
    """
    odds = 1
    for cards, done in zip(holdings, played, strict=True):
        if not any(done):
            continue
        held = [0] * VALUES
        for c in cards:
            held[c // COPIES] += 1
        for c, p in zip(held, done):
            if c and p:
                odds *= comb(c + p, p)
    return odds


def format_argute(action: object) -> str:
    """``bid b`` / ``play v``.

    :raises ActionParseError: if ``action`` is not an Argute action.
    """
    s = ACTION_STR.get(action) if type(action) is int else None
    if s is None:
        raise ActionParseError(f"argute: {action!r} is not an action")
    return s
