"""Whiskey Poker: worked scenarios W-S1..W-S11, rules, options, observations, information sets,
the hand evaluator and the greedy heuristic (docs/rules/whiskey_poker.md)."""

from __future__ import annotations

import json
import random
from math import factorial

import pytest

from bots.greedy import whiskey_poker as greedy
from engine.cards import cards_of, french_str, parse_french
from engine.deal import shuffled
from engine.errors import (
    ActionParseError,
    GameOverError,
    IllegalActionError,
    OptionError,
    PlayerCountError,
)
from engine.games.whiskey_poker import WhiskeyPoker
from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker import rollout as rollout_policy
from engine.games.whiskey_poker.hands import BACKEND, category_name, reference_strength, strength
from engine.games.whiskey_poker.state import BET2, BET3, EX1, EX2, Rules, WhiskeyState
from engine.registry import get_game
from tests import conformance as cf
from tests.games.helpers import conformance_suite, play_out

GAME: WhiskeyPoker = get_game("whiskey_poker")


# ---------------------------------------------------------------- helpers

def mask(text: str) -> int:
    m = 0
    for c in text.split():
        m |= 1 << parse_french(c)
    return m


def cards(m: int) -> set[str]:
    return {french_str(c) for c in cards_of(m)}


def setup(n: int, hands: dict[int, str], widow: str | None = None, dealer: int = 0, score=None,
          out=None, hand_index: int = 0, dealt_in=None, **options) -> WhiskeyState:
    """A state right after a chosen deal; seats and widow not given get the lowest free cards."""
    rules = Rules(n, GAME.resolve_options(options))
    used = 0
    hm = [0] * n
    for s, text in hands.items():
        hm[s] = mask(text)
        used |= hm[s]
    wm = mask(widow) if widow else 0
    used |= wm
    free = [c for c in range(52) if not used >> c & 1]
    seats = list(range(n)) if dealt_in is None else dealt_in
    for s in seats:
        while hm[s].bit_count() < 5:
            hm[s] |= 1 << free.pop(0)
    while wm.bit_count() < 5:
        wm |= 1 << free.pop(0)
    stub = 0
    for c in free:
        stub |= 1 << c
    din = sum(1 << s for s in seats)
    if score is None:
        score = [0] * n if rules.betting else [rules.start_chips] * n
    return WhiskeyState.at_hand_start(GAME, rules, 12345, hand_index, dealer, din, score,
                                      tuple(out or [-1] * n), (), hm, wm, stub)


def play(state: WhiskeyState, *moves: str) -> None:
    for text in moves:
        state.apply_string(text)


def legal(state: WhiskeyState) -> set[str]:
    return set(state.legal_strings())


def samples(state: WhiskeyState, seat: int, k: int = 30, seed: int = 0) -> list[WhiskeyState]:
    obs = json.loads(json.dumps(state.observation(seat)))
    info = GAME.infoset(obs)
    rng = random.Random(seed)
    return [info.sample(rng) for _ in range(k)]


# ---------------------------------------------------------------- W-S1 hand comparisons

W_S1 = [
    ("As 2d 3c 4h 5s", "2c 3d 4s 5h 6c", "B"),
    ("As Kd Qc Jh Ts", "Ks Qd Jc Th 9c", "A"),
    ("Kh Kd 9s 9c 4d", "Ks Kc 9h 9d 3c", "A"),
    ("2h 2d 2s 7c 7d", "Ah Ad Ks Kc Kh", "B"),
    ("3h 7h 9h Jh Kh", "Ts Jd Qc Kc As", "A"),
    ("Qs Qd 5c 5h 2s", "Js Jd Tc Th As", "A"),
    ("Ah 2h 3h 4h 5h", "Ks Kd Kc Kh 2d", "A"),
    ("Qd Kd Ad 2c 3d", "2s 2h 7c 9d Jc", "B"),
]


@pytest.mark.parametrize("a,b,winner", W_S1)
def test_W_S1_hand_comparisons(a, b, winner):
    sa, sb = strength(mask(a)), strength(mask(b))
    assert (sa > sb) == (winner == "A") and sa != sb
    ra, rb = reference_strength(cards_of(mask(a))), reference_strength(cards_of(mask(b)))
    assert (ra > rb) == (winner == "A")


