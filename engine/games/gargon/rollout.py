"""Gargon's rollout policy and rollout kernel: uniform among the legal actions, on per-colour words.

:func:`rollout_action` is ``Gargon.rollout_action`` (the uniform draw of ``Game.rollout_action``
without the list copy). :func:`playout` is ``Gargon.playout`` (used by
:func:`engine.search.rollout.rollout_rewards`, i.e. every ISMCTS and PIMC rollout): it gives
exactly the result of the loop ``state.apply(rollout_action(state, rng))`` — one
``rng.random()`` per decision, the ``k``-th legal action in :meth:`GargonState.legal_actions`
order — but plays the match (one hand) inside one function on plain integers
(:func:`_play`) and writes the state back once. :func:`replay` runs the same loop on given
actions (each checked as ``apply`` checks it): the infoset's worlds replay the hand with it.

The 102 cards do not fit one 64-bit word, so the kernel keeps every card set as six 17-bit
words, one per colour (``id = 17 * colour + k``, :mod:`engine.games.gargon.actions`): hands,
the face-down plays, stashes and the discard are flat ``int`` arrays ``[seat * 6 + colour]``.
Everything the rules decide per colour (the legal ``SELECT``s, the battles) reads one word.
The legal ``SELECT``s come from the same cached plans as the state's
(:func:`engine.games.gargon.rules.select_plan` through ``state._START_PLANS`` /
``state._follower_plan``), packed into 16-bit words (per colour the ``need`` in 2 bits, 3 =
no ``SELECT`` of that colour; bit 12 = ``DONE`` legal) in a lazily filled table.

One source: ``rollout.pxd`` beside this file types the kernel for Cython; without a build the
same code runs as Python. Rules: docs/rules/gargon.md §4.3–§4.5, as in
:mod:`engine.games.gargon.state`.
"""

from __future__ import annotations

import random
from array import array
from typing import Any

from engine.core import rank_rewards
from engine.errors import IllegalActionError
from engine.games.gargon import actions as _a
from engine.games.gargon import rules as _r
from engine.games.gargon import state as _s
from engine.games.gargon.state import PLAY, GargonState


def rollout_action(state: GargonState, rng: random.Random) -> int:
    """``Gargon.rollout_action``: uniform among the legal actions, the same draw as the default
    ``legal[int(rng.random() * len(legal))]`` of ``Game.rollout_action``, without copying the list."""
    legal = state._legal
    if legal is None:
        legal = state._legal = state._play_actions() if state.phase == PLAY else state._compute_legal()
    return legal[int(rng.random() * len(legal))]


# constants as the kernel reads them (C ints and arrays when compiled, rollout.pxd)
PLAY_, PASS_DRAW_, REPLACE_, OVER_ = _s.PLAY, _s.PASS_DRAW, _s.REPLACE, _s.OVER
DONE_, PASS_, DRAW_A_, STOP_ = _a.DONE, _a.PASS, _a.DRAW_A, _a.STOP
NCAPS = _s._NCAPS
SEL_STEP = _r.SEL_STEP
#: packed plan word: bit 12 = ``DONE`` legal; ``NOPLAN`` = not computed yet
DONE_BIT = 1 << 12
NOPLAN = 0xFFFF
#: set bits and highest set bit (-1 for 0) of a 9-bit value (a 17-bit word is two lookups)
POP9 = tuple(b.bit_count() for b in range(512))
TOP9 = tuple(b.bit_length() - 1 for b in range(512))
POW3 = tuple(3 ** c for c in range(_a.NCOL))
POW5 = tuple(5 ** s for s in range(5))
#: the amulet multiplier of a stash word by its zeros' bits (×1, ×2, ×4, §4.6)
MULT = (1, 2, 2, 4)


def _pack(plan: Any) -> int:
    """A compiled plan ``(((shift, need, lo, hi), ...), done)`` of ``state.py`` as a 16-bit word."""
    entries, done = plan
    word = 0b111111111111
    for shift, need, _, _ in entries:
        c = shift // _a.PER_COLOUR
        word = word & ~(3 << 2 * c) | need << 2 * c
    return word | (DONE_BIT if done else 0)


