"""Sedma rules and observations (``docs/rules/sedma.md`` §2.2–§2.5).

:class:`SedmaState` keeps hands as masks of physical card ids (:mod:`engine.games.sedma.actions`), the
stock as a list shared between clones (never mutated; ``spos`` is the next card to
draw), the current trick as a few ints, and each side's won cards as a mask.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any

from engine.cards import mask_of
from engine.core import Outcome, SnapshotState, rank_rewards, seat_ranks_from_sides
from engine.deal import shuffled
from engine.errors import GameOverError
from engine.games.sedma.actions import (
    ACTION_STR,
    CONTINUE,
    END,
    PLAY_LISTS,
    POINT_MASK,
    RANK_STR,
    deck_for,
    present_ranks,
    ranks_str,
)

PHASE_PLAY = 0
PHASE_DECIDE = 1


def sides_for(n: int) -> list[list[int]]:
    """Sides for ``n`` players: ``[[0, 2], [1, 3]]`` with 4, else one side per seat (§2.1)."""
    return [[0, 2], [1, 3]] if n == 4 else [[i] for i in range(n)]


def hand_rewards_from_points(n: int, points: list[int]) -> tuple[float, ...]:
    """Per seat in [0, 1]: the placing of a hand scored ``points`` per side (§2.5)."""
    return _placing(n, tuple(points))


@functools.lru_cache(maxsize=4096)
def _placing(n: int, points: tuple[int, ...]) -> tuple[float, ...]:
    teams = sides_for(n)
    return tuple(rank_rewards(seat_ranks_from_sides(points, teams), teams))


class SedmaState(SnapshotState):
    """A Sedma match in progress (one hand, or a VP match of several hands; §2.5).

    Turn structure (§2.3): in ``PHASE_PLAY`` the current seat plays a rank (the leader
    only to start a trick); after each completed round the leader, if holding cards,
    decides in ``PHASE_DECIDE`` between ``continue x`` (``x`` = starter rank or 7) and
    ``end``. The ``apply`` that ends a hand scores it and, unless the match is over,
    deals the next hand.
    """

    __slots__ = (
        "game", "n", "side_of", "nsides", "vp_mode", "vp_target", "max_hands", "opts", "deal_seed",
        "deck", "full_mask", "hands", "stock", "spos", "won", "leader", "cur", "phase", "sr", "winning",
        "trick", "ntricks", "lastw", "dealer", "hidx", "vp", "past", "last_rewards", "terminal",
        "hist", "dealt",
    )

    def __init__(self, game, n: int, opts: dict[str, Any], deal_seed: int) -> None:
        self.game = game
        self.n = n
        self.side_of = (0, 1, 0, 1) if n == 4 else tuple(range(n))
        self.nsides = 2 if n == 4 else n
        self.opts = opts
        self.vp_mode = opts["match"] == "vp"
        self.vp_target = opts["vp_target"]
        self.max_hands = opts["max_hands"]
        self.deal_seed = deal_seed
        self.deck = deck_for(n)
        self.full_mask = mask_of(self.deck)
        self.dealer = 0
        self.hidx = 0
        self.vp = [0] * self.nsides
        self.past: tuple = ()
        self.last_rewards: tuple[float, ...] = tuple([0.5] * n)
        self.terminal = False
        self.hands: list[int] = [0] * n
        self.stock: list[int] = []
        self.spos = 0
        self.won = [0] * self.nsides
        self.leader = self.cur = 0
        self.phase = PHASE_PLAY
        self.sr = -1
        self.winning = -1
        self.trick = 0
        self.ntricks = 0
        self.lastw = -1
        self.start: SedmaState | None = None
        self.hist: list[int] = []
        #: what the hand-start snapshot needs (:meth:`_set_hand`, :meth:`_deal_snapshot`)
        self.dealt: tuple = ()

    # ------------------------------------------------------------ dealing

    def _deal(self) -> None:
        """Deal hand ``hidx`` from ``(deal_seed, hidx)``: 4 cards each, the rest is the stock (§2.2)."""
        deck = shuffled(self.deck, self.deal_seed, self.hidx)
        n = self.n
        self._set_hand([mask_of(deck[4 * i:4 * i + 4]) for i in range(n)], deck[4 * n:])

    def _set_hand(self, hands: list[int], stock: list[int]) -> None:
        """Install a freshly dealt hand (``hands`` masks, ``stock`` in draw order).

        The hand-start snapshot is built on first use (:meth:`_deal_snapshot`; issue 19: most
        worlds of a search never need it)."""
        self.dealt = (tuple(hands), self.dealer, self.hidx, tuple(self.vp), self.past, self.last_rewards)
        self.start = None
        self.hands = hands
        self.stock = stock
        self.spos = 0
        self.won = [0] * self.nsides
        self.leader = self.cur = (self.dealer + 1) % self.n
        self.phase = PHASE_PLAY
        self.sr = -1
        self.winning = -1
        self.trick = 0
        self.ntricks = 0
        self.lastw = -1
        self.hist = []

    def _deal_snapshot(self) -> SedmaState:
        """The (shared, not copied) state right after the current hand's deal, built on first use.

        ``dealt`` keeps what the hand's end changes (the deal, dealer, hand index, VP, past
        hands and last rewards), so it is right after the hand is scored too.
        """
        start = self.start
        if start is None:
            hands, dealer, hidx, vp, past, last_rewards = self.dealt
            start = self.clone()
            start.hands = list(hands)
            start.dealer = dealer
            start.hidx = hidx
            start.vp = list(vp)
            start.past = past
            start.last_rewards = last_rewards
            start.terminal = False
            start.spos = 0
            start.won = [0] * self.nsides
            start.leader = start.cur = (dealer + 1) % self.n
            start.phase = PHASE_PLAY
            start.sr = -1
            start.winning = -1
            start.trick = 0
            start.ntricks = 0
            start.lastw = -1
            start.hist = []
            start.start = start
            self.start = start
        return start

    # ------------------------------------------------------------ contract

    @property
    def num_players(self) -> int:
        """Number of seats (2, 3 or 4)."""
        return self.n

    def current_player(self) -> int:
        """The seat to act, ``-1`` once the match is over."""
        return -1 if self.terminal else self.cur

    def is_terminal(self) -> bool:
        """True once the match is over (§2.5)."""
        return self.terminal

    def hand_index(self) -> int:
        """Hands completed so far."""
        return self.hidx

    def legal_actions(self) -> list[int]:
        """Canonical (ascending) legal action values (§2.3 action table).

        ``PHASE_PLAY``: one ``Play(x)`` per distinct rank held. ``PHASE_DECIDE``:
        ``Continue(7)`` and ``Continue(r)`` for the ranks held among {7, starter rank},
        then ``EndTrick`` (always legal, rule 0.5). Empty only when terminal.
        """
        if self.terminal:
            return []
        hand = self.hands[self.cur]
        if self.phase == PHASE_PLAY:
            return list(PLAY_LISTS[present_ranks(hand)])
        acts = []
        if hand & 0xF:
            acts.append(CONTINUE)
        sr = self.sr
        if sr and (hand >> (4 * sr)) & 0xF:
            acts.append(CONTINUE + sr)
        acts.append(END)
        return acts

    def apply(self, action: int) -> None:
        """Play ``action`` for the current seat (§2.3 trick flow).

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the match is over.
        """
        if self.terminal:
            raise GameOverError("sedma: the match is over; no action can be applied")
        p = self.cur
        if self.phase == PHASE_PLAY:
            if action.__class__ is not int or not 0 <= action < 8:
                raise self._illegal(action, "a card must be played")
            x = action
        else:
            if action == END:
                self.hist.append(END)
                self._end_trick()
                return
            if action.__class__ is not int or not CONTINUE <= action < END:
                raise self._illegal(action, "the leader must continue or end the trick")
            x = action - CONTINUE
            if x and x != self.sr:
                raise self._illegal(action, "a continuation must match the starter's rank or be a 7")
        hand = self.hands[p]
        nib = (hand >> (4 * x)) & 0xF
        if not nib:
            raise self._illegal(action, "the player holds no card of that rank")
        card = 4 * x + ((nib & -nib).bit_length() - 1)
        self.hist.append(action)
        self.hands[p] = hand ^ (1 << card)
        self.trick |= 1 << card
        if self.sr < 0:
            self.sr = x
            self.winning = p
        elif x == self.sr or x == 0:
            self.winning = p
        self.phase = PHASE_PLAY
        q = p + 1
        if q == self.n:
            q = 0
        if q == self.leader:
            if self.hands[q]:
                self.phase = PHASE_DECIDE
                self.cur = q
            else:
                self._end_trick()
        else:
            self.cur = q

    def _end_trick(self) -> None:
        """The winner's side takes the trick; drawing from the winner round the table (§2.3)."""
        w = self.winning
        self.lastw = w
        side = self.side_of[w]
        self.won[side] |= self.trick
        self.trick = 0
        self.sr = -1
        self.winning = -1
        self.ntricks += 1
        hands = self.hands
        n = self.n
        left = len(self.stock) - self.spos
        if left:
            need = (4 - hands[w].bit_count()) * n
            if need > left:
                need = left
            pos = self.spos
            stock = self.stock
            seat = w
            for i in range(need):
                hands[seat] |= 1 << stock[pos + i]
                seat += 1
                if seat == n:
                    seat = 0
            self.spos = pos + need
        if hands[w]:
            self.leader = self.cur = w
            self.phase = PHASE_PLAY
        else:
            self._end_hand(side)

    def _end_hand(self, last_side: int) -> None:
        """Score the hand (§2.5), record it, end the match or deal the next hand."""
        if not self.close_hand(last_side):
            self._deal()

    def close_hand(self, last_side: int) -> bool:
        """Score the hand whose last trick ``last_side`` took (§2.5); True if the match is over.

        Otherwise the next dealer is set; the next hand is not dealt yet (``_deal``).
        """
        ns = self.nsides
        points = [10 * (self.won[s] & POINT_MASK).bit_count() for s in range(ns)]
        points[last_side] += 10
        best = max(points)
        winners = [s for s in range(ns) if points[s] == best]
        awarded = [0] * ns
        if len(winners) > 1:
            kind = "tie"
        else:
            w = winners[0]
            if self.won[w] == self.full_mask:
                kind, v = "triple", 3
            elif best == 90:
                kind, v = "double", 2
            else:
                kind, v = "single", 1
            awarded[w] = v
            if self.vp_mode:
                self.vp[w] += v
        self.last_rewards = hand_rewards_from_points(self.n, points)
        self.past = self.past + ({
            "dealer": self.dealer, "points": points, "winners": winners, "win": kind, "vp": awarded,
        },)
        self.hidx += 1
        if not self.vp_mode or max(self.vp) >= self.vp_target or self.hidx >= self.max_hands:
            self.terminal = True
            self.cur = -1
            return True
        n = self.n
        d = self.dealer
        if kind == "tie":
            d = (d + 1) % n
        elif n == 2:
            d = 1 - winners[0]
        elif n == 4:
            d = (d + 1) % 4 if self.side_of[d] == winners[0] else (d + 2) % 4
        else:
            d = (winners[0] - 1) % n
        self.dealer = d
        return False

    def outcome(self) -> Outcome:
        """Placings and scores (§2.5): by hand points (``single``) or by VP (``vp``).

        :raises GameOverError: if the match is not over.
        """
        if not self.terminal:
            raise GameOverError("sedma: the match is not over; no outcome yet")
        side_res = list(self.vp) if self.vp_mode else list(self.past[-1]["points"])
        teams = sides_for(self.n)
        ranks = seat_ranks_from_sides(side_res, teams)
        scores = [float(side_res[self.side_of[s]]) for s in range(self.n)]
        return Outcome(tuple(ranks), tuple(scores))

    def hand_rewards(self) -> list[float]:
        """Per seat in [0, 1]: the last completed hand's placing (0.5 each before any hand ended)."""
        return list(self.last_rewards)

    def public_action(self, action: int, seat: int) -> str:
        """Every Sedma action is public (§2.4): the full string for every seat."""
        return ACTION_STR[action]

    def clone(self) -> SedmaState:
        """A copy sharing the immutable parts (options, deck, stock list, past hands, snapshot)."""
        c = SedmaState.__new__(SedmaState)
        c.game = self.game
        c.n = self.n
        c.side_of = self.side_of
        c.nsides = self.nsides
        c.vp_mode = self.vp_mode
        c.vp_target = self.vp_target
        c.max_hands = self.max_hands
        c.opts = self.opts
        c.deal_seed = self.deal_seed
        c.deck = self.deck
        c.full_mask = self.full_mask
        c.hands = self.hands[:]
        c.stock = self.stock
        c.spos = self.spos
        c.won = self.won[:]
        c.leader = self.leader
        c.cur = self.cur
        c.phase = self.phase
        c.sr = self.sr
        c.winning = self.winning
        c.trick = self.trick
        c.ntricks = self.ntricks
        c.lastw = self.lastw
        c.dealer = self.dealer
        c.hidx = self.hidx
        c.vp = self.vp[:]
        c.past = self.past
        c.last_rewards = self.last_rewards
        c.terminal = self.terminal
        c.start = self.start
        c.hist = self.hist[:]
        c.dealt = self.dealt
        return c

    def dealt_world(self, hands: list[int], stock: list[int], deal_seed: int) -> SedmaState:
        """A new state with this one's match (between hands) and ``hands``/``stock`` dealt
        (:meth:`_set_hand`), dealing later hands from ``deal_seed``: one pass over the fields
        instead of :meth:`clone` then :meth:`_set_hand` (issue 19, an information set's worlds)."""
        c = SedmaState.__new__(SedmaState)
        c.game = self.game
        n = c.n = self.n
        c.side_of = self.side_of
        nsides = c.nsides = self.nsides
        c.vp_mode = self.vp_mode
        c.vp_target = self.vp_target
        c.max_hands = self.max_hands
        c.opts = self.opts
        c.deal_seed = deal_seed
        c.deck = self.deck
        c.full_mask = self.full_mask
        c.hands = hands
        c.stock = stock
        c.spos = 0
        c.won = [0] * nsides
        dealer = c.dealer = self.dealer
        c.leader = c.cur = (dealer + 1) % n
        c.phase = PHASE_PLAY
        c.sr = -1
        c.winning = -1
        c.trick = 0
        c.ntricks = 0
        c.lastw = -1
        hidx = c.hidx = self.hidx
        vp = self.vp
        c.vp = vp[:]
        past = c.past = self.past
        last_rewards = c.last_rewards = self.last_rewards
        c.terminal = False
        c.start = None
        c.hist = []
        c.dealt = (tuple(hands), dealer, hidx, tuple(vp), past, last_rewards)
        return c

    def world_key(self) -> Hashable:
        """The whole current-hand world in physical ids: deal, stock order, history, match score."""
        st = self._deal_snapshot()
        return (self.hidx, self.dealer, tuple(st.hands), tuple(self.stock), tuple(self.hist),
                tuple(self.hands), self.spos, tuple(self.vp), self.terminal)

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (§2.4), JSON-ready; see ``Sedma.observation_doc``."""
        n = self.n
        s = self._deal_snapshot().clone()
        actions: list[list] = []
        tricks: list[dict] = []
        cards: list[list] = []
        drawn: list[str] = []
        lead = s.leader
        for a in self.hist:
            p = s.cur
            actions.append([p, ACTION_STR[a]])
            if a < END:
                cards.append([p, RANK_STR[a & 7]])
            mine = s.hands[seat]
            spos = s.spos
            nt = s.ntricks
            h = s.hidx
            s.apply(a)
            if s.ntricks != nt or s.hidx != h:
                tricks.append({"leader": lead, "cards": cards, "winner": s.lastw})
                cards = []
                lead = s.leader
                if s.hidx == h:
                    new = s.hands[seat] & ~mine
                    if new:
                        for c in s.stock[spos:s.spos]:
                            if new >> c & 1:
                                drawn.append(RANK_STR[c >> 2])
        unseen = {r: 0 for r in RANK_STR}
        for c in self.deck:
            unseen[RANK_STR[c >> 2]] += 1
        for rank in ranks_str(self.hands[seat]):
            unseen[rank] -= 1
        for t in tricks:
            for _, r in t["cards"]:
                unseen[r] -= 1
        for _, r in cards:
            unseen[r] -= 1
        live = not self.terminal
        return {
            "game": "sedma",
            "players": n,
            "seat": seat,
            "options": dict(self.opts),
            "hand_index": self.hidx,
            "actions": actions,
            "teams": sides_for(n),
            "dealer": self.dealer,
            "phase": "over" if not live else ("decide" if self.phase == PHASE_DECIDE else "play"),
            "to_act": self.cur if live else -1,
            "hand": ranks_str(self.hands[seat]),
            "dealt": ranks_str(self._deal_snapshot().hands[seat]),
            "drawn": drawn,
            "hand_sizes": [h.bit_count() for h in self.hands],
            "stock": len(self.stock) - self.spos,
            "trick": {
                "leader": self.leader if live else -1,
                "starter": RANK_STR[self.sr] if self.sr >= 0 else None,
                "cards": cards,
                "winning": self.winning if self.sr >= 0 else None,
            },
            "tricks": tricks,
            "won": [ranks_str(m) for m in self.won],
            "card_points": [10 * (m & POINT_MASK).bit_count() for m in self.won],
            "unseen": unseen,
            "vp": list(self.vp),
            "past_hands": [
                {"dealer": e["dealer"], "points": list(e["points"]), "winners": list(e["winners"]),
                 "win": e["win"], "vp": list(e["vp"])} for e in self.past],
        }