def test_W_S1_q_k_a_2_3_is_ace_high_and_any_pair_of_twos_beats_it():
    assert category_name(mask("Qd Kd Ad 2c 3d")) == "high card"
    for pair in ("2s 2h 3c 4d 6h", "2c 2d 7h 8s Jd"):
        assert strength(mask(pair)) > strength(mask("Qd Kd Ad 2c 3d"))


def test_hand_evaluator_ties_kickers_and_full_flush():
    assert strength(mask("5s 6d 7c 8h 9s")) == strength(mask("5h 6c 7d 8s 9c"))   # suits never break ties
    assert strength(mask("Ah Jh 9h 6h 4h")) > strength(mask("As Js 9s 6s 3s"))     # fifth flush card
    assert strength(mask("8s 8d Kc 9h 4s")) > strength(mask("8h 8c Kd 9s 3c"))     # third kicker
    assert strength(mask("Ah 2h 3h 4h 5h")) < strength(mask("2s 3s 4s 5s 6s"))     # steel wheel is 5-high
    assert category_name(mask("As Kd Qc Jh Ts")) == "straight"


def test_hand_evaluator_agrees_with_reference_on_random_pairs():
    rng = random.Random(3)
    for _ in range(2000):
        c = rng.sample(range(52), 10)
        a, b = sum(1 << x for x in c[:5]), sum(1 << x for x in c[5:])
        s = (strength(a) > strength(b)) - (strength(a) < strength(b))
        r = reference_strength(c[:5]), reference_strength(c[5:])
        assert s == (r[0] > r[1]) - (r[0] < r[1])


def test_library_backend_is_used_when_installed():
    pytest.importorskip("phevaluator")
    assert BACKEND == "phevaluator"


# ---------------------------------------------------------------- W-S2 .. W-S4 phase 1

def test_W_S2_phase_one_knock():
    s = setup(4, {}, mode="LOWEST_PAYS")
    p3_old, widow_old = s.hands[3], s.widow
    assert s.current_player() == 1 and legal(s) == {"exchange", "knock", "pass"}
    play(s, "pass", "knock")
    assert legal(s) == {"exchange", "stand"}
    play(s, "exchange", "stand")
    assert s.current_player() == 1 and legal(s) == {"exchange", "stand"}   # P1's last turn
    play(s, "stand")
    assert s.phase == EX2 and s.current_player() == 1                      # back to P2: phase over
    assert s.hands[3] == widow_old and s.widow == p3_old
    # only P3 knows both: P3 saw them, P0 did not
    obs3 = s.observation(3)
    assert obs3["received"] == [sorted(cards(widow_old), key=parse_french)]
    assert s.observation(0)["received"] == []


def test_W_S2_knowledge_before_exposure():
    s = setup(4, {}, mode="BETTING")
    play(s, "check", "check", "check", "check")                            # betting round 1
    p3_old, widow_old = s.hands[3], s.widow
    play(s, "pass", "knock", "exchange", "stand", "stand")
    assert s.phase == BET2 and s.observation(0)["widow"] is None
    for w in samples(s, 3):                                                # P3 knows both blocks
        assert w.hands[3] == widow_old and w.widow == p3_old
    seen = {w.hands[3] for w in samples(s, 0)}                             # P0 knows neither
    assert len(seen) > 1 and all(w.hands[0] == s.hands[0] for w in samples(s, 0))


@pytest.mark.parametrize("ncp", [False, True])
def test_W_S3_passing_twice(ncp):
    s = setup(4, {}, mode="LOWEST_PAYS", no_consecutive_pass=ncp)
    play(s, "pass", "pass", "pass", "pass")
    assert s.current_player() == 1
    assert legal(s) == ({"exchange", "knock"} if ncp else {"exchange", "knock", "pass"})
    if ncp:
        with pytest.raises(IllegalActionError, match="pass"):
            s.apply_string("pass")
    play(s, "knock")
    for seat in (2, 3, 0):
        assert s.current_player() == seat and legal(s) == {"exchange", "stand"}
        play(s, "stand")
    assert s.phase == EX2


@pytest.mark.parametrize("ncp", [False, True])
def test_W_S4_safety_cap(ncp):
    s = setup(2, {}, mode="LOWEST_PAYS", max_circuits_per_phase=3, no_consecutive_pass=ncp)
    play(s, "pass", "pass", "exchange", "exchange", "pass")
    assert s.phase == EX1
    play(s, "pass")
    assert s.phase == EX2 and s.current_player() == 1


def test_W_S4_six_passes_under_the_default():
    s = setup(2, {}, mode="LOWEST_PAYS")
    play(s, *["pass"] * 5)
    assert s.phase == EX1
    play(s, "pass")
    assert s.phase == EX2


