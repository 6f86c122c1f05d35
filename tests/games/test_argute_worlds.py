"""Argute's templated worlds (issue 19, fourth pass) are the worlds of the per-sample replay.

``ArguteInfoSet.world`` replays the hand once per information set and fills the assigned cards
and sampled bids into a clone; :func:`reference_world` below is the construction it replaced
(a fresh state per sample, the hand replayed through ``apply``). From the same generator both
must give the same world, the same hand-start snapshot and observations, draw the same random
numbers, and play on identically.
"""

from __future__ import annotations

import json
import random

import pytest

from engine import registry
from engine.errors import InconsistentObservationError
from engine.games.argute.actions import BID, copy_odds
from engine.games.argute.state import ArguteState, _Match
from engine.sampling import randbelow

G = registry.get_game("argute")


def reference_world(info, assignment, choices, rng):
    """The world as built before the template: a new state, the hand replayed action by action."""
    obs = info.observation
    m = _Match(G, info.n, dict(obs["options"]), rng.getrandbits(63))
    past = tuple((int(h["dealer"]), tuple(h["bids"]), tuple(h["tricks_won"]), tuple(h["changes"]))
                 for h in obs["history"])
    st = ArguteState._blank(m, int(obs["dealer"]), [int(x) for x in obs["scores"]], int(obs["hand_index"]), past)
    hands = list(info.start_hands)
    for j, o in enumerate(info.opps):
        for c in assignment[j]:
            hands[o] |= 1 << c
    und = 0
    for c in assignment[-1]:
        und |= 1 << c
    st._begin_hand(hands, und)
    hidden = dict(zip(info.bidders, choices, strict=True))
    for p, a in info.moves:
        st.apply(BID + hidden[p] if a is None else a)
    return st


def reference_sample(info, rng):
    """``ArguteInfoSet.sample`` with :func:`reference_world` (every draw through ``copy_odds``)."""
    while True:
        assignment, choices = info.sampler.sample(rng)
        odds = copy_odds(assignment, info.played)
        if odds == 1 or randbelow(rng, odds) == 0:
            return reference_world(info, assignment, choices, rng)


