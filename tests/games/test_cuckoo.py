"""Cuckoo: worked scenarios C-S1..C-S9, rules, options, observations, inferences, greedy."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bots.greedy import cuckoo as greedy
from engine.cards import french_str, parse_french
from engine.deal import shuffled
from engine.errors import (
    ActionParseError,
    GameOverError,
    IllegalActionError,
    OptionError,
    PlayerCountError,
)
from engine.games.cuckoo import Cuckoo
from engine.games.cuckoo.actions import ACCEPT, BLOCK, CUT, DECK, IS_KING, KEEP, SWAP, VALUE
from engine.registry import get_game
from tests import conformance as cf
from tests.games.helpers import play_out

GAME = get_game("cuckoo")
ROOT = Path(__file__).resolve().parents[2]


def rigged(cards: dict[int, str], dealer: int, top: str = "9s", n: int | None = None,
           lives: list[int] | None = None, **options):
    """A state whose current hand is dealt ``cards`` (seat -> code) with ``top`` on the stock."""
    n = n or len(cards)
    st = GAME.new_match(n, 1234, first_dealer=dealer, **options)
    if lives is not None:
        st.lives = list(lives)
        st.elim = [-1 if x > 0 else 0 for x in lives]
    st.dealer = dealer
    order = st._turn_order()
    assert sorted(order) == sorted(cards)
    deck = [parse_french(cards[s]) for s in order] + [parse_french(top)]
    deck += [c for c in DECK if c not in deck]
    st._deal(deck)
    return st


def play(st, *words: str) -> None:
    for w in words:
        st.apply_string(w)


def codes(st) -> list[str | None]:
    return [french_str(c) if c >= 0 else None for c in st.cards]


# ---------------------------------------------------------------- worked scenarios

def test_C_S1_block_swap_and_cut():
    st = rigged({1: "3c", 2: "Kd", 3: "7h", 0: "As"}, dealer=0, top="9s")
    assert st.current_player() == 1 and st.legal_strings() == ["keep", "swap"]
    play(st, "swap")
    assert st.current_player() == 2 and st.legal_strings() == ["accept", "block"]
    play(st, "block")
    for s in range(4):
        obs = st.observation(s)
        assert obs["blocks"] == [[2, "Kd"]] and obs["known"][2] == "Kd"
    assert codes(st) == ["As", "3c", "Kd", "7h"]
    assert st.current_player() == 3  # P2's own turn is skipped
    play(st, "swap")
    assert st.current_player() == 0 and st.legal_strings() == ["accept"]
    play(st, "accept")
    assert codes(st) == ["7h", "3c", "Kd", "As"]
    o3, o0, o1 = st.observation(3), st.observation(0), st.observation(1)
    assert o3["known"][0] == "7h" and o3["known"][3] == "As"
    assert o0["known"][0] == "7h" and o0["known"][3] == "As"
    assert o1["known"][0] is None and o1["known"][3] is None
    assert st.legal_strings() == ["keep", "cut"]
    play(st, "cut")  # the cut ends the hand: showdown, lives, next deal in the same apply
    assert st.hand_index() == 1
    for s, discard in ((0, "7h"), (1, None), (2, None), (3, "7h")):
        last = st.observation(s)["hands"][-1]
        assert last["cards"] == ["9s", "3c", "Kd", "As"] and last["cut"] == "9s"
        assert last["losers"] == [3] and not last["void"]
        assert last["discard"] == discard  # only the dealer and P3 (who traded it) know it
    assert st.lives == [3, 3, 3, 2]


def test_C_S2_dealer_cuts_a_king():
    st = rigged({1: "8h", 2: "Td", 0: "4c"}, dealer=0, top="Kh")
    play(st, "keep", "keep", "cut")
    last = st.observation(0)["hands"][-1]
    assert last["cut"] == "Kh" and last["cards"][0] == "4c"
    assert last["losers"] == [0]


def test_C_S3_tie_for_low():
    st = rigged({1: "2h", 2: "2s", 0: "8d"}, dealer=0)
    play(st, "keep", "keep", "keep")
    assert st.lives == [3, 2, 2]
    assert st.observation(0)["hands"][-1]["losers"] == [1, 2]


def test_C_S4_void_hand():
    st = rigged({1: "5c", 2: "5d", 0: "5h"}, dealer=0, lives=[1, 1, 1])
    play(st, "keep", "keep", "keep")
    assert st.lives == [1, 1, 1] and not st.is_terminal()
    assert st.observation(0)["hands"][-1]["void"] is True
    assert st.hand_index() == 1 and st.dealer == 1
    assert st.hand_rewards() == [0.5, 0.5, 0.5]


def test_C_S5_partial_elimination():
    st = rigged({0: "4c", 1: "4d", 2: "9h"}, dealer=2, lives=[1, 1, 2])
    play(st, "keep", "keep", "keep")
    assert st.is_terminal()
    out = st.outcome()
    assert out.ranks == (1, 1, 0) and out.scores == (0.0, 0.0, 2.0)


def test_C_S5_variant_all_lose_but_one_survives():
    st = rigged({0: "4c", 1: "4d", 2: "4h"}, dealer=2, lives=[1, 1, 2])
    play(st, "keep", "keep", "keep")
    assert st.is_terminal()
    out = st.outcome()
    assert out.ranks == (1, 1, 0) and out.scores == (0.0, 0.0, 1.0)


def test_C_S6_accepted_swap_hides_the_king():
    st = rigged({1: "5c", 2: "Ks", 3: "8d", 0: "Jh"}, dealer=0)
    twin = rigged({1: "5c", 2: "6s", 3: "8d", 0: "Jh"}, dealer=0)
    play(st, "swap")
    assert st.legal_strings() == ["accept", "block"]
    play(st, "accept")
    play(twin, "swap", "accept")
    assert st.cards[1] == parse_french("Ks")
    assert st.observation(3) == twin.observation(3)
    assert st.observation(3)["actions"] == [[1, "swap"], [2, "accept"]]
    assert st.observation(1)["known"][1] == "Ks" and st.observation(1)["known"][2] == "5c"


def test_C_S7_two_players():
    st = rigged({1: "5d", 0: "Qc"}, dealer=0, top="3s")
    assert st.current_player() == 1
    play(st, "swap")
    assert st.current_player() == 0 and st.legal_strings() == ["accept"]
    play(st, "accept")
    assert codes(st) == ["5d", "Qc"]
    play(st, "cut")
    last = st.observation(0)["hands"][-1]
    assert last["cards"] == ["3s", "Qc"] and last["losers"] == [0]
    assert st.lives == [2, 3]


def test_C_S8_skipped_turn():
    st = rigged({1: "3c", 2: "Kd", 3: "7h", 0: "As"}, dealer=0, top="9s")
    asked = []
    for w in ("swap", "block", "swap", "accept", "cut"):
        asked.append((st.current_player(), tuple(st.legal_strings())))
        play(st, w)
    assert asked == [(1, ("keep", "swap")), (2, ("accept", "block")), (3, ("keep", "swap")),
                     (0, ("accept",)), (0, ("keep", "cut"))]
    assert [p for p, _ in asked].count(2) == 1


def test_C_S9_automatic_blocking():
    st = rigged({1: "4s", 2: "6c", 3: "8d", 0: "Jh"}, dealer=0, king_block="automatic")
    play(st, "swap")
    assert st.legal_strings() == ["accept"]
    play(st, "accept")
    obs = st.observation(3)
    assert obs["actions"] == [[1, "swap"], [2, "accept"]]
    info = GAME.infoset(json.loads(json.dumps(obs)))
    rng = random.Random(3)
    for _ in range(300):
        w = info.sample(rng)
        assert not IS_KING[w.cards[1]]
    kinged = rigged({1: "4s", 2: "Kh", 3: "8d", 0: "Jh"}, dealer=0, king_block="automatic")
    play(kinged, "swap")
    assert kinged.legal_strings() == ["block"]
    with pytest.raises(IllegalActionError, match="legal: block"):
        kinged.apply(ACCEPT)


# ---------------------------------------------------------------- rules

def test_deal_comes_from_seed_and_hand_index():
    st = GAME.new_match(4, 99)
    deck = shuffled(DECK, 99, 0)
    assert st.dealer == 0 and st.order == (1, 2, 3, 0)
    assert [st.cards[s] for s in (1, 2, 3, 0)] == deck[:4]
    assert st.stock == tuple(deck[4:])
    while st.hand_index() == 0:
        st.apply(st.legal_actions()[0])
    deck1 = shuffled(DECK, 99, 1)
    assert st.dealer == 1 and st.order == (2, 3, 0, 1)
    assert [st.cards[s] for s in st.order] == deck1[:4]
    assert st.history == [] and st.hand_history() == []
    assert st.observation(0)["actions"] == []


def test_eliminated_players_are_skipped():
    st = rigged({0: "5c", 2: "8d", 3: "Jh"}, dealer=0, n=4, lives=[2, 0, 2, 2])
    assert st.order == (2, 3, 0) and st.cards[1] == -1
    play(st, "keep", "swap")  # seat 3 swaps with the next active seat, the dealer 0
    assert st.current_player() == 0
    play(st, "accept", "keep")
    assert st.dealer == 2  # the deal passes to the next active seat
    assert st.observation(1)["card"] is None and st.observation(1)["dealt_card"] is None


def test_dealer_block_skips_the_dealer_turn():
    st = rigged({1: "2c", 2: "5d", 0: "Kc"}, dealer=0)
    play(st, "keep", "swap", "block")
    assert st.hand_index() == 1
    assert st.observation(0)["hands"][-1]["losers"] == [1]


def test_swapping_away_a_king_is_legal():
    st = rigged({1: "Kc", 2: "5d", 0: "9c"}, dealer=0)
    play(st, "swap", "accept")
    assert codes(st) == ["9c", "5d", "Kc"]


def test_second_trade_of_a_player_as_target_then_own_turn():
    st = rigged({1: "2c", 2: "9d", 3: "Qh", 0: "4s"}, dealer=0)
    play(st, "swap", "accept", "swap", "accept")
    assert codes(st) == ["4s", "9d", "Qh", "2c"]
    # P1 knows P3 now holds P1's original card (chain of trades, §3.5)
    o1 = st.observation(1)
    assert o1["known"] == [None, "9d", None, "2c"]
    o2 = st.observation(2)
    assert o2["known"] == [None, "9d", "Qh", "2c"]


def test_max_hands_ends_the_match_survivors_share_first():
    st = rigged({1: "2c", 2: "9d", 0: "Qh"}, dealer=0, max_hands=1)
    play(st, "keep", "keep", "keep")
    assert st.is_terminal()
    assert st.outcome().ranks == (0, 0, 0) and st.outcome().scores == (3.0, 2.0, 3.0)
    with pytest.raises(GameOverError):
        st.apply(KEEP)


def test_outcome_orders_by_elimination():
    st = rigged({0: "2c", 1: "9d", 2: "Qh", 3: "Jc"}, dealer=3, lives=[1, 1, 2, 2])
    play(st, "keep", "keep", "keep", "keep")
    assert st.elim[0] == 0 and not st.is_terminal()
    with pytest.raises(GameOverError):
        st.outcome()
    assert st.dealer == 1
    # hand 1: seat 2 low and out; hand 2: seat 1 low and out, seat 3 wins
    for seat_cards, out in (({2: "3c", 3: "Kd", 1: "9h"}, 2), ({3: "Kd", 1: "9h"}, 1)):
        deck = [parse_french(seat_cards[s]) for s in st._turn_order()] + [parse_french("9s")]
        deck += [c for c in DECK if c not in deck]
        st._deal(deck)
        st.lives = [x if s not in seat_cards else 1 for s, x in enumerate(st.lives)]
        while st.elim[out] < 0:
            st.apply(KEEP)
    assert st.is_terminal()
    assert st.outcome().ranks == (3, 1, 2, 0)
    assert st.outcome().scores == (0.0, 0.0, 0.0, 1.0)
    assert st.outcome().rewards() == [0.0, 2 / 3, 1 / 3, 1.0]
    assert st.hand_rewards() == [0.0, 2 / 3, 1 / 3, 1.0]


def test_hand_rewards_after_a_hand():
    st = rigged({1: "2c", 2: "9d", 0: "Qh"}, dealer=0)
    assert st.hand_rewards() == [0.5, 0.5, 0.5]
    play(st, "keep", "keep", "keep")
    assert st.hand_rewards() == [0.75, 0.0, 0.75]


def test_illegal_actions_name_the_legal_set():
    st = rigged({1: "2c", 2: "9d", 0: "Qh"}, dealer=0)
    with pytest.raises(IllegalActionError, match="'cut'.*legal: keep, swap"):
        st.apply(CUT)
    play(st, "swap")
    with pytest.raises(IllegalActionError, match="legal: accept"):
        st.apply(BLOCK)
    play(st, "accept", "keep")
    with pytest.raises(IllegalActionError, match="legal: keep, cut"):
        st.apply(SWAP)


def test_notation_round_trip_and_errors():
    for a, text in ((KEEP, "keep"), (SWAP, "swap"), (ACCEPT, "accept"), (BLOCK, "block"), (CUT, "cut")):
        assert GAME.format_action(a) == text and GAME.parse_action(text) == a
    for bad in ("Keep", "swap Kd", "", "pass"):
        with pytest.raises(ActionParseError):
            GAME.parse_action(bad)
    with pytest.raises(ActionParseError):
        GAME.format_action(7)


def test_values_aces_low_kings_high():
    assert VALUE[parse_french("Ac")] == 1 and VALUE[parse_french("2d")] == 2
    assert VALUE[parse_french("Th")] == 10 and VALUE[parse_french("Ks")] == 13
    assert sum(IS_KING) == 4


# ---------------------------------------------------------------- options

def test_options_defaults_and_validation():
    assert isinstance(GAME, Cuckoo)
    assert {k: o.default for k, o in GAME.options.items()} == {
        "lives": 3, "king_block": "optional", "max_hands": 1000, "first_dealer": 0}
    with pytest.raises(OptionError, match="lives"):
        GAME.new_match(3, 1, lives=0)
    with pytest.raises(OptionError, match="king_block"):
        GAME.new_match(3, 1, king_block="never")
    with pytest.raises(OptionError, match="max_hands"):
        GAME.new_match(3, 1, max_hands="many")
    with pytest.raises(OptionError, match="first_dealer"):
        GAME.new_match(3, 1, first_dealer=3)
    with pytest.raises(OptionError, match="unknown option"):
        GAME.new_match(3, 1, jokers=True)
    with pytest.raises(PlayerCountError):
        GAME.new_match(1, 1)
    with pytest.raises(PlayerCountError):
        GAME.new_match(21, 1)


def test_lives_option():
    st = GAME.new_match(3, 5, lives=5)
    assert st.lives == [5, 5, 5] and st.observation(0)["lives"] == [5, 5, 5]


def test_first_dealer_option():
    assert GAME.new_match(5, 3, first_dealer=2).dealer == 2
    dealers = {GAME.new_match(5, s, first_dealer="random").dealer for s in range(40)}
    assert len(dealers) > 1
    assert all(GAME.new_match(5, s, first_dealer="random").dealer ==
               GAME.new_match(5, s, first_dealer="random").dealer for s in range(10))


# ---------------------------------------------------------------- observations and inferences

def test_observation_hides_other_cards():
    st = rigged({1: "3c", 2: "Kd", 3: "7h", 0: "As"}, dealer=0)
    for s in range(4):
        obs = st.observation(s)
        assert obs["card"] == obs["dealt_card"] == codes(st)[s]
        assert [k for k in obs["known"] if k is not None] == [codes(st)[s]]
        text = json.dumps(obs)
        for t in range(4):
            if t != s:
                assert f'"{codes(st)[t]}"' not in text
    play(st, "swap", "accept")
    assert st.observation(3)["known"] == [None, None, None, "7h"]
    assert st.observation(1)["card"] == "Kd" and st.observation(1)["dealt_card"] == "3c"


def test_block_pins_the_king_in_every_sample():
    st = rigged({1: "3c", 2: "Kd", 3: "7h", 0: "As"}, dealer=0)
    play(st, "swap", "block")
    info = GAME.infoset(json.loads(json.dumps(st.observation(3))))
    rng = random.Random(0)
    for _ in range(100):
        w = info.sample(rng)
        assert w.cards[2] == parse_french("Kd") and w.cards[3] == parse_french("7h")
        assert w.observation(3) == st.observation(3)


def test_trade_knowledge_is_respected_by_samples():
    st = rigged({1: "2c", 2: "9d", 3: "Qh", 0: "4s"}, dealer=0)
    play(st, "swap", "accept", "swap", "accept")
    info = GAME.infoset(json.loads(json.dumps(st.observation(1))))
    rng = random.Random(1)
    seen_p2 = set()
    for _ in range(200):
        w = info.sample(rng)
        assert w.cards[1] == parse_french("9d") and w.cards[3] == parse_french("2c")
        seen_p2.add(w.cards[2])
    assert len(seen_p2) > 20 and parse_french("2c") not in seen_p2


def test_optional_accept_puts_no_constraint_automatic_does():
    for mode, expected in (("optional", 51 * 50 * 49), ("automatic", 47 * 50 * 49)):
        st = rigged({1: "5c", 2: "6s", 3: "8d", 0: "Jh"}, dealer=0, king_block=mode)
        play(st, "swap", "accept")
        info = GAME.infoset(json.loads(json.dumps(st.observation(0))))
        # seat 0 knows only its own card: 51 unseen cards over hands 1, 2, 3 and the stock;
        # under automatic the card P1 took from P2 cannot be a king
        assert info.count() == expected
        rng = random.Random(2)
        got_king = any(IS_KING[info.sample(rng).cards[1]] for _ in range(400))
        assert got_king is (mode == "optional")


def test_infoset_counts_two_players():
    st = GAME.new_match(2, 7)
    info = GAME.infoset(json.loads(json.dumps(st.observation(0))))
    assert info.count() == 51  # the opponent's card; the stock order is sampled within
    st2 = rigged({1: "5d", 0: "Qc"}, dealer=0, top="3s")
    play(st2, "swap", "accept")
    assert GAME.infoset(json.loads(json.dumps(st2.observation(1)))).count() == 1


def test_conformance_extra_configs():
    for n, opts in ((20, {"lives": 1}), (5, {"king_block": "automatic", "lives": 2}), (2, {"king_block": "automatic"})):
        for seed in (1, 2):
            final = cf.random_playout(GAME, n, opts, seed)
            cf.check_observation_shape(GAME, final)
        cf.check_public_actions(GAME, n, opts, 3)
        for i, state in enumerate(cf.random_positions(GAME, n, opts, seed=5, count=3)):
            for seat in range(n):
                cf.audit_position(GAME, state, seat, samples=2, seed=i)


def test_rules_copy_matches_shared():
    shared = ROOT.parent / "shared" / "rules" / "cuckoo.md"
    ours = (ROOT / "docs" / "rules" / "cuckoo.md").read_text()
    if shared.exists():
        assert ours.startswith(shared.read_text().rstrip("\n"))


# ---------------------------------------------------------------- greedy

def _greedy(st, seed=0):
    obs = st.observation(st.current_player())
    return greedy.act(obs, st.legal_strings(), random.Random(seed))


def test_greedy_blocks_with_a_king():
    st = rigged({1: "3c", 2: "Kd", 0: "As"}, dealer=0)
    play(st, "swap")
    assert _greedy(st) == "block"


def test_greedy_swaps_low_keeps_high():
    assert _greedy(rigged({1: "2c", 2: "8d", 0: "9s"}, dealer=0)) == "swap"
    assert _greedy(rigged({1: "Qc", 2: "8d", 0: "9s"}, dealer=0)) == "keep"
    assert _greedy(rigged({1: "Kc", 2: "8d", 0: "9s"}, dealer=0)) == "keep"


def test_greedy_dealer():
    st = rigged({1: "Qc", 2: "Jd", 0: "2s"}, dealer=0)
    play(st, "keep", "keep")
    assert _greedy(st) == "cut"
    st = rigged({1: "Qc", 2: "Jd", 0: "Qs"}, dealer=0)
    play(st, "keep", "keep")
    assert _greedy(st) == "keep"
    # the dealer took 2d in a trade and knows P2 now holds 4s (higher): cut
    st = rigged({1: "Qc", 2: "2d", 0: "4s"}, dealer=0)
    play(st, "keep", "swap", "accept")
    assert codes(st)[0] == "2d" and st.observation(0)["known"][2] == "4s"
    assert _greedy(st) == "cut"


def test_greedy_dealer_keeps_when_someone_is_known_lower():
    st = rigged({1: "Qc", 2: "6d", 0: "3s"}, dealer=0)
    play(st, "keep", "swap", "accept")  # dealer gets 6d, P2 gets 3s (the dealer knows)
    assert st.observation(0)["known"][2] == "3s"
    assert _greedy(st) == "keep"


def test_greedy_returns_legal_moves_in_play():
    rng = random.Random(4)
    for seed in range(30):
        st = GAME.new_match(5, seed)
        while not st.is_terminal():
            legal = st.legal_strings()
            choice = greedy.act(st.observation(st.current_player()), legal, rng)
            assert choice in legal
            st.apply_string(choice)


def test_greedy_beats_random():
    """Greedy in seat 0 against random players ranks better than a random seat 0."""
    def mean_rank(use_greedy: bool) -> float:
        total = 0
        for seed in range(150):
            st = play_out(GAME.new_match(4, seed), greedy.act, {0} if use_greedy else (), random.Random(seed))
            total += st.outcome().ranks[0]
        return total / 150
    assert mean_rank(True) < mean_rank(False) - 0.5  # measured: about 0.5 vs 1.45


# ---------------------------------------------------------------- rollout policy

def _roll_counts(st, trials=2000, seed=3):
    from engine.games.cuckoo.actions import NAMES
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for _ in range(trials):
        a = GAME.rollout_action(st, rng)
        counts[NAMES[a]] = counts.get(NAMES[a], 0) + 1
    return counts


def test_rollout_policy_is_the_games_rollout_action():
    from engine.games.cuckoo import rollout
    assert GAME.rollout_action is rollout.rollout_action


def test_rollout_swaps_low_keeps_high_and_the_dealer_cuts_low():
    from engine.games.cuckoo.rollout import NOISE
    # non-dealer seat 1 on turn: a 6 is exchanged, a 7 and a king are kept
    for card, word in (("6c", "swap"), ("7c", "keep"), ("Kc", "keep"), ("As", "swap")):
        st = rigged({1: card, 2: "9d", 0: "5h"}, dealer=0)
        counts = _roll_counts(st)
        # the policy's move, plus half of the NOISE share of uniform moves for either word
        assert counts[word] / 2000 == pytest.approx(1 - NOISE / 2, abs=0.03), (card, counts)
    # the dealer (seat 0, last to act) with a 4: cut; with a queen: keep
    st = rigged({1: "9c", 2: "9d", 0: "4h"}, dealer=0)
    play(st, "keep", "keep")
    assert _roll_counts(st)["cut"] / 2000 == pytest.approx(1 - NOISE / 2, abs=0.03)
    st = rigged({1: "9c", 2: "9d", 0: "Qh"}, dealer=0)
    play(st, "keep", "keep")
    assert _roll_counts(st)["keep"] / 2000 == pytest.approx(1 - NOISE / 2, abs=0.03)


def test_rollout_king_holder_blocks_and_others_accept():
    from engine.games.cuckoo.rollout import NOISE
    st = rigged({1: "3c", 2: "Kd", 0: "5h"}, dealer=0)
    play(st, "swap")
    assert _roll_counts(st)["block"] / 2000 == pytest.approx(1 - NOISE / 2, abs=0.03)
    st = rigged({1: "3c", 2: "8d", 0: "5h"}, dealer=0)
    play(st, "swap")
    assert _roll_counts(st) == {"accept": 2000}


def test_rollout_policy_plays_legal_moves_to_the_end():
    rng = random.Random(11)
    for n, lives in ((2, 1), (3, 2), (5, 3)):
        for seed in range(20):
            st = GAME.new_match(n, seed, lives=lives)
            steps = 0
            while not st.is_terminal():
                a = GAME.rollout_action(st, rng)
                assert a in st.legal_actions()
                st.apply(a)
                steps += 1
                assert steps < 10_000