def test_a_knock_on_the_last_capped_turn_still_gets_its_last_lap():
    s = setup(3, {}, mode="LOWEST_PAYS", max_circuits_per_phase=1)
    play(s, "pass", "pass", "knock")                                       # 3rd turn = end of circuit 1
    assert s.phase == EX1 and legal(s) == {"exchange", "stand"}
    play(s, "stand", "stand")
    assert s.phase == EX2


# ---------------------------------------------------------------- W-S5, W-S6 phase 2

def _to_phase2(n=3, hands=None, **kw) -> WhiskeyState:
    s = setup(n, hands or {}, mode="LOWEST_PAYS", **kw)
    play(s, "knock", *["stand"] * (n - 1))
    assert s.phase == EX2
    return s


def test_W_S5_one_card_exchange():
    s = _to_phase2(hands={1: "9h 9c 5s 7d Jc"}, widow="2c 9d 9s Kh 4d")
    assert s.current_player() == 1
    assert len(s.legal_actions()) == 27 and "pass" not in legal(s)
    assert "take 9d give 5s" in legal(s) and "take 9d give 9d" not in legal(s)
    with pytest.raises(IllegalActionError):
        s.apply_string("take 9d give 9d")
    with pytest.raises(ActionParseError):
        GAME.parse_action("take 9d 9s give 5s 7d")
    play(s, "take 9d give 5s")
    assert cards(s.hands[1]) == {"9h", "9c", "9d", "7d", "Jc"}
    assert cards(s.widow) == {"2c", "5s", "9s", "Kh", "4d"}
    obs = s.observation(2)
    assert obs["actions"][-1] == [1, "take 9d give 5s"] and set(obs["widow"]) == cards(s.widow)
    for w in samples(s, 2):                                                # public: P1 holds 9d
        assert w.hands[1] >> parse_french("9d") & 1
        assert w.hand_start().hands[1] >> parse_french("5s") & 1                  # and was dealt 5s


def test_W_S6_take_all_makes_a_hand_public():
    s = _to_phase2(n=4, widow="2c 5s 9s Kh 4d")
    old = s.hands[2]
    play(s, "knock", "take all")                                           # P1 knocks, P2 takes all
    assert cards(s.hands[2]) == {"2c", "5s", "9s", "Kh", "4d"} and s.widow == old
    obs = s.observation(0)
    assert obs["shown"] == [[2, sorted(cards(old), key=parse_french)]]
    assert set(obs["widow"]) == cards(old)
    for w in samples(s, 0):
        assert w.hands[2] == s.hands[2] and w.widow == old


def test_phase_one_knock_does_not_carry_into_phase_two():
    s = _to_phase2(n=3)                                                    # P1 knocked in phase 1
    assert s.current_player() == 1 and "knock" in legal(s) and "stand" not in legal(s)
    play(s, "knock")
    assert legal(s) >= {"take all", "stand"} and "knock" not in legal(s)
    play(s, "stand", "stand")
    assert s.hand_index() == 1                                             # LOWEST_PAYS: showdown


# ---------------------------------------------------------------- W-S7 .. W-S9 betting

def test_W_S7_betting_cap():
    s = setup(3, {})
    assert s.pot == 3 and legal(s) == {"check", "bet"}                     # no fold when checking is free
    play(s, "bet", "raise", "raise", "raise")
    assert s.current_player() == 2 and s.legal_strings() == ["call", "fold"]
    play(s, "call", "call")
    assert s.pot == 27 and s.phase == EX1


def test_W_S8_everyone_else_folds():
    s = setup(4, {})
    play(s, "bet", "fold", "fold", "fold")
    assert s.hand_index() == 1 and s.score == [-1, 3, -1, -1]
    last = s.observation(0)["hands"][-1]
    assert last["winners"] == [1] and last["showdown"] == [] and last["folded"] == [0, 2, 3]
    assert last["result"] == [-1, 3, -1, -1]
    assert s.phase == 0 and s.dealer == 1 and s.observation(0)["actions"] == []   # next hand dealt


