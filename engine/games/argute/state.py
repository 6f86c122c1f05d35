"""Argute's world: :class:`ArguteState` (``docs/rules/argute.md`` §1.2–1.4).

Playing a value removes the lowest physical copy of it from the hand, so replaying a
hand's actions from its deal is deterministic.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from engine.cards import cards_of
from engine.core import Outcome, SnapshotState, ranks_from_results
from engine.deal import deal_hands, shuffled
from engine.errors import GameOverError
from engine.games.argute.actions import (
    ACTION_STR,
    BID,
    BIDS,
    CARDS_PER_TRICK,
    COPIES,
    DECK,
    HAND_SIZE,
    PHASES,
    VALUES,
    format_argute,
    hand_score,
    trick_winner,
    value_of,
    win_test,
)

if TYPE_CHECKING:
    from engine.games.argute.game import Argute


class _Match:
    """Per-match constants shared by every clone (seat count, options, the deal seed)."""

    __slots__ = ("game", "n", "target", "max_hands", "deal_seed", "options")

    def __init__(self, game: Argute, n: int, options: dict, deal_seed: int) -> None:
        self.game = game
        self.n = n
        self.target = options["target_score"]
        self.max_hands = options["max_hands"]
        self.deal_seed = deal_seed
        self.options = options


# ---------------------------------------------------------------- state

class ArguteState(SnapshotState):
    """A complete Argute world (§1.2–1.4).

    Fields: ``hands`` (per seat a mask of physical ids), ``bids`` (per seat, -1 = not yet
    bid this hand), ``phase`` (0 bid, 1 play, 2 over), ``cur`` (seat to act, -1 when over),
    ``dealer``, ``tno`` (trick index 0..2), ``leader``, ``seq`` (plays in the current
    trick), ``totals``/``reach`` (per seat in the current trick), ``won`` (tricks won this
    hand), ``scores``, ``hidx`` (hands completed), ``hist``/``actors`` (this hand's actions
    and who took them), ``past`` (per completed hand ``(dealer, bids, won, changes)``),
    ``undealt`` (mask of the cards put aside), ``start`` (snapshot after the deal), ``dealt``
    (``None``, or for a sampled world whose snapshot is built on first use, the hands as dealt),
    ``to_deal`` (a hand has just ended and the next one is not dealt yet: it is dealt by the
    first method that needs it, so a search that stops at the hand's end never shuffles it).
    """

    __slots__ = ("m", "hands", "bids", "phase", "cur", "dealer", "tno", "leader", "seq", "totals",
                 "reach", "won", "scores", "hidx", "hist", "actors", "past", "undealt", "dealt", "to_deal")
    m: _Match
    hands: list[int]
    bids: list[int]
    phase: int
    cur: int
    dealer: int
    tno: int
    leader: int
    seq: int
    totals: list[int]
    reach: list[int]
    won: list[int]
    scores: list[int]
    hidx: int
    hist: list[int]
    actors: list[int]
    past: tuple
    undealt: int
    dealt: list[int] | None
    to_deal: bool

    @property
    def game(self) -> Argute:  # type: ignore[override]
        """The :class:`Argute` game (kept in the shared match constants)."""
        return self.m.game

    @property
    def num_players(self) -> int:
        """Number of seats, 2..7 (§1.1)."""
        return self.m.n

    @classmethod
    def _blank(cls, m: _Match, dealer: int, scores: list[int], hidx: int, past: tuple) -> ArguteState:
        s = object.__new__(cls)
        n = m.n
        s.m = m
        s.hands = [0] * n
        s.bids = [-1] * n
        s.phase = 0
        s.cur = -1
        s.dealer = dealer
        s.tno = 0
        s.leader = 0
        s.seq = 0
        s.totals = [0] * n
        s.reach = [-1] * n
        s.won = [0] * n
        s.scores = scores
        s.hidx = hidx
        s.hist = []
        s.actors = []
        s.past = past
        s.undealt = 0
        s.start = None
        s.dealt = None
        s.to_deal = False
        return s

    def _begin_hand(self, hands: list[int], undealt: int) -> None:
        """Start a hand with these hands: bidding from the dealer's left (§1.3)."""
        self._reset_hand(hands, undealt)
        self._snapshot()

    def _reset_hand(self, hands: list[int], undealt: int) -> None:
        """The fields of a hand just dealt with these hands (no snapshot taken)."""
        n = self.m.n
        self.dealt = None
        self.hands = hands
        self.undealt = undealt
        self.bids = [-1] * n
        self.phase = 0
        self.cur = (self.dealer + 1) % n
        self.tno = 0
        self.leader = self.cur
        self.seq = 0
        self.totals = [0] * n
        self.reach = [-1] * n
        self.won = [0] * n
        self.hist = []
        self.actors = []

    def _deal_snapshot(self) -> ArguteState:
        """The snapshot right after this hand's deal; a sampled world (``dealt`` set) builds it
        here on first use, from the dealt hands (dealer, scores and past do not change within a hand)."""
        if self.to_deal:
            self._deal_now()
        if self.start is None and self.dealt is not None:
            snap = ArguteState._blank(self.m, self.dealer, self.scores[:], self.hidx, self.past)
            snap._reset_hand(self.dealt[:], self.undealt)
            snap.start = snap
            self.start = snap  # type: ignore[assignment]  # ArguteState is final here
        return super()._deal_snapshot()

    def _deal_now(self) -> None:
        """Deal the hand that ``_end_hand`` left to deal (``to_deal``)."""
        self.to_deal = False
        self._deal()

    def _deal(self) -> None:
        """Shuffle from ``(deal_seed, hidx)``, 6 cards each from the dealer's left (§1.2)."""
        n = self.m.n
        deck = shuffled(DECK, self.m.deal_seed, self.hidx)
        hands, rest = deal_hands(deck, n, HAND_SIZE, first=(self.dealer + 1) % n)
        masks = [sum(1 << c for c in h) for h in hands]
        self._begin_hand(masks, sum(1 << c for c in rest))

    def clone(self) -> ArguteState:
        """An independent copy (masks and small lists; match constants and snapshot shared)."""
        s = object.__new__(ArguteState)
        s.m = self.m
        s.hands = self.hands[:]
        s.bids = self.bids[:]
        s.phase = self.phase
        s.cur = self.cur
        s.dealer = self.dealer
        s.tno = self.tno
        s.leader = self.leader
        s.seq = self.seq
        s.totals = self.totals[:]
        s.reach = self.reach[:]
        s.won = self.won[:]
        s.scores = self.scores[:]
        s.hidx = self.hidx
        s.hist = self.hist[:]
        s.actors = self.actors[:]
        s.past = self.past
        s.undealt = self.undealt
        s.start = self.start
        s.dealt = self.dealt
        s.to_deal = self.to_deal
        return s

    # ------------------------------------------------------------ play

    def current_player(self) -> int:
        """The seat to bid or play (both start at the dealer's left, §1.3); -1 once over."""
        if self.to_deal:
            self._deal_now()
        return self.cur

    def is_terminal(self) -> bool:
        """True once the win test holds or ``max_hands`` hands are played (§1.3 "Match end")."""
        return self.phase == 2

    def legal_actions(self) -> list[Hashable]:
        """Bidding: ``bid 0..3``; playing: ``play v`` for each distinct value in hand, ascending."""
        if self.to_deal:
            self._deal_now()
        if self.phase == 0:
            return list(BIDS)
        if self.phase == 2:
            return []
        return _values_held(self.hands[self.cur])

    def apply(self, action: Hashable) -> None:
        """Bid or play for the current player (§1.3).

        After the last bid the first trick starts (dealer's left leads); after ``k·n``
        plays a trick is resolved (its winner leads the next); after trick 3 the bids are
        revealed, scores change, the win test runs and, unless the match is over, the deal
        passes left; the next hand is dealt by the first method that needs it (``to_deal``).

        :raises IllegalActionError: a bid while playing, a play while bidding, a value not in hand.
        :raises GameOverError: if the match is over.
        """
        if self.to_deal:
            self._deal_now()
        p = self.cur
        n = self.m.n
        if self.phase == 0:
            if type(action) is not int or action not in BIDS:
                raise self._illegal(action, "every player bids 0..3 first")
            self.bids[p] = action - BID
            self.hist.append(action)
            self.actors.append(p)
            p = p + 1 if p + 1 < n else 0
            if len(self.hist) == n:
                self.phase = 1
                self.leader = p
            self.cur = p
            return
        if self.phase == 2:
            raise GameOverError("argute: the match is over; no action can be applied")
        if type(action) is not int or not 0 <= action < VALUES:
            raise self._illegal(action, "only 'play v' is legal while playing")
        if _play(self, p, action, n):
            self._end_hand()

    def _end_hand(self) -> None:
        """Reveal the bids, score the hand, run the win test (§1.3 "Match end"); the next hand is
        dealt when first needed (``to_deal``: its cards come from ``(deal_seed, hidx)`` alone)."""
        if not self.close_hand():
            self.to_deal = True

    def close_hand(self) -> bool:
        """Score the hand just played and run the win test (§1.3); True if the match is over.

        Otherwise the deal passes left; the next hand is not dealt yet (``_deal``).
        """
        n = self.m.n
        changes = tuple(hand_score(self.bids[p], self.won[p]) for p in range(n))
        for p in range(n):
            self.scores[p] += changes[p]
        self.past = self.past + ((self.dealer, tuple(self.bids), tuple(self.won), changes),)
        self.hidx += 1
        if win_test(self.scores, self.m.target) or self.hidx >= self.m.max_hands:
            self.phase = 2
            self.cur = -1
            return True
        self.dealer = (self.dealer + 1) % n
        return False

    def hand_history(self) -> list[Hashable]:
        """The actions applied since the current hand was dealt, in order."""
        if self.to_deal:
            self._deal_now()
        return list(self.hist)

    # ------------------------------------------------------------ results

    def outcome(self) -> Outcome:
        """Ranks by final score (equal scores share a place), scores = final scores (§1.3).

        :raises GameOverError: if the match is not over.
        """
        if self.phase != 2:
            raise GameOverError("argute: the match is not over")
        return Outcome(tuple(ranks_from_results(self.scores)), tuple(self.scores))

    def hand_rewards(self) -> list[float]:
        """The last completed hand's score change per seat mapped to [0, 1]:
        ``(change + 1) / 4`` (−1 → 0, 0 → 0.25, +3 → 1); 0.5 each before any hand ends."""
        if not self.past:
            return [0.5] * self.m.n
        return [(c + 1) / 4 for c in self.past[-1][3]]

    def hand_index(self) -> int:
        """Hands completed so far in this match."""
        return self.hidx

    def world_key(self) -> Hashable:
        """Hand number, dealer, to act, hands, undealt, bids, this hand's actions, scores, past hands."""
        if self.to_deal:
            self._deal_now()
        return (self.hidx, self.dealer, self.cur, tuple(self.hands), self.undealt, tuple(self.bids),
                tuple(self.hist), tuple(self.scores), self.past)

    def public_action(self, action: Hashable, seat: int) -> str:
        """``bid b`` for the bidder itself, ``bid ?`` for every other seat; plays are public."""
        if self.to_deal:
            self._deal_now()
        if action in BIDS and seat != self.cur:
            return "bid ?"
        return format_argute(action)

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (§1.4), JSON-ready.

        Keys: ``game``, ``players``, ``seat``, ``options``, ``hand_index``, ``actions``
        (this hand: ``[[seat, 'bid ?' | 'bid 2' | 'play 5'], ...]``), ``dealer``, ``to_act``
        (-1 when over), ``phase`` (``bid``/``play``/``over``), ``hand`` (own values,
        ascending), ``bid`` (own bid this hand or null), ``has_bid`` (per seat),
        ``trick_number`` (1..3), ``cards_per_player`` (3/2/1), ``leader``, ``trick``
        (``[[seat, value], ...]`` so far), ``totals`` (per seat in this trick), ``tricks``
        (completed tricks of this hand: ``{"leader", "plays", "winner"}``), ``tricks_won``,
        ``hand_sizes``, ``undealt`` (cards put aside), ``scores``, ``history`` (earlier
        hands: ``{"dealer", "bids", "tricks_won", "changes"}``), ``match_over``.
        """
        if self.to_deal:
            self._deal_now()
        n = self.m.n
        actions = []
        plays: list[tuple[int, int]] = []
        for a, p in zip(self.hist, self.actors, strict=True):
            if a >= BID:
                actions.append([p, ACTION_STR[a] if p == seat else "bid ?"])
            else:
                actions.append([p, ACTION_STR[a]])
                plays.append((p, a))
        tricks = []
        i = 0
        for t in range(3):
            size = CARDS_PER_TRICK[t] * n
            if len(plays) - i < size:
                break
            chunk = plays[i:i + size]
            tricks.append({"leader": chunk[0][0], "plays": [list(x) for x in chunk],
                           "winner": trick_winner(chunk)})
            i += size
        current = plays[i:] if self.phase == 1 else []
        totals = [0] * n
        for p, v in current:
            totals[p] += v
        h = self.hands[seat]
        return {
            "game": "argute",
            "players": n,
            "seat": seat,
            "options": dict(self.m.options),
            "hand_index": self.hidx,
            "actions": actions,
            "dealer": self.dealer,
            "to_act": self.cur,
            "phase": PHASES[self.phase],
            "hand": [value_of(c) for c in cards_of(h)],
            "bid": self.bids[seat] if self.bids[seat] >= 0 else None,
            "has_bid": [b >= 0 for b in self.bids],
            "trick_number": min(self.tno + 1, 3),
            "cards_per_player": CARDS_PER_TRICK[min(self.tno, 2)],
            "leader": self.leader,
            "trick": [list(x) for x in current],
            "totals": totals,
            "tricks": tricks,
            "tricks_won": list(self.won),
            "hand_sizes": [x.bit_count() for x in self.hands],
            "undealt": len(DECK) - HAND_SIZE * n,
            "scores": list(self.scores),
            "history": [{"dealer": d, "bids": list(b), "tricks_won": list(w), "changes": list(c)}
                        for d, b, w, c in self.past],
            "match_over": self.phase == 2,
        }



# ---------------------------------------------------------------- typed helpers (state.pxd)

COPIES_ = COPIES   # C ints when compiled (state.pxd)
VALUES_ = VALUES


def _values_held(h: int) -> list[Hashable]:
    """The values 0..5 of which hand mask ``h`` holds a copy, ascending."""
    out: list[Hashable] = []
    for v in range(VALUES_):
        if (h >> (COPIES_ * v)) & 0x7F:
            out.append(v)
    return out


def _play(st: ArguteState, p: int, v: int, n: int) -> bool:
    """Seat ``p`` plays its lowest copy of value ``v`` (§1.3); a trick resolved after ``k·n``
    plays (ties: who reached the total first); True when that was trick 3 (the caller ends the hand).

    :raises IllegalActionError: if ``p`` holds no card of value ``v``.
    """
    h = st.hands[p]
    ids = (h >> (COPIES_ * v)) & 0x7F
    if not ids:
        raise st._illegal(v, "no card of that value in hand")
    st.hands[p] = h ^ ((ids & (~ids + 1)) << (COPIES_ * v))
    st.hist.append(v)
    st.actors.append(p)
    seq = st.seq
    reach = st.reach
    totals = st.totals
    if v or reach[p] < 0:
        reach[p] = seq
    totals[p] += v
    seq += 1
    if seq < CARDS_PER_TRICK[st.tno] * n:
        st.seq = seq
        st.cur = p + 1 if p + 1 < n else 0
        return False
    w = 0
    for q in range(1, n):
        if totals[q] > totals[w] or (totals[q] == totals[w] and reach[q] < reach[w]):
            w = q
    st.won[w] += 1
    st.tno += 1
    if st.tno < 3:
        st.leader = w
        st.cur = w
        st.seq = 0
        st.totals = [0] * n
        st.reach = [-1] * n
        return False
    return True


__all__ = ["ArguteState"]
