"""Agram: worked scenarios (docs/rules/agram.md §4.7), rules, options, observation,
information set, greedy heuristic, and the conformance suite on ``Agram.configs``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bots.greedy import agram as greedy
from engine.core import Outcome
from engine.errors import (
    ActionParseError,
    GameOverError,
    IllegalActionError,
    OptionError,
    PlayerCountError,
)
from engine.games.agram import Agram
from engine.games.agram.actions import DECK
from engine.seeds import hand_rng
from tests import conformance as cf
from tests.games.helpers import conformance_suite, play_out

G = Agram()
P = G.parse_action


def play(state, *cards: str) -> None:
    for c in cards:
        state.apply(P("play " + c))


# ---------------------------------------------------------------- worked scenarios (§4.7)

def test_A_S1_follow_suit():
    st = G.state_from_hands([["3s", "4s", "5s", "6s", "7s", "8s"],
                             ["5h", "3c", "4c", "5c", "6c", "7c"],
                             ["9h", "Ts", "3d", "4d", "5d", "6d"]], dealer=0)
    play(st, "5h")
    assert st.current_player() == 2
    assert st.legal_strings() == ["play 9h"]
    with pytest.raises(IllegalActionError) as e:
        play(st, "Ts")
    assert "play Ts" in str(e.value) and "play 9h" in str(e.value)


def test_A_S2_off_suit_cannot_win():
    st = G.state_from_hands([["6h", "3c", "4c", "5c", "6c", "7c"],
                             ["5h", "3d", "4d", "5d", "6d", "7d"],
                             ["Ts", "3s", "4s", "5s", "6s", "7s"]], dealer=0)
    play(st, "5h", "Ts", "6h")  # seat 1 leads, seat 2 is void in hearts, seat 0 follows
    assert st.current_player() == 0  # the 6h won and leads the next trick
    assert st.observation(1)["tricks"][0]["winner"] == 0


def test_A_S3_top_spade():
    st = G.state_from_hands([["Ah", "3c", "4c", "5c", "6c", "7c"],
                             ["9s", "3d", "4d", "5d", "6d", "7d"],
                             ["Ts", "3s", "4s", "5s", "6s", "7s"]], dealer=0)
    assert "As" not in [G.format_action(c)[5:] for c in DECK]
    with pytest.raises(ActionParseError):
        P("play As")
    play(st, "9s", "Ts", "Ah")
    assert st.current_player() == 2  # the Ts won


def test_A_S4_only_the_last_trick_counts():
    # C = seat 0 (dealer), A = seat 1 (leads), B = seat 2
    st = G.state_from_hands([["3s", "4s", "5s", "6s", "7s", "8s"],
                             ["Ah", "Th", "9h", "8h", "7h", "3c"],
                             ["3h", "4h", "5h", "6h", "4d", "Ac"]], dealer=0)
    play(st, "Ah", "3h", "3s", "Th", "4h", "4s", "9h", "5h", "5s", "8h", "6h", "6s", "7h", "4d", "7s")
    assert [t["winner"] for t in st.observation(0)["tricks"]] == [1] * 5
    play(st, "3c", "Ac", "8s")
    assert st.is_terminal() and st.hand_index() == 1
    assert st.outcome() == Outcome((1, 1, 0), (0, 0, 1))
    assert st.observation(0)["history"] == [{"dealer": 0, "winner": 2}]
    with pytest.raises(GameOverError):
        play(st, "3s")


def test_A_S5_seating():
    st = G.new_match(4, 123)
    order = []
    for _ in range(4):
        order.append(st.current_player())
        st.apply(st.legal_actions()[0])
    assert order == [1, 2, 3, 0]


def test_A_S6_undealt_cards():
    st = G.new_match(5, 99)
    assert [h.bit_count() for h in st.hands] == [6] * 5
    assert st.undealt.bit_count() == 5
    assert sum(h.bit_count() for h in st.hands) == 30
    obs = st.observation(2)
    assert obs["undealt"] == 5
    prob = G.infoset(obs).problem()
    assert prob.names[-1] == "undealt" and prob.capacities == [6, 6, 6, 6, 5]
    assert len(prob.cards) == 29


# ---------------------------------------------------------------- rules

def test_deck_is_35_cards_with_threes_without_twos():
    names = sorted(G.format_action(c)[5:] for c in DECK)
    assert len(DECK) == 35
    assert not any(n[0] in "2KQJ" for n in names)
    assert {n for n in names if n[0] == "A"} == {"Ac", "Ad", "Ah"}
    assert sum(1 for n in names if n[1] == "s") == 8


def test_undealt_count_for_every_player_count():
    for n, left in zip(range(2, 6), (23, 17, 11, 5), strict=True):
        assert G.new_match(n, 7).undealt.bit_count() == left


def test_each_deal_comes_from_seed_and_hand_index():
    a, b = G.new_match(3, 42), G.new_match(3, 42)
    assert a.world_key() == b.world_key()
    assert G.new_match(3, 43).hands != a.hands


def test_notation_round_trip_and_errors():
    assert G.format_action(P("play Ah")) == "play Ah"
    assert P("play 10h") == P("play Th")
    for bad in ("play Kh", "play 2c", "bid 2", "play", "Ah", "play Ah Kh"):
        with pytest.raises(ActionParseError):
            P(bad)
    with pytest.raises(ActionParseError):
        G.format_action(51)


def test_illegal_actions_name_the_legal_set():
    st = G.state_from_hands([["3s", "4s", "5s", "6s", "7s", "8s"],
                             ["Ah", "Th", "9h", "8h", "7h", "3c"],
                             ["3h", "4h", "5h", "6h", "4d", "Ac"]], dealer=0)
    with pytest.raises(IllegalActionError, match="card not in hand"):
        play(st, "3s")
    for bad in (-1, "x", None, 1000):
        with pytest.raises(IllegalActionError):
            st.apply(bad)
    assert st.legal_strings() == ["play 3c", "play 7h", "play 8h", "play 9h", "play Th", "play Ah"]


def test_winner_deals_next_deal_and_match_wins():
    st = G.new_match(3, 5, match_wins=2)
    rng = random.Random(1)
    while st.hand_index() == 0:
        st.apply(G.rollout_action(st, rng))
    w = st.observation(0)["history"][0]["winner"]
    assert st.dealer == w and st.current_player() == (w + 1) % 3
    assert st.observation(1)["actions"] == [] and st.observation(1)["deals_won"][w] == 1
    assert not st.is_terminal()
    assert st.hand_rewards()[w] == 1.0
    assert st.hand_start().world_key() == st.world_key()
    while not st.is_terminal():
        st.apply(G.rollout_action(st, rng))
    out = st.outcome()
    assert max(out.scores) == 2 and sum(out.scores) == st.hand_index()
    wins = list(out.scores)
    assert list(out.ranks) == [sum(1 for o in wins if o > x) for x in wins]


def test_placings_share_places_with_equal_deals_won():
    st = G.new_match(4, 11, match_wins=3)
    rng = random.Random(3)
    while not st.is_terminal():
        st.apply(G.rollout_action(st, rng))
    out = st.outcome()
    assert out.ranks.count(0) == 1
    for s in range(4):
        assert out.ranks[s] == sum(1 for x in out.scores if x > out.scores[s])


def test_hand_rewards_one_deal_is_the_match_reward():
    st = G.new_match(3, 8)
    assert st.hand_rewards() == [0.5, 0.5, 0.5]
    rng = random.Random(0)
    while not st.is_terminal():
        st.apply(G.rollout_action(st, rng))
    assert st.hand_rewards() == st.outcome().rewards()


# ---------------------------------------------------------------- options

def test_first_dealer_option():
    assert G.new_match(3, 1, first_dealer=2).current_player() == 0
    dealers = {G.new_match(4, s, first_dealer="random").dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    st = G.new_match(4, 77, first_dealer="random")
    assert st.dealer == hand_rng(77, 0, "first_dealer").randrange(4)
    assert G.new_match(4, 77, first_dealer="random").dealer == st.dealer


@pytest.mark.parametrize("opts", [{"first_dealer": 3}, {"first_dealer": "left"}, {"first_dealer": -1},
                                  {"match_wins": 0}, {"match_wins": "2"}, {"match_wins": True},
                                  {"target": 3}])
def test_bad_options_raise(opts):
    with pytest.raises(OptionError):
        G.new_match(3, 1, **opts)


def test_player_counts():
    for n in (1, 6):
        with pytest.raises(PlayerCountError):
            G.new_match(n, 1)


def test_option_defaults_match_rules():
    assert G.options["first_dealer"].default == 0
    assert G.options["match_wins"].default == 1


# ---------------------------------------------------------------- observation and infoset

def test_observation_hides_other_hands_and_shows_public_play():
    st = G.state_from_hands([["6h", "3c", "4c", "5c", "6c", "7c"],
                             ["5h", "3d", "4d", "5d", "6d", "7d"],
                             ["Ts", "3s", "4s", "5s", "6s", "7s"]], dealer=0)
    play(st, "5h", "Ts")
    obs = st.observation(0)
    assert obs["hand"] == ["3c", "4c", "5c", "6c", "7c", "6h"]
    text = json.dumps(obs)
    assert "3d" not in text and "7s" not in text
    assert obs["actions"] == [[1, "play 5h"], [2, "play Ts"]]
    assert obs["trick"] == [[1, "5h"], [2, "Ts"]] and obs["leader"] == 1
    assert obs["voids"] == [[], [], ["h"]] and obs["hand_sizes"] == [6, 5, 5]
    assert obs["to_act"] == 0 and obs["trick_number"] == 1


def test_void_is_respected_by_every_sample():
    st = G.state_from_hands([["6h", "3c", "4c", "5c", "6c", "7c"],
                             ["5h", "3d", "4d", "5d", "6d", "7d"],
                             ["Ts", "3s", "4s", "5s", "6s", "7s"]], dealer=0)
    play(st, "5h", "Ts")
    info = G.infoset(st.observation(0))
    hearts = sum(1 << c for c in DECK if c // 13 == 2)
    rng = random.Random(4)
    seen_heart_in_1 = False
    for _ in range(300):
        w = info.sample(rng)
        assert w.hands[2] & hearts == 0
        seen_heart_in_1 |= bool(w.hands[1] & hearts)
        assert w.observation(0) == st.observation(0)
    assert seen_heart_in_1


def test_infoset_counts_physical_deals_with_voids():
    # 2 players: after 5 tricks each holds one card; seat 1 showed void in clubs and hearts
    st = G.state_from_hands([["3c", "4c", "5c", "3h", "4h", "Ac"],
                             ["3s", "4s", "5s", "6s", "7s", "8s"]], dealer=1)
    play(st, "3c", "3s", "4c", "4s", "5c", "5s", "3h", "6s", "4h", "7s")
    obs = st.observation(0)
    assert obs["voids"] == [[], ["c", "h"]]
    info = G.infoset(obs)
    # 24 unseen cards: 1 in seat 1's hand (not clubs/hearts), 23 undealt
    clubs_hearts = sum(1 for c in DECK if c // 13 in (0, 2)) - 6
    assert info.count() == 24 - clubs_hearts
    assert cf.chi2_uniformity(G, st, 0, seed=3)


def test_sample_depends_on_observation_only_and_fresh_later_deals():
    st = G.new_match(3, 31, match_wins=2)
    st.apply(st.legal_actions()[0])
    info = G.infoset(json.loads(json.dumps(st.observation(1))))
    w1, w2 = info.sample(random.Random(9)), info.sample(random.Random(9))
    assert w1.world_key() == w2.world_key()
    assert w1.m.deal_seed != st.m.deal_seed


# ---------------------------------------------------------------- greedy

def test_greedy_keeps_the_top_card_and_plays_low():
    obs = {"hand": ["3c", "9d", "Ah", "5s"], "actions": [], "trick_number": 3}
    legal = ["play 3c", "play 9d", "play Ah", "play 5s"]
    assert greedy.act(obs, legal, random.Random(0)) == "play 3c"
    # must follow hearts with only the keeper: plays it
    assert greedy.act(obs, ["play Ah"], random.Random(0)) == "play Ah"
    # two hearts: keeps the ace, plays the other
    obs = {"hand": ["7h", "Ah"], "actions": [], "trick_number": 5}
    assert greedy.act(obs, ["play 7h", "play Ah"], random.Random(0)) == "play 7h"


def test_greedy_keeper_prefers_a_card_with_no_unseen_higher():
    # Ts is the top spade; 9h has Ah and Th unseen above it
    assert greedy.keeper([P("play 9h"), P("play Ts")], {P("play 9h"), P("play Ts")}) == P("play Ts")
    # once Ah and Th are gone, the 9h is as safe and ranks higher than a 9s with Ts unseen
    gone = {P(f"play {c}") for c in ("9h", "9s", "Ah", "Th")}
    assert greedy.keeper([P("play 9h"), P("play 9s")], gone) == P("play 9h")


def test_greedy_beats_random():
    rng = random.Random(2)
    wins = 0
    for d in range(300):
        st = play_out(G.new_match(3, d), greedy.act, {d % 3}, rng, opponent=G.rollout_action)
        wins += st.outcome().ranks[d % 3] == 0
    assert wins > 130  # random play wins about 100 of 300


# ---------------------------------------------------------------- conformance (also run by test_conformance)

@pytest.mark.parametrize("n,opts", G.configs)
def test_conformance_suite(n, opts):
    conformance_suite(G, n, opts, playouts=6, determinism_seed=1, public_seed=2, positions_seed=11, samples=8)


def test_rules_copy_matches_shared():
    shared = Path("/work/shared/rules/agram.md")
    ours = Path(__file__).resolve().parents[2] / "docs" / "rules" / "agram.md"
    assert ours.exists()
    if shared.exists():
        assert ours.read_text().startswith(shared.read_text().rstrip())