def test_W_S9_split_pot_odd_chip():
    hands = {1: "Ah Kh 9c 7d 3s", 3: "Ad Kd 9s 7h 3c", 0: "2c 4d 6h 8s Tc", 2: "2d 4h 6s 8c Jd",
             4: "2h 4s 6c 8d Qc", 5: "2s 4c 6d 8h Qd", 6: "3d 5h 7c 9h Js"}
    s = setup(7, hands, widow="3h 5c 5d 7s Td")
    check_round = ["check"] * 7
    play(s, *check_round, "knock", *["stand"] * 6, *check_round, "knock", *["stand"] * 6, *check_round)
    assert s.hand_index() == 1
    assert s.score == [-1, 3, -1, 2, -1, -1, -1]
    last = s.observation(4)["hands"][-1]
    assert last["winners"] == [1, 3] and len(last["showdown"]) == 7


def test_big_bet_in_round_three_and_round_end_after_bet_and_calls():
    s = setup(2, {}, big_bet=5, small_bet=3, ante=2)
    assert s.pot == 4
    play(s, "bet", "call")                                                 # round 1 ends
    assert s.phase == EX1 and s.pot == 10
    play(s, "knock", "stand", "check", "check", "knock", "stand")
    assert s.phase == BET3 and s.observation(1)["unit"] == 5
    play(s, "bet")
    assert s.pot == 15 and s.observation(0)["round_bets"] == [0, 5]
    play(s, "raise")
    assert s.pot == 25
    play(s, "call")
    assert s.hand_index() == 1 and sum(s.score) == 0


def test_folded_players_are_skipped_and_never_revealed():
    s = setup(3, {})
    folded_hand = s.hands[2]
    play(s, "bet", "fold", "call")
    assert s.phase == EX1
    seen = set()
    while s.hand_index() == 0:
        assert s.current_player() != 2
        seen.add(s.current_player())
        a = "check" if "check" in legal(s) else ("knock" if "knock" in legal(s) else "stand")
        s.apply_string(a)
    assert seen == {0, 1}
    last = s.observation(0)["hands"][-1]
    assert 2 in last["folded"] and all(seat != 2 for seat, _ in last["showdown"])
    text = json.dumps(s.observation(0))
    assert all(text.count(f'"{c}"') == 0 for c in cards(folded_hand) if c not in
               {x for _, h in last["showdown"] for x in h})


# ---------------------------------------------------------------- W-S10, W-S11 lowest pays

W_S10_HANDS = {0: "5c 5d 9s 7h 4c", 1: "3h 3s Qc Td 6s", 2: "Ks Jd 8c 5h 2s", 3: "Kd Jc 8h 5s 2d"}


def _showdown_after_knocks(s: WhiskeyState) -> None:
    k = len(s.observation(0)["dealt_in"])
    play(s, "knock", *["stand"] * (k - 1), "knock", *["stand"] * (k - 1))


def test_W_S10_lowest_pays_tie_first_out():
    s = setup(4, W_S10_HANDS, mode="LOWEST_PAYS", score=[5, 5, 1, 5])
    _showdown_after_knocks(s)
    assert s.is_terminal() and s.score == [5, 5, 0, 4]
    assert s.outcome().ranks == (0, 0, 3, 2) and s.outcome().scores == (5, 5, 0, 4)
    assert s.observation(1)["hands"][-1]["payers"] == [2, 3]


def test_W_S10_both_broke_share_last_place():
    s = setup(4, W_S10_HANDS, mode="LOWEST_PAYS", score=[5, 5, 1, 1])
    _showdown_after_knocks(s)
    assert s.outcome().ranks == (0, 0, 2, 2)


def test_W_S10_match_goes_on_while_nobody_is_broke():
    s = setup(4, W_S10_HANDS, mode="LOWEST_PAYS")
    _showdown_after_knocks(s)
    assert not s.is_terminal() and s.score == [5, 5, 4, 4] and s.dealer == 1


def test_W_S11_last_standing_simultaneous_elimination():
    s = setup(4, {1: "Kh Jd 8c 5h 2s", 3: "Kd Jc 8h 5s 2d"}, mode="LOWEST_PAYS",
              lowest_pays_end="last_standing", score=[0, 1, 0, 1], out=[0, -1, 1, -1], hand_index=2,
              dealt_in=[1, 3], dealer=1)
    assert s.current_player() == 3
    _showdown_after_knocks(s)
    assert s.is_terminal()
    assert s.outcome().ranks == (3, 0, 2, 0) and s.outcome().scores == (0, 0, 0, 0)


