"""The Cuckoo rollout policy: a threshold on the actor's own card, for search rollouts.

``Cuckoo.rollout_action`` (used by ISMCTS and PIMC rollouts, and by ISMCTS's
``opponent_model="rollout"``) plays on a determinized state and looks only at the actor's
own card, which the actor always knows (never at the others' cards or the stock):

* a non-dealer swaps when its card's value (A = 1 … Q = 12, docs/rules/cuckoo.md §3.1) is
  at most :data:`THRESHOLD` and keeps otherwise (a king is always kept);
* the dealer cuts under the same threshold and keeps otherwise;
* answering a swap, a king-holder blocks (accepting gives the king away, C-A2); without a
  king the only legal answer is ``accept``;
* with probability :data:`NOISE` the action is uniform among the legal ones instead, so
  rollouts still try every line.

Uniform rollouts (the default ``Game.rollout_action``) swap or keep a high card half of the
time; search then believes every low card is likely to be passed on, and the seats that kept
their cards are modelled as holding anything.

:func:`playout` is ``Cuckoo.playout`` (used by :func:`engine.search.rollout.rollout_rewards`,
i.e. every ISMCTS and PIMC rollout): the same policy, the same ``rng.random()`` draws and
the same result as the loop ``state.apply(rollout_action(state, rng))``, but a hand is
played inside one function on plain integers (:func:`_play_hand`, typed for Cython by
``rollout.pxd`` beside this file; without a build the same code runs as Python), the
hand's public trace is followed on the way instead of replayed at the showdown, and with
hand rollouts the next hand is not dealt (issue 19).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from engine.games.cuckoo.actions import (
    ACCEPT,
    BLOCK,
    CUT,
    IS_KING,
    KEEP,
    OVER,
    RESPOND,
    SWAP,
    TURN,
    VALUE,
)

if TYPE_CHECKING:  # the state imports discard_knowers from here
    from engine.games.cuckoo.state import CuckooState

__all__ = ["NOISE", "THRESHOLD", "discard_knowers", "playout", "rollout_action"]

#: the highest card value that is exchanged (6: below the middle of A..Q).
THRESHOLD = 6
#: share of uniformly random actions.
NOISE = 0.1


def rollout_action(state: CuckooState, rng: random.Random) -> int:
    """A legal action of the Cuckoo ``state`` by the policy of the module docstring.

    :param state: a live :class:`engine.games.cuckoo.state.CuckooState`.
    :returns: an action value (``KEEP``, ``SWAP``, ``ACCEPT``, ``BLOCK`` or ``CUT``).
    """
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    if rng.random() < NOISE:
        return legal[int(rng.random() * len(legal))]
    if state.phase == RESPOND:
        return BLOCK
    if state.phase != TURN:
        return legal[0]
    value = VALUE[state.cards[state.current_player()]]
    if value == 13 or value > THRESHOLD:
        return KEEP
    return CUT if CUT in legal else SWAP


# the kernel's copies (typed C globals in rollout.pxd, invisible from Python)
THRESHOLD_ = THRESHOLD
NOISE_ = NOISE
VALUE_ = VALUE
KING_ = tuple(int(k) for k in IS_KING)
KEEP_, SWAP_, ACCEPT_, BLOCK_, CUT_, TURN_, RESPOND_ = KEEP, SWAP, ACCEPT, BLOCK, CUT, TURN, RESPOND


def playout(state: CuckooState, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by :func:`rollout_action`; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards`: with
    ``hand_rollouts`` stop when hand ``hand0`` is over and return ``state.hand_rewards()``
    (the next hand is then not dealt: the state is left between hands, fit only to be
    discarded), else play to the end of the match and return ``outcome().rewards(teams)``.

    :param state: a :class:`~engine.games.cuckoo.state.CuckooState` (changed in place).
    """
    while state.phase != OVER:
        if hand_rollouts and state.hidx != hand0:
            return state.hand_rewards()
        knowers = _play_hand(state, rng.random)
        state._end_hand(not hand_rollouts, knowers)     # the next hand's deal is lazy
        if state.phase == OVER:
            break
        if hand_rollouts:
            return state.hand_rewards()
    return state.match_rewards(teams)


