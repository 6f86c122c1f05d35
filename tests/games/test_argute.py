"""Argute: worked scenarios (docs/rules/argute.md §1.6), rules, options, observation,
information set, greedy heuristic, and the conformance suite on ``Argute.configs``."""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations
from math import comb
from pathlib import Path

import pytest

from bots.greedy import argute as greedy
from engine.core import Outcome
from engine.errors import (
    ActionParseError,
    GameOverError,
    IllegalActionError,
    InconsistentObservationError,
    OptionError,
    PlayerCountError,
)
from engine.games.argute import Argute
from engine.games.argute.actions import BID, hand_score, trick_winner, win_test
from engine.seeds import hand_rng
from tests import conformance as cf
from tests.games.helpers import conformance_suite, play_out

G = Argute()

# A-S1's hands (seat order P0, P1, P2), bids and plays
S1_HANDS = [[3, 3, 2, 1, 0, 5], [5, 5, 0, 1, 2, 3], [4, 4, 4, 0, 0, 1]]
S1_BIDS = ["bid 2", "bid 1", "bid 1"]  # P1, P2, P0 (bidding starts at the dealer's left)
S1_PLAYS = ["play 5", "play 4", "play 3", "play 5", "play 4", "play 3", "play 0", "play 4", "play 5",
            "play 1", "play 2", "play 3", "play 0", "play 1", "play 2",
            "play 1", "play 0", "play 0"]


def run(state, actions):
    for a in actions:
        state.apply_string(a)


def s1_state(scores=None, **options):
    return G.state_from_hands(S1_HANDS, dealer=0, scores=scores, **options)


# ---------------------------------------------------------------- worked scenarios (§1.6)

def test_A_S1_full_three_player_hand():
    st = s1_state()
    assert st.current_player() == 1
    run(st, S1_BIDS)
    assert st.current_player() == 1  # P1 leads trick 1
    run(st, S1_PLAYS[:9])
    obs = st.observation(0)
    assert obs["tricks"][0]["winner"] == 2 and st.current_player() == 2
    assert obs["tricks_won"] == [0, 0, 1] and obs["trick_number"] == 2 and obs["cards_per_player"] == 2
    run(st, S1_PLAYS[9:15])
    assert st.observation(0)["tricks"][1]["winner"] == 1 and st.current_player() == 1
    run(st, S1_PLAYS[15:])
    assert st.hand_index() == 1
    hist = st.observation(0)["history"]
    assert hist == [{"dealer": 0, "bids": [1, 2, 1], "tricks_won": [0, 2, 1], "changes": [-1, 2, 1]}]
    assert st.observation(2)["scores"] == [-1, 2, 1]
    # the deal passes left: seat 1 deals, seat 2 bids first; the new hand's actions are empty
    assert st.dealer == 1 and st.current_player() == 2
    assert st.observation(0)["actions"] == [] and st.observation(0)["phase"] == "bid"
    assert st.hand_rewards() == [0.0, 0.75, 0.5]


def test_A_S2_tie_break_by_when_the_count_was_reached():
    assert trick_winner([(0, 0), (1, 5), (0, 0), (1, 0), (0, 5), (1, 0)]) == 1
    # the same trick in a real state: dealer 1, so P0 leads the 3-card trick 1
    st = G.state_from_hands([[0, 0, 5, 1, 1, 1], [5, 0, 0, 2, 2, 2]], dealer=1)
    run(st, ["bid 1", "bid 1", "play 0", "play 5", "play 0", "play 0", "play 5", "play 0"])
    assert st.current_player() == 1
    assert st.observation(0)["tricks"][0]["winner"] == 1 and st.won == [0, 1]


def test_A_S3_seed_example_all_zeros_first_player_wins():
    assert trick_winner([(2, 0), (3, 0), (0, 0), (1, 0)]) == 2


def test_A_S4_three_way_tie():
    assert trick_winner([(0, 1), (1, 4), (2, 2), (0, 3), (1, 0), (2, 2)]) == 1