def test_last_standing_skips_eliminated_players():
    opts = {"mode": "LOWEST_PAYS", "lowest_pays_end": "last_standing", "start_chips": 1}
    for seed in range(10):
        s = GAME.new_match(4, seed, **opts)
        rng = random.Random(seed)
        eliminated = set()
        while not s.is_terminal():
            obs = s.observation(0)
            eliminated = {p for p, o in enumerate(obs["out"]) if o is not None}
            assert s.current_player() not in eliminated and s.dealer not in eliminated
            assert all(s.hands[p] == 0 for p in eliminated)
            assert set(obs["dealt_in"]) == set(range(4)) - eliminated
            a = s.legal_actions()
            s.apply(a[rng.randrange(len(a))])
        out = s.outcome()
        assert sum(1 for x in s.score if x > 0) <= 1 and min(out.ranks) == 0


def test_lowest_pays_first_out_ends_when_someone_is_broke():
    s = GAME.new_match(3, 9, mode="LOWEST_PAYS", start_chips=1)
    rng = random.Random(1)
    while not s.is_terminal():
        a = s.legal_actions()
        s.apply(a[rng.randrange(len(a))])
    assert s.hand_index() == 1 and 0 in s.score


# ---------------------------------------------------------------- dealing, options, match

def test_deal_order_one_card_at_a_time_widow_before_dealer():
    n, seed = 4, 77
    s = GAME.new_match(n, seed, first_dealer=2)
    deck = shuffled(range(52), seed, 0)
    order = [3, 0, 1, "w", 2]                       # dealer's left first, widow, dealer last
    want = {k: 0 for k in order}
    for i, c in enumerate(deck[:25]):
        want[order[i % 5]] |= 1 << c
    assert [s.hands[p] for p in range(n)] == [want[p] for p in range(n)] and s.widow == want["w"]
    assert s.stub == sum(1 << c for c in deck[25:])
    assert s.current_player() == 3 and s.pot == 4


def test_dealer_passes_left_and_match_length():
    s = GAME.new_match(3, 5, hands_per_match=4)
    dealers = []
    rng = random.Random(0)
    while not s.is_terminal():
        if not s.hand_history():
            dealers.append(s.dealer)
        a = s.legal_actions()
        s.apply(a[rng.randrange(len(a))])
    assert dealers == [0, 1, 2, 0] and s.hand_index() == 4 and sum(s.score) == 0
    out = s.outcome()
    assert list(out.scores) == s.score and list(out.ranks) == [sum(1 for o in s.score if o > x) for x in s.score]
    with pytest.raises(GameOverError):
        s.apply(A.CHECK)


def test_default_hands_per_match_is_six_n():
    assert GAME.options["hands_per_match"].default == "6n"
    assert Rules(5, GAME.resolve_options({})).hands == 30


def test_first_dealer_random_is_drawn_from_the_deal_seed():
    d = {GAME.new_match(5, seed, first_dealer="random").dealer for seed in range(40)}
    assert len(d) > 2
    assert GAME.new_match(5, 3, first_dealer="random").dealer == GAME.new_match(5, 3, first_dealer="random").dealer


@pytest.mark.parametrize("opts", [{"mode": "NO"}, {"ante": -1}, {"small_bet": 0}, {"hands_per_match": "5n"},
                                  {"max_circuits_per_phase": 0}, {"no_consecutive_pass": 1},
                                  {"lowest_pays_end": "x"}, {"first_dealer": "left"}, {"first_dealer": 4},
                                  {"colour": 1}])
def test_bad_options_raise(opts):
    with pytest.raises(OptionError):
        GAME.new_match(4, 1, **opts)


def test_player_counts():
    for n in (1, 10):
        with pytest.raises(PlayerCountError):
            GAME.new_match(n, 1)
    GAME.new_match(9, 1)


def test_every_rules_config_option_is_declared_with_its_default():
    want = {"mode": "BETTING", "first_dealer": 0, "ante": 1, "small_bet": 2, "big_bet": 4,
            "max_bets_per_round": 4, "hands_per_match": "6n", "max_circuits_per_phase": 3,
            "no_consecutive_pass": False, "start_chips": 5, "lowest_pays_end": "first_out"}
    assert {k: o.default for k, o in GAME.options.items()} == want


def test_notation_round_trip_and_errors():
    for code in list(range(10)) + [A.take_one(w, h) for w in range(52) for h in range(52)]:
        assert GAME.parse_action(GAME.format_action(code)) == code
    assert GAME.format_action(A.take_one(parse_french("9d"), parse_french("5s"))) == "take 9d give 5s"
    assert GAME.parse_action("take 10d give 5S") == A.take_one(parse_french("Td"), parse_french("5s"))
    for bad in ("bid 2", "take", "take Zz give 5s", "", 3):
        with pytest.raises(ActionParseError):
            GAME.parse_action(bad)
    with pytest.raises(IllegalActionError, match="legal: check, bet"):
        setup(2, {}).apply_string("call")


