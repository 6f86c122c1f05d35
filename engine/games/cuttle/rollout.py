"""Cuttle's rollout kernel: a match played out by the uniform rollout policy on card masks.

:func:`playout` is ``Cuttle.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout). It gives exactly the result of the generic loop
``state.apply(game.rollout_action(state, rng))`` — one ``rng.random()`` per decision, the
``k``-th legal action in :meth:`CuttleState.legal_actions` order — and leaves exactly the
state that loop leaves (history, draw and showing records, glimpses, exposed cards), but
plays on a :class:`_Table` of plain integers: 64-bit masks of the 52 cards, the stock as an
array, each point stack's jacks in a fixed slot of four.

:func:`replay` applies a list of actions the same way (checked; used by
:meth:`CuttleInfoSet.world` to replay the hand's history in every sampled world).

The legal actions are generated in ascending action value directly (kind by kind, cards and
targets ascending, as :func:`engine.games.cuttle.legal.compute_legal` sorts them); only a 4's
discards, ordered by scuttle order, are sorted. One source: ``rollout.pxd`` beside this file
types the kernel for Cython (a C class); without a build the same code runs as Python.
Rules: docs/rules/cuttle.md §3.4-§3.8, as in :mod:`engine.games.cuttle.state`.

(~600 lines: the kernel class and the replay that feeds it share its mask layout; they belong together.)
"""

from __future__ import annotations

import random
from typing import Any

from engine.games.cuttle import actions as _a

ACES_, TWOS_, THREES_, FOURS_, FIVES_ = _a.ACES, _a.TWOS, _a.THREES, _a.FOURS, _a.FIVES
SIXES_, SEVENS_, EIGHTS_, NINES_ = _a.SIXES, _a.SEVENS, _a.EIGHTS, _a.NINES
JACKS_, QUEENS_, KINGS_, NUMBERS_ = _a.JACKS, _a.QUEENS, _a.KINGS, _a.NUMBERS
MAIN_, COUNTER_, TAKE_, DISCARD_, SEVEN_, OVER_ = _a.MAIN, _a.COUNTER, _a.TAKE, _a.DISCARD, _a.SEVEN, _a.OVER
K_DRAW_, K_PASS_, K_POINTS_, K_SCUTTLE_ = _a.K_DRAW, _a.K_PASS, _a.K_POINTS, _a.K_SCUTTLE
K_GLASSES_, K_QUEEN_, K_KING_, K_JACK_ = _a.K_GLASSES, _a.K_QUEEN, _a.K_KING, _a.K_JACK
K_ONEOFF_, K_ONEOFF_T_, K_COUNTER_, K_DECLINE_ = _a.K_ONEOFF, _a.K_ONEOFF_T, _a.K_COUNTER, _a.K_DECLINE
K_TAKE_, K_DISCARD_ = _a.K_TAKE, _a.K_DISCARD
T_VALUE = _a.VALUE
T_ORDER = _a.ORDER
T_BEATS = _a.BEATS
T_THRESHOLD = _a.THRESHOLD
#: ``1 << i`` is ``ONE << i`` so that the compiled shift is 64-bit
ONE = 1
#: ``BIT_INDEX[(1 << i) % 67] == i``: 2 is a primitive root modulo 67, so the residues differ
BIT_INDEX = tuple(next((i for i in range(64) if (1 << i) % 67 == r), 0) for r in range(67))
#: room for every legal action: at most 1,326 discards of a 52-card hand, fewer plays
LEGAL_MAX = 1400
#: the legal actions of the current decision. This buffer and :data:`_TABLE` serve one
#: playout or replay at a time per process (searches are single-threaded; bots run in their
#: own processes): allocating them per playout cost more than a compiled playout's moves.
OUT = [0] * 1400


