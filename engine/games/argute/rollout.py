"""Argute's rollout kernel: a world played out by the uniform rollout policy on card masks.

:func:`playout` is ``Argute.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout). It gives exactly the result of the generic loop
``state.apply(game.rollout_action(state, rng))`` — one ``rng.random()`` per decision, the
``k``-th legal action in :meth:`ArguteState.legal_actions` order — but plays a whole hand
inside one function on plain integers (:func:`_play_hand`), and with ``hand_rollouts`` it
neither records nor scores the hand in the state nor deals the next one: it returns the
hand's rewards straight from its integers (issue 19).

One source: ``rollout.pxd`` beside this file types the kernel for Cython (64-bit masks of
the 42 physical cards, 7 copies of each value in 7 bits); without a build the same code
runs as Python. Rules: docs/rules/argute.md §1.3, as in :mod:`engine.games.argute.state`.
"""

from __future__ import annotations

import random
from typing import Any

from engine.games.argute import actions as _a

BID_ = _a.BID
COPIES_ = _a.COPIES
VALUES_ = _a.VALUES
T_PER_TRICK = _a.CARDS_PER_TRICK


def playout(state: Any, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by the uniform policy; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards` with
    ``Game.rollout_action``: with ``hand_rollouts`` stop when hand ``hand0`` is over and
    return what ``state.hand_rewards()`` would then be (the hand is played on C integers only:
    ``state`` is left unchanged, neither scored nor the next hand dealt), else play to the end
    of the match.

    :param state: an :class:`~engine.games.argute.state.ArguteState` (changed in place).
    :param teams: the sides, for :meth:`Outcome.rewards`.
    """
    while state.phase != 2:
        if hand_rollouts and state.hidx != hand0:
            return state.hand_rewards()
        if state.to_deal:   # the previous hand ended in the caller's last apply
            state._deal_now()
        if hand_rollouts:
            got = _play_hand(state, rng.random, False)
            if got is not None:
                return got
            state.close_hand()   # the hand ended the match: its rewards are the outcome's
            break
        _play_hand(state, rng.random, True)
        if state.close_hand():
            break
        state._deal()
    return state.outcome().rewards(teams)


def _play_hand(st: Any, rand: Any, record: bool) -> list[float] | None:
    """Play the current hand of ``st`` (bids, then three tricks) to its end.

    ``rand`` is the rollout's ``rng.random``, called once per decision. With ``record`` the
    hand's history and actors are appended, the state's fields updated and ``None`` returned
    (scoring is left to ``st.close_hand()``); without, ``st`` is left unchanged and the hand's
    rewards are returned: ``hand_rewards()`` of the scored hand, ``(b + 1) / 4`` for an exact
    bid ``b``, 0 for a miss (§1.3 "Hand end and scoring") — unless the hand ends the match:
    then the state's fields are updated (not its history) and ``None`` returned, for
    ``close_hand()`` and the outcome.
    """
    n = st.m.n
    phase = st.phase
    cur = st.cur
    leader = st.leader
    tno = st.tno
    seq = st.seq
    hist = st.hist
    actors = st.actors
    nh = len(hist)
    hands = [0, 0, 0, 0, 0, 0, 0]
    bids = [0, 0, 0, 0, 0, 0, 0]
    totals = [0, 0, 0, 0, 0, 0, 0]
    reach = [0, 0, 0, 0, 0, 0, 0]
    won = [0, 0, 0, 0, 0, 0, 0]
    per = [0, 0, 0]
    for i in range(3):
        per[i] = T_PER_TRICK[i] * n
    for i in range(n):
        hands[i] = st.hands[i]
        bids[i] = st.bids[i]
        totals[i] = st.totals[i]
        reach[i] = st.reach[i]
        won[i] = st.won[i]
    while phase == 0:                             # bids 0..3 from the dealer's left
        r = rand()
        k = int(r * 4)
        bids[cur] = k
        if record:
            hist.append(BID_ + k)
            actors.append(cur)
        nh += 1
        cur = cur + 1 if cur + 1 < n else 0
        if nh == n:
            phase = 1
            leader = cur
    while True:                                   # play v for each value held, ascending
        h = hands[cur]
        cnt = 0
        for v in range(VALUES_):
            if (h >> (COPIES_ * v)) & 0x7F:
                cnt += 1
        r = rand()
        k = int(r * cnt)
        v = 0
        while True:
            if (h >> (COPIES_ * v)) & 0x7F:
                if not k:
                    break
                k -= 1
            v += 1
        ids = (h >> (COPIES_ * v)) & 0x7F          # the value's copies, shifted down (no int overflow)
        hands[cur] = h ^ ((ids & (~ids + 1)) << (COPIES_ * v))
        if record:
            hist.append(v)
            actors.append(cur)
        if v or reach[cur] < 0:
            reach[cur] = seq
        totals[cur] += v
        seq += 1
        if seq < per[tno]:
            cur = cur + 1 if cur + 1 < n else 0
            continue
        w = 0
        for q in range(1, n):
            if totals[q] > totals[w] or (totals[q] == totals[w] and reach[q] < reach[w]):
                w = q
        won[w] += 1
        tno += 1
        if tno == 3:
            break
        leader = cur = w
        seq = 0
        for i in range(n):
            totals[i] = 0
            reach[i] = -1
    if not record and not _ends_match(st, bids, won, n):
        return [(bids[i] + 1) * 0.25 if won[i] == bids[i] else 0.0 for i in range(n)]
    st.hands = [hands[i] for i in range(n)]
    st.bids = [bids[i] for i in range(n)]
    st.totals = [totals[i] for i in range(n)]
    st.reach = [reach[i] for i in range(n)]
    st.won = [won[i] for i in range(n)]
    st.phase = phase
    st.cur = cur
    st.leader = leader
    st.tno = tno
    st.seq = seq
    return None


def _ends_match(st: Any, bids: Any, won: Any, n: int) -> bool:
    """Whether scoring the hand just played (``bids``/``won`` per seat) ends the match (§1.3
    "Match end": ``max_hands`` reached, or a unique leader on at least the target)."""
    if st.hidx + 1 >= st.m.max_hands:
        return True
    scores = st.scores
    top = -1000000
    count = 0
    for i in range(n):
        x = scores[i] + (bids[i] if won[i] == bids[i] else -1)
        if x > top:
            top = x
            count = 1
        elif x == top:
            count += 1
    return top >= st.m.target and count == 1
