"""Cuttle game state: the table model, turn flow, one-offs and counter chains.

Implements ``docs/rules/cuttle.md`` §3.2-§3.8. Card sets are int masks; a point stack
is named by its base card: ``ctrl[p]`` is the mask of the bases lying on ``p``'s side
and ``jacks[base]`` the tuple of jacks on it (oldest first). A stack's owner is its
controller when it carries an even number of jacks, the other player otherwise (§3.2).
"""

from __future__ import annotations

from typing import Any, Self, cast

from engine.cards import cards_of, french_str
from engine.core import Outcome, SnapshotState, ranks_from_results
from engine.errors import GameOverError
from engine.games.cuttle.actions import (
    ACES,
    COUNTER,
    DISCARD,
    EIGHTS,
    FIVES,
    FOURS,
    JACKS,
    K_DECLINE,
    K_DRAW,
    K_GLASSES,
    K_JACK,
    K_KING,
    K_ONEOFF_T,
    K_PASS,
    K_POINTS,
    K_QUEEN,
    K_SCUTTLE,
    KINGS,
    MAIN,
    NINES,
    OVER,
    SEVEN,
    SIXES,
    TAKE,
    THREES,
    THRESHOLD,
    TWOS,
    format_action,
    points_of,
)
from engine.games.cuttle.legal import compute_legal, plays
from engine.games.cuttle.observation import observation


