"""The Whiskey Poker rollout policy: cheap, hand-strength-aware play for search rollouts.

``WhiskeyPoker.rollout_action`` (used by ISMCTS and PIMC rollouts) plays from the
determinized state, so it looks at the actor's real hand (never at the face-down widow,
the stub or other hands, which the actor could not see). Uniformly random rollouts made
every bet look profitable (a random opponent facing a bet folds a third of the time
whatever it holds); this policy folds weak hands and calls or raises with strong ones.

The actor's hand is put in a **tier** by a few bit operations on the 52-bit mask (no
evaluator call):

==== =========================================================
tier hand
==== =========================================================
0    high card (no pair, straight or flush)
1    one pair below jacks
2    one pair of jacks or better
3    two pair
4    three of a kind
5    straight, flush, full house, four of a kind, straight flush
==== =========================================================

* **Betting** (``_BET`` / ``_CALL`` / ``_RAISE`` tables, per round and tier): bet with a
  probability rising with the tier (a small bluff rate with junk); facing a bet fold junk
  (it calls more often in round 1, when the exchanges can still help), call pairs, raise
  with two pair or better. Facing two or more bets weak hands fold more.
* **Exchange phase 1** (blind): take back the widow if it is our own previous hand and
  better (the only widow content the actor knows); otherwise exchange junk (rarely when
  the widow is another player's discarded hand), keep a pair (``pass``, or ``stand``),
  ``knock`` with two pair or better (and with a high pair half of the time).
* **Exchange phase 2** (open): a handful of candidate moves built from rank and suit masks
  (``take all``; a widow card that pairs one of ours, giving our lowest odd card; a card
  completing a four-flush or a four-card straight; with junk, the widow's highest card for
  our lowest), compared with the exact evaluator (a few calls per turn); the best one if it
  beats the current hand, else ``knock`` / ``stand``.

Every random choice is one ``rng.random()`` call, so a rollout is reproducible given the
rng. The function is kept apart from the game's option and glue code on purpose.

:func:`playout` is ``WhiskeyPoker.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout): the same policy functions, the same ``rng.random()``
draws and the same result as the loop ``state.apply(rollout_action(state, rng))``, but the
bets and exchanges of a hand run inside one function on plain integers (:func:`_play_hand`,
typed for Cython by ``rollout.pxd`` beside this file; without a build the same code runs as
Python); the showdown is the state's own, and with hand rollouts the next hand is not dealt
(issue 19). Rules: docs/rules/whiskey_poker.md §2.3–§2.6 as in
:mod:`engine.games.whiskey_poker.state`.
"""

from __future__ import annotations

import random
from typing import Any

from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker import hands as _hands
from engine.games.whiskey_poker.hands import strength
from engine.games.whiskey_poker.state import (
    BET1,
    BET2,
    BET3,
    EX1,
    EX2,
    OVER,
    WhiskeyState,
    _HandOver,
)

__all__ = ["playout", "rollout_action", "tier"]

_R = 0x1FFF                      # the 13 ranks of one suit (card id = 13 * suit + rank, rank 0 = 2 ... 12 = A)
_JACKS = 1 << 9                  # rank bit of the jack
#: the ten 5-rank masks that are straights (A-2-3-4-5 included)
_STRAIGHTS = frozenset([0x1F << k for k in range(9)] + [0x100F])


#: the native evaluator and card ids of :mod:`engine.games.whiskey_poker.hands` (None: its reference backend)
EVAL_ = getattr(_hands, "_evaluate", None) if _hands.BACKEND == "phevaluator" else None
PH_ = getattr(_hands, "_PH", (0,) * 52)


def _strength(mask: int) -> int:
    """:func:`~engine.games.whiskey_poker.hands.strength` of a 5-card ``mask``, its card ids read
    off the bits here (the policy's hot call, a dozen per rollout hand)."""
    if EVAL_ is None:
        return strength(mask)
    c = [0, 0, 0, 0, 0]
    k = 0
    for i in range(52):
        if mask >> i & 1:
            c[k] = PH_[i]
            k += 1
            if k == 5:
                break
    return -EVAL_(c[0], c[1], c[2], c[3], c[4])