def test_A_S5_all_zeros_two_card_trick():
    assert trick_winner([(1, 0), (2, 0), (0, 0), (1, 0), (2, 0), (0, 0)]) == 1


def test_A_S6_legal_actions_are_distinct_values():
    st = G.state_from_hands([[0, 0, 0, 2, 2, 5], [1, 1, 1, 3, 3, 3]], dealer=1)
    run(st, ["bid 0", "bid 1"] + ["play 0", "play 1"] * 3)
    assert st.current_player() == 1  # P1 won trick 1 (3 against 0)
    run(st, ["play 3"])
    assert st.observation(0)["hand"] == [2, 2, 5]
    assert st.legal_strings() == ["play 2", "play 5"]


def test_A_S6_an_empty_hand_never_acts():
    st = G.new_match(4, 9, max_hands=5)
    rng = random.Random(0)
    while not st.is_terminal():
        p = st.current_player()   # deals the next hand first if the last apply ended one
        if st.phase == 1:
            assert st.hands[p]
        st.apply(G.rollout_action(st, rng))


def test_A_S7_scoring_table():
    assert hand_score(3, 3) == 3
    assert hand_score(0, 0) == 0
    assert hand_score(0, 1) == -1
    assert hand_score(2, 3) == -1
    assert hand_score(3, 0) == -1


def test_A_S8_end_of_match_win_test():
    assert not win_test((6, 6, 2), 6)
    assert win_test((7, 6, 2), 6)
    assert win_test((6, 5, 5), 6)
    assert not win_test((5, 5, 4), 6)
    assert not win_test((8, 8, 8), 6)
    assert win_test((9, 8, 7), 6)


@pytest.mark.parametrize("before,after,over", [
    ((7, 4, 1), (6, 6, 2), False),
    ((8, 4, 1), (7, 6, 2), True),
    ((7, 3, 4), (6, 5, 5), True),
    ((6, 3, 3), (5, 5, 4), False),
])
def test_A_S8_end_of_match_in_a_state(before, after, over):
    st = s1_state(scores=list(before))
    run(st, S1_BIDS + S1_PLAYS)
    assert st.scores == list(after)
    assert st.is_terminal() == over
    if over:
        assert st.outcome().scores == after and st.hand_index() == 1
        with pytest.raises(GameOverError):
            st.apply_string("bid 0")
    else:
        with pytest.raises(GameOverError):
            st.outcome()


def test_A_S9_hidden_cards_two_players():
    st = G.new_match(2, 5)
    obs = st.observation(0)
    info = G.infoset(obs)
    prob = info.problem()
    assert len(prob.cards) == 36 and prob.capacities == [6, 30] and prob.names == ["hand 1", "undealt"]
    assert info.count() == comb(36, 6)
    w = info.sample(random.Random(1))
    assert w.hands[1].bit_count() == 6 and w.undealt.bit_count() == 30
    assert w.hands[0] & (w.hands[1] | w.undealt) == 0


def test_A_S10_placings():
    st = s1_state(scores=[8, 4, 1])
    run(st, S1_BIDS + S1_PLAYS)
    assert st.outcome() == Outcome((0, 1, 2), (7, 6, 2))
    st = s1_state(scores=[7, 4, 1], max_hands=1)
    run(st, S1_BIDS + S1_PLAYS)
    assert st.outcome() == Outcome((0, 0, 2), (6, 6, 2))
    st = s1_state(scores=[5, 0, 1], max_hands=1)
    run(st, S1_BIDS + S1_PLAYS)
    assert st.outcome() == Outcome((0, 1, 1), (4, 2, 2))


# ---------------------------------------------------------------- rules

