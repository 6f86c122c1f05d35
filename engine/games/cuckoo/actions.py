"""Cuckoo actions, card values and the public trace of a hand (cuckoo.md §3.1, §3.3, §3.5).

Actions are small ints whose meaning never depends on the state:

========  =====  ==========================================================
action    value  string (DESIGN notation)
========  =====  ==========================================================
KEEP      0      ``keep``: a player (or the dealer) keeps the card
SWAP      1      ``swap``: a non-dealer offers to trade with the next active player
ACCEPT    2      ``accept``: the neighbour's ``RESPOND``: the trade happens
BLOCK     3      ``block``: the neighbour's ``RESPOND``: shows a king, no trade
CUT       4      ``cut``: the dealer turns up the top card of the stock
========  =====  ==========================================================
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import french_rank
from engine.errors import ActionParseError

KEEP, SWAP, ACCEPT, BLOCK, CUT = 0, 1, 2, 3, 4
NAMES: tuple[str, ...] = ("keep", "swap", "accept", "block", "cut")
_BY_NAME = {name: i for i, name in enumerate(NAMES)}

#: phases of a hand: a player's turn, the neighbour's ``RESPOND``, the match is over
TURN, RESPOND, OVER = 0, 1, 2
PHASE_NAMES = ("turn", "respond", "over")

DECK: tuple[int, ...] = tuple(range(52))
#: Cuckoo value per French card id (§3.1): A = 1, 2..10 = 2..10, J = 11, Q = 12, K = 13.
VALUE: tuple[int, ...] = tuple(1 if french_rank(c) == 12 else french_rank(c) + 2 for c in DECK)
#: True for the four kings.
IS_KING: tuple[bool, ...] = tuple(french_rank(c) == 11 for c in DECK)
KINGS: tuple[int, ...] = tuple(c for c in DECK if IS_KING[c])


def parse_action(text: str) -> int:
    """The action written ``text`` (``keep``, ``swap``, ``accept``, ``block`` or ``cut``).

    :raises ActionParseError: naming the text and the accepted words.
    """
    if isinstance(text, str):
        a = _BY_NAME.get(text.strip())
        if a is not None:
            return a
    raise ActionParseError(f"cuckoo: {text!r} is not an action; expected one of {', '.join(NAMES)}")


def format_action(action: int) -> str:
    """The protocol string of ``action`` (one of :data:`NAMES`).

    :raises ActionParseError: if ``action`` is not a Cuckoo action.
    """
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < 5:
        return NAMES[action]
    raise ActionParseError(f"cuckoo: {action!r} is not an action value (0..4)")


class Trace:
    """The public structure of the current hand, replayed from its actions (§3.5).

    Cards are followed by **origin**: origin ``o < n`` is the card dealt to seat ``o``,
    origin ``n`` is the top card of the stock. Trades move origins between seats; who
    knows which origin's value follows from the public events and the seat's own trades.

    :ivar holder: per seat, the origin of the card it holds now (``-1`` if not dealt in).
    :ivar know: per seat, bitmask of origins whose value it knows privately (its own
        dealt card and every card it saw in an accepted trade it took part in).
    :ivar public: bitmask of origins whose value every seat knows (blocked kings, the cut card).
    :ivar nonking: bitmask of origins publicly known not to be kings (``automatic`` blocking).
    :ivar discard: origin of the dealer's discarded card after a non-king cut, else ``-1``.
    :ivar blocked: bitmask of seats that blocked (their turn is skipped).
    :ivar pos: index into ``order`` of the seat whose turn it is (``len(order)`` = hand over).
    :ivar phase: :data:`TURN` or :data:`RESPOND` (or :data:`OVER` once ``pos`` ran out).
    """

    __slots__ = ("holder", "know", "public", "nonking", "discard", "blocked", "pos", "phase")

    def __init__(self, n: int, order: Sequence[int]) -> None:
        self.holder = [-1] * n
        self.know = [0] * n
        for s in order:
            self.holder[s] = s
            self.know[s] = 1 << s
        self.public = 0
        self.nonking = 0
        self.discard = -1
        self.blocked = 0
        self.pos = 0
        self.phase = TURN if order else OVER

    @classmethod
    def replay(cls, n: int, order: Sequence[int], actions: Sequence[int], automatic: bool,
               cut_king: bool) -> Trace:
        """Replay ``actions`` of a hand whose turn order is ``order`` (dealer last).

        :param automatic: ``king_block == "automatic"`` (an accept shows a non-king).
        :param cut_king: whether the dealer's cut (if any) turned up a king.
        :raises ValueError: if an action cannot occur where it stands (bad phase, or a
            ``cut``/``swap`` by the wrong kind of seat, or actions after the hand's end).
        """
        t = cls(n, order)
        m = len(order)
        stock = n
        for a in actions:
            if t.phase == OVER:
                raise ValueError("action after the end of the hand")
            p = order[t.pos]
            if t.phase == TURN:
                last = t.pos == m - 1
                if a == SWAP and not last:
                    t.phase = RESPOND
                    continue
                if a == CUT and last:
                    t.public |= 1 << stock
                    if not cut_king:
                        t.discard = t.holder[p]
                        t.holder[p] = stock
                elif a != KEEP:
                    raise ValueError(f"{format_action(a)!r} is not a turn action of seat {p}")
            else:
                q = order[t.pos + 1]
                op, oq = t.holder[p], t.holder[q]
                if a == ACCEPT:
                    t.know[p] |= 1 << oq
                    t.know[q] |= 1 << op
                    if automatic:
                        t.nonking |= 1 << oq
                    t.holder[p], t.holder[q] = oq, op
                elif a == BLOCK:
                    t.public |= 1 << oq
                    t.blocked |= 1 << q
                else:
                    raise ValueError(f"{format_action(a)!r} is not a response")
                t.phase = TURN
            t.pos += 1
            while t.pos < m and t.blocked >> order[t.pos] & 1:
                t.pos += 1
            if t.pos >= m:
                t.phase = OVER
        return t

    def knows(self, seat: int, origin: int) -> bool:
        """Whether ``seat`` knows the value of ``origin`` (privately or publicly)."""
        return bool((self.know[seat] | self.public) >> origin & 1)