def tier(mask: int) -> int:
    """The rollout tier 0..5 of the 5-card hand ``mask`` (see the module docstring)."""
    s0 = mask & _R
    s1 = (mask >> 13) & _R
    s2 = (mask >> 26) & _R
    s3 = mask >> 39
    u = s0 | s1 | s2 | s3
    d = u.bit_count()
    if d == 5:
        if u in _STRAIGHTS or u == s0 or u == s1 or u == s2 or u == s3:
            return 5
        return 0
    if d == 4:
        pair = (s0 & s1) | (s0 & s2) | (s0 & s3) | (s1 & s2) | (s1 & s3) | (s2 & s3)
        return 2 if pair >= _JACKS else 1
    if d == 3:
        return 4 if (s0 & s1 & s2) | (s0 & s1 & s3) | (s0 & s2 & s3) | (s1 & s2 & s3) else 3
    return 5


def _four_straights() -> dict[int, tuple[tuple[int, int], ...]]:
    """For every mask of 5 distinct ranks: the ``(need, drop)`` rank pairs that make it a straight."""
    table: dict[int, tuple[tuple[int, int], ...]] = {}
    for u in range(1 << 13):
        if u.bit_count() != 5:
            continue
        pairs = []
        for drop in range(13):
            if not u >> drop & 1:
                continue
            rest = u & ~(1 << drop)
            for need in range(13):
                if not rest >> need & 1 and (rest | 1 << need) in _STRAIGHTS:
                    pairs.append((need, drop))
        if pairs:
            table[u] = tuple(pairs)
    return table


#: 5-rank mask -> ((needed rank, rank to give), ...): the hands one card short of a straight
_DRAWS = _four_straights()

# Betting probabilities by tier (0..5), per round: bet1 / bet2 / bet3.
#: no bet yet this round: probability of ``bet`` (else ``check``)
_BET = ((0.05, 0.15, 0.4, 0.8, 1.0, 1.0),
        (0.05, 0.15, 0.4, 0.8, 1.0, 1.0),
        (0.03, 0.1, 0.3, 0.8, 1.0, 1.0))
#: facing one bet: probability of continuing (call or raise; else ``fold``)
_CALL = ((0.5, 1.0, 1.0, 1.0, 1.0, 1.0),
         (0.25, 0.9, 1.0, 1.0, 1.0, 1.0),
         (0.05, 0.6, 0.95, 1.0, 1.0, 1.0))
#: facing two or more bets: probability of continuing
_CALL2 = ((0.2, 0.7, 0.95, 1.0, 1.0, 1.0),
          (0.1, 0.5, 0.9, 1.0, 1.0, 1.0),
          (0.02, 0.25, 0.6, 0.95, 1.0, 1.0))
#: continuing: probability of ``raise`` rather than ``call`` (when under the cap)
_RAISE = ((0.0, 0.05, 0.2, 0.5, 0.8, 0.9),
          (0.0, 0.05, 0.2, 0.5, 0.8, 0.9),
          (0.0, 0.0, 0.1, 0.5, 0.8, 0.95))


def rollout_action(state: WhiskeyState, rng: random.Random) -> int:
    """``WhiskeyPoker.rollout_action``: a legal action of ``state`` by the policy of the module docstring.

    :param state: a :class:`~engine.games.whiskey_poker.state.WhiskeyState` not over.
    :param rng: the only source of randomness.
    """
    ph = state.phase
    p = state.turn
    hand = state.hands[p]
    if ph == EX2:
        return _exchange2(state, hand)
    if ph == EX1:
        return _exchange1_move(p, hand, state.widow, state.rx, state.knocker >= 0,
                               bool(state.rules.no_double_pass and state.passed >> p & 1), rng.random)
    if ph == OVER:
        raise ValueError("whiskey_poker: no rollout action in a finished match")
    rnd = 0 if ph == BET1 else (1 if ph == BET2 else 2)
    return _bet_move(rnd, tier(hand), state.bets, state.rules.cap, rng.random)