def test_bidding_order_and_phases():
    st = G.new_match(4, 3, first_dealer=2)
    order = []
    for _ in range(4):
        assert st.legal_strings() == ["bid 0", "bid 1", "bid 2", "bid 3"]
        order.append(st.current_player())
        st.apply_string("bid 1")
    assert order == [3, 0, 1, 2]
    assert st.current_player() == 3 and st.observation(0)["phase"] == "play"
    with pytest.raises(IllegalActionError, match="only 'play v'"):
        st.apply_string("bid 1")


def test_turns_go_round_k_times_per_trick():
    st = G.new_match(3, 8)  # dealer 0, P1 leads
    run(st, ["bid 0"] * 3)
    seats = []
    for _ in range(9):
        seats.append(st.current_player())
        st.apply(st.legal_actions()[0])
    assert seats == [1, 2, 0] * 3
    w = st.current_player()
    seats = []
    for _ in range(6):
        seats.append(st.current_player())
        st.apply(st.legal_actions()[0])
    assert seats == [w, (w + 1) % 3, (w + 2) % 3] * 2
    assert st.observation(0)["trick_number"] == 3 and st.observation(0)["cards_per_player"] == 1


def test_illegal_actions():
    st = G.state_from_hands([[0, 0, 0, 2, 2, 5], [1, 1, 1, 3, 3, 3]], dealer=1)
    with pytest.raises(IllegalActionError, match="bids 0..3 first"):
        st.apply(0)
    run(st, ["bid 0", "bid 1"])
    with pytest.raises(IllegalActionError, match="no card of that value") as e:
        st.apply_string("play 4")
    assert "play 0" in str(e.value)
    for bad in (True, 6, -1, "x", BID):
        with pytest.raises(IllegalActionError):
            st.apply(bad)


def test_notation():
    assert G.parse_action("bid 2") == BID + 2 and G.parse_action("play 5") == 5
    assert [G.format_action(a) for a in (0, 5, BID, BID + 3)] == ["play 0", "play 5", "bid 0", "bid 3"]
    for bad in ("bid 4", "play 6", "bid ?", "play", "Play 5", "bid  2"):
        with pytest.raises(ActionParseError):
            G.parse_action(bad)
    for bad in (6, 9, 14, True, "play 1"):
        with pytest.raises(ActionParseError):
            G.format_action(bad)


def test_playing_removes_one_copy():
    st = G.state_from_hands([[5, 5, 5, 0, 0, 1], [1, 1, 1, 3, 3, 3]], dealer=1)
    run(st, ["bid 0", "bid 1", "play 5"])
    assert st.observation(0)["hand"] == [0, 0, 1, 5, 5]
    assert st.observation(0)["hand_sizes"] == [5, 6]


def test_seven_players_deal_every_card():
    st = G.new_match(7, 1)
    assert st.undealt == 0 and sum(h.bit_count() for h in st.hands) == 42
    info = G.infoset(st.observation(3))
    assert info.problem().capacities == [6] * 6 + [0]


def test_incremental_trick_winner_agrees_with_the_rule():
    rng = random.Random(7)
    for d in range(40):
        st = G.new_match(rng.choice([2, 3, 5]), d, max_hands=1)
        while not st.is_terminal():
            st.apply(G.rollout_action(st, rng))
        tricks = st.observation(0)["tricks"]
        won = Counter(t["winner"] for t in tricks)
        assert [won[s] for s in range(st.num_players)] == list(st.past[-1][2])
        for t, nxt in zip(tricks, tricks[1:], strict=False):
            assert nxt["leader"] == t["winner"]


def test_deal_from_seed_and_hand_index():
    assert G.new_match(3, 4).world_key() == G.new_match(3, 4).world_key()
    assert G.new_match(3, 4).hands != G.new_match(3, 5).hands


def test_default_cap_ends_long_matches():
    st = G.new_match(2, 12)
    rng = random.Random(1)
    while not st.is_terminal():
        st.apply(G.rollout_action(st, rng))
    assert st.hand_index() == 200 or win_test(st.scores, 6)
    cf.check_outcome(G, st)


# ---------------------------------------------------------------- options