class CuttleState(SnapshotState):
    """One Cuttle match (a single hand) — see the module docstring for the table model.

    Hidden-information bookkeeping kept for observations and information sets:
    ``init`` (each seat's dealt hand), ``draws`` (every draw event as
    ``(seat, stamp, kind, cards, seen_by_other)``; ``kind`` 0 draw, 1 five, 2 seven),
    ``shown`` (first public showing of each card leaving a hand: ``(seat, stamp, card)``),
    ``public`` (mask of cards ever shown), ``glimpses[p]`` (``(stamp, mask)`` each time
    ``p``'s first glasses 8 exposed the opponent's hand) and ``exposed[p]`` (cards of
    ``p``'s hand the opponent has seen). A ``stamp`` is the index in the hand history of
    the action whose ``apply`` produced the event.
    """

    __slots__ = (
        "game", "hand_limit", "nine_freezes", "max_turns", "dealer", "_seed",
        "hands", "deck", "scrap", "ctrl", "jacks", "perm",
        "phase", "to_act", "turn_p", "turns", "passes",
        "susp", "target", "chain", "seven", "frozen", "fresh", "winner",
        "history", "actors", "options", "init", "draws", "shown", "public", "glimpses", "exposed",
        "_legal", "_deal_args",
    )

    options: dict[str, Any]
    hand_limit: int | None
    nine_freezes: bool
    max_turns: int
    dealer: int
    _seed: int
    hands: list[int]
    deck: list[int]
    scrap: int
    ctrl: list[int]
    jacks: dict[int, tuple[int, ...]]
    perm: list[int]
    phase: int
    to_act: int
    turn_p: int
    turns: int
    passes: int
    susp: list[int]
    target: int
    chain: list[int]
    seven: int
    frozen: list[int]
    fresh: list[int]
    winner: int
    history: list[int]
    actors: list[int]
    init: list[int]
    draws: list[tuple[int, int, int, tuple[int, ...], bool]]
    shown: list[tuple[int, int, int]]
    public: int
    glimpses: list[list[tuple[int, int]]]
    exposed: list[int]
    _legal: list[int] | None
    _deal_args: tuple

    @property
    def num_players(self) -> int:
        """Always 2 (§3.1)."""
        return 2

    # ------------------------------------------------------------ construction

    @classmethod
    def from_deal(cls, game: Any, options: dict, dealer: int, hands: list[int], deck_top_first: list[int],
                  seed: int) -> CuttleState:
        """The state right after a deal.

        :param options: resolved options (``hand_limit``, ``nine_freezes``, ``max_turns``).
        :param dealer: the dealing seat (6 cards); the other seat moves first (§3.3).
        :param hands: per seat a card mask.
        :param deck_top_first: the stock, top card first.
        :param seed: the deal seed (kept in the state, never observed).
        """
        s = cls.__new__(cls)
        s.game = game
        s.options = dict(options)
        s.hand_limit = options["hand_limit"]
        s.nine_freezes = bool(options["nine_freezes"])
        s.max_turns = options["max_turns"]
        s.dealer = dealer
        s._seed = seed
        s.hands = list(hands)
        s.deck = list(reversed(deck_top_first))
        s.scrap = 0
        s.ctrl = [0, 0]
        s.jacks = {}
        s.perm = [0, 0]
        s.phase = MAIN
        s.turn_p = s.to_act = 1 - dealer
        s.turns = 0
        s.passes = 0
        s.susp = []
        s.target = -1
        s.chain = []
        s.seven = -1
        s.frozen = [0, 0]
        s.fresh = [0, 0]
        s.winner = -1
        s.history = []
        s.actors = []
        s.init = list(hands)
        s.draws = []
        s.shown = []
        s.public = 0
        s.glimpses = [[], []]
        s.exposed = [0, 0]
        s._legal = None
        # the hand-start snapshot is taken on first use (_deal_snapshot): most states built
        # here are sampled worlds that never need it
        s.start = None
        s._deal_args = (dealer, tuple(hands), tuple(deck_top_first), seed)
        return s

    def clone(self) -> CuttleState:
        """An independent copy (ints, small lists and tuples; the hand-start snapshot is shared)."""
        s = CuttleState.__new__(CuttleState)
        s.game = self.game
        s.options = self.options
        s.hand_limit = self.hand_limit
        s.nine_freezes = self.nine_freezes
        s.max_turns = self.max_turns
        s.dealer = self.dealer
        s._seed = self._seed
        s.hands = self.hands[:]
        s.deck = self.deck[:]
        s.scrap = self.scrap
        s.ctrl = self.ctrl[:]
        s.jacks = self.jacks.copy()
        s.perm = self.perm[:]
        s.phase = self.phase
        s.to_act = self.to_act
        s.turn_p = self.turn_p
        s.turns = self.turns
        s.passes = self.passes
        s.susp = self.susp[:]
        s.target = self.target
        s.chain = self.chain[:]
        s.seven = self.seven
        s.frozen = self.frozen[:]
        s.fresh = self.fresh[:]
        s.winner = self.winner
        s.history = self.history[:]
        s.actors = self.actors[:]
        s.start = self.start
        s._deal_args = self._deal_args
        s.init = self.init
        s.draws = self.draws[:]
        s.shown = self.shown[:]
        s.public = self.public
        s.glimpses = [self.glimpses[0][:], self.glimpses[1][:]]
        s.exposed = self.exposed[:]
        s._legal = self._legal
        return s

    def _deal_snapshot(self) -> Self:
        """The state right after the deal (built from the deal on first use, then shared by the
        clones made afterwards), as ``SnapshotState._snapshot`` would have kept it."""
        start = self.start
        if start is None:
            dealer, hands, deck, seed = self._deal_args
            snap = CuttleState.from_deal(self.game, self.options, dealer, list(hands), list(deck), seed)
            snap.start = snap
            start = self.start = cast(Self, snap)
        return start

    # ------------------------------------------------------------ queries

    def current_player(self) -> int:
        """The seat to act (the responder in a counter window, the victim of a 4), -1 when over."""
        return -1 if self.phase == OVER else self.to_act

    def is_terminal(self) -> bool:
        """True once someone won or the match was drawn (§3.8)."""
        return self.phase == OVER

    def hand_index(self) -> int:
        """0 until the match ends, then 1 (a match is one hand, §3.3)."""
        return 1 if self.phase == OVER else 0

    def hand_history(self) -> list[int]:
        """The actions applied since the deal."""
        return list(self.history)

    def points(self, p: int) -> int:
        """``points(p)``: base values of the stacks ``p`` controls (§3.2)."""
        return points_of(self.ctrl[p])

    def threshold(self, p: int) -> int:
        """Points ``p`` needs, from the kings ``p`` controls (§3.1)."""
        return THRESHOLD[(self.perm[p] & KINGS).bit_count()]

    def outcome(self) -> Outcome:
        """Winner rank 0, loser 1; a draw ranks both 0; scores = ``points(p)`` (§3.8).

        :raises GameOverError: before the end.
        """
        if self.phase != OVER:
            raise GameOverError("cuttle: the match is not over; no outcome yet")
        if self.winner in (0, 1):
            res = [1 if p == self.winner else 0 for p in range(2)]
        else:
            res = [0, 0]
        return Outcome(tuple(ranks_from_results(res)), (float(self.points(0)), float(self.points(1))))

    def hand_rewards(self) -> list[float]:
        """The match reward once over (1 / 0, 0.5 each on a draw); 0.5 each before."""
        if self.phase != OVER or self.winner not in (0, 1):
            return [0.5, 0.5]
        return [1.0 if p == self.winner else 0.0 for p in range(2)]

    def public_action(self, action: int, seat: int) -> str:
        """Every Cuttle action is public (§3.9): its full string."""
        return format_action(action)

    def world_key(self) -> tuple:
        """Every card's location, the deck order, the phase and the history."""
        return (self.dealer, tuple(self.hands), tuple(self.deck), self.scrap, tuple(self.ctrl),
                tuple(sorted(self.jacks.items())), tuple(self.perm), self.phase, self.to_act, self.turn_p,
                self.turns, self.passes, tuple(self.susp), self.target, tuple(self.chain), self.seven,
                tuple(self.frozen), tuple(self.fresh), self.winner, tuple(self.history))

    # ------------------------------------------------------------ legal actions

    def legal_actions(self) -> list[int]:
        """The legal actions in canonical (ascending value) order; empty only when over.

        Returns a fresh list (the state keeps its own cached copy for ``apply``).
        """
        if self._legal is None:
            self._legal = compute_legal(self)
        return self._legal[:]

    # ------------------------------------------------------------ apply

    def apply(self, action: int) -> None:
        """Play ``action`` for the current player (§3.4-§3.8).

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the match is over.
        """
        self._require_live()
        legal = self._legal
        if legal is None:
            legal = self._legal = compute_legal(self)
        if action not in legal:
            raise self._illegal(action)
        self._legal = None
        stamp = len(self.history)
        self.history.append(action)
        self.actors.append(self.to_act)
        kind, c = action >> 12, action >> 6 & 63
        ph = self.phase
        p = self.to_act
        if ph == COUNTER:
            if kind == K_DECLINE:
                self._resolve(stamp)
            else:
                self._from_hand(p, c, stamp)
                self.chain.append(c)
                self.to_act = 1 - p
            return
        if ph == TAKE or ph == DISCARD:
            self._take_or_discard(ph, p, action, stamp)
            return
        # main action or the play of a 7's card
        if kind == K_DRAW:
            x = self.deck.pop()
            self.hands[p] |= 1 << x
            self._log_draw(p, stamp, 0, (x,))
            self._end_turn(False)
            return
        if kind == K_PASS:
            self._end_turn(True)
            return
        if ph == SEVEN:
            self._reveal_seven()
        else:
            self._from_hand(p, c, stamp)
        b = 1 << c
        o = 1 - p
        if kind == K_POINTS:
            self.ctrl[p] |= b
        elif kind == K_SCUTTLE:
            t = action & 63
            self.ctrl[o] &= ~(1 << t)
            sc = self.scrap | b | 1 << t
            for j in self.jacks.pop(t, ()):
                sc |= 1 << j
            self.scrap = sc
        elif kind == K_JACK:
            t = action & 63
            self.jacks[t] = self.jacks.get(t, ()) + (c,)
            self._flip(t)
        elif kind in (K_GLASSES, K_QUEEN, K_KING):
            if kind == K_GLASSES and not self.perm[p] & EIGHTS:
                # the opponent's whole hand is exposed from now on (§3.9 glasses)
                self.glimpses[p].append((stamp, self.hands[o]))
                self.exposed[o] |= self.hands[o]
            self.perm[p] |= b
        else:  # one-off: in suspension, counter window for the opponent (§3.5, §3.6)
            self.susp.append(c)
            self.target = action & 63 if kind == K_ONEOFF_T else -1
            self.chain = []
            self.phase = COUNTER
            self.to_act = o
            return
        self._finish()

    def _take_or_discard(self, ph: int, p: int, action: int, stamp: int) -> None:
        """The answer to a resolved 3 (take card ``c`` from the scrap) or 4 (discard two cards)."""
        c = action >> 6 & 63
        if ph == TAKE:
            b = 1 << c
            self.scrap &= ~b
            self.hands[p] |= b
            self.exposed[p] |= b
        else:
            for x in (c, action & 63):
                self._from_hand(p, x, stamp)
                self.scrap |= 1 << x
        self._finish()

    # ------------------------------------------------------------ helpers

    def _from_hand(self, p: int, c: int, stamp: int) -> None:
        b = 1 << c
        self.hands[p] &= ~b
        if not self.public & b:
            self.public |= b
            self.shown.append((p, stamp, c))

    def _log_draw(self, p: int, stamp: int, kind: int, cards: tuple) -> None:
        seen = kind != 2 and bool(self.perm[1 - p] & EIGHTS)
        if seen:
            for x in cards:
                self.exposed[p] |= 1 << x
        self.draws.append((p, stamp, kind, cards, seen))

    def _reveal_seven(self) -> None:
        x = self.seven
        self.public |= 1 << x
        self.seven = -1
        e = self.draws[-1]
        self.draws[-1] = (e[0], e[1], e[2], e[3], True)

    def _flip(self, base: int) -> None:
        b = 1 << base
        self.ctrl[0] ^= b
        self.ctrl[1] ^= b

    def _side_of_base(self, base: int) -> int:
        return 0 if self.ctrl[0] >> base & 1 else 1

    def _remove_target(self, t: int) -> int:
        """Take permanent or top jack ``t`` off the table; returns the side it lay on."""
        b = 1 << t
        if JACKS & b:
            for base, js in self.jacks.items():
                if js and js[-1] == t:
                    side = self._side_of_base(base)
                    rest = js[:-1]
                    if rest:
                        self.jacks[base] = rest
                    else:
                        del self.jacks[base]
                    self._flip(base)
                    return side
            raise AssertionError(f"cuttle: target jack {french_str(t)} is not on top of a stack")
        side = 0 if self.perm[0] & b else 1
        self.perm[side] &= ~b
        return side

    def _resolve(self, stamp: int) -> None:
        """Somebody declined: scrap the 2s, then cancel or resolve the one-off (§3.6)."""
        sc = self.scrap
        for x in self.chain:
            sc |= 1 << x
        self.scrap = sc
        odd = len(self.chain) & 1
        self.chain = []
        if odd:
            self._finish()
            return
        b = 1 << self.susp[-1]
        if b & (ACES | TWOS | SIXES | NINES):
            self._table_effect(b)
        elif not self._hand_effect(b, stamp):
            return  # an answer is due: the 3's take, the 4's discard or the 7's card
        self._finish()

    def _table_effect(self, b: int) -> None:
        """The effect of a resolved A, 2, 6 or 9 (card mask ``b``) on the table (§3.5)."""
        if ACES & b:
            sc = self.scrap | self.ctrl[0] | self.ctrl[1]
            for js in self.jacks.values():
                for j in js:
                    sc |= 1 << j
            self.scrap = sc
            self.ctrl = [0, 0]
            self.jacks = {}
        elif TWOS & b:
            self._remove_target(self.target)
            self.scrap |= 1 << self.target
        elif SIXES & b:
            sc = self.scrap | self.perm[0] | self.perm[1]
            for base, js in self.jacks.items():
                for j in js:
                    sc |= 1 << j
                if len(js) & 1:
                    self._flip(base)
            self.scrap = sc
            self.perm = [0, 0]
            self.jacks = {}
        else:  # nine: back to its controller's hand
            t = self.target
            side = self._remove_target(t)
            tb = 1 << t
            self.hands[side] |= tb
            self.exposed[side] |= tb
            if self.nine_freezes:
                self.frozen[side] |= tb
                self.fresh[side] |= tb

    def _hand_effect(self, b: int, stamp: int) -> bool:
        """The effect of a resolved 3, 4, 5 or 7 (card mask ``b``) on hands and deck (§3.5).

        :returns: False if a player must answer first (phase TAKE, DISCARD or SEVEN set).
        """
        p = self.turn_p
        o = 1 - p
        if THREES & b:
            self.phase = TAKE
            self.to_act = p
            return False
        if FOURS & b:
            if self.hands[o].bit_count() >= 3:
                self.phase = DISCARD
                self.to_act = o
                return False
            for x in cards_of(self.hands[o]):
                self._from_hand(o, x, stamp)
                self.scrap |= 1 << x
        elif FIVES & b:
            k = min(2, len(self.deck))
            if self.hand_limit is not None:
                k = max(0, min(k, self.hand_limit - self.hands[p].bit_count()))
            if k:
                got = tuple(self.deck.pop() for _ in range(k))
                for x in got:
                    self.hands[p] |= 1 << x
                self._log_draw(p, stamp, 1, got)
        else:  # seven: play the deck's top card, or scrap it if it cannot be played
            x = self.deck.pop()
            self._log_draw(p, stamp, 2, (x,))
            self.seven = x
            options: list[int] = []
            plays(self, 1 << x, p, options)
            if options:
                self.phase = SEVEN
                self.to_act = p
                return False
            self._reveal_seven()
            self.scrap |= 1 << x
        return True

    def _finish(self) -> None:
        """The turn's effects are complete: suspended one-offs to the scrap, end the turn."""
        if self.susp:
            sc = self.scrap
            for x in self.susp:
                sc |= 1 << x
            self.scrap = sc
            self.susp = []
            self.target = -1
        self._end_turn(False)

    def _end_turn(self, passed: bool) -> None:
        """Win check for the turn's player, passes, turn cap, then the other player's turn (§3.8)."""
        p = self.turn_p
        self.turns += 1
        self.passes = self.passes + 1 if passed else 0
        self.frozen[p] = self.fresh[p]
        self.fresh = [0, 0]
        if points_of(self.ctrl[p]) >= THRESHOLD[(self.perm[p] & KINGS).bit_count()]:
            self.winner = p
            self.phase = OVER
        elif self.passes >= 3 or self.turns >= self.max_turns:
            self.winner = 2
            self.phase = OVER
        else:
            self.phase = MAIN
            self.turn_p = self.to_act = 1 - p
        if self.phase == OVER:
            self.to_act = -1

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` has seen (§3.9), JSON-ready; see ``Cuttle.observation_doc``."""
        return observation(self, seat)
