"""Whiskey Poker's fast paths (issue 19, fourth pass) against the code they replaced.

* sampled worlds (``WhiskeyInfoSet.world``: a per-information-set template, the hand-start
  snapshot made on first use, the next hand dealt only when something reads it) equal the
  worlds built as before (``WhiskeyState.at_hand_start`` and a replay), also after being played
  on through later hands and to the end of the match;
* the typed phase-2 policy (``rollout._exchange2_move``) and ``tier`` choose what the
  list-and-generator version (kept below) chose;
* the rollout kernel scores split pots (odd chips) as the state's ``_showdown``.

Run both compiled and with ``CARDARENA_PURE_PYTHON=1``.
"""

from __future__ import annotations

import random

from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker import rollout as R
from engine.games.whiskey_poker.state import PENDING, WhiskeyState
from engine.search.rollout import rollout_rewards
from tests.games.test_playout_kernels import loop_rewards, positions
from tests.games.test_whiskey_poker import GAME, setup


def reference_world(info, assignment, rng):
    """``WhiskeyInfoSet.world`` as it was before the template (issue 19, third pass)."""
    obs = info.observation
    r = info.rules
    blocks = list(info.known)
    for i, cards in enumerate(assignment[:-1]):
        for c in cards:
            blocks[i] |= 1 << c
    stub = 0
    for c in assignment[-1]:
        stub |= 1 << c
    hands = [0] * r.n
    dealt_in = 0
    for i, p in enumerate(info.seats):
        hands[p] = blocks[i]
        dealt_in |= 1 << p
    out = tuple(-1 if o is None else int(o) for o in obs["out"])
    state = WhiskeyState.at_hand_start(
        info.game, r, rng.getrandbits(63), int(obs["hand_index"]), int(obs["dealer"]), dealt_in,
        [int(x) for x in obs["scores"]], out, tuple(obs["hands"]), hands, blocks[-1], stub)
    for seat, text in obs["actions"]:
        assert state.current_player() == seat
        state.apply(A.parse_action(text))
    return state


def same(a, b, n, where):
    assert a.world_key() == b.world_key(), where
    assert a.hand_start().world_key() == b.hand_start().world_key(), where
    assert a.hand_history() == b.hand_history(), where
    assert a.is_terminal() == b.is_terminal() and a.hand_index() == b.hand_index(), where
    if not a.is_terminal():
        assert a.current_player() == b.current_player(), where
        assert a.legal_actions() == b.legal_actions(), where
    for seat in range(n):
        assert a.observation(seat) == b.observation(seat), where


def sampled_pairs(n, opts, count, seed):
    """``(world, reference world, where)`` from ``count`` random positions, two samples each."""
    for k, s in enumerate(positions(GAME, n, opts, count, seed)):
        if s.is_terminal():
            continue
        info = GAME.infoset(s.observation(s.current_player()))
        for j in range(2):
            ra, rb = random.Random(1000 * k + j), random.Random(1000 * k + j)
            assignment, choices = info.sampler.sample(ra)
            assert info.sampler.sample(rb) == (assignment, choices)
            yield info.world(assignment, choices, ra), reference_world(info, assignment, rb), f"{opts} {k}.{j}"


def test_template_worlds_equal_rebuilt_worlds_through_later_hands() -> None:
    pending = 0
    for ci, (n, opts) in enumerate(GAME.configs):
        for j, (w, ref, where) in enumerate(sampled_pairs(n, opts, 10, 300 + ci)):
            same(w, ref, n, where)
            rng = random.Random(j)
            while not ref.is_terminal():
                h = ref.hand_index()
                c = w.clone()                                       # a clone of a pending world deals alike
                a = rng.choice(ref.legal_actions())
                w.apply(a)
                ref.apply(a)
                if ref.hand_index() != h or ref.is_terminal():
                    if not ref.is_terminal():
                        pending += w.phase == PENDING               # dealt only when read, below
                    if c is not None:
                        c.apply(a)
                        same(c, ref, n, where)
                    same(w, ref, n, where)
                else:
                    assert w.world_key() == ref.world_key(), where
    assert pending > 10, pending