def test_option_defaults():
    assert {k: o.default for k, o in G.options.items()} == {"first_dealer": 0, "target_score": 6, "max_hands": 200}


def test_first_dealer_random_is_drawn_from_the_deal_seed():
    st = G.new_match(5, 44, first_dealer="random")
    assert st.dealer == hand_rng(44, 0, "first_dealer").randrange(5)
    assert {G.new_match(3, s, first_dealer="random").dealer for s in range(30)} == {0, 1, 2}


def test_target_score_option():
    st = s1_state(scores=[0, 1, 0], target_score=3)
    run(st, S1_BIDS + S1_PLAYS)
    assert st.is_terminal() and st.outcome().ranks == (2, 0, 1)


@pytest.mark.parametrize("opts", [{"first_dealer": 3}, {"first_dealer": "x"}, {"target_score": 0},
                                  {"max_hands": 0}, {"max_hands": 2.5}, {"bids": 1}])
def test_bad_options(opts):
    with pytest.raises(OptionError):
        G.new_match(3, 1, **opts)


def test_player_counts():
    for n in (1, 8):
        with pytest.raises(PlayerCountError):
            G.new_match(n, 1)


# ---------------------------------------------------------------- observation and infoset

def test_bids_are_hidden_until_hand_end():
    st = s1_state()
    run(st, S1_BIDS)
    o0, o1 = st.observation(0), st.observation(1)
    assert o0["actions"] == [[1, "bid ?"], [2, "bid ?"], [0, "bid 1"]]
    assert o1["actions"] == [[1, "bid 2"], [2, "bid ?"], [0, "bid ?"]]
    assert o0["bid"] == 1 and o1["bid"] == 2 and o0["has_bid"] == [True] * 3
    assert "bids" not in json.dumps(o0) and "bid 2" not in json.dumps(o0)


def test_public_action_masks_bids_for_others():
    st = s1_state()
    assert st.public_action(BID + 2, 1) == "bid 2"
    assert st.public_action(BID + 2, 0) == "bid ?"
    assert st.public_action(5, 0) == "play 5"


def test_observation_hides_hands_and_shows_running_totals():
    st = s1_state()
    run(st, S1_BIDS + S1_PLAYS[:4])
    obs = st.observation(0)
    assert obs["hand"] == [0, 1, 2, 3, 5] and obs["hand_sizes"] == [5, 4, 5]
    assert obs["trick"] == [[1, 5], [2, 4], [0, 3], [1, 5]] and obs["totals"] == [3, 10, 4]
    assert obs["undealt"] == 24 and obs["to_act"] == 2


def test_infoset_samples_bids_only_for_seats_that_have_bid():
    st = G.new_match(4, 21)
    run(st, ["bid 3", "bid 0"])  # dealer 0: seats 1 and 2 have bid, seats 3 and 0 have not
    seat = 0
    info = G.infoset(json.loads(json.dumps(st.observation(seat))))
    prob = info.problem()
    assert len(prob.choices) == 2
    rng = random.Random(3)
    seen = Counter()
    for _ in range(400):
        w = info.sample(rng)
        assert w.bids[3] == -1 and w.bids[0] == -1
        seen[w.bids[1]] += 1
        assert w.observation(seat) == st.observation(seat)
    assert set(seen) == {0, 1, 2, 3} and min(seen.values()) > 60


def test_infoset_pins_known_cards_and_keeps_sizes():
    st = s1_state()
    run(st, S1_BIDS + S1_PLAYS[:10])
    obs = st.observation(1)
    info = G.infoset(obs)
    prob = info.problem()
    # seat 1 knows its 3 cards left plus the 10 played: 29 unseen, 2 + 3 in hands, 24 undealt
    assert len(prob.cards) == 29 and prob.capacities == [3, 2, 24]
    assert info.count() == comb(29, 3) * comb(26, 2) * 4 ** 2
    rng = random.Random(0)
    for _ in range(50):
        w = info.sample(rng)
        assert [h.bit_count() for h in w.hands] == [3, 3, 2]
        assert w.observation(1) == obs


