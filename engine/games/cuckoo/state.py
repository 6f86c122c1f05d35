"""The Cuckoo match state (cuckoo.md §3.2–§3.4) and its observations (§3.5).

A hand: one card to each active player, turns clockwise from the dealer's left with the
dealer last; a non-dealer keeps or swaps with the next active player, who responds
(accept, or block with a king, which skips its own turn); the dealer keeps or cuts to
the stock; at the showdown every player holding the lowest value loses a life, unless
that would leave nobody with a life (the hand is void). The last player standing wins.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

from engine.cards import french_str
from engine.core import Outcome, SnapshotState, rank_rewards, ranks_from_results
from engine.deal import shuffled
from engine.errors import GameOverError
from engine.games.cuckoo.actions import (
    ACCEPT,
    BLOCK,
    CUT,
    DECK,
    IS_KING,
    KEEP,
    NAMES,
    OVER,
    PHASE_NAMES,
    RESPOND,
    SWAP,
    TURN,
    VALUE,
    Trace,
)

_STILL_IN = 1 << 30  # elimination "hand" of a seat still in (sorts above every real hand)
#: hand_rewards per result pattern (0 not dealt in / 1 lost a life / 2 kept), bounded
_HAND_REWARDS: dict[tuple[int, ...], tuple[float, ...]] = {}
#: match_rewards per (elimination hands, sides), bounded
_MATCH_REWARDS: dict[tuple, tuple[float, ...]] = {}


#: card code per id, and ``None`` for ``-1`` (index ``-1`` = the last entry)
_CODES: tuple[str | None, ...] = tuple(french_str(c) for c in DECK) + (None,)


def _code(card: int) -> str | None:
    return _CODES[card]


class CuckooState(SnapshotState):
    """A complete Cuckoo world: lives, dealer, the current hand's deal and play.

    Cards are French ids (``engine.cards``); ``cards[s]`` is seat ``s``'s card now
    (``-1`` if not dealt in), ``stock`` the undealt cards in order (top first) and
    ``spos`` how many were taken from its top (1 after a non-king cut).

    :ivar order: the hand's turn order: active seats from the dealer's left, dealer last.
    :ivar pos: index into ``order`` of the seat whose turn it is.
    :ivar phase: ``TURN`` (``order[pos]`` decides), ``RESPOND`` (``order[pos+1]`` answers a
        swap) or ``OVER`` (match over).
    :ivar elim: per seat, the hand index in which it was eliminated (``-1`` = still in).
    :ivar hands: per completed hand ``(dealer, final cards, cut card, losers, void, discard,
        knowers)``: ``discard`` is the dealer's discarded card (``-1`` if none) and
        ``knowers`` the bitmask of seats that knew it (the dealer and its trade partners, §3.5).
    :ivar dealt: the cards per seat as dealt this hand (``-1`` if not dealt in).

    The deal of a hand that follows another is lazy (issue 19): :meth:`apply` of a hand's
    last action sets up the next hand's turn order but shuffles its deck only when its cards
    are first needed (``cards``, ``stock``, ``dealt`` and every method read them through
    :meth:`_ready`), so a search that stops at the end of the hand never shuffles it. The
    deal is seeded by ``deal_seed`` and the hand index, so when it happens changes nothing.
    The hand-start snapshot (:meth:`_deal_snapshot`) is built on first use too.
    """

    __slots__ = ("game", "n", "opts", "automatic", "max_hands", "deal_seed", "lives", "elim",
                 "dealer", "hidx", "order", "pos", "phase", "_cards", "_stock", "spos", "cut_card",
                 "discard", "blocked", "history", "hands", "_dealt", "pending")

    def __init__(self, game: Any, n: int, opts: dict[str, Any], deal_seed: int) -> None:
        self.game = game
        self.n = n
        self.opts = opts
        self.automatic = opts["king_block"] == "automatic"
        self.max_hands = opts["max_hands"]
        self.deal_seed = deal_seed
        self.lives = [opts["lives"]] * n
        self.elim = [-1] * n
        self.dealer = 0
        self.hidx = 0
        self.order: tuple[int, ...] = ()
        self.pos = 0
        self.phase = OVER
        self._cards = [-1] * n
        self._stock: tuple[int, ...] = ()
        self._dealt: tuple[int, ...] = (-1,) * n
        self.pending = False
        self.spos = 0
        self.cut_card = -1
        self.discard = -1
        self.blocked = 0
        self.history: list[int] = []
        self.start: CuckooState | None = None
        self.hands: tuple = ()

    # ------------------------------------------------------------ the lazy deal

    @property
    def cards(self) -> list[int]:
        """Per seat, the card held now (``-1`` if not dealt in); the list itself, not a copy."""
        if self.pending:
            self._ready()
        return self._cards

    @cards.setter
    def cards(self, value: list[int]) -> None:
        """Replace the per-seat cards (a pending next hand is dealt first, then overwritten)."""
        if self.pending:
            self._ready()
        self._cards = value

    @property
    def stock(self) -> tuple[int, ...]:
        """The undealt cards of this hand in order, top first."""
        if self.pending:
            self._ready()
        return self._stock

    @property
    def dealt(self) -> tuple[int, ...]:
        """Per seat, the card dealt to it this hand (``-1`` if not dealt in)."""
        if self.pending:
            self._ready()
        return self._dealt

    def _ready(self) -> None:
        """Shuffle and deal the pending hand (its order is already set up), if one is pending."""
        if self.pending:
            self.pending = False
            deck = shuffled(DECK, self.deal_seed, self.hidx)
            self._place(deck)

    def _place(self, deck: list[int]) -> None:
        """Put ``deck`` (in dealing order) into the seats of ``order`` and the stock."""
        order = self.order
        cards = [-1] * self.n
        i = 0
        for s in order:
            cards[s] = deck[i]
            i += 1
        self._cards = cards
        self._dealt = tuple(cards)
        self._stock = tuple(deck[i:])

    # ------------------------------------------------------------ dealing

    def _turn_order(self) -> tuple[int, ...]:
        """Active seats clockwise from the dealer's left, the dealer last (§3.2)."""
        n, d, elim = self.n, self.dealer, self.elim
        out = []
        for k in range(d + 1, d + n + 1):
            s = k % n
            if elim[s] < 0:
                out.append(s)
        return tuple(out)

    def _deal(self, deck: list[int] | None = None, lazy: bool = False,
              order: tuple[int, ...] | None = None) -> None:
        """Deal the current hand (``hidx``) from ``shuffled(DECK, deal_seed, hidx)`` (§3.2).

        :param deck: the deck in dealing order instead (used by information sets and tests).
        :param lazy: set the hand up but shuffle the deck on first use (:meth:`_ready`).
        :param order: the hand's turn order when the caller knows it (:meth:`_turn_order`).
        """
        self.order = self._turn_order() if order is None else order
        self.spos = 0
        self.cut_card = -1
        self.discard = -1
        self.blocked = 0
        self.pos = 0
        self.phase = TURN
        self.history = []
        self.start = None
        self.pending = False
        if deck is not None:
            self._place(deck)
        elif lazy:
            self.pending = True     # shuffled on first use (_ready)
        else:
            self._place(shuffled(DECK, self.deal_seed, self.hidx))

    def _end_hand(self, deal: bool = True, knowers: int = -1) -> None:
        """Showdown, lives and elimination (§3.4); deal the next hand unless the match ended
        (or ``deal`` is false: :meth:`finish_hand`, the rollout kernel).

        :param knowers: the bitmask of seats that know the dealer's discard when the caller
            followed the hand's trace itself (:mod:`engine.games.cuckoo.rollout`); ``-1``:
            replay :meth:`trace` here."""
        cards, order, lives, elim = self._cards, self.order, self.lives, self.elim
        low = 14
        for s in order:
            v = VALUE[cards[s]]
            if v < low:
                low = v
        losers = tuple([s for s in order if VALUE[cards[s]] == low])
        void = False
        if len(losers) == len(order):
            void = True
            for s in order:
                if lives[s] != 1:
                    void = False
        out = False                         # somebody eliminated in this hand
        if not void:
            for s in losers:
                lives[s] -= 1
                if lives[s] == 0:
                    elim[s] = self.hidx
                    out = True
        if self.discard < 0:
            knowers = 0
        elif knowers < 0:  # (rollouts pass the kernel's typed discard_knowers; state stays below rollout)
            t = self.trace()
            knowers = sum(1 << s for s in order if t.knows(s, t.discard))
        self.hands = self.hands + ((self.dealer, tuple(cards), self.cut_card, losers, void,
                                    self.discard, knowers),)
        self.hidx += 1
        left = 0
        for e in elim:
            if e < 0:
                left += 1
        if left <= 1 or self.hidx >= self.max_hands:
            self.phase = OVER
            self.order = ()
            self._cards = [-1] * self.n
            self._dealt = (-1,) * self.n
            self._stock = ()
            self.spos = 0
            self.cut_card = -1
            self.discard = -1
            self.blocked = 0
            self.pos = 0
            self.history = []
            self.start = None
            return
        # the next active seat clockwise deals (§3.2): the first seat of this hand's order
        # still in (the seats between the dealer and it are out); the order rotates past it
        act = order if not out else tuple([s for s in order if elim[s] < 0])
        self.dealer = act[0]
        if deal:
            self._deal(None, True, act[1:] + act[:1])

    # ------------------------------------------------------------ contract

    @property
    def num_players(self) -> int:
        """Number of seats, 2..20, eliminated ones included (§3.1)."""
        return self.n

    def current_player(self) -> int:
        """The seat on turn, or in ``RESPOND`` the swap's target (§3.3); -1 once the match is over."""
        if self.phase == TURN:
            return self.order[self.pos]
        if self.phase == RESPOND:
            return self.order[self.pos + 1]
        return -1

    def legal_actions(self) -> list[int]:
        """``[keep, swap]`` on a non-dealer's turn, ``[keep, cut]`` on the dealer's;
        ``RESPOND`` (§3.3): ``[accept]`` without a king, with a king ``[accept, block]``
        (``optional``) or ``[block]`` (``automatic``)."""
        phase = self.phase
        if phase == TURN:
            return [KEEP, CUT] if self.pos == len(self.order) - 1 else [KEEP, SWAP]
        if phase == RESPOND:
            if IS_KING[self._cards[self.order[self.pos + 1]]]:
                return [BLOCK] if self.automatic else [ACCEPT, BLOCK]
            return [ACCEPT]
        return []

    def apply(self, action: int) -> None:
        """Play ``action`` (§3.3); the hand's last action runs the showdown and deals the next.

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: once the match is over.
        """
        if self._act(action):
            self._end_hand()

    def finish_hand(self, rng: random.Random, teams: list[list[int]]) -> list[float]:
        """Play the current hand out in place with ``game.rollout_action`` and return the
        rollout's rewards (:meth:`hand_rewards`, or ``outcome().rewards(teams)`` when the hand
        ended the match), exactly as that loop of :meth:`apply` would, but without dealing
        the next hand (issue 19: hand rollouts throw it away). Afterwards only
        :meth:`is_terminal`, :meth:`hand_index`, :meth:`hand_rewards` and :meth:`outcome` hold.

        :raises GameOverError: once the match is over.
        """
        if self.phase == OVER:
            raise GameOverError("cuckoo: the match is over")
        roll = self.game.rollout_action
        while not self._act(roll(self, rng)):
            pass
        self._end_hand(deal=False)
        return self.match_rewards(teams) if self.phase == OVER else self.hand_rewards()

    def _act(self, action: int) -> bool:
        """:meth:`apply` short of the showdown: True when ``action`` was the hand's last."""
        if self.pending:
            self._ready()
        phase = self.phase
        if phase == TURN:
            order = self.order
            last = self.pos == len(order) - 1
            if action == KEEP:
                pass
            elif action == SWAP and not last:
                self.phase = RESPOND
                self.history.append(action)
                return False
            elif action == CUT and last:
                top = self._stock[self.spos]
                self.cut_card = top
                if not IS_KING[top]:
                    d = order[-1]
                    self.discard = self._cards[d]
                    self._cards[d] = top
                    self.spos += 1
            else:
                raise self._illegal(action, "the dealer may keep or cut" if last
                                    else "a non-dealer may keep or swap")
        elif phase == RESPOND:
            q = self.order[self.pos + 1]
            cards = self._cards
            king = IS_KING[cards[q]]
            if action == ACCEPT and not (king and self.automatic):
                p = self.order[self.pos]
                cards[p], cards[q] = cards[q], cards[p]
            elif action == BLOCK and king:
                self.blocked |= 1 << q
            else:
                raise self._illegal(action, "a swap must be answered by accept or (with a king) block")
            self.phase = TURN
        else:
            self._require_live()
            raise GameOverError("cuckoo: the match is over")
        self.history.append(action)
        pos = self.pos + 1
        order, blocked = self.order, self.blocked
        while pos < len(order) and blocked >> order[pos] & 1:
            pos += 1
        self.pos = pos
        return pos >= len(order)

    def is_terminal(self) -> bool:
        """True once at most one player is left or ``max_hands`` hands are played (§3.4)."""
        return self.phase == OVER

    def outcome(self) -> Outcome:
        """Placings (§3.4.5): the survivors first (all of them share first place when
        ``max_hands`` ends the match), then the others in reverse order of elimination,
        players out in the same hand sharing a place; scores = lives left.

        :raises GameOverError: if the match is not over.
        """
        if self.phase != OVER:
            raise GameOverError("cuckoo: the match is not over; no outcome yet")
        results = [_STILL_IN if e < 0 else e for e in self.elim]
        return Outcome(tuple(ranks_from_results(results)), tuple(float(x) for x in self.lives))

    def match_rewards(self, teams: list[list[int]]) -> list[float]:
        """``outcome().rewards(teams)`` of a finished match, cached by the elimination pattern
        (the placings depend on nothing else).

        :raises GameOverError: if the match is not over.
        """
        key = (tuple(self.elim), tuple([tuple(t) for t in teams]))
        got = _MATCH_REWARDS.get(key)
        if got is None:
            if len(_MATCH_REWARDS) >= 4096:
                _MATCH_REWARDS.clear()
            got = _MATCH_REWARDS[key] = tuple(self.outcome().rewards(teams))
        return list(got)

    def hand_rewards(self) -> list[float]:
        """Per seat in [0, 1]. Over: the match rewards. Otherwise the last completed hand:
        players dealt in who kept their life above those who lost one, both above seats not
        dealt in (a void hand ties everybody dealt in); 0.5 each before the first hand ends."""
        if self.phase == OVER:
            return self.outcome().rewards()
        if not self.hands:
            return [0.5] * self.n
        _, cards, _, losers, void, _, _ = self.hands[-1]
        res = [0 if c < 0 else 2 for c in cards]
        if not void:
            for s in losers:
                res[s] = 1
        key = tuple(res)
        got = _HAND_REWARDS.get(key)
        if got is None:             # rank_rewards is quadratic in the seats: once per pattern
            if len(_HAND_REWARDS) >= 4096:
                _HAND_REWARDS.clear()
            got = _HAND_REWARDS[key] = tuple(rank_rewards(ranks_from_results(res)))
        return list(got)

    def clone(self) -> CuckooState:
        """An independent copy (lists copied; options, stock tuple, past hands and snapshot shared)."""
        c = CuckooState.__new__(CuckooState)
        c.game = self.game
        c.n = self.n
        c.opts = self.opts
        c.automatic = self.automatic
        c.max_hands = self.max_hands
        c.deal_seed = self.deal_seed
        c.lives = self.lives[:]
        c.elim = self.elim[:]
        c.dealer = self.dealer
        c.hidx = self.hidx
        c.order = self.order
        c.pos = self.pos
        c.phase = self.phase
        c._cards = self._cards[:]
        c._stock = self._stock
        c._dealt = self._dealt
        c.pending = self.pending
        c.spos = self.spos
        c.cut_card = self.cut_card
        c.discard = self.discard
        c.blocked = self.blocked
        c.history = self.history[:]
        c.start = self.start
        c.hands = self.hands
        return c

    def hand_index(self) -> int:
        """Hands completed so far in this match."""
        return self.hidx

    def hand_history(self) -> list[int]:
        """This hand's actions since the deal, in order (a swap and its answer are two entries)."""
        return list(self.history)

    def public_action(self, action: int, seat: int) -> str:
        """Every Cuckoo action is public (§3.5): the full string for every seat."""
        return NAMES[action]

    def world_key(self) -> Hashable:
        """Lives, eliminations, the deal and stock, cards now, cut, discard, history and turn position."""
        self._ready()
        return (self.hidx, self.dealer, tuple(self.lives), tuple(self.elim), self._dealt,
                self._stock, self.spos, tuple(self._cards), self.cut_card, self.discard,
                tuple(self.history), self.phase, self.pos, self.blocked)

    def cards_key(self) -> tuple[int, ...]:
        """The cards held per seat, as a tuple (``-1`` = not dealt in)."""
        return tuple(self.cards)

    def _deal_snapshot(self) -> CuckooState:
        """The state right after the current hand's deal (built on first use, then shared by
        the clones taken after it)."""
        self._ready()
        start = self.start
        if start is None:
            start = self.clone()
            start._cards = list(self._dealt)
            start.history = []
            start.pos = 0
            start.phase = TURN if self.order else OVER
            start.spos = 0
            start.cut_card = -1
            start.discard = -1
            start.blocked = 0
            start.start = start
            self.start = start
        return start

    # ------------------------------------------------------------ observation

    def trace(self) -> Trace:
        """The public trace of the current hand (:class:`Trace`), replayed from its start."""
        cut_king = self.cut_card >= 0 and IS_KING[self.cut_card]
        return Trace.replay(self.n, self.order, self.history, self.automatic, cut_king)

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (§3.5); the fields are listed in ``Cuckoo.observation_doc``."""
        n = self.n
        self._ready()
        dealt = self._dealt
        hist = self.history
        obs: dict[str, Any] = {
            "game": "cuckoo",
            "players": n,
            "seat": seat,
            "options": dict(self.opts),
            "hand_index": self.hidx,
            "actions": [],
            "lives": list(self.lives),
            "eliminated_in": [e if e >= 0 else None for e in self.elim],
            "dealer": self.dealer,
            "turn_order": list(self.order),
            "phase": PHASE_NAMES[self.phase],
            "to_act": self.current_player(),
            "dealt_card": _code(dealt[seat]) if self.order else None,
            "card": _code(self.cards[seat]),
            "known": [None] * n,
            "blocks": [],
            "hands": [
                {"dealer": d, "cards": [_CODES[c] for c in cards], "cut": _CODES[cut],
                 "losers": list(losers), "void": void,
                 "discard": _CODES[discard] if knowers >> seat & 1 else None}
                for d, cards, cut, losers, void, discard, knowers in self.hands
            ],
        }
        if not self.order:
            return obs
        acts = obs["actions"]
        # replay step by step to name each actor and each blocked king
        order = self.order
        m = len(order)
        phase, pos, blocked = TURN, 0, 0
        for a in hist:
            if phase == TURN:
                acts.append([order[pos], NAMES[a]])
                if a == SWAP:
                    phase = RESPOND
                    continue
            else:
                q = order[pos + 1]
                acts.append([q, NAMES[a]])
                if a == BLOCK:
                    obs["blocks"].append([q, french_str(self.cards[q])])
                    blocked |= 1 << q
                phase = TURN
            pos += 1
            while pos < m and blocked >> order[pos] & 1:
                pos += 1
        # the dealer's cut is the hand's last action, so within a hand no card came from the stock
        t = Trace.replay(n, order, hist, self.automatic, False)
        known = obs["known"]
        for s in order:
            o = t.holder[s]
            if t.knows(seat, o):
                known[s] = french_str(dealt[o])
        return obs
