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

(~600 lines: the policy and the kernel that must play it move for move stay together, so the equality the tests check lives in one file.)
"""

from __future__ import annotations

import random
from itertools import accumulate
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
    PENDING,
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
ONE = 1
R_ = _R
#: ``BIT_INDEX_[(1 << i) % 67] == i`` (2 is a primitive root modulo 67): a single bit's index
BIT_INDEX_ = tuple(next((i for i in range(64) if (1 << i) % 67 == r), 0) for r in range(67))


def _low(m: int) -> int:
    """Index of the lowest set bit of ``m`` (``m`` > 0)."""
    return BIT_INDEX_[(m & (~m + ONE)) % 67]


def _high(m: int) -> int:
    """Index of the highest set bit of a 13-bit rank mask ``m`` (``m`` > 0)."""
    r = 12
    while not m >> r & 1:
        r -= 1
    return r


def _is_straight(u: int) -> bool:
    """Whether the 5-rank mask ``u`` is a straight (A-2-3-4-5 included): five consecutive bits."""
    return u == 0x100F or u == (u & (~u + ONE)) * 0x1F


def _strength(mask: int) -> int:
    """:func:`~engine.games.whiskey_poker.hands.strength` of a 5-card ``mask``, its card ids read
    off the bits here (the policy's hot call, a dozen per rollout hand)."""
    if EVAL_ is None:
        return strength(mask)
    c = [0, 0, 0, 0, 0]
    m = mask
    for k in range(5):
        b = m & (~m + ONE)
        c[k] = PH_[BIT_INDEX_[b % 67]]
        m ^= b
    return -EVAL_(c[0], c[1], c[2], c[3], c[4])


def tier(mask: int) -> int:
    """The rollout tier 0..5 of the 5-card hand ``mask`` (see the module docstring)."""
    s0 = mask & R_
    s1 = (mask >> 13) & R_
    s2 = (mask >> 26) & R_
    s3 = mask >> 39
    u = s0 | s1 | s2 | s3
    d = _count(u)
    if d == 5:
        if _is_straight(u) or u == s0 or u == s1 or u == s2 or u == s3:
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


# the kernel's copies (typed C globals in rollout.pxd, invisible from Python)
BET1_, EX1_, BET2_, EX2_, BET3_, PENDING_ = BET1, EX1, BET2, EX2, BET3, PENDING
CHECK_, BET_, CALL_, RAISE_, FOLD_ = A.CHECK, A.BET, A.CALL, A.RAISE, A.FOLD
EXCHANGE_, KNOCK_, PASS_, STAND_, TAKE_ALL_, TAKE_BASE_ = A.EXCHANGE, A.KNOCK, A.PASS, A.STAND, A.TAKE_ALL, A.TAKE_BASE
#: the betting tables flattened (index ``6 * round + tier``)
BETF_ = tuple(x for row in _BET for x in row)
CALLF_ = tuple(x for row in _CALL for x in row)
CALL2F_ = tuple(x for row in _CALL2 for x in row)
RAISEF_ = tuple(x for row in _RAISE for x in row)
#: ``_DRAWS`` flattened: the pairs of 5-rank mask ``u`` are ``DRAW_NEED_[i], DRAW_DROP_[i]`` for
#: ``DRAW_AT_[u] <= i < DRAW_AT_[u + 1]``, in ``_DRAWS[u]``'s order
DRAW_AT_ = tuple(accumulate((len(_DRAWS.get(u, ())) for u in range(8192)), initial=0))
DRAW_NEED_ = tuple(nd[0] for u in range(8192) for nd in _DRAWS.get(u, ())) + (0,) * 62
DRAW_DROP_ = tuple(nd[1] for u in range(8192) for nd in _DRAWS.get(u, ())) + (0,) * 62


def rollout_action(state: WhiskeyState, rng: random.Random) -> int:
    """``WhiskeyPoker.rollout_action``: a legal action of ``state`` by the policy of the module docstring.

    :param state: a :class:`~engine.games.whiskey_poker.state.WhiskeyState` not over.
    :param rng: the only source of randomness.
    """
    ph = state.phase
    if ph == PENDING_:
        state._realize()
        ph = state.phase
    p = state.turn
    hand = state.hands[p]
    if ph == EX2:
        return _exchange2_move(hand, state.widow, state.knocker >= 0)
    if ph == EX1:
        rx = state.rx
        return _exchange1_move(p, hand, state.widow, rx[-1][0] if rx else -1, len(rx) > 0, state.knocker >= 0,
                               bool(state.rules.no_double_pass and state.passed >> p & 1), rng.random)
    if ph == OVER:
        raise ValueError("whiskey_poker: no rollout action in a finished match")
    rnd = 0 if ph == BET1 else (1 if ph == BET2 else 2)
    return _bet_move(rnd, tier(hand), state.bets, state.rules.cap, rng.random)


def _bet_move(rnd: int, t: int, bets: int, cap: int, rand: Any) -> int:
    """A betting action for tier ``t`` in round ``rnd`` (0..2) facing ``bets`` bets (``rand``: ``rng.random``)."""
    i = 6 * rnd + t
    if bets == 0:
        return BET_ if rand() < BETF_[i] else CHECK_
    go = CALLF_[i] if bets == 1 else CALL2F_[i]
    if go < 1.0 and rand() >= go:
        return FOLD_
    if bets < cap:
        r = RAISEF_[i]
        if r > 0.0 and rand() < r:
            return RAISE_
    return CALL_


def _exchange1_move(p: int, hand: int, widow: int, last_x: int, any_x: bool, knocked: bool, must_knock: bool,
                    rand: Any) -> int:
    """Phase 1 (blind), see the module docstring. ``last_x``: the seat of the hand's last
    ``exchange`` (-1: none), ``any_x``: whether there was one; ``must_knock``: a pass is
    illegal (``no_consecutive_pass`` after a pass)."""
    if last_x == p:
        # the widow holds the hand we gave up: the only case where we know its content
        if _strength(widow) > _strength(hand):
            return EXCHANGE_
        t = tier(hand)
    else:
        t = tier(hand)
        if t == 0:
            # a fresh widow is a random hand; another player's discard is most likely junk
            if not any_x or rand() < 0.3:
                return EXCHANGE_
    if knocked:
        return STAND_
    if t >= 3 or (t == 2 and rand() < 0.5):
        return KNOCK_
    if must_knock:
        return KNOCK_
    return PASS_


def _exchange2_move(hand: int, widow: int, knocked: bool) -> int:
    """Phase 2 (open widow) on the masks: the actor's ``hand``, the open ``widow``, whether someone
    knocked. The best of ``take all`` and a few ``take w give h`` candidates (module docstring),
    compared in that order (the first best wins), if it beats the hand; else knock / stand."""
    s = [hand & R_, (hand >> 13) & R_, (hand >> 26) & R_, hand >> 39]
    ws = [widow & R_, (widow >> 13) & R_, (widow >> 26) & R_, widow >> 39]
    u = s[0] | s[1] | s[2] | s[3]
    wu = ws[0] | ws[1] | ws[2] | ws[3]
    best_a = -1
    best = _strength(hand)
    v = _strength(widow)
    if v > best:
        best_a, best = TAKE_ALL_, v
    ncand = 0
    # the lowest card of a rank held once (a kicker), to give away
    multi = (s[0] & s[1]) | (s[0] & s[2]) | (s[0] & s[3]) | (s[1] & s[2]) | (s[1] & s[3]) | (s[2] & s[3])
    single = u & ~multi
    give = -1
    if single:
        low = _low(single)
        for k in range(4):
            if s[k] >> low & 1:
                give = 13 * k + low
                break
    # a widow card pairing (or tripling) one of our ranks, for our lowest kicker
    match = wu & u
    if match and give >= 0:
        while match:
            r = _low(match)
            match &= match - 1
            if r == give % 13:
                continue
            for k in range(4):
                if ws[k] >> r & 1:
                    w = 13 * k + r
                    ncand += 1
                    v = _strength(hand ^ (ONE << w) ^ (ONE << give))
                    if v > best:
                        best_a, best = TAKE_BASE_ + 52 * w + give, v
                    break
    if _count(u) == 5:
        # four to a flush: take a widow card of that suit for the odd card out
        for k in range(4):
            if _count(s[k]) == 4 and ws[k]:
                h = _low(hand & ~(s[k] << (13 * k)))
                w = 13 * k + _high(ws[k])                   # the suit's highest widow card
                ncand += 1
                v = _strength(hand ^ (ONE << w) ^ (ONE << h))
                if v > best:
                    best_a, best = TAKE_BASE_ + 52 * w + h, v
                break
        # four to a straight: a widow card of the needed rank for the rank that does not fit
        for i in range(DRAW_AT_[u], DRAW_AT_[u + 1]):
            need = DRAW_NEED_[i]
            if wu >> need & 1:
                w = _suit_of(ws, need) + need
                h = _suit_of(s, DRAW_DROP_[i]) + DRAW_DROP_[i]
                ncand += 1
                v = _strength(hand ^ (ONE << w) ^ (ONE << h))
                if v > best:
                    best_a, best = TAKE_BASE_ + 52 * w + h, v
        # junk: the widow's highest card for our lowest
        if ncand == 0 and not _is_straight(u) and not (u == s[0] or u == s[1] or u == s[2] or u == s[3]):
            top = _high(wu)
            low = _low(u)
            if top > low and not u >> top & 1:
                w = _suit_of(ws, top) + top
                h = _suit_of(s, low) + low
                v = _strength(hand ^ (ONE << w) ^ (ONE << h))
                if v > best:
                    best_a, best = TAKE_BASE_ + 52 * w + h, v
    if best_a >= 0:
        return best_a
    return STAND_ if knocked else KNOCK_


def _suit_of(suits: Any, r: int) -> int:
    """``13 *`` the first suit (in suit order) of the four rank masks ``suits`` holding rank ``r``."""
    for k in range(4):
        if suits[k] >> r & 1:
            return 13 * k
    return -1


def playout(state: WhiskeyState, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by :func:`rollout_action`; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards`: with
    ``hand_rollouts`` stop when hand ``hand0`` is over and return ``state.hand_rewards()``
    (the next hand is not dealt: the state becomes a ``_HandOver``, fit only to be
    discarded, and the hand is scored without its record: :meth:`WhiskeyState._score`), else
    play to the end of the match and return ``outcome().rewards(teams)``.

    :param state: a :class:`~engine.games.whiskey_poker.state.WhiskeyState` (changed in place).
    """
    if hand_rollouts:
        if state.phase == OVER or state.hidx != hand0:
            return state.outcome().rewards(teams) if state.phase == OVER else state.hand_rewards()
        if state.phase == PENDING_:
            state._realize()
        state.__class__ = _HandOver
        _play_hand(state, rng.random, False)
        return state.outcome().rewards(teams) if state.phase == OVER else state.hand_rewards()
    while state.phase != OVER:
        state._realize()
        _play_hand(state, rng.random, True)
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


def _play_hand(st: Any, rand: Any, record: bool) -> int:
    """Play the current hand of ``st`` by the rollout policy up to its end, then score it: with
    ``record`` the state is written back and scored by its own ``_showdown`` / ``_win_by_folds``
    (the hand's record; the next hand is dealt unless ``st`` is a ``_HandOver``), the actions
    appended to ``st.hist``; without it (a hand rollout's ``_HandOver``) nothing but the scores is
    written: :func:`_settle`. ``rand`` is ``rng.random``. Returns 0."""
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
    last_x = rx[-1][0] if rx else -1
    any_x = 1 if rx else 0
    shown = st.shown
    hist = st.hist
    end = 0                                           # 1: showdown, 2: won by folds
    while not end:
        start = -1                                    # the phase to start after this action
        if phase == EX1_ or phase == EX2_:
            bit = ONE << p
            if phase == EX1_:
                a = _exchange1_move(p, hands[p], widow, last_x, any_x != 0, knocker >= 0,
                                    ndp != 0 and (passed & bit) != 0, rand)
                if a == EXCHANGE_:
                    x = hands[p]
                    hands[p] = widow
                    widow = x
                    if record:
                        rx = rx + ((p, hands[p]),)
                    last_x = p
                    any_x = 1
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
                    if record:
                        shown = shown + ((p, hands[p]),)
                    x = hands[p]
                    hands[p] = widow
                    widow = x
                elif a == KNOCK_:
                    knocker = p
            if record:
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
            if record:
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
    if not record:
        return _settle(st, n, dealer, active, hands, put, pot, betting, end)
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


def _settle(st: Any, n: int, dealer: int, active: int, hands: Any, put: Any, pot: int, betting: int,
            end: int) -> int:
    """Score the hand that ended (``end`` 1: showdown, 2: all but one folded) exactly as
    ``WhiskeyState._showdown`` / ``_win_by_folds`` do (§2.3, §2.7, §2.8: seats compared from the
    dealer's left, a split pot's odd chips to the first winners), without the hand's record:
    ``st._score(res)``. Returns 0."""
    res = [0] * n
    if end == 2 or betting:
        for i in range(n):
            res[i] = -put[i]
    if end == 2:
        res[_low(active)] += pot                      # the only seat not folded
        st._score(res)
        return 0
    pw = [0] * 9
    best = low = 0
    first = 1
    for k in range(1, n + 1):
        s = (dealer + k) % n
        if active >> s & 1:
            v = _strength(hands[s])
            pw[s] = v
            if first or v > best:
                best = v
            if first or v < low:
                low = v
            first = 0
    if betting:
        nw = 0
        for s in range(n):
            if active >> s & 1 and pw[s] == best:
                nw += 1
        share = pot // nw
        odd = pot % nw
        i = 0
        for k in range(1, n + 1):
            s = (dealer + k) % n
            if active >> s & 1 and pw[s] == best:
                res[s] += share + (1 if i < odd else 0)
                i += 1
    else:
        for s in range(n):
            if active >> s & 1 and pw[s] == low:
                res[s] = -1
    st._score(res)
    return 0