def playout(state: Any, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by the uniform policy; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards` with
    ``Game.rollout_action``: a Cuttle match is one hand, so a hand rollout is a match
    rollout (``hand_rewards`` is returned only when ``hand0`` is not the current hand; with
    the two seats as the sides it equals ``outcome().rewards(teams)`` and is returned for it).

    :param state: a :class:`~engine.games.cuttle.state.CuttleState` (changed in place).
    :param teams: the sides, for :meth:`Outcome.rewards`.
    """
    if state.phase != OVER_:
        if hand_rollouts and hand0 != 0:
            return state.hand_rewards()
        table = _TABLE
        table.load(state)
        table.run(rng.random)
        table.store(state)
    if len(teams) == 2 and len(teams[0]) == 1 and len(teams[1]) == 1:
        return state.hand_rewards()   # = outcome().rewards(teams) for two single seats, without the Outcome
    return state.outcome().rewards(teams)


def replay(state: Any, actions: list[int]) -> None:
    """Apply ``actions`` to ``state`` in order, exactly as repeated ``state.apply`` would, on a
    :class:`_Table` (an information set's world is rebuilt by replaying the hand's history).

    Each action is checked against the table's legal actions first; on an illegal one (or a
    finished match) the table is stored and ``state.apply`` raises its own error.

    :raises IllegalActionError: naming the action and the legal set.
    :raises GameOverError: for an action after the end.
    """
    if not actions:
        return
    table = _TABLE
    table.load(state)
    for a in actions:
        if table.phase == OVER_ or not table.is_legal(a):
            table.store(state)
            state.apply(a)   # raises IllegalActionError or GameOverError
            raise AssertionError(f"cuttle replay: action {a} was refused by the kernel but not by apply")
        table.step(a)
    table.store(state)


def _count(m: int) -> int:
    """Number of set bits of mask ``m``."""
    cnt = 0
    while m:
        m &= m - 1
        cnt += 1
    return cnt


def _low(m: int) -> int:
    """Index of the lowest set bit of ``m`` (non-empty)."""
    return BIT_INDEX[(m & (~m + 1)) % 67]


def _points(ctrl: int) -> int:
    """``points(p)`` of the stacks in ``ctrl`` (§3.2)."""
    total = 0
    while ctrl:
        total += T_VALUE[_low(ctrl)]
        ctrl &= ctrl - 1
    return total


class _Table:
    """A :class:`CuttleState` as C integers while :meth:`run` plays it out (fields as in the state;
    ``jk[4 * base + i]`` is the ``i``-th jack on stack ``base``, ``njk[base]`` their number)."""

    def __init__(self) -> None:
        self.hands = [0, 0]
        self.ctrl = [0, 0]
        self.perm = [0, 0]
        self.frozen = [0, 0]
        self.fresh = [0, 0]
        self.exposed = [0, 0]
        self.deck = [0] * 52
        self.jk = [0] * 208
        self.njk = [0] * 52
        self.susp = [0] * 52
        self.chain = [0] * 4
        self.nd = self.nsusp = self.nchain = self.hl = self.max_turns = 0
        self.scrap = self.public = 0
        self.phase = self.to_act = self.turn_p = self.turns = self.passes = 0
        self.target = self.seven = self.winner = self.stamp = 0
        self.nine_freezes = False
        self.hist: list[int] = []
        self.actors: list[int] = []
        self.draws: list[tuple] = []
        self.shown: list[tuple] = []
        self.glimpses: list[list[tuple[int, int]]] = []

    def load(self, st: Any) -> int:
        """Copy ``st`` in (its record lists are shared and appended in place); returns 0."""
        for p in range(2):
            self.hands[p] = st.hands[p]
            self.ctrl[p] = st.ctrl[p]
            self.perm[p] = st.perm[p]
            self.frozen[p] = st.frozen[p]
            self.fresh[p] = st.fresh[p]
            self.exposed[p] = st.exposed[p]
        deck = st.deck
        self.nd = len(deck)
        for i in range(self.nd):
            self.deck[i] = deck[i]
        for i in range(52):
            self.njk[i] = 0
        for base, js in st.jacks.items():
            self.njk[base] = len(js)
            for i in range(len(js)):
                self.jk[4 * base + i] = js[i]
        self.nsusp = len(st.susp)
        for i in range(self.nsusp):
            self.susp[i] = st.susp[i]
        self.nchain = len(st.chain)
        for i in range(self.nchain):
            self.chain[i] = st.chain[i]
        self.hl = -1 if st.hand_limit is None else st.hand_limit
        self.nine_freezes = st.nine_freezes
        self.max_turns = st.max_turns
        self.scrap, self.public = st.scrap, st.public
        self.phase, self.to_act, self.turn_p = st.phase, st.to_act, st.turn_p
        self.turns, self.passes, self.target = st.turns, st.passes, st.target
        self.seven, self.winner = st.seven, st.winner
        self.hist, self.actors, self.draws = st.history, st.actors, st.draws
        self.shown, self.glimpses = st.shown, st.glimpses
        self.stamp = len(self.hist)
        return 0

    def store(self, st: Any) -> int:
        """Copy the table back into ``st`` (the form :class:`CuttleState` keeps); returns 0."""
        st.hands = [self.hands[0], self.hands[1]]
        st.ctrl = [self.ctrl[0], self.ctrl[1]]
        st.perm = [self.perm[0], self.perm[1]]
        st.frozen = [self.frozen[0], self.frozen[1]]
        st.fresh = [self.fresh[0], self.fresh[1]]
        st.exposed = [self.exposed[0], self.exposed[1]]
        st.deck = [self.deck[i] for i in range(self.nd)]
        jacks = {}
        for base in range(52):
            if self.njk[base]:
                jacks[base] = tuple([self.jk[4 * base + i] for i in range(self.njk[base])])
        st.jacks = jacks
        st.susp = [self.susp[i] for i in range(self.nsusp)]
        st.chain = [self.chain[i] for i in range(self.nchain)]
        st.scrap, st.public = self.scrap, self.public
        st.phase, st.to_act, st.turn_p = self.phase, self.to_act, self.turn_p
        st.turns, st.passes, st.target = self.turns, self.passes, self.target
        st.seven, st.winner = self.seven, self.winner
        st._legal = None
        return 0

    def run(self, rand: Any) -> int:
        """Play to the end of the match: per decision one ``rand()`` picks the ``k``-th legal action."""
        while self.phase != OVER_:
            n = self.legal()
            r = rand()
            k = int(r * n)
            self.step(OUT[k])
        return 0

    # ------------------------------------------------------------ legal actions (legal.py)

    def legal(self) -> int:
        """Fill :data:`OUT` with the legal actions in ascending value; their number."""
        ph = self.phase
        p = self.to_act
        n = 0
        if ph == MAIN_:
            if self.nd:
                if self.hl < 0 or _count(self.hands[p]) < self.hl:
                    OUT[0] = K_DRAW_ << 12
                    n = 1
            else:
                OUT[0] = K_PASS_ << 12
                n = 1
            return self.plays(self.hands[p] & ~self.frozen[p], p, n)
        if ph == COUNTER_:
            if not self.perm[1 - p] & QUEENS_:
                m = self.hands[p] & TWOS_ & ~self.frozen[p]
                while m:
                    OUT[n] = K_COUNTER_ << 12 | _low(m) << 6
                    n += 1
                    m &= m - 1
            OUT[n] = K_DECLINE_ << 12
            return n + 1
        if ph == TAKE_:
            m = self.scrap
            while m:
                OUT[n] = K_TAKE_ << 12 | _low(m) << 6
                n += 1
                m &= m - 1
            return n
        if ph == DISCARD_:
            return self.discards(self.hands[p])
        return self.plays(ONE << self.seven, p, 0)

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is one of the current legal actions."""
        n = self.legal()
        for i in range(n):
            if OUT[i] == action:
                return True
        return False

    def discards(self, hand: int) -> int:
        """Fill :data:`OUT` with the 4's discards of ``hand`` (each pair lower first in scuttle
        order), sorted; their number."""
        n = 0
        m = hand
        while m:
            c1 = _low(m)
            m &= m - 1
            rest = m
            while rest:
                c2 = _low(rest)
                rest &= rest - 1
                if T_ORDER[c1] > T_ORDER[c2]:
                    OUT[n] = K_DISCARD_ << 12 | c2 << 6 | c1
                else:
                    OUT[n] = K_DISCARD_ << 12 | c1 << 6 | c2
                n += 1
        for i in range(1, n):                       # insertion sort (a 4 resolves rarely)
            a = OUT[i]
            j = i - 1
            while j >= 0 and OUT[j] > a:
                OUT[j + 1] = OUT[j]
                j -= 1
            OUT[j + 1] = a
        return n

    def plays(self, cards: int, p: int, n: int) -> int:
        """Append to :data:`OUT` from index ``n`` every play of ``cards`` by ``p``, kind by kind
        (the action value's high bits), cards and targets ascending; the new count."""
        o = 1 - p
        num = cards & NUMBERS_
        n = self._each(K_POINTS_, num, 0, n)
        m = num
        while m:
            c = _low(m)
            m &= m - 1
            n = self._targets(K_SCUTTLE_, c, self.ctrl[o] & T_BEATS[c], n)
        n = self._each(K_GLASSES_, cards & EIGHTS_, 0, n)
        n = self._each(K_QUEEN_, cards & QUEENS_, 0, n)
        n = self._each(K_KING_, cards & KINGS_, 0, n)
        if not self.perm[o] & QUEENS_:
            m = cards & JACKS_
            while m:
                c = _low(m)
                m &= m - 1
                n = self._targets(K_JACK_, c, self.ctrl[0] | self.ctrl[1], n)
        plain = ACES_ | SIXES_
        if self.scrap:
            plain |= THREES_
        if self.hands[o]:
            plain |= FOURS_
        if self.nd:
            plain |= FIVES_ | SEVENS_
        n = self._each(K_ONEOFF_, cards & plain, 0, n)
        m = cards & (TWOS_ | NINES_)
        if m:
            t29 = self.targets_2_9(p)
            while m:
                c = _low(m)
                m &= m - 1
                n = self._targets(K_ONEOFF_T_, c, t29, n)
        return n

    def _each(self, kind: int, cards: int, t: int, n: int) -> int:
        """Append ``kind`` with each card of ``cards`` (ascending) and target ``t``; the new count."""
        while cards:
            OUT[n] = kind << 12 | _low(cards) << 6 | t
            n += 1
            cards &= cards - 1
        return n

    def _targets(self, kind: int, c: int, targets: int, n: int) -> int:
        """Append ``kind`` with card ``c`` on each card of ``targets`` (ascending); the new count."""
        while targets:
            OUT[n] = kind << 12 | c << 6 | _low(targets)
            n += 1
            targets &= targets - 1
        return n

    def targets_2_9(self, p: int) -> int:
        """Permanents and top jacks a 2 or 9 of ``p`` may target (legal.targets_2_9)."""
        if self.perm[1 - p] & QUEENS_:
            return (self.perm[0] | self.perm[1]) & QUEENS_
        m = self.perm[0] | self.perm[1]
        for base in range(52):
            if self.njk[base]:
                m |= ONE << self.jk[4 * base + self.njk[base] - 1]
        return m

    # ------------------------------------------------------------ apply (state.py)

    def step(self, action: int) -> int:
        """``CuttleState.apply(action)`` for a legal ``action``; returns 0."""
        stamp = self.stamp
        self.stamp += 1
        p = self.to_act
        self.hist.append(action)
        self.actors.append(p)
        kind = action >> 12
        c = action >> 6 & 63
        ph = self.phase
        if ph == COUNTER_:
            if kind == K_DECLINE_:
                self.resolve(stamp)
            else:
                self.from_hand(p, c, stamp)
                self.chain[self.nchain] = c
                self.nchain += 1
                self.to_act = 1 - p
            return 0
        if ph == TAKE_:
            self.scrap &= ~(ONE << c)
            self.hands[p] |= ONE << c
            self.exposed[p] |= ONE << c
            return self.finish()
        if ph == DISCARD_:
            for x in (c, action & 63):
                self.from_hand(p, x, stamp)
                self.scrap |= ONE << x
            return self.finish()
        if kind == K_DRAW_:
            self.nd -= 1
            x = self.deck[self.nd]
            self.hands[p] |= ONE << x
            self.log_draw(p, stamp, 0, (x,))
            return self.end_turn(False)
        if kind == K_PASS_:
            return self.end_turn(True)
        if ph == SEVEN_:
            self.reveal_seven()
        else:
            self.from_hand(p, c, stamp)
        return self.play(p, kind, c, action & 63, stamp)

    def play(self, p: int, kind: int, c: int, t: int, stamp: int) -> int:
        """The effect of playing card ``c`` (left the hand or the 7's card) as ``kind`` on ``t``."""
        o = 1 - p
        b = ONE << c
        if kind == K_POINTS_:
            self.ctrl[p] |= b
        elif kind == K_SCUTTLE_:
            self.ctrl[o] &= ~(ONE << t)
            self.scrap |= b | ONE << t
            for i in range(self.njk[t]):
                self.scrap |= ONE << self.jk[4 * t + i]
            self.njk[t] = 0
        elif kind == K_JACK_:
            self.jk[4 * t + self.njk[t]] = c
            self.njk[t] += 1
            self.flip(t)
        elif kind == K_GLASSES_ or kind == K_QUEEN_ or kind == K_KING_:
            if kind == K_GLASSES_ and not self.perm[p] & EIGHTS_:
                self.glimpses[p].append((stamp, self.hands[o]))
                self.exposed[o] |= self.hands[o]
            self.perm[p] |= b
        else:  # a one-off: suspended, counter window for the opponent (§3.5, §3.6)
            self.susp[self.nsusp] = c
            self.nsusp += 1
            self.target = t if kind == K_ONEOFF_T_ else -1
            self.nchain = 0
            self.phase = COUNTER_
            self.to_act = o
            return 0
        return self.finish()

    def from_hand(self, p: int, c: int, stamp: int) -> int:
        """Card ``c`` leaves ``p``'s hand; its first public showing is recorded."""
        b = ONE << c
        self.hands[p] &= ~b
        if not self.public & b:
            self.public |= b
            self.shown.append((p, stamp, c))
        return 0

    def log_draw(self, p: int, stamp: int, kind: int, cards: tuple) -> int:
        """Record a draw event (``kind`` 0 draw, 1 five, 2 seven) as ``CuttleState._log_draw``."""
        seen = kind != 2 and (self.perm[1 - p] & EIGHTS_) != 0
        if seen:
            for x in cards:
                self.exposed[p] |= ONE << x
        self.draws.append((p, stamp, kind, cards, seen))
        return 0

    def reveal_seven(self) -> int:
        """The 7's card is shown (played or scrapped)."""
        self.public |= ONE << self.seven
        self.seven = -1
        e = self.draws[-1]
        self.draws[-1] = (e[0], e[1], e[2], e[3], True)
        return 0

    def flip(self, base: int) -> int:
        """Stack ``base`` changes sides."""
        self.ctrl[0] ^= ONE << base
        self.ctrl[1] ^= ONE << base
        return 0

    def remove_target(self, t: int) -> int:
        """Take permanent or top jack ``t`` off the table; the side it lay on."""
        b = ONE << t
        if JACKS_ & b:
            for base in range(52):
                k = self.njk[base]
                if k and self.jk[4 * base + k - 1] == t:
                    side = 0 if self.ctrl[0] >> base & 1 else 1
                    self.njk[base] = k - 1
                    self.flip(base)
                    return side
            raise AssertionError(f"cuttle rollout: target jack {t} is not on top of a stack")
        side = 0 if self.perm[0] & b else 1
        self.perm[side] &= ~b
        return side

    def resolve(self, stamp: int) -> int:
        """Somebody declined: scrap the 2s, then cancel or resolve the one-off (§3.6)."""
        for i in range(self.nchain):
            self.scrap |= ONE << self.chain[i]
        odd = self.nchain & 1
        self.nchain = 0
        if odd:
            return self.finish()
        b = ONE << self.susp[self.nsusp - 1]
        if b & (ACES_ | TWOS_ | SIXES_ | NINES_):
            self.table_effect(b)
        elif not self.hand_effect(b, stamp):
            return 0  # an answer is due: the 3's take, the 4's discard or the 7's card
        return self.finish()

    def _scrap_jacks(self) -> int:
        """Every jack to the scrap (an ace or a six resolved); the stacks' sides are left as they are."""
        for base in range(52):
            for i in range(self.njk[base]):
                self.scrap |= ONE << self.jk[4 * base + i]
        return 0

    def table_effect(self, b: int) -> int:
        """The effect of a resolved A, 2, 6 or 9 (card mask ``b``) on the table (§3.5)."""
        if ACES_ & b:
            self.scrap |= self.ctrl[0] | self.ctrl[1]
            self._scrap_jacks()
            self.ctrl[0] = self.ctrl[1] = 0
            for base in range(52):
                self.njk[base] = 0
        elif TWOS_ & b:
            self.remove_target(self.target)
            self.scrap |= ONE << self.target
        elif SIXES_ & b:
            self.scrap |= self.perm[0] | self.perm[1]
            self._scrap_jacks()
            for base in range(52):
                if self.njk[base] & 1:
                    self.flip(base)
                self.njk[base] = 0
            self.perm[0] = self.perm[1] = 0
        else:  # nine: back to its controller's hand
            side = self.remove_target(self.target)
            tb = ONE << self.target
            self.hands[side] |= tb
            self.exposed[side] |= tb
            if self.nine_freezes:
                self.frozen[side] |= tb
                self.fresh[side] |= tb
        return 0

    def hand_effect(self, b: int, stamp: int) -> bool:
        """The effect of a resolved 3, 4, 5 or 7 (card mask ``b``) on hands and deck (§3.5);
        False if a player must answer first."""
        p = self.turn_p
        o = 1 - p
        if THREES_ & b:
            self.phase = TAKE_
            self.to_act = p
            return False
        if FOURS_ & b:
            if _count(self.hands[o]) >= 3:
                self.phase = DISCARD_
                self.to_act = o
                return False
            m = self.hands[o]
            while m:
                x = _low(m)
                m &= m - 1
                self.from_hand(o, x, stamp)
                self.scrap |= ONE << x
        elif FIVES_ & b:
            k = 2 if self.nd > 2 else self.nd
            if self.hl >= 0:
                room = self.hl - _count(self.hands[p])
                k = max(0, min(k, room))
            if k:
                got = tuple([self.deck[self.nd - 1 - i] for i in range(k)])
                self.nd -= k
                for x in got:
                    self.hands[p] |= ONE << x
                self.log_draw(p, stamp, 1, got)
        else:  # seven: play the deck's top card, or scrap it if it cannot be played
            self.nd -= 1
            x = self.deck[self.nd]
            self.log_draw(p, stamp, 2, (x,))
            self.seven = x
            if self.plays(ONE << x, p, 0):
                self.phase = SEVEN_
                self.to_act = p
                return False
            self.reveal_seven()
            self.scrap |= ONE << x
        return True

    def finish(self) -> int:
        """The turn's effects are complete: suspended one-offs to the scrap, end the turn."""
        if self.nsusp:
            for i in range(self.nsusp):
                self.scrap |= ONE << self.susp[i]
            self.nsusp = 0
            self.target = -1
        return self.end_turn(False)

    def end_turn(self, passed: bool) -> int:
        """Win check for the turn's player, passes, turn cap, then the other player's turn (§3.8)."""
        p = self.turn_p
        self.turns += 1
        self.passes = self.passes + 1 if passed else 0
        self.frozen[p] = self.fresh[p]
        self.fresh[0] = self.fresh[1] = 0
        if _points(self.ctrl[p]) >= T_THRESHOLD[_count(self.perm[p] & KINGS_)]:
            self.winner = p
            self.phase = OVER_
        elif self.passes >= 3 or self.turns >= self.max_turns:
            self.winner = 2
            self.phase = OVER_
        else:
            self.phase = MAIN_
            self.turn_p = self.to_act = 1 - p
        if self.phase == OVER_:
            self.to_act = -1
        return 0


#: the one table :func:`playout` and :func:`replay` load, play and store (see :data:`OUT`)
_TABLE = _Table()
