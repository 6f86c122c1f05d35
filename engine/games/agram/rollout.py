"""Agram's rollout policy: a uniformly random legal card, drawn from the legal mask."""

from __future__ import annotations

import random

from engine.games.agram.actions import SUIT_MASK_OF, TRICKS_PER_DEAL
from engine.games.agram.state import _KERNEL, _REWARDS, AgramState


def rollout_action(state: AgramState, rng: random.Random) -> int:
    """A uniformly random legal card of ``state``, without building the legal-action list."""
    m = state.legal_mask()
    r = int(rng.random() * m.bit_count())  # twice as fast as randrange
    while r:
        m &= m - 1
        r -= 1
    return (m & -m).bit_length() - 1


def playout(state: AgramState, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """``Agram.playout``: :func:`engine.search.rollout.rollout_rewards`'s result, deal by deal.

    With ``hand_rollouts`` the deal is played out by :meth:`AgramState.finish_hand` (the next
    deal is not dealt); else deal after deal by the typed kernel (exactly the moves and
    ``rng.random()`` draws of the :func:`rollout_action` loop, the world left as the loop
    leaves it) and the next deal dealt as :meth:`AgramState.apply` deals it, to the match's end.

    :param state: changed in place; ``teams``: the sides, for :meth:`Outcome.rewards`.
    """
    if state.is_terminal():
        return state.outcome().rewards(teams)
    if hand_rollouts:
        if state.hand_index() != hand0:
            return state.hand_rewards()
        return state.finish_hand(rng, teams)
    while not state.is_terminal():
        state._end_deal(_play_deal(state, rng))  # deals the next deal unless the match is over (§4.5)
    if len(teams) != state.m.n:
        return state.outcome().rewards(teams)
    key = tuple(state.wins)  # every seat its own side: the rewards depend on the deals won only
    got = _REWARDS.get(key)  # (finish_hand's cache)
    if got is None:
        got = state.outcome().rewards(teams)
        if len(_REWARDS) < 4096:
            _REWARDS[key] = got
    return got[:]


def _play_deal(state: AgramState, rng: random.Random) -> int:
    """Play the current deal to its end as the :func:`rollout_action` loop does (the same draws and
    the same world: hands, history, last trick); the seat that won the sixth trick."""
    if _KERNEL is None:
        w = -1
        while w < 0:
            w = state._play(rollout_action(state, rng))
        return w
    n = state.m.n
    w = _KERNEL.play_out_hand(state.hands, state.cur, state.lmask, state.best, state.bseat, state.k,
                              state.tno, n, TRICKS_PER_DEAL, rng, state.hist)
    last = state.hist[-n:]                      # the sixth trick, its lead first
    led = SUIT_MASK_OF[last[0]]
    state.best = max(c for c in last if (1 << c) & led)
    state.bseat = w
    state.hands = [0] * n
    state.lmask = 0
    state.k = 0
    state.tno = TRICKS_PER_DEAL
    return w
