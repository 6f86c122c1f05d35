"""The Guiñote world state: deal, tricks, the post-trick window, drawing, scoring (rules §1.2-§1.7).

Hot data are ints, card masks and short lists; observations are built only when asked
(from the hand's public record, :mod:`engine.games.guinote.public`).
"""

from __future__ import annotations

from typing import Any

from engine.cards import SPANISH_SUITS
from engine.core import Game, Outcome, SnapshotState, rank_rewards, seat_ranks_from_sides
from engine.deal import deal_masks
from engine.errors import GameOverError
from engine.games.guinote.actions import (
    CALL,
    CARD_STR,
    DECK,
    LAST_TRICK,
    NCARDS,
    PAIR_MASK,
    POINTS,
    POWER,
    PROCEED,
    SEVEN_OF,
    SUIT,
    SWAP7,
    card_list,
    format_action,
)
from engine.games.guinote.public import OVER, PLAY, WINDOW, walk
from engine.games.guinote.rules import strict_mask
from engine.tricks import trick_winner

_SEVEN_POWER = POWER[SEVEN_OF[0]]


class GuinoteState(SnapshotState):
    """One Guiñote match in progress (2 players, or 4 in partnerships {0,2} vs {1,3}).

    Sides are indexed by ``seat % 2`` for both player counts. ``stock[0]`` is the face-up
    card at the bottom of the stock; the top (next draw) is ``stock[-1]``.
    """

    __slots__ = ("game", "n", "options", "target", "must_under", "deal_seed", "hand_no", "dealer",
                 "hands", "stock", "trump", "leader", "turn", "trick", "phase", "called", "win_called",
                 "tricks_done", "hand_pts", "scores", "last_winner", "winner", "history", "past", "dealt")

    def __init__(self, game: Game, n: int, options: dict[str, Any], deal_seed: int) -> None:
        self.game = game
        self.n = n
        self.options = options
        self.target: int = options["target"]
        self.must_under: bool = options["must_undertrump"]
        self.deal_seed = deal_seed
        self.hand_no = 0
        self.dealer = 0
        self.hands: list[int] = [0] * n
        self.stock: list[int] = []
        self.trump = 0
        self.leader = self.turn = 0
        self.trick: list[int] = []
        self.phase = PLAY
        self.called = 0
        self.win_called = False
        self.tricks_done = 0
        self.hand_pts = [0, 0]
        self.scores = [0, 0]
        self.last_winner = -1
        self.winner = -1
        self.history: list[int] = []
        self.start: GuinoteState | None = None
        #: the deal's hands, stock, scores, last-trick winner, hand number, dealer and past
        #: hands, for the snapshot built on first use (:meth:`_deal_snapshot`)
        self.dealt: tuple = ()
        #: earlier hands: ``(dealer, side-0 points, side-1 points, last-trick winner)``
        self.past: tuple[tuple[int, int, int, int], ...] = ()

    # ------------------------------------------------------------ dealing

    def deal(self) -> None:
        """Deal hand ``hand_no`` from ``shuffled(DECK, deal_seed, hand_no)`` (rules §1.2)."""
        n = self.n
        hands, rest = deal_masks(DECK, self.deal_seed, self.hand_no, n, 6, first=(self.dealer + 1) % n)
        # rest[0] is turned face up under the stock; rest[1] is the first card drawn
        self.set_deal(hands, [rest[0]] + rest[:0:-1])

    def set_deal(self, hands: list[int], stock: list[int]) -> None:
        """Start the current hand from an explicit deal (its snapshot is built on first use,
        :meth:`_deal_snapshot`; issue 19: most worlds of a search never need it).

        :param hands: per seat, a mask of its 6 cards.
        :param stock: ``stock[0]`` the face-up trump card, then face-down cards, last drawn first.
        """
        n = self.n
        self.hands = list(hands)
        self.stock = list(stock)
        self.trump = SUIT[stock[0]]
        self.leader = self.turn = (self.dealer + 1) % n
        self.trick = []
        self.phase = PLAY
        self.called = 0
        self.win_called = False
        self.tricks_done = 0
        self.hand_pts = [0, 0]
        self.history = []
        self.start = None
        self.dealt = (tuple(self.hands), tuple(self.stock), tuple(self.scores), self.last_winner,
                      self.hand_no, self.dealer, self.past)

    def _deal_snapshot(self) -> GuinoteState:
        """The (shared, not copied) state right after the current hand's deal, built on first use.

        ``dealt`` keeps what the hand's play and end change, so it is right after the hand too.
        """
        start = self.start
        if start is None:
            hands, stock, scores, last_winner, hand_no, dealer, past = self.dealt
            start = self.clone()
            start.hand_no = hand_no
            start.dealer = dealer
            start.past = past
            start.hands = list(hands)
            start.stock = list(stock)
            start.scores = list(scores)
            start.last_winner = last_winner
            start.winner = -1
            start.leader = start.turn = (dealer + 1) % self.n
            start.trick = []
            start.phase = PLAY
            start.called = 0
            start.win_called = False
            start.tricks_done = 0
            start.hand_pts = [0, 0]
            start.history = []
            start.start = start
            self.start = start
        return start

    # ------------------------------------------------------------ contract

    @property
    def num_players(self) -> int:
        """Number of seats, 2 or 4 (§1.1)."""
        return self.n

    def current_player(self) -> int:
        """The seat to play, or the trick's winner in the post-trick window (§1.3); -1 once over."""
        return -1 if self.phase == OVER else self.turn

    def is_terminal(self) -> bool:
        """True once the match is over (§1.7)."""
        return self.phase == OVER

    def hand_index(self) -> int:
        """Hands completed so far in this match."""
        return self.hand_no

    def hand_history(self) -> list[int]:
        """This hand's actions since the deal, in order."""
        return list(self.history)

    def clone(self) -> GuinoteState:
        """An independent copy (lists copied; options, snapshot and past hands shared)."""
        c = GuinoteState.__new__(GuinoteState)
        c.game = self.game
        c.n = self.n
        c.options = self.options
        c.target = self.target
        c.must_under = self.must_under
        c.deal_seed = self.deal_seed
        c.hand_no = self.hand_no
        c.dealer = self.dealer
        c.hands = self.hands[:]
        c.stock = self.stock[:]
        c.trump = self.trump
        c.leader = self.leader
        c.turn = self.turn
        c.trick = self.trick[:]
        c.phase = self.phase
        c.called = self.called
        c.win_called = self.win_called
        c.tricks_done = self.tricks_done
        c.hand_pts = self.hand_pts[:]
        c.scores = self.scores[:]
        c.last_winner = self.last_winner
        c.winner = self.winner
        c.history = self.history[:]
        c.start = self.start
        c.past = self.past
        c.dealt = self.dealt
        return c

    def world_key(self) -> tuple:
        """The hand number, dealer, hands, stock, trick, history, scores and this hand's deal."""
        start = self._deal_snapshot()
        return (self.hand_no, self.dealer, tuple(self.hands), tuple(self.stock), tuple(self.trick),
                tuple(self.history), tuple(self.scores), tuple(start.hands), tuple(start.stock))

    def play_mask(self) -> int:
        """Mask of the cards the player to act may play (PLAY phase; rules §1.3, §1.5)."""
        h = self.hands[self.turn]
        if self.trick and not self.stock:
            return strict_mask(h, self.trick, self.leader, self.turn, self.n, self.trump, self.must_under)
        return h

    def legal_actions(self) -> list[int]:
        """Plays ascending by card id; in the window: ``swap7``, calls by suit, ``proceed``."""
        if self.phase == PLAY:
            m = self.play_mask()
            out = []
            while m:
                low = m & -m
                out.append(low.bit_length() - 1)
                m ^= low
            return out
        if self.phase == WINDOW:
            out = []
            h = self.hands[self.turn]
            if h >> SEVEN_OF[self.trump] & 1 and POWER[self.stock[0]] > _SEVEN_POWER:
                out.append(SWAP7)
            if not self.win_called:
                for s in range(4):
                    if not self.called >> s & 1 and h & PAIR_MASK[s] == PAIR_MASK[s]:
                        out.append(CALL + s)
            out.append(PROCEED)
            return out
        return []

    def apply(self, action: int) -> None:
        """Play ``action`` (see :mod:`engine.games.guinote.actions` for the encoding).

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the match is over.
        """
        phase = self.phase
        if phase == PLAY:
            if action.__class__ is not int or not 0 <= action < NCARDS or not self.play_mask() >> action & 1:
                raise self._illegal(action, "not a playable card here")
            self.history.append(action)
            turn = self.turn
            self.hands[turn] ^= 1 << action
            trick = self.trick
            trick.append(action)
            n = self.n
            if len(trick) < n:
                self.turn = (turn + 1) % n
                return
            self._end_trick()
            return
        if phase == OVER:
            raise GameOverError("guinote: the match is over; no action can be applied")
        # post-trick window (rules §1.3)
        w = self.turn
        h = self.hands[w]
        if action == PROCEED:
            self.history.append(action)
            stock = self.stock
            hands = self.hands
            n = self.n
            for i in range(n):
                s = (w + i) % n
                hands[s] |= 1 << stock.pop()
            self.phase = PLAY
            return
        if action == SWAP7:
            seven = SEVEN_OF[self.trump]
            if not h >> seven & 1 or POWER[self.stock[0]] <= _SEVEN_POWER:
                raise self._illegal(action, "needs the 7 of trumps in hand and a face-up A, 3, K, Kn or J")
            self.history.append(action)
            self.hands[w] = h ^ (1 << seven) ^ (1 << self.stock[0])
            self.stock[0] = seven
            return
        if action.__class__ is int and CALL <= action < PROCEED:
            s = action - CALL
            if self.win_called or self.called >> s & 1 or h & PAIR_MASK[s] != PAIR_MASK[s]:
                raise self._illegal(action, "a call needs K and Kn of a suit not yet called, once per window")
            self.history.append(action)
            self.called |= 1 << s
            self.win_called = True
            value = 40 if s == self.trump else 20
            side = w & 1
            self.hand_pts[side] += value
            if self.hand_no:
                self.scores[side] += value
                if self.scores[side] >= self.target:
                    self._finish(side)
            return
        raise self._illegal(action, "the trick winner must swap7, call or proceed")

    def _end_trick(self) -> None:
        """Resolve the full trick: credit points, open the window or end the hand (§1.3, §1.4, §1.7)."""
        n = self.n
        trick = self.trick
        w = (self.leader + trick_winner(trick, SUIT, POWER, self.trump)) % n
        pts = 0
        for c in trick:
            pts += POINTS[c]
        self.tricks_done += 1
        last = self.tricks_done * n == NCARDS
        if last:
            pts += LAST_TRICK
            self.last_winner = w
        side = w & 1
        self.hand_pts[side] += pts
        self.trick = []
        self.leader = self.turn = w
        if self.hand_no:
            self.scores[side] += pts
            if self.scores[side] >= self.target:
                self._finish(side)
                return
        if self.stock:
            self.phase = WINDOW
            self.win_called = False
        elif last:
            self._end_hand()

    def _end_hand(self) -> None:
        """Score a completed hand (:meth:`close_hand`) and, unless the match is over, deal the next."""
        if not self.close_hand():
            self.deal()

    def close_hand(self) -> bool:
        """Score the completed hand (first hand: §1.7 comparison with the target); True if the match is over.

        Otherwise the hand is recorded in ``past``, ``hand_no`` advances and the last trick's
        winner becomes the dealer; the next hand is not dealt yet (:meth:`deal`).
        """
        hp = self.hand_pts
        target = self.target
        if self.hand_no == 0:
            self.scores[0] += hp[0]
            self.scores[1] += hp[1]
            over0 = self.scores[0] >= target
            over1 = self.scores[1] >= target
            if over0 or over1:
                self._finish(self.last_winner & 1 if over0 and over1 else (0 if over0 else 1))
                return True
        self.past = self.past + ((self.dealer, hp[0], hp[1], self.last_winner),)
        self.hand_no += 1
        self.dealer = self.last_winner
        return False

    def _finish(self, side: int) -> None:
        self.winner = side
        self.phase = OVER
        self.turn = -1

    # ------------------------------------------------------------ results

    def outcome(self) -> Outcome:
        """Ranks: the winning side 0, the other 1; scores: each side's total (rules §1.7).

        :raises GameOverError: if the match is not over.
        """
        if self.phase != OVER:
            raise GameOverError("guinote: the match is not over; no outcome yet")
        teams = self.game.teams(self.n)
        ranks = seat_ranks_from_sides([1 if s == self.winner else 0 for s in (0, 1)], teams)
        return Outcome(tuple(ranks), tuple(float(self.scores[s & 1]) for s in range(self.n)))

    def hand_rewards(self) -> list[float]:
        """Match rewards once over; else each side's share of the last completed hand's points.

        Before any hand is complete: 0.5 for everybody.
        """
        n = self.n
        if self.phase == OVER:
            return rank_rewards(self.outcome().ranks, self.game.teams(n))
        if not self.past:
            return [0.5] * n
        _, p0, p1, _ = self.past[-1]
        share = (p0 / (p0 + p1), p1 / (p0 + p1))
        return [share[s & 1] for s in range(n)]

    def public_action(self, action: int, seat: int) -> str:
        """Every Guiñote action is public: the full string for everybody."""
        return format_action(action)

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (rules §1.6); fields documented in ``Guinote.observation_doc``."""
        n = self.n
        start = self._deal_snapshot()
        trump_card = start.stock[0]
        pub = walk(n, self.dealer, trump_card, self.must_under, self.history)
        fd = start.stock[:0:-1]   # face-down stock cards in draw order
        drawn = []
        for r, w in enumerate(pub.rounds):
            k = r * n + (seat - w) % n
            if k < len(fd):
                drawn.append(CARD_STR[fd[k]])
        side_pts = self.hand_pts
        return {
            "game": "guinote",
            "players": n,
            "seat": seat,
            "options": dict(self.options),
            "hand_index": self.hand_no,
            "actions": [[s, format_action(a)] for s, a in zip(pub.actors, self.history)],
            "dealer": self.dealer,
            "target": self.target,
            "trump_suit": SPANISH_SUITS[self.trump],
            "trump_card": CARD_STR[trump_card],
            "face_up": CARD_STR[self.stock[0]] if self.stock else None,
            "stock_size": len(self.stock),
            "phase": ("play", "window", "over")[self.phase],
            "to_act": self.current_player(),
            "leader": self.leader,
            "trick": [[(self.leader + i) % n, CARD_STR[c]] for i, c in enumerate(self.trick)],
            "tricks": [{"leader": ld, "cards": [CARD_STR[c] for c in cards], "winner": w, "points": pts}
                       for ld, cards, w, pts in pub.tricks],
            "hand": card_list(self.hands[seat]),
            "dealt": card_list(start.hands[seat]),
            "drawn": drawn,
            "hand_sizes": [self.hands[s].bit_count() for s in range(n)],
            "shown": [card_list(pub.shown[s]) for s in range(n)],
            "face_up_drawer": pub.face_up_drawer,
            "swap": None if pub.swap is None else pub.swap[0],
            "calls": [[s, SPANISH_SUITS[suit], v] for s, suit, v in pub.calls],
            "hand_points": [side_pts[s & 1] for s in range(n)],
            "scores": [self.scores[s & 1] for s in range(n)],
            "past": [{"dealer": d, "points": [(p0, p1)[s & 1] for s in range(n)], "last_trick": lw}
                     for d, p0, p1, lw in self.past],
            "winner": None if self.winner < 0 else [s for s in range(n) if s & 1 == self.winner],
        }