def _bet_move(rnd: int, t: int, bets: int, cap: int, rand: Any) -> int:
    """A betting action for tier ``t`` in round ``rnd`` (0..2) facing ``bets`` bets (``rand``: ``rng.random``)."""
    if bets == 0:
        return A.BET if rand() < _BET[rnd][t] else A.CHECK
    go = (_CALL if bets == 1 else _CALL2)[rnd][t]
    if go < 1.0 and rand() >= go:
        return A.FOLD
    if bets < cap:
        r = _RAISE[rnd][t]
        if r > 0.0 and rand() < r:
            return A.RAISE
    return A.CALL


def _exchange1_move(p: int, hand: int, widow: int, rx: tuple, knocked: bool, must_knock: bool,
                    rand: Any) -> int:
    """Phase 1 (blind), see the module docstring. ``rx``: the hand's ``(seat, hand received)``
    exchanges; ``must_knock``: a pass is illegal (``no_consecutive_pass`` after a pass)."""
    if rx and rx[-1][0] == p:
        # the widow holds the hand we gave up: the only case where we know its content
        if _strength(widow) > _strength(hand):
            return A.EXCHANGE
        t = tier(hand)
    else:
        t = tier(hand)
        if t == 0:
            # a fresh widow is a random hand; another player's discard is most likely junk
            if not rx or rand() < 0.3:
                return A.EXCHANGE
    if knocked:
        return A.STAND
    if t >= 3 or (t == 2 and rand() < 0.5):
        return A.KNOCK
    if must_knock:
        return A.KNOCK
    return A.PASS


def _exchange2(state, hand: int) -> int:
    """Phase 2 (open widow): the best of a few candidate moves if it improves the hand, else knock / stand."""
    return _exchange2_move(hand, state.widow, state.knocker >= 0)


def _exchange2_move(hand: int, widow: int, knocked: bool) -> int:
    """:func:`_exchange2` on the masks: the actor's ``hand``, the open ``widow``, whether someone knocked."""
    s0 = hand & _R
    s1 = (hand >> 13) & _R
    s2 = (hand >> 26) & _R
    s3 = hand >> 39
    u = s0 | s1 | s2 | s3
    w0 = widow & _R
    w1 = (widow >> 13) & _R
    w2 = (widow >> 26) & _R
    w3 = widow >> 39
    wu = w0 | w1 | w2 | w3
    suits = (s0, s1, s2, s3)
    wsuits = (w0, w1, w2, w3)
    cands: list[tuple[int, int]] = []          # (action, resulting hand)
    # the lowest card of a rank held once (a kicker), to give away
    multi = (s0 & s1) | (s0 & s2) | (s0 & s3) | (s1 & s2) | (s1 & s3) | (s2 & s3)
    single = u & ~multi
    give = -1
    if single:
        low = (single & -single).bit_length() - 1
        for k in range(4):
            if suits[k] >> low & 1:
                give = 13 * k + low
                break
    # a widow card pairing (or tripling) one of our ranks, for our lowest kicker
    match = wu & u
    if match and give >= 0:
        while match:
            b = match & -match
            match ^= b
            r = b.bit_length() - 1
            if r == give % 13:
                continue
            for k in range(4):
                if wsuits[k] >> r & 1:
                    w = 13 * k + r
                    cands.append((A.TAKE[w][give], hand ^ (1 << w) ^ (1 << give)))
                    break
    d = u.bit_count()
    if d == 5:
        # four to a flush: take a widow card of that suit for the odd card out
        for k in range(4):
            sk = suits[k]
            if sk.bit_count() == 4 and wsuits[k]:
                odd = hand & ~(sk << (13 * k))
                h = odd.bit_length() - 1
                w = 13 * k + wsuits[k].bit_length() - 1      # the suit's highest widow card
                cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
                break
        # four to a straight: a widow card of the needed rank for the rank that does not fit
        draws = _DRAWS.get(u)
        if draws:
            for need, drop in draws:
                if wu >> need & 1:
                    w = next(13 * k + need for k in range(4) if wsuits[k] >> need & 1)
                    h = next(13 * k + drop for k in range(4) if suits[k] >> drop & 1)
                    cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
        # junk: the widow's highest card for our lowest
        if not cands and u not in _STRAIGHTS and not (u == s0 or u == s1 or u == s2 or u == s3):
            top = wu.bit_length() - 1
            low = (u & -u).bit_length() - 1
            if top > low and not u >> top & 1:
                w = next(13 * k + top for k in range(4) if wsuits[k] >> top & 1)
                h = next(13 * k + low for k in range(4) if suits[k] >> low & 1)
                cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
    best_a = -1
    best = _strength(hand)
    ws = _strength(widow)
    if ws > best:
        best_a, best = A.TAKE_ALL, ws
    for a, m in cands:
        v = _strength(m)
        if v > best:
            best_a, best = a, v
    if best_a >= 0:
        return best_a
    return A.STAND if knocked else A.KNOCK


