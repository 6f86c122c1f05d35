"""Guiñote's rollout kernel: a world played out by the uniform rollout policy on card masks.

:func:`playout` is ``Guinote.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout). It gives exactly the result of the generic loop
``state.apply(game.rollout_action(state, rng))`` — one ``rng.random()`` per decision, the
``k``-th legal action in :meth:`GuinoteState.legal_actions` order — but plays a whole hand
inside one function on plain integers (:func:`_play_hand`), and with ``hand_rollouts`` it
does not deal the next hand that the rollout would throw away (issue 19).

One source: ``rollout.pxd`` beside this file types the kernel for Cython (C arrays of the
card tables, 64-bit hand masks — the 40 cards fit); without a build the same code runs as
Python. Rules: rules/guinote.md §1.3-§1.7, as in :mod:`engine.games.guinote.state`.
"""

from __future__ import annotations

import random
from typing import Any

from engine.games.guinote import actions as _a
from engine.games.guinote import public as _p

# card tables and constants as the kernel reads them (C arrays and ints when compiled, rollout.pxd)
T_SUIT = _a.SUIT
T_POWER = _a.POWER
T_POINTS = _a.POINTS
T_ABOVE = _a.ABOVE
T_SUIT_MASK = _a.SUIT_MASK
T_SEVEN = _a.SEVEN_OF
T_PAIR = _a.PAIR_MASK
SEVEN_POWER = _a.POWER[_a.SEVEN_OF[0]]
PLAY_, WINDOW_, OVER_ = _p.PLAY, _p.WINDOW, _p.OVER
SWAP7_, CALL_, PROCEED_ = _a.SWAP7, _a.CALL, _a.PROCEED
LAST = _a.LAST_TRICK
NC = _a.NCARDS
#: ``1 << i`` is ``ONE << i`` so that the compiled shift is 64-bit
ONE = 1
#: ``BIT_INDEX[(1 << i) % 67] == i``: 2 is a primitive root modulo 67, so the residues differ
BIT_INDEX = tuple(next((i for i in range(64) if (1 << i) % 67 == r), 0) for r in range(67))