def test_kernel_from_sampled_worlds_equals_the_loop() -> None:
    """Hand rollouts and whole-match rollouts from template worlds (and from their pending
    states after a hand's end) equal the loop on the rebuilt worlds: rewards, draws, final world."""
    pairs = checked = 0
    for ci, (n, opts) in enumerate(GAME.configs):
        teams = GAME.teams(n)
        for w, ref, where in sampled_pairs(n, opts, 10, 500 + ci):
            pairs += 1
            for hand_rollouts in (True, False):
                a, b = w.clone(), ref.clone()
                ra, rb = random.Random(7), random.Random(7)
                h0 = a.hand_index()
                got = rollout_rewards(GAME, a, ra, teams, h0, hand_rollouts)
                want = loop_rewards(GAME, b, rb, teams, h0, hand_rollouts)
                assert got == want and ra.getstate() == rb.getstate(), (where, hand_rollouts)
                if not hand_rollouts:
                    same(a, b, n, where)
                checked += 1
            # end the hand by the policy on the world itself, then roll out from the pending state
            a, b = w.clone(), ref.clone()
            ra, rb = random.Random(8), random.Random(8)
            h0 = a.hand_index()
            while not b.is_terminal() and b.hand_index() == h0:
                x, y = GAME.rollout_action(a, ra), GAME.rollout_action(b, rb)
                assert x == y, where
                a.apply(x)
                b.apply(y)
            for hand_rollouts in (True, False):
                c, d = a.clone(), b.clone()
                got = rollout_rewards(GAME, c, ra, teams, h0 + 1, hand_rollouts)
                want = loop_rewards(GAME, d, rb, teams, h0 + 1, hand_rollouts)
                assert got == want and ra.getstate() == rb.getstate(), (where, "after the hand", hand_rollouts)
    assert checked == 2 * pairs and pairs > 60


# ---------------------------------------------------------------- the phase-2 policy before issue 19's fourth pass

_STRAIGHTS = frozenset([0x1F << k for k in range(9)] + [0x100F])


def old_tier(m: int) -> int:
    s = [(m >> (13 * k)) & 0x1FFF for k in range(4)]
    u = s[0] | s[1] | s[2] | s[3]
    d = u.bit_count()
    if d == 5:
        return 5 if u in _STRAIGHTS or u in s else 0
    if d == 4:
        pair = (s[0] & s[1]) | (s[0] & s[2]) | (s[0] & s[3]) | (s[1] & s[2]) | (s[1] & s[3]) | (s[2] & s[3])
        return 2 if pair >= 1 << 9 else 1
    if d == 3:
        return 4 if (s[0] & s[1] & s[2]) | (s[0] & s[1] & s[3]) | (s[0] & s[2] & s[3]) | (s[1] & s[2] & s[3]) else 3
    return 5


def old_exchange2(hand: int, widow: int, knocked: bool) -> int:
    """The candidate-list version of ``_exchange2_move`` (issue 19, second pass)."""
    from engine.games.whiskey_poker.hands import strength
    suits = tuple((hand >> (13 * k)) & 0x1FFF for k in range(4))
    wsuits = tuple((widow >> (13 * k)) & 0x1FFF for k in range(4))
    u = suits[0] | suits[1] | suits[2] | suits[3]
    wu = wsuits[0] | wsuits[1] | wsuits[2] | wsuits[3]
    cands = []
    s0, s1, s2, s3 = suits
    multi = (s0 & s1) | (s0 & s2) | (s0 & s3) | (s1 & s2) | (s1 & s3) | (s2 & s3)
    single = u & ~multi
    give = -1
    if single:
        low = (single & -single).bit_length() - 1
        give = next(13 * k + low for k in range(4) if suits[k] >> low & 1)
    match = wu & u
    if match and give >= 0:
        while match:
            b = match & -match
            match ^= b
            r = b.bit_length() - 1
            if r != give % 13:
                w = next(13 * k + r for k in range(4) if wsuits[k] >> r & 1)
                cands.append((A.TAKE[w][give], hand ^ (1 << w) ^ (1 << give)))
    if u.bit_count() == 5:
        for k in range(4):
            if suits[k].bit_count() == 4 and wsuits[k]:
                h = (hand & ~(suits[k] << (13 * k))).bit_length() - 1
                w = 13 * k + wsuits[k].bit_length() - 1
                cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
                break
        for need, drop in R._DRAWS.get(u, ()):
            if wu >> need & 1:
                w = next(13 * k + need for k in range(4) if wsuits[k] >> need & 1)
                h = next(13 * k + drop for k in range(4) if suits[k] >> drop & 1)
                cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
        if not cands and u not in _STRAIGHTS and u not in suits:
            top = wu.bit_length() - 1
            low = (u & -u).bit_length() - 1
            if top > low and not u >> top & 1:
                w = next(13 * k + top for k in range(4) if wsuits[k] >> top & 1)
                h = next(13 * k + low for k in range(4) if suits[k] >> low & 1)
                cands.append((A.TAKE[w][h], hand ^ (1 << w) ^ (1 << h)))
    best_a, best = -1, strength(hand)
    if strength(widow) > best:
        best_a, best = A.TAKE_ALL, strength(widow)
    for a, m in cands:
        if strength(m) > best:
            best_a, best = a, strength(m)
    return best_a if best_a >= 0 else (A.STAND if knocked else A.KNOCK)


