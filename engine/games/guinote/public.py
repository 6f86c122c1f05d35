"""The public record of one Guiñote hand, rebuilt from its actions (rules §1.3, §1.6).

Everything every seat knows follows from the hand's start facts (players, dealer, the
face-up trump card) and its actions, because every action is public and the draw order
is fixed. :func:`walk` replays that public layer (no hidden cards needed) and collects
what observations show and what the information set infers: tricks and points, calls,
the 7 swap, who drew the face-up card, cards known to be in a hand, and for every card a
seat has shown the draw round by which it must have been in that seat's hand, plus the
strict-play inferences (voids, could-not-beat, no trumps).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.errors import InconsistentObservationError
from engine.games.guinote.actions import (
    CALL,
    LAST_TRICK,
    NCARDS,
    PAIR_MASK,
    POINTS,
    POWER,
    PROCEED,
    SEVEN_OF,
    SUIT,
    SWAP7,
    format_action,
)
from engine.games.guinote.rules import strict_forbidden
from engine.tricks import trick_winner

PLAY, WINDOW, OVER = 0, 1, 2


class PublicHand:
    """Public facts of the current hand after its actions so far (built by :func:`walk`).

    :ivar n: players; ``trump``: trump suit; ``trump_card``: the face-up card of the deal.
    :ivar actors: per action, the seat that took it.
    :ivar tricks: completed tricks as ``(leader, cards, winner, points)``.
    :ivar trick: the current trick's cards; ``leader``: its leader.
    :ivar to_act: seat to act next (``-1`` once the hand is over); ``phase``: PLAY or WINDOW.
    :ivar calls: ``(seat, suit, value)`` in order; ``called``: 4-bit mask of called suits.
    :ivar swap: ``(seat, trick number)`` of the 7 swap, or ``None``.
    :ivar rounds: per draw round done, the seat that drew first (the trick winner).
    :ivar stock_left: cards in the stock, face-up card included; ``face_up``: it, or -1.
    :ivar face_up_drawer: the seat that drew the face-up card, or -1.
    :ivar hand_sizes: per seat; ``points``: per side (seat % 2) this hand.
    :ivar received: per seat, mask of cards it got face up (swap, last draw).
    :ivar shown: per seat, mask of cards publicly known to be in its hand now.
    :ivar held_by: card -> ``(seat, rounds)``: the seat showed (played, called, swapped
        out) the card after ``rounds`` draw rounds, so it was dealt to it or drawn in one of
        its first ``rounds`` draws. Cards received face up are not listed.
    :ivar forbidden: per seat, mask of cards it cannot hold now (strict-play inferences).
    :ivar played: mask of every card played this hand.
    """

    __slots__ = ("n", "trump", "trump_card", "actors", "tricks", "trick", "leader", "to_act", "phase",
                 "calls", "called", "swap", "rounds", "stock_left", "face_up", "face_up_drawer",
                 "hand_sizes", "points", "received", "shown", "held_by", "forbidden", "played",
                 "window_called")

    n: int
    trump: int
    trump_card: int
    actors: list[int]
    tricks: list[tuple[int, tuple[int, ...], int, int]]
    trick: list[int]
    leader: int
    to_act: int
    phase: int
    calls: list[tuple[int, int, int]]
    called: int
    swap: tuple[int, int] | None
    rounds: list[int]
    stock_left: int
    face_up: int
    face_up_drawer: int
    hand_sizes: list[int]
    points: list[int]
    received: list[int]
    shown: list[int]
    held_by: dict[int, tuple[int, int]]
    forbidden: list[int]
    played: int
    window_called: bool


def walk(n: int, dealer: int, trump_card: int, must_under: bool, actions: Sequence[int],
         seats: Sequence[int] | None = None) -> PublicHand:
    """Replay the public layer of a hand.

    :param n: 2 or 4 players; ``dealer``: the hand's dealer; ``trump_card``: the face-up
        card of the deal (card id); ``must_under``: the ``must_undertrump`` option.
    :param actions: the hand's action ints in order.
    :param seats: if given, the actor of each action as observed; checked.
    :raises InconsistentObservationError: if an action is out of turn or out of phase,
        or a card is played twice.
    """
    p = _start(n, dealer, trump_card)
    for i, a in enumerate(actions):
        s = p.to_act
        if s < 0:
            raise InconsistentObservationError(f"guinote: action {format_action(a)!r} after the end of the hand")
        if seats is not None and seats[i] != s:
            raise InconsistentObservationError(
                f"guinote: action {i} ({format_action(a)!r}) is by seat {seats[i]} but seat {s} was to act")
        p.actors.append(s)
        if p.phase == PLAY:
            _play(p, s, a, must_under)
        elif a == SWAP7:
            _swap7(p, s)
        elif CALL <= a < PROCEED:
            _call(p, s, a)
        elif a == PROCEED:
            _proceed(p, s)
        else:
            raise InconsistentObservationError(f"guinote: {a!r} is not possible here")
    return p


def _start(n: int, dealer: int, trump_card: int) -> PublicHand:
    """The public facts right after the deal: seat ``dealer + 1`` leads (§1.2)."""
    p = PublicHand()
    p.n = n
    p.trump, p.trump_card = SUIT[trump_card], trump_card
    p.actors, p.tricks, p.trick, p.calls, p.rounds = [], [], [], [], []
    p.leader = p.to_act = (dealer + 1) % n
    p.phase = PLAY
    p.called = 0
    p.swap = None
    p.stock_left = NCARDS - 6 * n
    p.face_up = trump_card
    p.face_up_drawer = -1
    p.hand_sizes = [6] * n
    p.points = [0, 0]
    p.received = [0] * n
    p.shown = [0] * n
    p.held_by = {}
    p.forbidden = [0] * n
    p.played = 0
    p.window_called = False
    return p


def _play(p: PublicHand, s: int, a: int, must_under: bool) -> None:
    """Seat ``s`` plays card ``a``; a full trick is scored and opens the window (§1.3, §1.4)."""
    n, trump, held_by = p.n, p.trump, p.held_by
    if not 0 <= a < NCARDS or p.played >> a & 1:
        raise InconsistentObservationError(f"guinote: {format_action(a)!r} cannot be played here")
    if p.trick and p.stock_left == 0:
        p.forbidden[s] |= strict_forbidden(a, p.trick, p.leader, s, n, trump, must_under)
    if not p.received[s] >> a & 1 and a not in held_by:
        held_by[a] = (s, len(p.rounds))
    p.shown[s] &= ~(1 << a)
    p.played |= 1 << a
    p.hand_sizes[s] -= 1
    p.trick.append(a)
    if len(p.trick) < n:
        p.to_act = (s + 1) % n
        return
    ntricks = NCARDS // n
    w = (p.leader + trick_winner(p.trick, SUIT, POWER, trump)) % n
    pts = sum(POINTS[c] for c in p.trick)
    if len(p.tricks) + 1 == ntricks:
        pts += LAST_TRICK
    p.tricks.append((p.leader, tuple(p.trick), w, pts))
    p.points[w & 1] += pts
    p.trick = []
    p.leader = p.to_act = w
    if p.stock_left:
        p.phase = WINDOW
        p.window_called = False
    elif len(p.tricks) == ntricks:
        p.to_act = -1


def _swap7(p: PublicHand, s: int) -> None:
    """Seat ``s`` swaps the 7 of trumps for the face-up card (§1.3)."""
    seven = SEVEN_OF[p.trump]
    if p.swap is not None or p.face_up < 0 or POWER[p.face_up] <= POWER[seven]:
        raise InconsistentObservationError("guinote: swap7 is not possible here")
    if seven not in p.held_by:
        p.held_by[seven] = (s, len(p.rounds))
    p.shown[s] = (p.shown[s] & ~(1 << seven)) | (1 << p.face_up)
    p.received[s] |= 1 << p.face_up
    p.face_up = seven
    p.swap = (s, len(p.tricks))


def _call(p: PublicHand, s: int, a: int) -> None:
    """Seat ``s`` calls the king-and-knight pair of suit ``a - CALL`` (§1.3)."""
    suit = a - CALL
    if p.window_called or p.called >> suit & 1:
        raise InconsistentObservationError(f"guinote: {format_action(a)!r} is not possible here")
    pair = PAIR_MASK[suit]
    m = pair
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if not p.received[s] >> c & 1 and c not in p.held_by:
            p.held_by[c] = (s, len(p.rounds))
    p.shown[s] |= pair
    p.called |= 1 << suit
    p.window_called = True
    value = 40 if suit == p.trump else 20
    p.calls.append((s, suit, value))
    p.points[s & 1] += value


def _proceed(p: PublicHand, s: int) -> None:
    """Seat ``s`` (the trick winner) proceeds: one draw round, the last one takes the face-up card (§1.3)."""
    n = p.n
    p.rounds.append(s)
    for k in range(n):
        p.hand_sizes[k] += 1
    p.stock_left -= n
    if p.stock_left == 0:
        last = (s + n - 1) % n
        p.face_up_drawer = last
        p.received[last] |= 1 << p.face_up
        p.shown[last] |= 1 << p.face_up
        p.face_up = -1
    p.phase = PLAY
