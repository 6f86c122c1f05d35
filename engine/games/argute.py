"""Argute: hidden bids, three count-tricks per hand (``docs/rules/argute.md``).

The 42 play cards are physical ids ``0..41``; card ``c`` has value ``c // 7`` (seven
copies of each value 0..5, §1.1). Hands are 42-bit masks. Actions are by value, not by
physical id (ruling A-A11): ``PLAY(v)`` is the int ``v`` (0..5), written ``play v``;
``BID(b)`` is the int ``BID + b`` (``BID`` = 10), written ``bid b`` and seen by the other
seats as ``bid ?`` (§1.3). Playing a value removes the lowest physical copy of it from
the hand, so replaying a hand's actions from its deal is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from engine.cards import cards_of
from engine.core import (
    Game,
    InfoSet,
    Option,
    Outcome,
    SnapshotState,
    int_at_least,
    ranks_from_results,
    seat_option,
)
from engine.deal import deal_hands, shuffled
from engine.errors import ActionParseError, GameOverError, InconsistentObservationError
from engine.sampling import SamplingProblem

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
    ``undealt`` (mask of the cards put aside), ``start`` (snapshot after the deal).
    """

    __slots__ = ("m", "hands", "bids", "phase", "cur", "dealer", "tno", "leader", "seq", "totals",
                 "reach", "won", "scores", "hidx", "hist", "actors", "past", "undealt", "start")

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
        return s

    def _begin_hand(self, hands: list[int], undealt: int) -> None:
        """Start a hand with these hands: bidding from the dealer's left (§1.3)."""
        n = self.m.n
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
        self._snapshot()

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
        return s

    # ------------------------------------------------------------ play

    def current_player(self) -> int:
        """The seat to bid or play (both start at the dealer's left, §1.3); -1 once over."""
        return self.cur

    def is_terminal(self) -> bool:
        """True once the win test holds or ``max_hands`` hands are played (§1.3 "Match end")."""
        return self.phase == 2

    def legal_actions(self) -> list[int]:
        """Bidding: ``bid 0..3``; playing: ``play v`` for each distinct value in hand, ascending."""
        if self.phase == 0:
            return list(BIDS)
        if self.phase == 2:
            return []
        h = self.hands[self.cur]
        return [v for v in range(VALUES) if h & VALUE_MASKS[v]]

    def apply(self, action: int) -> None:
        """Bid or play for the current player (§1.3).

        After the last bid the first trick starts (dealer's left leads); after ``k·n``
        plays a trick is resolved (its winner leads the next); after trick 3 the bids are
        revealed, scores change, the win test runs and the next hand is dealt in the same
        call (the deal passes left) unless the match is over.

        :raises IllegalActionError: a bid while playing, a play while bidding, a value not in hand.
        :raises GameOverError: if the match is over.
        """
        p = self.cur
        n = self.m.n
        if self.phase == 0:
            if action not in BIDS or isinstance(action, bool):
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
        if action.__class__ is not int or not 0 <= action < VALUES:
            raise self._illegal(action, "only 'play v' is legal while playing")
        h = self.hands[p]
        ids = h & VALUE_MASKS[action]
        if not ids:
            raise self._illegal(action, "no card of that value in hand")
        self.hands[p] = h ^ (ids & -ids)
        self.hist.append(action)
        self.actors.append(p)
        seq = self.seq
        if action or self.reach[p] < 0:
            self.reach[p] = seq
        self.totals[p] += action
        seq += 1
        if seq < CARDS_PER_TRICK[self.tno] * n:
            self.seq = seq
            self.cur = p + 1 if p + 1 < n else 0
            return
        totals = self.totals
        reach = self.reach
        w = 0
        for q in range(1, n):
            if totals[q] > totals[w] or (totals[q] == totals[w] and reach[q] < reach[w]):
                w = q
        self.won[w] += 1
        self.tno += 1
        if self.tno < 3:
            self.leader = w
            self.cur = w
            self.seq = 0
            self.totals = [0] * n
            self.reach = [-1] * n
            return
        self._end_hand()

    def _end_hand(self) -> None:
        """Reveal the bids, score the hand, run the win test (§1.3 "Match end")."""
        n = self.m.n
        changes = tuple(hand_score(self.bids[p], self.won[p]) for p in range(n))
        for p in range(n):
            self.scores[p] += changes[p]
        self.past = self.past + ((self.dealer, tuple(self.bids), tuple(self.won), changes),)
        self.hidx += 1
        if win_test(self.scores, self.m.target) or self.hidx >= self.m.max_hands:
            self.phase = 2
            self.cur = -1
            return
        self.dealer = (self.dealer + 1) % n
        self._deal()

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
        return (self.hidx, self.dealer, self.cur, tuple(self.hands), self.undealt, tuple(self.bids),
                tuple(self.hist), tuple(self.scores), self.past)

    def public_action(self, action: int, seat: int) -> str:
        """``bid b`` for the bidder itself, ``bid ?`` for every other seat; plays are public."""
        if action in BIDS and seat != self.cur:
            return "bid ?"
        return self.m.game.format_action(action)

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


