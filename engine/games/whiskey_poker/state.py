"""Whiskey Poker state: deal, betting, the two exchange phases, showdown, match end.

Implements rules whiskey_poker.md §2.3-§2.8. Cards are French ids (``engine.cards``);
hands, the widow and the unused stub are int bitmasks. One hand runs

* ``BETTING`` mode: bet 1 → exchange 1 (blind) → bet 2 → widow up → exchange 2 → bet 3 → showdown;
* ``LOWEST_PAYS`` mode: exchange 1 → widow up → exchange 2 → showdown.

The ``apply`` that ends a hand scores it, increments ``hand_index()`` and deals the next
hand (or ends the match) in the same call.

(About 630 lines, just over the project's ~600: the three betting rounds and two exchange
phases share the state's fields and its scoring; splitting them would pass the state around.
The observation is built in :mod:`engine.games.whiskey_poker.observation`.)
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

from engine.cards import cards_of
from engine.core import Outcome, SnapshotState, rank_rewards, ranks_from_results
from engine.deal import shuffled
from engine.errors import GameOverError
from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker.actions import BET1, BET2, BET3, EX1, EX2, OVER, PHASE_NAMES  # noqa: F401
from engine.games.whiskey_poker.actions import cards_text as _cards  # noqa: F401
from engine.games.whiskey_poker.hands import strength

#: a sampled world between hands: the next hand is dealt on first use (``WhiskeyState._realize``)
PENDING = 6
_DECK = tuple(range(52))
_BIT = tuple(1 << s for s in range(16))


class Rules:
    """Resolved options of one match, shared by reference between clones.

    :ivar n: players; :ivar options: the resolved options dict (JSON-ready, for observations).
    :ivar betting: True in mode ``BETTING``; :ivar ante, small, big, cap: §2.4 in chips / bets.
    :ivar hands: ``hands_per_match`` resolved (``"6n"`` → ``6 n``).
    :ivar circuits: ``max_circuits_per_phase``; :ivar no_double_pass: ``no_consecutive_pass``.
    :ivar start_chips: §2.8; :ivar last_standing: ``lowest_pays_end == "last_standing"``.
    :ivar max_loss: the most chips one player can lose in one hand (scales ``hand_rewards``).
    """

    __slots__ = ("n", "options", "betting", "ante", "small", "big", "cap", "hands", "circuits",
                 "no_double_pass", "start_chips", "last_standing", "max_loss")

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        self.n = n
        self.options = dict(options)
        self.betting = options["mode"] == "BETTING"
        self.ante = options["ante"]
        self.small = options["small_bet"]
        self.big = options["big_bet"]
        self.cap = options["max_bets_per_round"]
        hpm = options["hands_per_match"]
        self.hands = 6 * n if hpm == "6n" else hpm
        self.circuits = options["max_circuits_per_phase"]
        self.no_double_pass = options["no_consecutive_pass"]
        self.start_chips = options["start_chips"]
        self.last_standing = options["lowest_pays_end"] == "last_standing"
        self.max_loss = max(1, self.ante + self.cap * (2 * self.small + self.big))


class WhiskeyState(SnapshotState):
    """A complete Whiskey Poker world (see the module docstring).

    Chips: ``score`` is each seat's net chips so far (``BETTING``) or chips left
    (``LOWEST_PAYS``). ``put`` is what each seat has put into the current pot (ante
    included), ``rc`` its contribution in the current betting round, ``hi`` the highest
    ``rc``, ``bets`` the bets made this round (§2.4), ``to_act`` how many active players
    still have to act before the round can end. In the exchange phases ``knocker`` is the
    phase's first knocker (-1 = none), ``passed`` the seats whose previous turn in the
    phase was a pass, ``turns`` the turns taken in the phase (§2.5 safety cap).
    """

    __slots__ = ("game", "rules", "seed", "hidx", "dealer", "hands", "widow", "stub", "phase", "turn",
                 "active", "dealt_in", "pot", "put", "rc", "hi", "bets", "to_act", "knocker", "passed",
                 "turns", "exposed", "rx", "shown", "score", "out", "past", "last", "hist", "deal0")

    rules: Rules
    seed: int
    hidx: int
    dealer: int
    hands: list[int]
    widow: int
    stub: int
    phase: int
    turn: int
    active: int
    dealt_in: int
    pot: int
    put: list[int]
    rc: list[int]
    hi: int
    bets: int
    to_act: int
    knocker: int
    passed: int
    turns: int
    exposed: int
    rx: tuple[tuple[int, int], ...]
    shown: tuple[tuple[int, int], ...]
    score: list[int]
    out: tuple[int, ...]
    past: tuple[dict[str, Any], ...]
    last: tuple[float, ...] | None
    hist: list[int]
    #: a sampled world's deal, for its hand-start snapshot built on first use (else None):
    #: ``(template, hands, widow, stub)``, see :meth:`from_template`
    deal0: tuple | None

    # ------------------------------------------------------------ construction

    @classmethod
    def new(cls, game, rules: Rules, deal_seed: int, dealer: int) -> WhiskeyState:
        """The state at the start of a match: scores set, first hand dealt (§2.3)."""
        s = cls.__new__(cls)
        n = rules.n
        s.game, s.rules, s.seed, s.hidx, s.dealer = game, rules, deal_seed, 0, dealer
        s.score = [0] * n if rules.betting else [rules.start_chips] * n
        s.out = (-1,) * n
        s.past = ()
        s.last = None
        s.dealt_in = (1 << n) - 1
        s._deal()
        return s

    @classmethod
    def at_hand_start(cls, game, rules: Rules, deal_seed: int, hand_index: int, dealer: int, dealt_in: int,
                      score: list[int], out: tuple[int, ...], past: tuple, hands: list[int], widow: int,
                      stub: int) -> WhiskeyState:
        """A state right after a given deal (used by the information set to build worlds)."""
        s = cls.__new__(cls)
        s.game, s.rules, s.seed, s.hidx, s.dealer = game, rules, deal_seed, hand_index, dealer
        s.score = list(score)
        s.out = tuple(out)
        s.past = tuple(past)
        s.last = None
        s.dealt_in = dealt_in
        s._begin_hand(list(hands), widow, stub)
        return s

    def from_template(self, hands: list[int], widow: int, stub: int, seed: int) -> WhiskeyState:
        """A world at the start of this state's hand (``self``: a state right after a deal, used as
        a template and never changed) with the deal ``hands`` (per seat), ``widow``, ``stub`` and
        the chance key ``seed``: the state :meth:`at_hand_start` builds from the same values.
        Its hand-start snapshot is made on first use (:meth:`_deal_snapshot`; searches never ask).
        """
        s = self.clone()
        s.hands, s.widow, s.stub, s.seed = hands, widow, stub, seed
        s.start = None
        s.deal0 = (self, tuple(hands), widow, stub)
        return s

    def _deal_snapshot(self) -> WhiskeyState:
        """The (shared, not copied) snapshot right after the current hand's deal; a world of
        :meth:`from_template` builds it here on first use."""
        if self.phase == PENDING:
            self._deal()
        snap = self.start
        if snap is None:
            assert self.deal0 is not None, "a state without a snapshot is a from_template world"
            tmpl, hands, widow, stub = self.deal0
            snap = tmpl.clone()
            snap.hands, snap.widow, snap.stub, snap.seed = list(hands), widow, stub, self.seed
            snap.start = snap
            self.start = snap
        return snap

    def _realize(self) -> None:
        """Deal the next hand now if it is pending (a :meth:`from_template` world whose hand ended:
        ISMCTS with hand rollouts stops there and never needs it). Every method that reads the
        hand calls this first; the deal is the one :meth:`apply` would have made."""
        if self.phase == PENDING:
            self._deal()

    def hand_history(self) -> list[int]:
        """The actions applied since the current hand was dealt, in order."""
        self._realize()
        return list(self.hist)

    def _deal(self) -> None:
        """Deal hand ``hidx`` from ``shuffled(deck, seed, hidx)``, one card at a time (§2.3 step 3).

        Each round goes clockwise from the dealer's left; the widow gets its card after the
        player on the dealer's right and before the dealer. Seats not dealt in are skipped.
        """
        n, d, parts = self.rules.n, self.dealer, self.dealt_in
        order = [(d + k) % n for k in range(1, n) if parts >> ((d + k) % n) & 1]
        order.append(-1)
        order.append(d)
        deck = shuffled(_DECK, self.seed, self.hidx)
        hands = [0] * n
        widow = 0
        i = 0
        for _ in range(5):
            for seat in order:
                if seat < 0:
                    widow |= 1 << deck[i]
                else:
                    hands[seat] |= 1 << deck[i]
                i += 1
        stub = 0
        for c in deck[i:]:
            stub |= 1 << c
        self._begin_hand(hands, widow, stub)

    def _begin_hand(self, hands: list[int], widow: int, stub: int) -> None:
        r = self.rules
        n = r.n
        self.hands, self.widow, self.stub = hands, widow, stub
        self.active = self.dealt_in
        self.rc = [0] * n
        self.hi = self.bets = self.to_act = 0
        self.knocker, self.passed, self.turns = -1, 0, 0
        self.exposed = 0
        self.rx = ()
        self.shown = ()
        self.hist = []
        self.deal0 = None
        if r.betting:
            self.put = [r.ante if self.dealt_in >> p & 1 else 0 for p in range(n)]
            self.pot = sum(self.put)
            self._start_phase(BET1)
        else:
            self.put = [0] * n
            self.pot = 0
            self._start_phase(EX1)
        self._snapshot()

    def _start_phase(self, phase: int) -> None:
        self.phase = phase
        if phase == BET1 or phase == BET2 or phase == BET3:
            self.rc = [0] * self.rules.n
            self.hi = self.bets = 0
            self.to_act = self.active.bit_count()
        else:
            self.knocker, self.passed, self.turns = -1, 0, 0
            if phase == EX2:
                self.exposed = self.widow
        self.turn = self._next_active(self.dealer)

    def _next_active(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` that is still in the hand (§0.1)."""
        n, act = self.rules.n, self.active
        for k in range(1, n + 1):
            q = (seat + k) % n
            if act >> q & 1:
                return q
        return -1

    def clone(self) -> WhiskeyState:
        """An independent copy: ints, a few small lists, shared immutable tuples and snapshot."""
        s = WhiskeyState.__new__(WhiskeyState)
        s.game, s.rules, s.seed, s.hidx, s.dealer = self.game, self.rules, self.seed, self.hidx, self.dealer
        s.hands, s.widow, s.stub, s.phase, s.turn = self.hands[:], self.widow, self.stub, self.phase, self.turn
        s.active, s.dealt_in, s.pot, s.put, s.rc = self.active, self.dealt_in, self.pot, self.put[:], self.rc[:]
        s.hi, s.bets, s.to_act, s.knocker, s.passed = self.hi, self.bets, self.to_act, self.knocker, self.passed
        s.turns, s.exposed, s.rx, s.shown = self.turns, self.exposed, self.rx, self.shown
        s.score, s.out, s.past, s.last = self.score[:], self.out, self.past, self.last
        s.start, s.hist, s.deal0 = self.start, self.hist[:], self.deal0
        return s

    # ------------------------------------------------------------ contract basics

    @property
    def num_players(self) -> int:
        """Number of seats, 2..9, eliminated ones included (§2.1)."""
        return self.rules.n

    def current_player(self) -> int:
        """The active seat to bet or exchange (clockwise, §2.3-§2.6), -1 once the match is over."""
        if self.phase == PENDING:
            self._deal()
        return self.turn if self.phase != OVER else -1

    def is_terminal(self) -> bool:
        """True once over: ``hands_per_match`` hands (``BETTING``), or a seat broke / one left (§2.8)."""
        return self.phase == OVER

    def hand_index(self) -> int:
        """Hands completed so far in this match."""
        return self.hidx

    def public_action(self, action: int, seat: int) -> str:
        """Every Whiskey Poker action is public in full (an ``exchange`` shows no card, §2.9)."""
        return A.format_action(action)

    def world_key(self) -> Hashable:
        """Hand number, dealer, seats dealt in, chips, eliminations, the hand's deal and its actions."""
        st = self._deal_snapshot()
        return (self.hidx, self.dealer, self.dealt_in, tuple(self.score), self.out,
                tuple(st.hands), st.widow, st.stub, tuple(self.hist))

    # ------------------------------------------------------------ legal actions

    def legal_actions(self) -> list[int]:
        """Canonical order: ``check bet`` | ``call raise fold``; ``exchange knock pass`` |
        ``exchange stand``; the 25 ``take w give h`` (by ``w`` then ``h`` card id), ``take all``,
        ``knock`` | ``stand`` (§2.4-§2.6)."""
        ph = self.phase
        if ph == PENDING:
            self._deal()
            ph = self.phase
        if ph == EX2:
            out: list[int] = []
            hand = cards_of(self.hands[self.turn])
            for w in cards_of(self.widow):
                row = A.TAKE[w]
                out.extend(row[h] for h in hand)
            out.append(A.TAKE_ALL)
            out.append(A.KNOCK if self.knocker < 0 else A.STAND)
            return out
        if ph == EX1:
            if self.knocker >= 0:
                return [A.EXCHANGE, A.STAND]
            if self.rules.no_double_pass and self.passed >> self.turn & 1:
                return [A.EXCHANGE, A.KNOCK]
            return [A.EXCHANGE, A.KNOCK, A.PASS]
        if ph == OVER:
            return []
        if self.bets == 0:
            return [A.CHECK, A.BET]
        if self.bets < self.rules.cap:
            return [A.CALL, A.RAISE, A.FOLD]
        return [A.CALL, A.FOLD]

    # ------------------------------------------------------------ apply

    def apply(self, action: int) -> None:
        """Bet (§2.4) or exchange (§2.5, §2.6); a hand's last action scores it (§2.7, §2.8).

        That call also deals the next hand, or ends the match.

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the match is over.
        """
        ph = self.phase
        if ph == PENDING:
            self._deal()
            ph = self.phase
        if ph == OVER:
            raise GameOverError("whiskey_poker: the match is over; no action can be applied")
        if ph == EX1 or ph == EX2:
            self._exchange(action)
        else:
            self._bet(action)

    def finish_hand(self, rng: random.Random, teams: list[list[int]]) -> list[float]:
        """Play the current hand out in place with ``game.rollout_action`` and return the
        rollout's rewards (:meth:`hand_rewards`, or ``outcome().rewards(teams)`` when the hand
        ended the match), exactly as that loop of :meth:`apply` would, but without dealing
        the next hand (issue 19: hand rollouts throw it away). Afterwards the state is a
        :class:`_HandOver` and only :meth:`is_terminal`, :meth:`hand_index`,
        :meth:`hand_rewards` and :meth:`outcome` hold.

        :raises GameOverError: if the match is over.
        """
        self._realize()
        if self.phase == OVER:
            raise GameOverError("whiskey_poker: the match is over; no action can be applied")
        self.__class__ = _HandOver
        roll = self.game.rollout_action
        hidx = self.hidx
        while self.hidx == hidx:
            self.apply(roll(self, rng))
        return self.outcome().rewards(teams) if self.phase == OVER else self.hand_rewards()

    def _bet(self, a: int) -> None:
        """One betting action (§2.4)."""
        p = self.turn
        r = self.rules
        rc = self.rc
        unit = r.big if self.phase == BET3 else r.small
        if a == A.CHECK or a == A.BET:
            if self.bets:
                raise self._illegal(a, "a bet has been made this round")
            self.hist.append(a)
            if a == A.CHECK:
                self.to_act -= 1
            else:
                rc[p] = unit
                self.put[p] += unit
                self.pot += unit
                self.hi = unit
                self.bets = 1
                self.to_act = self.active.bit_count() - 1
        elif a == A.CALL or a == A.RAISE or a == A.FOLD:
            if rc[p] >= self.hi:
                raise self._illegal(a, "there is no bet to call, raise or fold to")
            if a == A.RAISE:
                if self.bets >= r.cap:
                    raise self._illegal(a, f"the cap of {r.cap} bets this round is reached")
                self.hist.append(a)
                self.hi += unit
                self.bets += 1
                self.to_act = self.active.bit_count() - 1
                d = self.hi - rc[p]
                rc[p] = self.hi
                self.put[p] += d
                self.pot += d
            elif a == A.CALL:
                self.hist.append(a)
                d = self.hi - rc[p]
                rc[p] = self.hi
                self.put[p] += d
                self.pot += d
                self.to_act -= 1
            else:
                self.hist.append(a)
                self.active &= ~(1 << p)
                self.to_act -= 1
                if self.active & (self.active - 1) == 0:
                    self._win_by_folds()
                    return
        else:
            raise self._illegal(a, "a betting action is expected")
        if self.to_act <= 0:
            if self.phase == BET3:
                self._showdown()
            else:
                self._start_phase(self.phase + 1)
        else:
            self.turn = self._next_active(p)

    def _exchange(self, a: int) -> None:
        """One turn of exchange phase 1 (§2.5) or 2 (§2.6)."""
        p = self.turn
        bit = 1 << p
        if self.phase == EX1:
            if a == A.EXCHANGE:
                self.hands[p], self.widow = self.widow, self.hands[p]
                self.rx = self.rx + ((p, self.hands[p]),)
                self.passed &= ~bit
            elif a == A.PASS and self.knocker < 0 and not (self.rules.no_double_pass and self.passed & bit):
                self.passed |= bit
            elif a == A.KNOCK and self.knocker < 0:
                self.knocker = p
                self.passed &= ~bit
            elif a == A.STAND and self.knocker >= 0:
                pass
            else:
                raise self._illegal(a)
        else:
            if A.is_take_one(a):
                w, h = A.take_parts(a)
                if not (self.widow >> w & 1 and self.hands[p] >> h & 1):
                    raise self._illegal(a, "w must lie in the widow and h in your hand")
                m = (1 << w) | (1 << h)
                self.hands[p] ^= m
                self.widow ^= m
            elif a == A.TAKE_ALL:
                self.shown = self.shown + ((p, self.hands[p]),)
                self.hands[p], self.widow = self.widow, self.hands[p]
            elif a == A.KNOCK and self.knocker < 0:
                self.knocker = p
            elif a == A.STAND and self.knocker >= 0:
                pass
            else:
                raise self._illegal(a)
        self.hist.append(a)
        self.turns += 1
        nxt = self._next_active(p)
        if (nxt == self.knocker) if self.knocker >= 0 else \
                (self.turns >= self.rules.circuits * self.active.bit_count()):
            if self.phase == EX2:
                if self.rules.betting:
                    self._start_phase(BET3)
                else:
                    self._showdown()
            else:
                self._start_phase(BET2 if self.rules.betting else EX2)
        else:
            self.turn = nxt

    # ------------------------------------------------------------ end of a hand

    def _win_by_folds(self) -> None:
        """§2.3: the last player not folded takes the pot at once."""
        winner = self.active.bit_length() - 1
        res = [-x for x in self.put]
        res[winner] += self.pot
        self._finish_hand(res, {"winners": [winner], "showdown": []})

    def _showdown(self) -> None:
        """§2.7 (best hand takes the pot, split with odd chips clockwise) or §2.8 (lowest pays)."""
        r = self.rules
        n = r.n
        seats = [(self.dealer + k) % n for k in range(1, n + 1)]
        seats = [s for s in seats if self.active >> s & 1]
        power = {s: strength(self.hands[s]) for s in seats}
        shown = [[s, _cards(self.hands[s])] for s in sorted(seats)]
        if r.betting:
            best = max(power.values())
            winners = [s for s in seats if power[s] == best]
            share, odd = divmod(self.pot, len(winners))
            res = [-x for x in self.put]
            for i, s in enumerate(winners):
                res[s] += share + (1 if i < odd else 0)
            self._finish_hand(res, {"winners": sorted(winners), "showdown": shown})
        else:
            low = min(power.values())
            payers = sorted(s for s in seats if power[s] == low)
            res = [0] * n
            for s in payers:
                res[s] = -1
            self._finish_hand(res, {"payers": payers, "showdown": shown})

    def _finish_hand(self, res: list[int], extra: dict[str, Any]) -> None:
        """Record the hand (``past``: result, folds, ``extra``, the widow turned up, shown hands),
        then :meth:`_score` it."""
        n = self.rules.n
        folded = [p for p in range(n) if self.dealt_in >> p & 1 and not self.active >> p & 1]
        entry = {"hand": self.hidx, "dealer": self.dealer, "result": list(res), "folded": folded, **extra,
                 "widow_exposed": _cards(self.exposed) if self.exposed else None,
                 "shown": [[p, _cards(m)] for p, m in self.shown]}
        self.past = self.past + (entry,)
        self._score(res)

    def _score(self, res: list[int]) -> None:
        """Add the hand's chips ``res`` (per seat) to the scores, set the hand's rewards, count it
        and deal the next hand or end the match (§2.4, §2.8). Without :meth:`_finish_hand`'s record:
        the rollout kernel's end of a hand rollout (``rollout._settle``)."""
        r = self.rules
        n = r.n
        for p in range(n):
            self.score[p] += res[p]
        if r.betting:
            scale = 2 * r.max_loss * (n - 1)
            self.last = tuple(min(1.0, max(0.0, 0.5 + x / scale)) for x in res)
        else:
            self.last = tuple((0.0 if res[p] else 1.0) if self.dealt_in >> p & 1 else 0.5 for p in range(n))
        played = self.hidx
        self.hidx += 1
        over = False
        if r.betting:
            over = self.hidx >= r.hands
            if not over:
                self.dealer = (self.dealer + 1) % n
        else:
            broke = [p for p in range(n) if self.dealt_in >> p & 1 and self.score[p] <= 0]
            if not r.last_standing:
                over = bool(broke)
            else:
                if broke:
                    out = list(self.out)
                    for p in broke:
                        out[p] = played
                    self.out = tuple(out)
                    self.dealt_in &= ~sum(1 << p for p in broke)
                over = self.dealt_in.bit_count() <= 1
            if not over:
                d = self.dealer
                for k in range(1, n + 1):
                    q = (d + k) % n
                    if self.dealt_in >> q & 1:
                        self.dealer = q
                        break
        if over:
            self.phase = OVER
            self.turn = -1
            self.hands = [0] * n
            self.widow = self.stub = self.exposed = 0
            self.active = 0
            self.rx = self.shown = ()
            self.hist = []
            self.pot = 0
            self.put = [0] * n
            self.rc = [0] * n
        elif self.deal0 is not None:
            self.phase = PENDING          # a sampled world: searches stop at the hand's end (_realize)
        else:
            self._deal()

    # ------------------------------------------------------------ outcome

    def outcome(self) -> Outcome:
        """§2.4 (net chips) or §2.8 (chips left; ``last_standing``: reverse elimination order).

        :raises GameOverError: if the match is not over.
        """
        if self.phase != OVER:
            raise GameOverError("whiskey_poker: the match is not over")
        r = self.rules
        if r.betting or not r.last_standing:
            ranks = ranks_from_results(self.score)
        else:
            never = self.hidx + 1
            ranks = ranks_from_results([never if o < 0 else o for o in self.out])
        return Outcome(tuple(ranks), tuple(self.score))

    def hand_rewards(self) -> list[float]:
        """Per seat in [0, 1] for the last completed hand (0.5 before any).

        ``BETTING``: ``0.5 + net / (2 · max_loss · (n-1))``, linear in the hand's chips;
        ``LOWEST_PAYS``: 0 for a payer, 1 for the others. A match of one hand gives the match
        reward (:meth:`Outcome.rewards`).
        """
        if self.phase == OVER and self.hidx == 1:
            return rank_rewards(self.outcome().ranks)
        if self.last is None:
            return [0.5] * self.rules.n
        return list(self.last)

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (rules §2.9); fields are listed in ``WhiskeyPoker.observation_doc``
        (built by :func:`engine.games.whiskey_poker.observation.observe`)."""
        from engine.games.whiskey_poker.observation import observe
        self._realize()
        return observe(self, seat)


class _HandOver(WhiskeyState):
    """A :class:`WhiskeyState` whose next hand is never dealt (:meth:`WhiskeyState.finish_hand`)."""

    __slots__ = ()

    def _deal(self) -> None:
        """No next deal: a hand rollout ends with this hand."""