def observations(count: int, seed: int):
    """``(n, observation)`` of the seat to act after a random number of random moves (later hands too)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        n, opts = G.configs[len(out) % len(G.configs)]
        s = G.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 70)):
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
        if not s.is_terminal():
            out.append((n, json.loads(json.dumps(s.observation(s.current_player())))))
    return out


def test_templated_worlds_equal_the_replayed_ones():
    bids_hidden = played = 0
    for k, (n, obs) in enumerate(observations(60, 3)):
        info = G.infoset(obs)
        a, b = random.Random(k), random.Random(k)
        for i in range(8):
            got, want = info.sample(a), reference_sample(info, b)
            where = f"observation {k} sample {i}"
            assert got.world_key() == want.world_key(), where
            assert got.m.deal_seed == want.m.deal_seed, where
            assert a.getstate() == b.getstate(), where
            for seat in range(n):
                assert got.observation(seat) == want.observation(seat), where
            assert got.hand_start().world_key() == want.hand_start().world_key(), where
            assert got.hand_history() == want.hand_history(), where
            x, y = got.clone(), want.clone()
            r1, r2 = random.Random(i), random.Random(i)
            while not y.is_terminal() and y.hand_index() <= want.hand_index():
                act = G.rollout_action(y, r2)
                assert G.rollout_action(x, r1) == act, where
                x.apply(act)
                y.apply(act)
            assert x.world_key() == y.world_key(), where
        bids_hidden += bool(info.bidders)
        played += not info._plain
    assert bids_hidden > 20 and played > 20, (bids_hidden, played)


def test_a_world_is_independent_of_the_template_and_other_worlds():
    st = G.new_match(3, 5)
    for a in ("bid 1", "bid 2", "bid 0"):
        st.apply(G.parse_action(a))
    st.apply(st.legal_actions()[-1])
    info = G.infoset(st.observation(st.current_player()))
    rng = random.Random(1)
    w1 = info.sample(rng)
    key = w1.world_key()
    tkey = info._tmpl.world_key()
    w2 = info.sample(rng)
    w2.apply(w2.legal_actions()[0])
    G.playout(w2, rng, G.teams(3), w2.hand_index(), False)
    assert w1.world_key() == key
    assert info._tmpl.world_key() == tkey
    w3 = info.sample(random.Random(1))
    assert w3.world_key() == key


def test_out_of_turn_observation_is_rejected_on_sampling():
    st = G.new_match(3, 5)
    obs = json.loads(json.dumps(st.observation(0)))
    obs["actions"] = [[2, "bid ?"]]     # seat 1 bids first after dealer 0
    obs["has_bid"] = [False, False, True]
    info = G.infoset(obs)
    with pytest.raises(InconsistentObservationError, match="out of turn"):
        info.sample(random.Random(0))


def test_hand_rollout_leaves_the_world_untouched_and_ends_match_like_the_loop():
    # a hand rollout returns the hand's rewards without changing the state; one that ends the
    # match returns the outcome's rewards (the winner 1.0), as the loop does
    st = G.state_from_hands([[5, 5, 5, 4, 4, 4], [0, 0, 0, 1, 1, 1]], scores=[5, 0], target_score=6)
    key = st.world_key()
    teams = G.teams(2)
    ends = 0
    for seed in range(60):
        s = st.clone()
        got = G.playout(s, random.Random(seed), teams, 0, True)
        ref = st.clone()
        r = random.Random(seed)
        while not ref.is_terminal() and ref.hand_index() == 0:
            ref.apply(G.rollout_action(ref, r))
        want = ref.outcome().rewards(teams) if ref.is_terminal() else ref.hand_rewards()
        assert got == want, seed
        if ref.is_terminal():
            ends += 1
        else:
            assert s.world_key() == key, seed
    assert 0 < ends < 60


def test_the_next_hand_is_dealt_when_first_needed():
    # a hand's last apply scores it but leaves the next deal to the first method that needs it:
    # the same hand as dealing at once from (deal_seed, hand index), whichever method asks first
    rng = random.Random(4)
    ends = 0
    for seed in range(6):
        st = G.new_match(3, 100 + seed, max_hands=4)
        while not st.is_terminal():
            h = st.hand_index()
            st.apply(G.rollout_action(st, rng))
            if st.is_terminal() or st.hand_index() == h:
                continue
            ends += 1
            assert st.to_deal
            assert st.hand_rewards() == [(c + 1) / 4 for c in st.past[-1][3]]
            assert st.to_deal, "hand_rewards, hand_index and is_terminal need no deal"
            eager = ArguteState._blank(st.m, st.dealer, st.scores[:], st.hidx, st.past)
            eager._deal()
            twin = st.clone()
            first = [lambda s: s.current_player(), lambda s: s.legal_actions(), lambda s: s.observation(0),
                     lambda s: s.world_key(), lambda s: s.hand_start()][ends % 5]
            first(twin)
            assert not twin.to_deal
            assert twin.world_key() == eager.world_key() == st.world_key()
            assert st.hand_start().world_key() == eager.hand_start().world_key()
            assert st.hand_history() == []
    assert ends >= 12


def test_held_odds_equal_copy_odds():
    from engine.games.argute.infoset import held_odds

    seen = set()
    for k, (_n, obs) in enumerate(observations(40, 11)):
        info = G.infoset(obs)
        rng = random.Random(k)
        for _ in range(30):
            a, _ch = info.sampler.sample(rng)
            want = copy_odds(a, info.played)
            assert held_odds(a, info._played_at) == want, k
            seen.add(want)
    assert len(seen) >= 5 and max(seen) >= 10, sorted(seen)
