"""Sedma's rollout kernel: a world played out by the uniform rollout policy on card masks.

:func:`playout` is ``Sedma.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout). It gives exactly the result of the generic loop
``state.apply(game.rollout_action(state, rng))`` — one ``rng.random()`` per decision, the
``k``-th legal action in :meth:`SedmaState.legal_actions` order — but plays a whole hand
inside one function on plain integers (:func:`_play_hand`), and with ``hand_rollouts`` it
does not deal the next hand that the rollout would throw away (issue 19).

One source: ``rollout.pxd`` beside this file types the kernel for Cython (64-bit masks of
the 32 physical cards); without a build the same code runs as Python. Rules:
docs/rules/sedma.md §2.3-§2.5, as in :mod:`engine.games.sedma.state`.
"""

from __future__ import annotations

import random
from typing import Any

from engine.games.sedma import actions as _a
from engine.games.sedma import state as _s

PLAY_, DECIDE_ = _s.PHASE_PLAY, _s.PHASE_DECIDE
CONTINUE_, END_ = _a.CONTINUE, _a.END
POINT_ = _a.POINT_MASK
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

    :param state: a :class:`~engine.games.sedma.state.SedmaState` (changed in place).
    :param teams: the sides, for :meth:`Outcome.rewards`.
    """
    one_hand = not state.vp_mode and teams == _s.sides_for(state.n)
    while not state.terminal:
        if hand_rollouts and state.hidx != hand0:
            return state.hand_rewards()
        side = _play_hand(state, rng.random)
        if hand_rollouts and one_hand:
            # a one-hand match ends with this hand and its rewards are the hand's placing, what
            # close_hand() would record (issue 19: the state is left unscored, to be discarded)
            return list(_s.hand_rewards_from_points(state.n, _hand_points(state.won, state.nsides, side)))
        if state.close_hand(side):
            break
        if hand_rollouts:
            return state.hand_rewards()
        state._deal()
    if one_hand:
        # a one-hand match's outcome ranks are the hand's placing: the same rewards, cached
        return list(state.last_rewards)
    return state.outcome().rewards(teams)


def _hand_points(won: list, nsides: int, last_side: int) -> list[int]:
    """Each side's card points of a finished hand, 10 more for ``last_side`` (§2.5, as
    :meth:`SedmaState.close_hand` scores them)."""
    points = []
    for s in range(nsides):
        points.append(10 * _count(won[s] & POINT_))
    points[last_side] += 10
    return points


def _count(m: int) -> int:
    """Number of set bits of ``m`` (a few at most)."""
    cnt = 0
    while m:
        m &= m - 1
        cnt += 1
    return cnt


def _low(m: int) -> int:
    """Index of the lowest set bit of ``m`` (non-empty)."""
    return BIT_INDEX[(m & (~m + 1)) % 67]


def _play_hand(st: Any, rand: Any) -> int:
    """Play the current hand of ``st`` to its end; the side that took the last trick.

    ``rand`` is the rollout's ``rng.random``, called once per decision. The hand's history
    is appended; scoring is left to ``st.close_hand()``.
    """
    n = st.n
    stock = st.stock
    nstock = len(stock)
    spos = st.spos
    leader = st.leader
    cur = st.cur
    phase = st.phase
    sr = st.sr
    winning = st.winning
    trick = st.trick
    ntricks = st.ntricks
    lastw = st.lastw
    hist = st.hist
    side_of = [0, 1, 2, 3]
    if n == 4:
        side_of = [0, 1, 0, 1]
    hands = [0, 0, 0, 0]
    won = [0, 0, 0, 0]
    for i in range(n):
        hands[i] = st.hands[i]
    for i in range(st.nsides):
        won[i] = st.won[i]
    side = 0
    while True:
        hand = hands[cur]
        if phase == PLAY_:                        # Play(x) for each rank held, ascending
            t = hand | (hand >> 1)
            t |= t >> 2
            t &= 0x11111111
            r = rand()
            k = int(r * _count(t))
            while k:
                t &= t - 1
                k -= 1
            x = _low(t) >> 2
            action = x
        else:                                     # Continue(7), Continue(starter), EndTrick
            seven = hand & 0xF
            starter = sr and (hand >> (4 * sr)) & 0xF
            cnt = 1
            if seven:
                cnt += 1
            if starter:
                cnt += 1
            r = rand()
            k = int(r * cnt)
            if k == cnt - 1:
                action = END_
                x = -1
            elif k == 0 and seven:
                x = 0
                action = CONTINUE_
            else:
                x = sr
                action = CONTINUE_ + sr
        hist.append(action)
        if x >= 0:
            card = 4 * x + _low((hand >> (4 * x)) & 0xF)
            hands[cur] = hand ^ (ONE << card)
            trick |= ONE << card
            if sr < 0:
                sr = x
                winning = cur
            elif x == sr or x == 0:
                winning = cur
            phase = PLAY_
            q = cur + 1
            if q == n:
                q = 0
            if q != leader:
                cur = q
                continue
            if hands[q]:
                phase = DECIDE_
                cur = q
                continue
        # the trick ends: the winner's side takes it, everybody draws from the winner on (§2.3)
        w = winning
        lastw = w
        side = side_of[w]
        won[side] |= trick
        trick = 0
        sr = -1
        winning = -1
        ntricks += 1
        left = nstock - spos
        if left:
            need = (4 - _count(hands[w])) * n
            if need > left:
                need = left
            seat = w
            for i in range(need):
                card = stock[spos + i]
                hands[seat] |= ONE << card
                seat += 1
                if seat == n:
                    seat = 0
            spos += need
        if not hands[w]:
            break
        leader = cur = w
        phase = PLAY_
    st.hands = [hands[i] for i in range(n)]
    st.won = [won[i] for i in range(st.nsides)]
    st.spos = spos
    st.leader = leader
    st.cur = cur
    st.phase = phase
    st.sr = sr
    st.winning = winning
    st.trick = trick
    st.ntricks = ntricks
    st.lastw = lastw
    return side