def test_hand_rewards_in_range_and_linear_in_chips():
    s = setup(4, {})
    assert s.hand_rewards() == [0.5] * 4
    play(s, "bet", "fold", "fold", "fold")
    r = s.hand_rewards()
    assert r[1] > 0.5 > r[0] == r[2] == r[3] and all(0 <= x <= 1 for x in r)


# ---------------------------------------------------------------- observation and information sets

def test_observation_holds_own_cards_only_and_no_seed():
    s = GAME.new_match(3, 2024)
    obs = s.observation(1)
    assert set(obs["hand"]) == cards(s.hands[1]) and obs["dealt"] == obs["hand"]
    text = json.dumps(obs)
    for p in (0, 2):
        assert not any(f'"{c}"' in text for c in cards(s.hands[p]))
    assert not any(f'"{c}"' in text for c in cards(s.widow))
    assert obs["widow"] is None and "2024" not in text and "seed" not in text


def test_exchange_chain_reveals_the_next_exchangers_hand():
    """§2.9: P exchanges, then Q exchanges: P knows Q's whole hand (its own old hand)."""
    s = setup(4, {}, mode="LOWEST_PAYS")
    p1_old = s.hands[1]
    play(s, "exchange", "exchange")                                        # P1 then P2
    assert s.hands[2] == p1_old
    ws = samples(s, 1)
    assert all(w.hands[2] == p1_old for w in ws)                           # P1 knows P2's hand
    assert len({w.widow for w in ws}) > 1                                  # but not P2's old hand
    for w in samples(s, 2):
        assert w.widow == s.widow and w.hands[2] == p1_old
    assert len({w.hands[2] for w in samples(s, 3)}) > 1                    # P3 does not


def test_infoset_count_is_the_multinomial_of_unseen_cards():
    s = setup(4, {}, mode="LOWEST_PAYS")
    info = GAME.infoset(s.observation(0))
    # 47 unseen cards: 3 hands of 5, the widow 5, the stub 27
    assert info.count() == factorial(47) // (factorial(5) ** 4 * factorial(27))
    play(s, "knock", "stand", "stand", "stand")                             # widow exposed
    info = GAME.infoset(s.observation(0))
    assert info.count() == factorial(42) // (factorial(5) ** 3 * factorial(27))


def _nine_player_late_phase_two() -> WhiskeyState:
    s = setup(9, {}, mode="LOWEST_PAYS")
    play(s, "knock", *["stand"] * 8)
    play(s, *["take all"] * 8)                                              # P1..P8 take all; P0 to act
    assert s.phase == EX2 and s.current_player() == 0
    return s


def test_chi2_against_exact_enumeration_in_a_small_position():
    s = _nine_player_late_phase_two()
    info = GAME.infoset(json.loads(json.dumps(s.observation(1))))
    assert info.count() == 21                                              # P0's 5 of 7 cards, the stub 2
    assert cf.chi2_uniformity(GAME, s, 1)


def test_determinization_audit_in_scripted_positions():
    s = _nine_player_late_phase_two()
    for seat in range(9):
        cf.audit_position(GAME, s, seat, samples=8, seed=seat)
    t = setup(4, {})
    play(t, "check", "bet", "call", "fold", "call", "exchange", "exchange", "knock", "stand", "stand",
         "check", "check", "check", "take all")
    assert t.phase == EX2 and t.current_player() == 2
    for seat in range(4):
        cf.audit_position(GAME, t, seat, samples=8, seed=seat)


@pytest.mark.parametrize("n,opts", GAME.configs)
def test_conformance_functions_on_configs(n, opts):
    conformance_suite(GAME, n, opts, playouts=3, determinism_seed=4, public_seed=4, positions_seed=21, samples=4)


def test_sample_respects_exposed_widow_and_phase_two_pins():
    rng = random.Random(8)
    for seed in range(6):
        s = GAME.new_match(5, seed, mode="LOWEST_PAYS")
        while s.phase != EX2 or len(s.hand_history()) < 12:
            a = s.legal_actions()
            s.apply(a[rng.randrange(len(a))])
            if s.hand_index():
                break
        if s.hand_index():
            continue
        exposed = s.exposed
        for w in samples(s, 0, k=10, seed=seed):
            assert w.exposed == exposed and w.widow == s.widow
            assert w.hands[0] == s.hands[0]