# ---------------------------------------------------------------- information set

class ArguteInfoSet(InfoSet):
    """The worlds consistent with one seat's Argute observation (§1.4 "Notes for ISMCTS").

    Cards known by value (own hand, every card played this hand) are pinned to the
    lowest physical copies of their value; the other copies are unseen and go to the
    opponents' hands (their current sizes) and the undealt pile (``42 - 6n``), with no
    further constraint (no suits). Each opponent who has already bid this hand has a
    hidden choice, its bid, uniform over 0..3.
    """

    __slots__ = ("game", "n", "opps", "bidders", "start_hands", "moves", "unseen", "caps")

    def __init__(self, observation: Mapping[str, Any], game: Argute) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        seat = self.seat
        self.n = n
        ptr = [0] * VALUES
        start = [0] * n

        def pin(p: int, v: int) -> None:
            """Pin value ``v``'s next copy to seat ``p``'s deal; InconsistentObservationError if none."""
            if not 0 <= v < VALUES or ptr[v] >= COPIES:
                raise InconsistentObservationError(f"argute: more than {COPIES} cards of value {v} are known")
            start[p] |= 1 << (COPIES * v + ptr[v])
            ptr[v] += 1

        for v in obs["hand"]:
            pin(seat, int(v))
        moves: list[tuple[int, Any]] = []  # (seat, action or None for a hidden bid)
        bidders = []
        for p, text in obs["actions"]:
            p = int(p)
            if text == "bid ?":
                if p == seat:
                    raise InconsistentObservationError("argute: own bid shown masked")
                bidders.append(p)
                moves.append((p, None))
                continue
            a = parse_argute(text)
            if a >= BID and p != seat:
                raise InconsistentObservationError(f"argute: seat {p}'s bid is visible to seat {seat}")
            if a < BID:
                pin(p, a)
            moves.append((p, a))
        self.opps = [o for o in range(n) if o != seat]
        self.bidders = bidders
        self.start_hands = start
        self.moves = moves
        self.unseen = [COPIES * v + k for v in range(VALUES) for k in range(ptr[v], COPIES)]
        sizes = [int(x) for x in obs["hand_sizes"]]
        self.caps = [sizes[o] for o in self.opps] + [len(DECK) - HAND_SIZE * n]

    def problem(self) -> SamplingProblem:
        """Locations ``hand <o>`` per opponent then ``undealt``; one bid choice per opponent who bid."""
        nloc = len(self.opps) + 1
        full = (1 << nloc) - 1
        names = [f"hand {o}" for o in self.opps] + ["undealt"]
        return SamplingProblem(list(self.unseen), list(self.caps), [full] * len(self.unseen), names,
                               [list(range(4)) for _ in self.bidders])

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> ArguteState:
        """The hand dealt as assigned, with the sampled bids, replayed through this hand's
        actions; later hands use a fresh key from ``rng``."""
        obs = self.observation
        if obs.get("match_over"):
            raise InconsistentObservationError("argute: the match is over; there is no world to sample")
        n = self.n
        opts = dict(obs["options"])
        m = _Match(self.game, n, opts, rng.getrandbits(63))
        past = tuple((int(h["dealer"]), tuple(h["bids"]), tuple(h["tricks_won"]), tuple(h["changes"]))
                     for h in obs["history"])
        st = ArguteState._blank(m, int(obs["dealer"]), [int(x) for x in obs["scores"]],
                                int(obs["hand_index"]), past)
        hands = list(self.start_hands)
        for j, o in enumerate(self.opps):
            for c in assignment[j]:
                hands[o] |= 1 << c
        und = 0
        for c in assignment[-1]:
            und |= 1 << c
        st._begin_hand(hands, und)
        hidden = dict(zip(self.bidders, choices, strict=True))
        for p, a in self.moves:
            if st.cur != p:
                raise InconsistentObservationError(f"argute: seat {p} acts out of turn in the observation")
            st.apply(BID + hidden[p] if a is None else a)
        return st


# ---------------------------------------------------------------- game