def playout(state: Any, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by the uniform policy; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards` with
    ``Game.rollout_action``: with ``hand_rollouts`` stop when hand ``hand0`` is over and
    return ``state.hand_rewards()`` (the next hand is then not dealt: the state is left
    between hands, fit only to be discarded), else play to the end of the match.

    :param state: a :class:`~engine.games.guinote.state.GuinoteState` (changed in place).
    :param teams: the sides, for :meth:`Outcome.rewards`.
    """
    while state.phase != OVER_:
        if hand_rollouts and state.hand_no != hand0:
            return state.hand_rewards()
        if _play_hand(state, rng.random):
            if state.close_hand():
                break
            if hand_rollouts:
                return state.hand_rewards()
            state.deal()
    return _match_rewards(state, teams)


#: the match rewards by ``(winning side, seats, sides)``: they depend on nothing else (§1.7)
_REWARDS: dict[tuple[Any, ...], list[float]] = {}


def _match_rewards(state: Any, teams: list[list[int]]) -> list[float]:
    """``state.outcome().rewards(teams)`` of a finished match, cached by winner and sides."""
    key = (state.winner, state.n, tuple(map(tuple, teams)))
    got = _REWARDS.get(key)
    if got is None:
        got = state.outcome().rewards(teams)
        if len(_REWARDS) < 256:
            _REWARDS[key] = got
    return got[:]


def _winner(trick: Any, tlen: int, trump: int) -> int:
    """Index in ``trick[:tlen]`` of the winning card (as :func:`engine.tricks.trick_winner`)."""
    best = 0
    bc = trick[0]
    bs = T_SUIT[bc]
    for i in range(1, tlen):
        c = trick[i]
        s = T_SUIT[c]
        if s == bs:
            if T_POWER[c] > T_POWER[bc]:
                best = i
                bc = c
        elif s == trump:
            best = i
            bc = c
            bs = s
    return best


def _strict(h: int, trick: Any, tlen: int, leader: int, seat: int, n: int, trump: int,
            must_under: bool) -> int:
    """:func:`engine.games.guinote.rules.strict_mask` on the kernel's trick array (§1.5)."""
    wi = _winner(trick, tlen, trump)
    win = trick[wi]
    partner = n == 4 and (leader + wi) % n == (seat + 2) % n
    led = T_SUIT[trick[0]]
    follow = h & T_SUIT_MASK[led]
    if follow:
        if partner or T_SUIT[win] != led:
            return follow
        over = follow & T_ABOVE[win]
        return over if over else follow
    if partner:
        return h
    trumps = h & T_SUIT_MASK[trump]
    if trumps:
        if T_SUIT[win] == trump:
            over = trumps & T_ABOVE[win]
            if over:
                return over
            return trumps if must_under else h
        return trumps
    return h


def _pick(m: int, r: float) -> int:
    """The card of the ``int(r * popcount(m))``-th lowest set bit of ``m`` (non-empty)."""
    cnt = 0
    t = m
    while t:
        t &= t - 1
        cnt += 1
    k = int(r * cnt)
    while k:
        m &= m - 1
        k -= 1
    return BIT_INDEX[(m & (~m + 1)) % 67]


def _play_hand(st: Any, rand: Any) -> bool:
    """Play the current hand of ``st`` on; True when its last trick is done, False when the match ended.

    ``rand`` is the rollout's ``rng.random``, called once per decision. The hand's history
    is appended; the scoring of a finished hand is left to ``st.close_hand()``.
    """
    n = st.n
    target = st.target
    must_under = st.must_under
    hand_no = st.hand_no
    trump = st.trump
    leader = st.leader
    turn = st.turn
    phase = st.phase
    called = st.called
    win_called = st.win_called
    tricks_done = st.tricks_done
    last_winner = st.last_winner
    stock = st.stock
    hist = st.history
    hands = [0, 0, 0, 0]
    trick = [0, 0, 0, 0]
    hp = [0, 0]
    sc = [0, 0]
    for i in range(n):
        hands[i] = st.hands[i]
    tlen = len(st.trick)
    for i in range(tlen):
        trick[i] = st.trick[i]
    for i in range(2):
        hp[i] = st.hand_pts[i]
        sc[i] = st.scores[i]
    ns = len(stock)
    done = False
    over = False
    side = 0
    while not done:
        if phase == PLAY_:
            h = hands[turn]
            if tlen and not ns:
                h = _strict(h, trick, tlen, leader, turn, n, trump, must_under)
            r = rand()
            card = _pick(h, r)
            hist.append(card)
            hands[turn] ^= ONE << card
            trick[tlen] = card
            tlen += 1
            if tlen < n:
                turn = (turn + 1) % n
                continue
            w = (leader + _winner(trick, tlen, trump)) % n
            pts = 0
            for i in range(tlen):
                pts += T_POINTS[trick[i]]
            tricks_done += 1
            last = tricks_done * n == NC
            if last:
                pts += LAST
                last_winner = w
            side = w & 1
            hp[side] += pts
            tlen = 0
            leader = turn = w
            if hand_no:
                sc[side] += pts
                if sc[side] >= target:
                    over = done = True
                    continue
            if ns:
                phase = WINDOW_
                win_called = False
            elif last:
                done = True
            continue
        # post-trick window: legal order swap7, calls by suit, proceed (GuinoteState.legal_actions)
        w = turn
        h = hands[w]
        fu = stock[0]
        swap = (h >> T_SEVEN[trump]) & 1 and T_POWER[fu] > SEVEN_POWER
        cnt = 1 if swap else 0
        calls = 0
        if not win_called:
            for s in range(4):
                if not (called >> s) & 1 and h & T_PAIR[s] == T_PAIR[s]:
                    calls |= 1 << s
                    cnt += 1
        r = rand()
        k = int(r * (cnt + 1))
        if k == cnt:                              # proceed: everybody draws, the winner first
            hist.append(PROCEED_)
            for i in range(n):
                card = stock.pop()
                hands[(w + i) % n] |= ONE << card
            ns -= n
            phase = PLAY_
            continue
        if swap and k == 0:
            hist.append(SWAP7_)
            seven = T_SEVEN[trump]
            hands[w] = h ^ (ONE << seven) ^ (ONE << fu)
            stock[0] = seven
            continue
        if swap:
            k -= 1
        s = 0
        while True:                               # the k-th possible call
            if (calls >> s) & 1:
                if not k:
                    break
                k -= 1
            s += 1
        hist.append(CALL_ + s)
        called |= 1 << s
        win_called = True
        value = 40 if s == trump else 20
        side = w & 1
        hp[side] += value
        if hand_no:
            sc[side] += value
            if sc[side] >= target:
                over = done = True
    st.hands = [hands[i] for i in range(n)]
    st.trick = [trick[i] for i in range(tlen)]
    st.hand_pts = [hp[0], hp[1]]
    st.scores = [sc[0], sc[1]]
    st.leader = leader
    st.turn = turn
    st.phase = phase
    st.called = called
    st.win_called = win_called
    st.tricks_done = tricks_done
    st.last_winner = last_winner
    if over:
        st.winner = side
        st.phase = OVER_
        st.turn = -1
        return False
    return True