# ---------------------------------------------------------------- greedy heuristic

def _greedy(state: WhiskeyState) -> str:
    p = state.current_player()
    return greedy.act(state.observation(p), state.legal_strings(), random.Random(0))


def test_greedy_takes_the_improving_card_in_phase_two():
    s = _to_phase2(hands={1: "9h 9c 5s 7d Jc"}, widow="2c 9d 9s Kh 4d")
    assert _greedy(s) == "take 9d give 5s"


def test_greedy_knocks_when_nothing_improves():
    s = _to_phase2(hands={1: "As Ks Qs Js Ts"}, widow="2c 3d 4h 6s 8c")
    assert _greedy(s) == "knock"


def test_greedy_phase_one_exchanges_rubbish_and_knocks_two_pair():
    s = setup(3, {1: "2c 5d 9h Js Kc", 2: "9c 9d 4h 4s Ac"}, mode="LOWEST_PAYS")
    assert _greedy(s) == "exchange"
    play(s, "pass")
    assert _greedy(s) == "knock"


def test_greedy_does_not_take_back_a_worse_known_widow():
    s = setup(3, {1: "Kc Kd 9h 5s 2c"}, widow="3c 4d 7h 8s Tc", mode="LOWEST_PAYS")
    play(s, "exchange", "pass", "pass")                                    # P1 holds rubbish, widow = its pair
    assert _greedy(s) == "exchange"
    play(s, "exchange", "pass", "pass")                                    # pair back; widow = rubbish
    assert _greedy(s) in {"knock", "pass"}


def test_greedy_betting():
    s = setup(3, {1: "Ah Ad As 7c 2d", 2: "3c 5d 8h Js Kc"})
    assert _greedy(s) == "bet"                                              # trips bet
    play(s, "bet")
    assert _greedy(s) == "call"                                             # round 1: one bet called
    play(s, "raise")
    s2 = setup(3, {1: "3c 5d 8h Js Kc", 0: "Ah Ad As 7c 2d"})
    play(s2, "check", "bet", "raise")
    assert s2.current_player() == 1
    assert _greedy(s2) == "fold"                                            # rubbish facing 2 bets
    s3 = setup(2, {1: "Ah Ad As 7c 2d", 0: "3c 5d 8h Js Kc"})
    play(s3, "check", "check", "knock", "stand", "check", "check", "knock", "stand")
    assert s3.phase == BET3
    assert _greedy(s3) == "bet"                                             # trips bet the big bet
    play(s3, "bet")
    assert _greedy(s3) == "fold"                                            # high card folds at the end


def test_greedy_returns_legal_strings_everywhere():
    rng = random.Random(4)
    for n, opts in GAME.configs:
        s = GAME.new_match(n, rng.getrandbits(32), **opts)
        steps = 0
        while not s.is_terminal() and steps < 400:
            legal_now = s.legal_strings()
            a = greedy.act(s.observation(s.current_player()), legal_now, rng)
            assert a in legal_now
            s.apply_string(a)
            steps += 1


def test_greedy_beats_random_players():
    wins = 0
    for seed in range(6):
        s = play_out(GAME.new_match(3, seed, hands_per_match=6), greedy.act, {0}, random.Random(seed))
        wins += s.outcome().ranks[0] == 0
    assert wins >= 5


# ---------------------------------------------------------------- rollout policy

def _roll(state: WhiskeyState, seed: int = 0) -> str:
    return A.format_action(GAME.rollout_action(state, random.Random(seed)))


def test_rollout_policy_is_the_games_rollout_action():
    assert GAME.rollout_action is rollout_policy.rollout_action


def test_rollout_tier_matches_the_reference_categories():
    rng = random.Random(11)
    for _ in range(3000):
        m = sum(1 << c for c in rng.sample(range(52), 5))
        cat = reference_strength(cards_of(m)) >> 20
        if cat == 1:
            ranks = [c % 13 for c in cards_of(m)]
            pair = max(r for r in ranks if ranks.count(r) == 2)
            want = 2 if pair >= 9 else 1
        else:
            want = {0: 0, 2: 3, 3: 4}.get(cat, 5)
        assert rollout_policy.tier(m) == want
    assert rollout_policy.tier(mask("Ah 2c 3d 4s 5h")) == 5                       # the wheel
    assert rollout_policy.tier(mask("Jh Jc 3d 4s 5h")) == 2