# the kernel's copies (typed C globals in rollout.pxd, invisible from Python)
BET1_, EX1_, BET2_, EX2_, BET3_ = BET1, EX1, BET2, EX2, BET3
CHECK_, BET_, CALL_, RAISE_, FOLD_ = A.CHECK, A.BET, A.CALL, A.RAISE, A.FOLD
EXCHANGE_, KNOCK_, PASS_, STAND_, TAKE_ALL_, TAKE_BASE_ = A.EXCHANGE, A.KNOCK, A.PASS, A.STAND, A.TAKE_ALL, A.TAKE_BASE
ONE = 1


def playout(state: WhiskeyState, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by :func:`rollout_action`; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards`: with
    ``hand_rollouts`` stop when hand ``hand0`` is over and return ``state.hand_rewards()``
    (the next hand is not dealt: the state becomes a ``_HandOver``, fit only to be
    discarded), else play to the end of the match and return ``outcome().rewards(teams)``.

    :param state: a :class:`~engine.games.whiskey_poker.state.WhiskeyState` (changed in place).
    """
    if hand_rollouts:
        if state.phase == OVER or state.hidx != hand0:
            return state.outcome().rewards(teams) if state.phase == OVER else state.hand_rewards()
        state.__class__ = _HandOver
        _play_hand(state, rng.random)
        return state.outcome().rewards(teams) if state.phase == OVER else state.hand_rewards()
    while state.phase != OVER:
        _play_hand(state, rng.random)
    return state.outcome().rewards(teams)


def _next(active: int, n: int, seat: int) -> int:
    """The next seat clockwise after ``seat`` in the bitmask ``active`` (-1 if none)."""
    for k in range(1, n + 1):
        q = (seat + k) % n
        if active >> q & 1:
            return q
    return -1


def _count(m: int) -> int:
    """Set bits of ``m``."""
    c = 0
    while m:
        m &= m - 1
        c += 1
    return c


def _play_hand(st: Any, rand: Any) -> int:
    """Play the current hand of ``st`` by the rollout policy up to its end, then score it with
    the state's own ``_showdown`` / ``_win_by_folds`` (which deal the next hand unless ``st``
    is a ``_HandOver``). ``rand`` is ``rng.random``; the actions are appended to ``st.hist``.
    Returns 0."""
    r = st.rules
    n = r.n
    betting = 1 if r.betting else 0
    small = r.small
    big = r.big
    cap = r.cap
    circuits = r.circuits
    ndp = 1 if r.no_double_pass else 0
    dealer = st.dealer
    hands = [0] * 9
    put = [0] * 9
    rc = [0] * 9
    for i in range(n):
        hands[i] = st.hands[i]
        put[i] = st.put[i]
        rc[i] = st.rc[i]
    widow = st.widow
    exposed = st.exposed
    phase = st.phase
    p = st.turn
    active = st.active
    pot = st.pot
    hi = st.hi
    bets = st.bets
    to_act = st.to_act
    knocker = st.knocker
    passed = st.passed
    turns = st.turns
    rx = st.rx
    shown = st.shown
    hist = st.hist
    end = 0                                           # 1: showdown, 2: won by folds
    while not end:
        start = -1                                    # the phase to start after this action
        if phase == EX1_ or phase == EX2_:
            bit = ONE << p
            if phase == EX1_:
                a = _exchange1_move(p, hands[p], widow, rx, knocker >= 0, ndp != 0 and (passed & bit) != 0,
                                     rand)
                if a == EXCHANGE_:
                    x = hands[p]
                    hands[p] = widow
                    widow = x
                    rx = rx + ((p, hands[p]),)
                    passed &= ~bit
                elif a == PASS_:
                    passed |= bit
                elif a == KNOCK_:
                    knocker = p
                    passed &= ~bit
            else:
                a = _exchange2_move(hands[p], widow, knocker >= 0)
                if a >= TAKE_BASE_:
                    m = (ONE << ((a - TAKE_BASE_) // 52)) | (ONE << ((a - TAKE_BASE_) % 52))
                    hands[p] ^= m
                    widow ^= m
                elif a == TAKE_ALL_:
                    shown = shown + ((p, hands[p]),)
                    x = hands[p]
                    hands[p] = widow
                    widow = x
                elif a == KNOCK_:
                    knocker = p
            hist.append(a)
            turns += 1
            nxt = _next(active, n, p)
            if (nxt == knocker) if knocker >= 0 else (turns >= circuits * _count(active)):
                if phase == EX2_:
                    if betting:
                        start = BET3_
                    else:
                        end = 1
                else:
                    start = BET2_ if betting else EX2_
            else:
                p = nxt
        else:
            rnd = 0 if phase == BET1_ else (1 if phase == BET2_ else 2)
            a = _bet_move(rnd, tier(hands[p]), bets, cap, rand)
            unit = big if phase == BET3_ else small
            hist.append(a)
            if a == CHECK_:
                to_act -= 1
            elif a == BET_:
                rc[p] = unit
                put[p] += unit
                pot += unit
                hi = unit
                bets = 1
                to_act = _count(active) - 1
            elif a == RAISE_:
                hi += unit
                bets += 1
                to_act = _count(active) - 1
                put[p] += hi - rc[p]
                pot += hi - rc[p]
                rc[p] = hi
            elif a == CALL_:
                put[p] += hi - rc[p]
                pot += hi - rc[p]
                rc[p] = hi
                to_act -= 1
            else:
                active &= ~(ONE << p)
                to_act -= 1
                if active & (active - 1) == 0:
                    end = 2
            if not end:
                if to_act <= 0:
                    if phase == BET3_:
                        end = 1
                    else:
                        start = phase + 1
                else:
                    p = _next(active, n, p)
        if start >= 0:                                # WhiskeyState._start_phase on the locals
            phase = start
            if phase == EX1_ or phase == EX2_:
                knocker = -1
                passed = 0
                turns = 0
                if phase == EX2_:
                    exposed = widow
            else:
                for i in range(n):
                    rc[i] = 0
                hi = 0
                bets = 0
                to_act = _count(active)
            p = _next(active, n, dealer)
    st.hands = [hands[i] for i in range(n)]
    st.put = [put[i] for i in range(n)]
    st.rc = [rc[i] for i in range(n)]
    st.widow = widow
    st.exposed = exposed
    st.phase = phase
    st.turn = p
    st.active = active
    st.pot = pot
    st.hi = hi
    st.bets = bets
    st.to_act = to_act
    st.knocker = knocker
    st.passed = passed
    st.turns = turns
    st.rx = rx
    st.shown = shown
    if end == 1:
        st._showdown()
    else:
        st._win_by_folds()
    return 0