def _draw_hand(rng: random.Random, shape: int) -> tuple[int, int]:
    """A hand and a widow from one deck; ``shape`` 1: four to a flush, 2: four to a straight."""
    deck = list(range(52))
    rng.shuffle(deck)
    if shape == 1:
        suit = rng.randrange(4)
        four = rng.sample([13 * suit + r for r in range(13)], 4)
        deck = four + [c for c in deck if c not in four]
    elif shape == 2:
        lo = rng.randrange(-1, 9)
        ranks = [12 if r < 0 else r for r in range(lo, lo + 5)]
        ranks.pop(rng.randrange(5))
        four = [13 * rng.randrange(4) + r for r in ranks]
        deck = four + [c for c in deck if c not in four]
    hand = sum(1 << c for c in deck[:5])
    widow = sum(1 << c for c in deck[5:10])
    return hand, widow


def test_typed_phase2_policy_equals_the_candidate_list() -> None:
    rng = random.Random(19)
    kinds = set()
    for i in range(3000):
        hand, widow = _draw_hand(rng, i % 3)
        knocked = bool(i & 4)
        got = R._exchange2_move(hand, widow, knocked)
        assert got == old_exchange2(hand, widow, knocked), (hand, widow, knocked)
        assert R.tier(hand) == old_tier(hand) and R.tier(widow) == old_tier(widow)
        kinds.add("take" if A.is_take_one(got) else A.format_action(got))
    assert kinds == {"take", "take all", "knock", "stand"}


def test_kernel_splits_a_tied_pot_like_the_showdown() -> None:
    """Seats 0 and 1 hold the same two pair (kept by the policy, so most showdowns tie): hand-rollout
    rewards of the kernel (scored in C) equal the loop's (``_showdown``), odd chips included."""
    ties = odd = 0
    for k in range(60):
        s = setup(3, {0: "Kc Kd 9h 9c 2s", 1: "Kh Ks 9d 9s 2c", 2: "3c 4d 7h 8s Jd"}, widow="3h 4s 6c Td Qh",
                  dealer=k % 3)
        a, b = s.clone(), s.clone()
        ra, rb = random.Random(k), random.Random(k)
        got = GAME.playout(a, ra, GAME.teams(3), 0, True)
        want = loop_rewards(GAME, b, rb, GAME.teams(3), 0, True)
        assert got == want and ra.getstate() == rb.getstate(), k
        last = b.past[-1]
        if last.get("winners") == [0, 1]:
            ties += 1
            odd += last["result"][0] != last["result"][1]
    assert ties > 20 and odd > 5, (ties, odd)


def test_hand_rollout_state_keeps_its_contract() -> None:
    """After a hand rollout the ``_HandOver`` state answers ``is_terminal``, ``hand_index`` and
    ``hand_rewards`` as the loop's state does (the scores of the hand, no next deal)."""
    for k in range(40):
        s = setup(2, {0: "Ah Ad 7c 7d 2s", 1: "3c 4d 8h Tc Qs"}, widow="Kh Kd 9s 6c 5c", dealer=k % 2)
        a, b = s.clone(), s.clone()
        got = GAME.playout(a, random.Random(k), GAME.teams(2), 0, True)
        want = loop_rewards(GAME, b, random.Random(k), GAME.teams(2), 0, True)
        assert got == want == b.hand_rewards() == a.hand_rewards()
        assert a.hand_index() == b.hand_index() == 1 and not a.is_terminal()
        assert a.score == b.score and sum(a.score) == 0
