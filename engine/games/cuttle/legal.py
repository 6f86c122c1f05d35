"""Cuttle's legal actions (``docs/rules/cuttle.md`` §3.4-§3.7): plays of a hand, counters,
the 3's take, the 4's discard, the 7's card. Functions of a
:class:`~engine.games.cuttle.state.CuttleState`, in canonical (ascending value) order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.cards import cards_of
from engine.games.cuttle.actions import (
    ACES,
    BEATS,
    COUNTER,
    DECLINE,
    DISCARD,
    DRAW,
    EIGHTS,
    FIVES,
    FOURS,
    JACKS,
    K_COUNTER,
    K_GLASSES,
    K_JACK,
    K_KING,
    K_ONEOFF,
    K_ONEOFF_T,
    K_POINTS,
    K_QUEEN,
    K_SCUTTLE,
    K_TAKE,
    MAIN,
    NINES,
    NUMBERS,
    PASS,
    QUEENS,
    SEVEN,
    SEVENS,
    SIXES,
    TAKE,
    THREES,
    TWOS,
    discard_action,
)

if TYPE_CHECKING:
    from engine.games.cuttle.state import CuttleState


def targets_2_9(st: CuttleState, p: int) -> int:
    """Permanents a 2 (destroy) or 9 of ``p`` may target (§3.4, §3.7, ruling C-12)."""
    if st.perm[1 - p] & QUEENS:
        return (st.perm[0] | st.perm[1]) & QUEENS
    m = st.perm[0] | st.perm[1]
    for js in st.jacks.values():
        if js:
            m |= 1 << js[-1]
    return m

def plays(st: CuttleState, cards: int, p: int, out: list[int]) -> None:
    """Append every play of the cards in ``cards`` by ``p`` (main action or a 7's play)."""
    o = 1 - p
    opp_ctrl = st.ctrl[o]
    q_o = st.perm[o] & QUEENS
    m = cards
    targets29 = -1
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        if NUMBERS & low:
            out.append(K_POINTS << 12 | c << 6)
            t = opp_ctrl & BEATS[c]
            while t:
                lt = t & -t
                out.append(K_SCUTTLE << 12 | c << 6 | (lt.bit_length() - 1))
                t ^= lt
            if EIGHTS & low:
                out.append(K_GLASSES << 12 | c << 6)
            elif (ACES | SIXES) & low:
                out.append(K_ONEOFF << 12 | c << 6)
            elif THREES & low:
                if st.scrap:
                    out.append(K_ONEOFF << 12 | c << 6)
            elif FOURS & low:
                if st.hands[o]:
                    out.append(K_ONEOFF << 12 | c << 6)
            elif (FIVES | SEVENS) & low:
                if st.deck:
                    out.append(K_ONEOFF << 12 | c << 6)
            elif (TWOS | NINES) & low:
                if targets29 < 0:
                    targets29 = targets_2_9(st, p)
                t = targets29
                while t:
                    lt = t & -t
                    out.append(K_ONEOFF_T << 12 | c << 6 | (lt.bit_length() - 1))
                    t ^= lt
        elif JACKS & low:
            if not q_o:
                t = st.ctrl[0] | st.ctrl[1]
                while t:
                    lt = t & -t
                    out.append(K_JACK << 12 | c << 6 | (lt.bit_length() - 1))
                    t ^= lt
        elif QUEENS & low:
            out.append(K_QUEEN << 12 | c << 6)
        else:
            out.append(K_KING << 12 | c << 6)

def compute_legal(st: CuttleState) -> list[int]:
    """The legal actions of ``st`` in canonical (ascending value) order; empty when over."""
    ph = st.phase
    p = st.to_act
    out: list[int] = []
    if ph == MAIN:
        if st.deck:
            if st.hand_limit is None or st.hands[p].bit_count() < st.hand_limit:
                out.append(DRAW)
        else:
            out.append(PASS)
        plays(st, st.hands[p] & ~st.frozen[p], p, out)
    elif ph == COUNTER:
        # the player whose card would be countered is the other one (§3.6, §3.7)
        if not st.perm[1 - p] & QUEENS:
            m = st.hands[p] & TWOS & ~st.frozen[p]
            while m:
                low = m & -m
                out.append(K_COUNTER << 12 | (low.bit_length() - 1) << 6)
                m ^= low
        out.append(DECLINE)
    elif ph == TAKE:
        m = st.scrap
        while m:
            low = m & -m
            out.append(K_TAKE << 12 | (low.bit_length() - 1) << 6)
            m ^= low
    elif ph == DISCARD:
        cs = cards_of(st.hands[p])
        for i in range(len(cs)):
            for j in range(i + 1, len(cs)):
                out.append(discard_action(cs[i], cs[j]))
    elif ph == SEVEN:
        plays(st, 1 << st.seven, p, out)
    else:
        return out
    out.sort()
    return out