def test_corrupted_observation_is_rejected():
    st = G.new_match(2, 3)
    obs = st.observation(0)
    obs["hand"] = [5] * 8
    with pytest.raises(InconsistentObservationError):
        G.infoset(obs)


# ---------------------------------------------------------------- greedy

def test_greedy_bids_by_strength():
    assert greedy.choose_bid([5, 5, 5, 5, 4, 4], 2) == 3
    assert greedy.choose_bid([0, 0, 0, 1, 1, 0], 2) == 0
    assert greedy.choose_bid([0, 0, 0, 1, 1, 0], 5) == 0
    obs = {"hand": [5, 5, 4, 3, 1, 0], "players": 3}
    assert greedy.act(obs, ["bid 0", "bid 1", "bid 2", "bid 3"], random.Random(0)) == "bid 1"


def test_greedy_plays_high_to_make_the_bid_and_low_once_made():
    obs = {"seat": 0, "bid": 2, "tricks_won": [0, 1, 0], "totals": [0, 0, 0], "trick": [],
           "cards_per_player": 3, "trick_number": 1, "players": 3}
    legal = ["play 0", "play 3", "play 5"]
    assert greedy.act(obs, legal, random.Random(0)) == "play 5"
    obs = dict(obs, bid=1, tricks_won=[1, 0, 0], trick_number=2, cards_per_player=2)
    assert greedy.act(obs, legal, random.Random(0)) == "play 0"
    obs = dict(obs, bid=0, tricks_won=[0, 0, 0])
    assert greedy.act(obs, legal, random.Random(0)) == "play 0"


def test_greedy_scores_better_than_random():
    rng = random.Random(1)
    greedy_total = random_total = 0
    for d in range(150):
        gs = d % 3
        st = play_out(G.new_match(3, d, max_hands=1), greedy.act, {gs}, rng, opponent=G.rollout_action)
        greedy_total += st.scores[gs]
        random_total += st.scores[(gs + 1) % 3]
    assert greedy_total > random_total + 60


# ---------------------------------------------------------------- conformance

@pytest.mark.parametrize("n,opts", G.configs)
def test_conformance_suite(n, opts):
    conformance_suite(G, n, opts, playouts=4, determinism_seed=1, public_seed=2, positions_seed=13, samples=8)


def test_chi2_last_card_two_players():
    # seat 0 is last to play in trick 3: only the opponent's bid and the undealt set are hidden
    st = G.state_from_hands([[0, 0, 5, 1, 1, 1], [5, 0, 0, 2, 2, 2]], dealer=0)
    run(st, ["bid 2", "bid 1"])
    while not (st.tno == 2 and st.seq == 1):
        st.apply(st.legal_actions()[0])
    assert cf.chi2_uniformity(G, st, st.current_player(), seed=1)


# ---------------------------------------------------------------- exact over physical deals (ruling CA-R4)