#: per selection code: the start player's packed plan, and at ``DONE`` the pattern (a tuple,
#: for the state), the follower key offset, whether followers' caps stop at 1 (``_CAPS1``)
START_PLAN = tuple(_pack(p) if p is not None else NOPLAN for p in _s._START_PLANS)
DONE_PAT = tuple(_s._DONE_INFO[c][1] if c in _s._DONE_INFO else () for c in range(_s._NCODES))
DONE_PKEY = tuple(_s._DONE_INFO[c][2] if c in _s._DONE_INFO else 0 for c in range(_s._NCODES))
DONE_CAP1 = tuple(c in _s._DONE_INFO and _s._DONE_INFO[c][3] is _s._CAPS1 for c in range(_s._NCODES))
#: the amulet sums of the 9 low and 8 high bits of a colour word (``rules._amulet_sums``) for
#: the amulet table ``AM_KEY`` (the last one seen; reloaded when a state has another)
AM_LO = [0] * 512
AM_HI = [0] * 256
AM_KEY: Any = None
#: per player count, the default sides; rewards per ``(rank code, n)`` for those sides
SINGLES = [[[i] for i in range(n)] for n in range(6)]
REWARDS: dict[int, list[float]] = {}
#: the followers' packed plans by key (``GargonState._play_actions``'s key), filled on demand
FOLLOWER_PLANS = array("H", [NOPLAN]) * (len(_s._PATTERNS) * _s._NCODES * NCAPS)