def _play_hand(st: Any, rand: Any) -> int:
    """Play the current hand of ``st`` to its last action by :func:`rollout_action`.

    ``rand`` is the rollout's ``rng.random`` (drawn exactly where :func:`rollout_action`
    draws). The actions are appended to ``st.history``; the showdown is left to
    ``st._end_hand``. Returns the bitmask of seats that know the dealer's discard (§3.5,
    as :meth:`CuckooState._end_hand` would find by replaying the trace; 0 without a discard).
    """
    if st.pending:
        st._ready()
    n = st.n
    m = len(st.order)
    order = [0] * 20
    cards = [0] * 20
    holder = [0] * 20
    know = [0] * 20
    stcards = st._cards
    for i in range(n):
        cards[i] = stcards[i]
    for i in range(m):
        order[i] = st.order[i]
    hist = st.history
    public = _follow(n, order, m, hist, len(hist), holder, know)   # mid-hand: the trace so far
    automatic = 1 if st.automatic else 0
    pos = st.pos
    phase = st.phase
    blocked = st.blocked
    spos = st.spos
    disc = -1                                          # origin of the discarded card
    while True:
        p = order[pos]
        if phase == TURN_:
            last = pos == m - 1
            if rand() < NOISE_:
                a = KEEP_ if int(rand() * 2) == 0 else (CUT_ if last else SWAP_)
            else:
                v = VALUE_[cards[p]]
                a = KEEP_ if v == 13 or v > THRESHOLD_ else (CUT_ if last else SWAP_)
            hist.append(a)
            if a == SWAP_:
                phase = RESPOND_
                continue
            if a == CUT_:
                top = st._stock[spos]
                st.cut_card = top
                public |= 1 << n
                if not KING_[top]:
                    disc = holder[p]
                    holder[p] = n
                    st.discard = cards[p]
                    cards[p] = top
                    spos += 1
        else:
            q = order[pos + 1]
            a = ACCEPT_
            if KING_[cards[q]]:
                a = BLOCK_
                if not automatic and rand() < NOISE_ and int(rand() * 2) == 0:
                    a = ACCEPT_
            hist.append(a)
            if a == ACCEPT_:
                x = cards[p]
                cards[p] = cards[q]
                cards[q] = x
                know[p] |= 1 << holder[q]
                know[q] |= 1 << holder[p]
                x = holder[p]
                holder[p] = holder[q]
                holder[q] = x
            else:
                blocked |= 1 << q
                public |= 1 << holder[q]
            phase = TURN_
        pos += 1
        while pos < m and blocked >> order[pos] & 1:
            pos += 1
        if pos >= m:
            break
    st._cards = [cards[i] for i in range(n)]
    st.pos = pos
    st.phase = phase
    st.blocked = blocked
    st.spos = spos
    knowers = 0
    if disc >= 0:
        for i in range(m):
            if (know[order[i]] | public) >> disc & 1:
                knowers |= 1 << order[i]
    return knowers


def _follow(n: int, order: Any, m: int, hist: list[int], nh: int, holder: Any, know: Any) -> int:
    """Follow the first ``nh`` actions of ``hist`` (none of them a cut) as
    :meth:`~engine.games.cuckoo.actions.Trace.replay` does: fills ``holder`` (origin held per
    seat of ``order[:m]``) and ``know`` (origins known per seat) and returns the public
    origins' bitmask (blocked kings). ``order``/``holder``/``know`` are C arrays compiled,
    lists in Python."""
    for i in range(m):
        holder[order[i]] = order[i]
        know[order[i]] = 1 << order[i]
    public = 0
    pos = 0
    phase = TURN_
    blocked = 0
    for k in range(nh):
        a = hist[k]
        p = order[pos]
        if phase == TURN_:
            if a == SWAP_:
                phase = RESPOND_
                continue
        else:
            q = order[pos + 1]
            if a == ACCEPT_:
                know[p] |= 1 << holder[q]
                know[q] |= 1 << holder[p]
                x = holder[p]
                holder[p] = holder[q]
                holder[q] = x
            else:
                blocked |= 1 << q
                public |= 1 << holder[q]
            phase = TURN_
        pos += 1
        while pos < m and blocked >> order[pos] & 1:
            pos += 1
    return public


def discard_knowers(n: int, order: tuple[int, ...], history: list[int]) -> int:
    """The bitmask of the seats of ``order`` that know the dealer's discarded card after a
    hand ``history`` that ended with a cut that replaced it (§3.5: the dealer and the seats
    that traded it), as :meth:`~engine.games.cuckoo.actions.Trace.knows` finds from the
    replayed trace."""
    m = len(order)
    order_ = [0] * 20
    holder = [0] * 20
    know = [0] * 20
    for i in range(m):
        order_[i] = order[i]
    public = _follow(n, order_, m, history, len(history) - 1, holder, know)
    public |= 1 << n                                   # the cut card (origin n)
    disc = holder[order_[m - 1]]
    knowers = 0
    for i in range(m):
        if (know[order_[i]] | public) >> disc & 1:
            knowers |= 1 << order_[i]
    return knowers