def physical_deal_weights(state, seat: int) -> Counter:
    """Brute force: the other seats' current hands (values, sorted) of every physical deal of
    this hand consistent with ``seat``'s observation, each weighted by its number of physical deals.

    ``seat``'s dealt cards stay where they are (the other copies of its values are the same
    cards under other names for every deal alike). Every other seat's dealt hand runs over
    every set of 6 of the remaining physical cards, counted by value: a multiset of values
    stands for ``prod C(copies left, d_v)`` sets; the undealt pile is the rest (one way). A
    dealt hand is only tried if it holds the values its seat played (the others fail the
    replay anyway). Each deal is built, the hand's actions replayed (the true bids: the
    cards do not depend on them), and it counts if ``seat``'s observation is reproduced.
    """
    from itertools import combinations_with_replacement

    n = state.num_players
    obs = state.observation(seat)
    start = state.hand_start()
    history = state.hand_history()
    own = [c // 7 for c in range(42) if start.hands[seat] >> c & 1]
    avail = [7 - own.count(v) for v in range(6)]
    others = [p for p in range(n) if p != seat]
    played = {p: Counter() for p in range(n)}
    s = start.clone()
    for a in history:
        if a < BID:
            played[s.cur][a] += 1
        s.apply(a)
    out: Counter = Counter()

    def deal(i: int, left: list[int], hands: dict, weight: int) -> None:
        if i == len(others):
            values = [own if p == seat else hands[p] for p in range(n)]
            st = G.state_from_hands(values, dealer=start.dealer, **state.m.options)
            for a in history:
                st.apply(a)
            if st.observation(seat) == obs:
                key = tuple(tuple(sorted(c // 7 for c in range(42) if st.hands[p] >> c & 1)) for p in others)
                out[key] += weight
            return
        p = others[i]
        must = played[p]
        fixed = [v for v in range(6) for _ in range(must[v])]
        for extra in combinations_with_replacement(range(6), 6 - len(fixed)):
            d = Counter(fixed) + Counter(extra)
            if any(d[v] > left[v] for v in d):
                continue
            w = weight
            for v, k in d.items():
                w *= comb(left[v], k)
            deal(i + 1, [left[v] - d[v] for v in range(6)], {**hands, p: sorted(d.elements())}, w)

    deal(0, avail, {}, 1)
    return out


def sampled_hands(state, seat: int, samples: int, seed: int, weighted: bool = True) -> Counter:
    """The other seats' current hands (values, sorted) of ``samples`` worlds of ``seat``'s infoset;
    ``weighted=False`` keeps every draw of the unweighted sampler (the construction before CA-R4's revision)."""
    info = G.infoset(json.loads(json.dumps(state.observation(seat))))
    rng = random.Random(seed)
    others = [p for p in range(state.num_players) if p != seat]
    got: Counter = Counter()
    for _ in range(samples):
        if weighted:
            w = info.sample(rng)
        else:
            a, ch = info.sampler.sample(rng)
            w = info.world(a, ch, rng)
        got[tuple(tuple(sorted(c // 7 for c in range(42) if w.hands[p] >> c & 1)) for p in others)] += 1
    return got


def chi2_physical(exact: Counter, got: Counter) -> float:
    """χ² p-value of ``got`` against ``exact`` (categories expecting fewer than 5 pooled)."""
    from scipy.stats import chisquare

    assert set(got) <= set(exact), f"sampled hands no physical deal gives: {set(got) - set(exact)}"
    samples = sum(got.values())
    total = sum(exact.values())
    f_obs, f_exp, po, pe = [], [], 0, 0.0
    for key, w in exact.items():
        e = samples * w / total
        if e < 5:
            po += got[key]
            pe += e
        else:
            f_obs.append(got[key])
            f_exp.append(e)
    if pe:
        f_obs.append(po)
        f_exp.append(pe)
    return float(chisquare(f_obs, f_exp).pvalue)


def _pos_2p() -> tuple:
    # the opponent (seat 1) played 0, 0, 5 into trick 1 and a 2 into trick 2; seat 0 to play
    st = G.state_from_hands([[1, 1, 3, 4, 4, 5], [0, 0, 5, 2, 0, 3]], dealer=1)
    run(st, ["bid 1", "bid 2", "play 4", "play 0", "play 4", "play 0", "play 5", "play 5"])
    run(st, ["play 3", "play 2"])
    return st, 0


def _pos_3p() -> tuple:
    # A-S1's hand after the first four plays of trick 2; seat 0 observes
    st = s1_state()
    run(st, S1_BIDS + S1_PLAYS[:13])
    return st, 0


def _pos_7p() -> tuple:
    # seven players, nothing undealt; trick 2, second round under way: seat 3 observes
    st = G.state_from_hands([[0, 0, 0, 1, 2, 3], [0, 1, 1, 4, 5, 5], [2, 2, 3, 4, 4, 5], [0, 1, 3, 3, 4, 5],
                             [0, 1, 2, 3, 5, 5], [0, 2, 2, 4, 4, 5], [1, 1, 2, 3, 3, 4]], dealer=6)
    run(st, ["bid 1"] * 7)
    for _ in range(7 * 3 + 7 + 4):
        st.apply(st.legal_actions()[0])
    return st, 3


PHYSICAL_POSITIONS = {"2p-trick2": _pos_2p, "3p-trick2": _pos_3p, "7p-trick2": _pos_7p}


@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.slow) if k.startswith("7p") else k
                                  for k in sorted(PHYSICAL_POSITIONS)])
def test_samples_are_uniform_over_physical_deals(name):
    state, seat = PHYSICAL_POSITIONS[name]()
    exact = physical_deal_weights(state, seat)
    assert len(exact) >= 3
    got = sampled_hands(state, seat, samples=6000, seed=7)
    p = chi2_physical(exact, got)
    assert p > 0.001, f"{name}: χ² rejects uniformity over physical deals (p = {p:.3g})"


def test_unweighted_draws_fail_the_physical_test():
    # the construction before CA-R4's revision (every draw kept) is detectably biased here
    state, seat = _pos_2p()
    exact = physical_deal_weights(state, seat)
    got = sampled_hands(state, seat, samples=6000, seed=7, weighted=False)
    assert chi2_physical(exact, got) < 1e-6


def test_copy_odds_toy_deck_one_in_five():
    # copies A1 A2 B1 B2 (ids 0, 1 and 7, 8); the opponent was dealt two and played an A (pinned
    # to A1). Brute force: 5 two-card deals hold an A, one of them two, so P(still holds an A) = 1/5.
    from scipy.stats import binomtest

    from engine.games.argute.actions import copy_odds
    from engine.sampling import Sampler, SamplingProblem

    deals = [d for d in combinations([0, 1, 7, 8], 2) if {0, 1} & set(d)]
    assert len(deals) == 5 and sum(1 for d in deals if {0, 1} <= set(d)) == 1
    sampler = Sampler(SamplingProblem([1, 7, 8], [1, 2], [0b11] * 3, ["hand 1", "undealt"]))
    played = [[1, 0, 0, 0, 0, 0], [0] * 6]
    assert copy_odds([[1], [7, 8]], played) == 2 and copy_odds([[7], [1, 8]], played) == 1
    rng = random.Random(3)
    raw = kept = raw_a = kept_a = 0
    while kept < 4000:
        a, _ = sampler.sample(rng)
        holds_a = a[0][0] < 7
        raw += 1
        raw_a += holds_a
        odds = copy_odds(a, played)
        if odds == 1 or rng.randrange(odds) == 0:
            kept += 1
            kept_a += holds_a
    assert binomtest(raw_a, raw, 1 / 3).pvalue > 0.001  # the draw alone: 1/3
    assert binomtest(kept_a, kept, 1 / 5).pvalue > 0.001  # weighted: 1/5
    assert binomtest(kept_a, kept, 1 / 3).pvalue < 1e-6


def test_conformance_physical_deal_audit_passes_and_catches_the_old_draw(monkeypatch):
    # the generic audit (f) of tests/conformance.py, independent of the infoset, on Argute
    from engine.core import InfoSet
    from engine.games.argute.infoset import ArguteInfoSet

    assert cf.chi2_physical_deals(G, 3, {}, seed=0)  # the suite's Argute situation
    monkeypatch.setattr(ArguteInfoSet, "sample", InfoSet.sample)  # every draw kept (before CA-R4's revision)
    with pytest.raises(AssertionError, match="χ² rejects"):
        cf.chi2_physical_deals(G, 3, {}, seed=0)


def test_rules_copy_matches_shared():
    shared = Path("/work/shared/rules/argute.md")
    ours = Path(__file__).resolve().parents[2] / "docs" / "rules" / "argute.md"
    assert ours.exists()
    if shared.exists():
        assert ours.read_text().startswith(shared.read_text().rstrip())