def playout(state: Any, rng: random.Random, teams: list[list[int]], hand0: int,
            hand_rollouts: bool) -> list[float]:
    """Play ``state`` out in place by the uniform policy; the reward per seat.

    Same contract and result as :func:`engine.search.rollout.rollout_rewards` with
    :func:`rollout_action`: a match is one hand (§4.5), so hand rollouts and whole-match
    rollouts both play to the end and return ``state.outcome().rewards(teams)``.

    :param state: a :class:`~engine.games.gargon.state.GargonState` (changed in place).
    :param teams: the sides, for :meth:`Outcome.rewards`.
    """
    if state.phase == OVER_ or (hand_rollouts and state.hand_no != hand0):
        return state.outcome().rewards(teams) if state.phase == OVER_ else state.hand_rewards()
    code = _play(state, rng.random, FOLLOWER_PLANS, None, -1)
    n = state.n
    if teams == SINGLES[n]:
        key = code * 8 + n
        rewards = REWARDS.get(key)
        if rewards is None:
            rewards = REWARDS[key] = rank_rewards([code // 5 ** s % 5 for s in range(n)], teams)
        return list(rewards)
    return rank_rewards([code // 5 ** s % 5 for s in range(n)], teams)


def replay(state: GargonState, actions: list[int]) -> None:
    """Apply ``actions`` to ``state`` in order, as ``state.apply`` each would (§4.3–§4.5), in one pass.

    :raises IllegalActionError: if an action is not legal where it comes, or comes after the
        end of the match; ``state`` is then unchanged.
    """
    if actions:
        _play(state, None, FOLLOWER_PLANS, actions, len(actions))


def _pop(m: int) -> int:
    """Set bits of a 17-bit word."""
    return POP9[m & 511] + POP9[m >> 9]


def _top(m: int) -> int:
    """Index of the highest set bit of a non-zero 17-bit word."""
    if m >> 9:
        return TOP9[m >> 9] + 9
    return TOP9[m]


def _split(mask: int, words: Any, off: int) -> None:
    """``words[off + c]`` = colour ``c``'s 17-bit word of the card mask ``mask``."""
    for c in range(6):
        words[off + c] = (mask >> (17 * c)) & 0x1FFFF


def _join(words: Any, off: int) -> int:
    """The card mask of the six words ``words[off:off + 6]``."""
    mask = 0
    for c in range(6):
        w = words[off + c]   # a Python int (rollout.pxd): the shift goes past 64 bits
        mask |= w << (17 * c)
    return mask


def _any(words: Any, off: int) -> bool:
    """Whether one of the six words ``words[off:off + 6]`` is non-zero (a card set is not empty)."""
    return (words[off] | words[off + 1] | words[off + 2] | words[off + 3] | words[off + 4] | words[off + 5]) != 0


def _plan(code: int, key: int, start: bool, plans: Any) -> int:
    """The packed plan of a start player's selection ``code`` or a follower's ``key``."""
    if start:
        return START_PLAN[code]
    word = plans[key]
    if word == NOPLAN:
        plan = _s._FOLLOWER_PLANS.get(key)
        word = plans[key] = _pack(plan if plan is not None else _s._follower_plan(key))
    return word


def _select(hc: Any, plan: int, can_pass: bool, r: float) -> int:
    """The ``int(r * len(legal))``-th legal action of the play phase (``_play_actions`` order).

    :param hc: per colour, the hand's cards after the selection's last card.
    :param plan: the packed plan; ``can_pass``: ``PASS`` is legal (a follower's first card).
    """
    mm = [0, 0, 0, 0, 0, 0]
    cc = [0, 0, 0, 0, 0, 0]
    total = 0
    for c in range(6):
        need = (plan >> 2 * c) & 3
        m = hc[c]
        if need == 3 or not m:
            continue
        if need:   # the colour's last ``need`` cards lack enough later cards of it
            m ^= 1 << _top(m)
            if need == 2 and m:
                m ^= 1 << _top(m)
        mm[c] = m
        cc[c] = _pop(m) - (1 if (m & 3) == 3 else 0)   # the two zeros are one face
        total += cc[c]
    done = 1 if plan & DONE_BIT else 0
    k = int(r * (total + done + (1 if can_pass else 0)))
    for c in range(6):
        if k < cc[c]:
            m = mm[c]
            if m & 3:
                if not k:
                    return 16 * c
                k -= 1
            m >>= 2
            while k:
                m &= m - 1
                k -= 1
            return 16 * c + _top(m & -m) + 1
        k -= cc[c]
    if k < done:
        return DONE_
    return PASS_


def _is_legal(hc: Any, plan: int, can_pass: bool, action: int) -> bool:
    """Whether ``action`` is among the play phase's legal actions (:func:`_select`'s arguments)."""
    if action < 0:
        return False
    if action >= DONE_:
        return (action == DONE_ and (plan & DONE_BIT) != 0) or (action == PASS_ and can_pass)
    c = action >> 4
    need = (plan >> 2 * c) & 3
    m = hc[c]
    if need == 3 or not m:
        return False
    if need:
        m ^= 1 << _top(m)
        if need == 2 and m:
            m ^= 1 << _top(m)
    if action & 15:
        return ((m >> ((action & 15) + 1)) & 1) != 0
    return (m & 3) != 0


def _illegal(action: int) -> Exception:
    """The error of a replayed action that is not legal."""
    shown = _a.ACTION_STR[action] if 0 <= action < len(_a.ACTION_STR) else action
    return IllegalActionError("gargon", shown, reason="in the replayed world")


def _battles(played: Any, stash: Any, discard: Any, n: int) -> None:
    """:func:`engine.games.gargon.rules.resolve_battles` on the words: stashes and discard updated."""
    for c in range(6):
        b1 = 0
        b2 = 0
        for s in range(n):
            m = played[6 * s + c]
            if m:
                hi = 1 << _top(m)
                b1 |= hi
                m ^= hi
                if m:
                    b2 |= 1 << _top(m)
        for i in range(2):
            battle = b2 if i else b1
            if not battle:
                continue
            top = _top(battle)
            if battle & (battle - 1) and top <= 1:
                discard[c] |= battle   # only zeros: a tie at the top discards them all
                continue
            for s in range(n):
                if (played[6 * s + c] >> top) & 1:
                    stash[6 * s + c] |= 1 << top
                    break
            discard[c] |= battle ^ (1 << top)


def _rank_code(stash: Any, n: int, amulets: Any) -> int:
    """The places of the totals of §4.6 (``rules.scores``, ``core.ranks_from_results``) as
    ``sum(rank[s] * 5 ** s)``; ``stash`` holds the stash words."""
    global AM_KEY
    if amulets is not AM_KEY:
        lo, hi = _r._amulet_sums(amulets)
        for i in range(512):
            AM_LO[i] = lo[i]
        for i in range(256):
            AM_HI[i] = hi[i]
        AM_KEY = amulets
    total = [0, 0, 0, 0, 0]
    for c in range(6):
        top = 0
        leaders = 0
        for s in range(n):
            m = stash[6 * s + c]
            if m:
                total[s] += (AM_LO[m & 511] + AM_HI[m >> 9]) * MULT[m & 3]
                k = _pop(m)
                if k > top:
                    top = k
                    leaders = 0
                if k == top:
                    leaders += 1
        if top:
            for s in range(n):
                if _pop(stash[6 * s + c]) == top:
                    total[s] += 10 if leaders == 1 else 5
    code = 0
    for s in range(n):
        k = 0
        for i in range(n):
            if total[i] > total[s]:
                k += 1
        code += k * POW5[s]
    return code


def _play(st: Any, rand: Any, plans: Any, actions: Any, na: int) -> int:
    """Play the match of ``st`` to its end (``rand`` = ``rng.random``, once per decision), or with
    ``na >= 0`` apply ``actions[:na]`` (each checked); write ``st`` back.

    :returns: at the end of the match the places of the final totals (:func:`_rank_code`), else 0.
    :raises IllegalActionError: naming a replayed action that is not legal (``st`` unchanged).
    """
    n = st.n
    pass_choice = st.pass_choice
    replacement = st.replacement
    start = st.start
    turn = st.turn
    phase = st.phase
    passed = st.passed
    pattern = st.pattern
    psize = sum(pattern) if pattern is not None else 0
    pkey = st.pkey
    cap1 = st.capw is _s._CAPS1
    col_played = st.col_played
    drawn_now = st.drawn_now
    draw_target = st.draw_target
    repl_i = st.repl_i
    repl_left = st.repl_left
    ended = st.ended
    round_no = st.round_no
    rounds = st.rounds
    piles = st.piles
    draws = st.draws
    if na >= 0:   # a replay leaves ``st`` unchanged when it fails: its lists are written back at the end
        piles = [piles[0][:], piles[1][:]]
        draws = draws[:]
    hist = st.hist
    nhist = 0
    hands = [0] * 30
    played = [0] * 30
    stash = [0] * 30
    discard = [0, 0, 0, 0, 0, 0]
    selm = [0, 0, 0, 0, 0, 0]
    hc = [0, 0, 0, 0, 0, 0]
    sel = [0, 0, 0]
    repl = [0, 0, 0, 0, 0]
    for s in range(n):
        _split(st.hands[s], hands, 6 * s)
        _split(st.played[s], played, 6 * s)
        _split(st.stash[s], stash, 6 * s)
    _split(st.discard, discard, 0)
    _split(st.sel_mask, selm, 0)
    nsel = len(st.sel)
    for i in range(nsel):
        sel[i] = st.sel[i]
    sel_code = st.sel_code
    nrepl = len(st.repl)
    for i in range(nrepl):
        repl[i] = st.repl[i]
    i_act = 0
    while phase != OVER_ and i_act != na:
        nt = False
        er = False
        r = rand() if na < 0 else 0.0   # one draw per decision (none when replaying)
        if phase == PLAY_:
            p = (start + turn) % n
            for c in range(6):
                hc[c] = hands[6 * p + c]
            if nsel:
                lc = sel[nsel - 1] // 17
                for c in range(lc):
                    hc[c] = 0
                hc[lc] = hc[lc] >> (sel[nsel - 1] % 17 + 1) << (sel[nsel - 1] % 17 + 1)
            key = 0
            if p != start:
                last = p == (start + n - 1) % n
                key = pkey + sel_code * NCAPS
                for c in range(6):
                    if not last or (col_played >> c) & 1:
                        k = _pop(hc[c])
                        key += (1 if cap1 and k > 1 else (k if k < 2 else 2)) * POW3[c]
            k = _plan(sel_code, key, p == start, plans)
            if na < 0:
                action = _select(hc, k, nsel == 0 and p != start, r)
            else:
                action = actions[i_act]
                i_act += 1
                if not _is_legal(hc, k, nsel == 0 and p != start, action):
                    raise _illegal(action)
            hist = (hist, p, action)
            nhist += 1
            if action < DONE_:
                c = action >> 4
                v = action & 15
                if v:
                    low = 1 << (v + 1)
                else:
                    low = hands[6 * p + c] & 3
                    low &= -low
                hands[6 * p + c] ^= low
                sel[nsel] = 17 * c + _top(low)
                nsel += 1
                selm[c] |= low
                sel_code = sel_code * SEL_STEP + c + 1
            elif action == DONE_:
                for c in range(6):
                    played[6 * p + c] = selm[c]
                    if selm[c]:
                        col_played |= 1 << c
                    selm[c] = 0
                if p == start:
                    pattern = DONE_PAT[sel_code]
                    pkey = DONE_PKEY[sel_code]
                    cap1 = DONE_CAP1[sel_code]
                    psize = nsel
                nsel = 0
                sel_code = 0
                nt = True
            else:   # PASS: the passer draws next, unless a pile has run out (§4.3 "Passing")
                passed |= 1 << p
                if ended:
                    nt = True
                else:
                    phase = PASS_DRAW_
                    drawn_now = 0
                    draw_target = 3 if pass_choice else psize
        else:
            if phase == PASS_DRAW_:
                p = (start + turn) % n
                k = 3 if pass_choice and drawn_now else 2
            else:
                p = repl[repl_i]
                k = 2
            if na < 0:
                action = DRAW_A_ + int(r * k)
            else:
                action = actions[i_act]
                i_act += 1
                if action < DRAW_A_ or action >= DRAW_A_ + k:
                    raise _illegal(action)
            hist = (hist, p, action)
            nhist += 1
            if action == STOP_:
                phase = PLAY_
                nt = True
            else:   # draw the top card of pile A or B; an emptied pile triggers the end (§4.5)
                pl = piles[action - DRAW_A_]
                card = pl.pop()
                hands[6 * p + card // 17] |= 1 << (card % 17)
                draws[p] = draws[p] + (card,)
                if not pl:
                    ended = True
                if phase == PASS_DRAW_:
                    drawn_now += 1
                    if ended or drawn_now >= draw_target:
                        phase = PLAY_
                        nt = True
                else:
                    repl_left -= 1
                    if ended:
                        er = True
                    elif repl_left == 0:
                        repl_i += 1
                        if repl_i >= nrepl:
                            er = True
                        else:
                            repl_left = 0
                            for c in range(6):
                                repl_left += _pop(played[6 * repl[repl_i] + c])
        if nt:
            turn += 1
            if turn < n:
                continue
            # step 2: battles, then step 3: replacement draws by those who played
            _battles(played, stash, discard, n)
            rounds = rounds + ((start, tuple([-1 if (passed >> s) & 1 else _join(played, 6 * s)
                                              for s in range(n)])),)
            if ended or not replacement:
                er = True
            else:
                nrepl = 0
                for i in range(n):
                    s = (start + i) % n
                    if _any(played, 6 * s):
                        repl[nrepl] = s
                        nrepl += 1
                repl_i = 0
                repl_left = 0
                for c in range(6):
                    repl_left += _pop(played[6 * repl[0] + c])
                phase = REPLACE_
        if er:   # GargonState._end_round
            if ended:
                phase = OVER_
                continue
            start = (start + 1) % n
            turn = 0
            phase = PLAY_
            for i in range(6 * n):
                played[i] = 0
            passed = 0
            pattern = None
            pkey = 0
            col_played = 0
            nrepl = 0
            repl_i = 0
            repl_left = 0
            round_no += 1
            if not replacement and not _any(hands, 6 * start):
                phase = OVER_   # G-A20: the start player has no card
    if i_act != na and na >= 0:
        raise IllegalActionError("gargon", actions[i_act], reason="the match is over")
    st.piles = piles
    st.hands = [_join(hands, 6 * s) for s in range(n)]
    st.played = [_join(played, 6 * s) for s in range(n)]
    st.stash = [_join(stash, 6 * s) for s in range(n)]
    st.discard = _join(discard, 0)
    st.sel = [sel[i] for i in range(nsel)]
    st.sel_mask = _join(selm, 0)
    st.sel_code = sel_code
    st.start = start
    st.turn = turn
    st.phase = phase
    st.passed = passed
    st.pattern = pattern
    st.pkey = pkey
    st.capw = _s._CAPS1 if cap1 else _s._CAPS2
    st.col_played = col_played
    st.drawn_now = drawn_now
    st.draw_target = draw_target
    st.repl = tuple([repl[i] for i in range(nrepl)])
    st.repl_i = repl_i
    st.repl_left = repl_left
    st.ended = ended
    st.round_no = round_no
    st.rounds = rounds
    st.draws = draws
    st.hist = hist
    st.hist_len += nhist
    if phase != OVER_:
        st._legal = None
        return 0
    st.hand_no = 1
    st._legal = None
    return _rank_code(stash, n, st.amulets)