@pytest.mark.parametrize("n,opts", GAME.configs)
def test_rollout_policy_returns_legal_actions_on_random_states(n, opts):
    rng = random.Random(n)
    seen = 0
    for _ in range(6):
        s = GAME.new_match(n, rng.getrandbits(32), **opts)
        steps = 0
        while not s.is_terminal() and steps < 600:
            legal_now = s.legal_actions()
            a = GAME.rollout_action(s, rng)
            assert a in legal_now
            # mixing in uniform moves, to reach states the policy alone would not
            s.apply(a if rng.random() < 0.7 else legal_now[rng.randrange(len(legal_now))])
            steps += 1
            seen += 1
    assert seen > 50


def test_rollout_policy_is_deterministic_given_the_rng():
    def run(seed: int) -> list[int]:
        rng = random.Random(seed)
        s = GAME.new_match(3, 99, hands_per_match=3)
        out = []
        while not s.is_terminal():
            a = GAME.rollout_action(s, rng)
            out.append(a)
            s.apply(a)
        return out
    assert run(5) == run(5)


def test_rollout_policy_folds_junk_to_a_bet_more_than_strong_hands():
    def folds(hand: str, final: bool) -> int:
        count = 0
        for seed in range(400):
            s = setup(3, {1: "3c 3d Qh Qs Kc", 0: hand})                          # seat 0 deals, acts last
            if final:
                play(s, "check", "check", "check", "knock", "stand", "stand",
                     "check", "check", "check", "knock", "stand", "stand")
                assert s.phase == BET3
            play(s, "check", "bet")
            assert s.current_player() == 0
            count += _roll(s, seed) == "fold"
        return count
    for final in (False, True):
        junk, pair, trips = folds("2c 5d 8h Js Kh", final), folds("9c 9d 4h 6s Ah", final), \
            folds("Ah Ad As 7c 2d", final)
        assert junk > pair >= trips == 0
    assert folds("2c 5d 8h Js Kh", True) > 300                                  # junk folds at the end
    assert folds("2c 5d 8h Js Kh", False) < 300                                 # but calls often in round 1


def test_rollout_policy_bets_and_raises_with_strength():
    def count(hand: str, facing: bool, want: str) -> int:
        n = 0
        for seed in range(200):
            s = setup(3, {1: "3c 3d Qh Qs Kc", 0: hand})
            play(s, "check", "bet") if facing else play(s, "check", "check")
            n += _roll(s, seed) == want
        return n
    assert count("Ah Ad As 7c 2d", False, "bet") == 200
    assert count("2c 5d 8h Js Kh", False, "bet") < 30
    assert count("Ah Ad As 7c 2d", True, "raise") > count("9c 9d 4h 6s Ah", True, "raise")


def test_rollout_policy_exchanges():
    # phase 1: junk exchanges a fresh widow, a pair passes, two pair knocks
    s = setup(3, {1: "2c 5d 9h Js Kc", 2: "9c 9d 4h 4s Ac", 0: "7c 7d 2h 3s 5c"}, mode="LOWEST_PAYS")
    assert _roll(s) == "exchange"
    play(s, "exchange")
    assert _roll(s) == "knock"
    play(s, "pass")
    assert _roll(s) == "pass"
    # own previous hand in the widow: taken back only when better
    s = setup(3, {1: "Kc Kd 9h 5s 2c"}, widow="3c 4d 7h 8s Tc", mode="LOWEST_PAYS")
    play(s, "exchange", "pass", "pass")
    assert _roll(s) == "exchange"
    # phase 2: the improving card, a completed flush, else knock
    s = _to_phase2(hands={1: "9h 9c 5s 7d Jc"}, widow="2c 9d 9s Kh 4d")
    assert _roll(s) == "take 9d give 5s"
    s = _to_phase2(hands={1: "2h 5h 9h Jh Kc"}, widow="2c 3d 4c 6s Ah")
    assert _roll(s) == "take Ah give Kc"
    s = _to_phase2(hands={1: "As Ks Qs Js Ts"}, widow="2c 3d 4h 6s 8c")
    assert _roll(s) == "knock"
    s = _to_phase2(hands={1: "2c 3d 4h 7s 8c"}, widow="Ac Ad Ah As 8d")
    assert _roll(s) == "take all"