class Argute(Game):
    """Argute for 2–7 players (``docs/rules/argute.md``)."""

    name = "argute"
    version = 1
    min_players = 2
    max_players = 7
    options = {
        "first_dealer": seat_option(below=7),
        "target_score": Option(
            "target_score", 6, "a unique leader on at least this score after a hand wins",
            check=int_at_least(1), expected="an integer >= 1"),
        "max_hands": Option(
            "max_hands", 200, "safety cap: the match ends after this many hands",
            check=int_at_least(1), expected="an integer >= 1"),
    }
    summary = (
        "Argute (Seattle GameCo, 2018), 2-7 players, 42 cards: 7 copies each of the values 0-5.\n"
        "Six cards each, the rest put aside unseen. Everyone bids 0-3 tricks face down, then three\n"
        "tricks: everyone puts 3 cards (one per turn, round the table 3 times) into trick 1, 2 into\n"
        "trick 2, 1 into trick 3. The highest total wins a trick (ties: who reached that total first).\n"
        "Exact bid b >= 1 scores +b, exact 0 scores 0, a miss scores -1. A unique leader on\n"
        "target_score (6) or more after a hand wins."
    )
    actions_doc = (
        "bid <b>    bid b = 0..3 tricks (others see 'bid ?'), e.g. 'bid 2'\n"
        "play <v>   play a card of value v = 0..5, e.g. 'play 5'"
    )
    observation_doc = (
        "game, players, seat, options, hand_index: as every game\n"
        "actions: this hand's actions [[seat, 'bid ?' | 'bid 2' | 'play 5'], ...] (own bid in full)\n"
        "dealer; to_act: seat to act (-1 when over); phase: 'bid' | 'play' | 'over'\n"
        "hand: own values [0, 3, 5, ...]; bid: own bid or null; has_bid: per seat\n"
        "trick_number: 1..3; cards_per_player: 3/2/1; leader; trick: [[seat, value], ...] so far;\n"
        "totals: per seat in this trick; tricks: completed [{leader, plays, winner}]; tricks_won\n"
        "hand_sizes; undealt: cards put aside; scores\n"
        "history: earlier hands [{dealer, bids, tricks_won, changes}]; match_over: bool"
    )
    #: random play rarely reaches the target (misses cost a point), so most configs cap
    #: the match length to keep conformance runs and benchmarks short.
    configs = (
        (2, {"max_hands": 30}),
        (3, {"max_hands": 20}),
        (6, {"first_dealer": "random", "target_score": 3, "max_hands": 8}),
        (7, {"first_dealer": 6, "max_hands": 6}),
    )

    def new_match(self, n: int, deal_seed: int, **options: Any) -> ArguteState:
        """First hand of a match (§1.2).

        :raises PlayerCountError: unless 2 <= n <= 7.
        :raises OptionError: unknown option, bad value, or a first dealer seat >= n.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        st = ArguteState._blank(_Match(self, n, opts, deal_seed), dealer, [0] * n, 0, ())
        st._deal()
        return st

    def state_from_hands(self, hands: list[list[int]], dealer: int = 0, scores: list[int] | None = None,
                         deal_seed: int = 0, **options: Any) -> ArguteState:
        """A match whose first hand has the given hands of values (tests, worked examples).

        :param hands: per seat 6 values 0..5; the other copies are put aside.
        :param scores: starting scores (default all 0).
        :raises ValueError: if a hand is not 6 values or a value is used more than 7 times.
        """
        n = len(hands)
        self.check_players(n)
        opts = self.resolve_options(options)
        ptr = [0] * VALUES
        masks = []
        for h in hands:
            if len(h) != HAND_SIZE:
                raise ValueError(f"argute: a hand holds {HAND_SIZE} values, got {h}")
            m = 0
            for v in h:
                if not 0 <= v < VALUES or ptr[v] >= COPIES:
                    raise ValueError(f"argute: value {v} is not available")
                m |= 1 << (COPIES * v + ptr[v])
                ptr[v] += 1
            masks.append(m)
        used = 0
        for m in masks:
            used |= m
        st = ArguteState._blank(_Match(self, n, opts, deal_seed), dealer, list(scores or [0] * n), 0, ())
        st._begin_hand(masks, ((1 << len(DECK)) - 1) & ~used)
        return st

    def infoset(self, observation: Mapping[str, Any]) -> ArguteInfoSet:
        """:raises InconsistentObservationError: if the observation admits no world."""
        return ArguteInfoSet(observation, self)

    def parse_action(self, text: str) -> int:
        """``'bid 2'`` / ``'play 5'`` -> the action.

        :raises ActionParseError: naming the text and the notation.
        """
        return parse_argute(text)

    def format_action(self, action: int) -> str:
        """``bid b`` / ``play v``.

        :raises ActionParseError: if ``action`` is not an Argute action.
        """
        s = ACTION_STR.get(action) if action.__class__ is int else None
        if s is None:
            raise ActionParseError(f"argute: {action!r} is not an action")
        return s


__all__ = ["BID", "ACTION_STR", "Argute", "ArguteInfoSet", "ArguteState", "hand_score",
           "parse_argute", "trick_winner", "value_of", "win_test"]
