"""Cuttle rules: every worked scenario of docs/rules/cuttle.md §3.11 and each card's effect."""

from __future__ import annotations

import pytest

from engine.errors import ActionParseError, IllegalActionError, OptionError, PlayerCountError
from engine.games.cuttle.actions import COUNTER, DISCARD, MAIN, OVER, SEVEN, TAKE
from tests.games.cuttle_helpers import GAME, C, M, names, play, position, stack_side

# ---------------------------------------------------------------- worked scenarios (§3.11)


def test_C_S1_scuttle_order():
    s = position(hands=(["9c", "9s", "Tc", "8s"], ["2h"]), stacks=[("9d", 1, [])])
    legal = s.legal_strings()
    assert "scuttle 9d with 9s" in legal and "scuttle 9d with Tc" in legal
    assert "scuttle 9d with 9c" not in legal and "scuttle 9d with 8s" not in legal
    with pytest.raises(IllegalActionError, match="scuttle 9d with 9c.*legal: pass"):
        s.apply_string("scuttle 9d with 9c")
    play(s, "scuttle 9d with Tc")
    assert s.scrap == M(["9d", "Tc"]) and s.ctrl == [0, 0]


def _ace_position():
    return position(hands=(["Ah", "2c", "2s"], ["2h", "2d", "5s"]), deck=["3c"],
                    stacks=[("7c", 0, []), ("9d", 1, [])])


def test_C_S2_counter_parity():
    s = play(_ace_position(), "oneoff Ah", "counter 2h", "counter 2c", "decline")
    assert s.ctrl == [0, 0], "two 2s: the Ace resolves"
    assert names(s.scrap) == {"Ah", "2h", "2c", "7c", "9d"}
    s = play(_ace_position(), "oneoff Ah", "counter 2h", "counter 2c", "counter 2d", "decline")
    assert stack_side(s, "7c") == 0 and stack_side(s, "9d") == 1, "three 2s: the Ace fizzles"
    assert names(s.scrap) == {"Ah", "2h", "2c", "2d"}


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_counter_chain_lengths(length):
    s = play(_ace_position(), "oneoff Ah")
    for two in ["2h", "2c", "2d", "2s"][:length]:
        assert s.phase == COUNTER
        play(s, f"counter {two}")
    assert s.current_player() == (1 if length % 2 == 0 else 0)
    play(s, "decline")
    resolved = length % 2 == 0
    assert (s.ctrl == [0, 0]) == resolved
    assert s.scrap & M(["2h", "2c", "2d", "2s"][:length]) == M(["2h", "2c", "2d", "2s"][:length])
    assert "Ah" in names(s.scrap)
    assert s.phase == MAIN and s.current_player() == 1


def test_C_S3_queen_blocks_counter_window_still_offered():
    s = position(hands=(["6d", "3c"], ["2h", "9c"]), perms=(["Qc"], []))
    play(s, "oneoff 6d")
    assert s.phase == COUNTER and s.current_player() == 1
    assert s.legal_strings() == ["decline"]
    play(s, "decline")
    assert names(s.scrap) == {"6d", "Qc"} and s.perm == [0, 0]


def test_C_S4_queen_and_targets():
    s = position(hands=(["2c", "9c", "Jc"], ["3h"]), perms=([], ["Qh", "Ks", "8d"]), stacks=[("5d", 1, [])])
    legal = s.legal_strings()
    assert [a for a in legal if a.startswith("oneoff 2c")] == ["oneoff 2c on Qh"]
    assert [a for a in legal if a.startswith("oneoff 9c")] == ["oneoff 9c on Qh"]
    assert not [a for a in legal if a.startswith("jack")], "no jacks while the opponent has a queen"
    s = position(hands=(["2c", "9c"], ["3h"]), perms=([], ["Qh", "Qs", "Ks"]))
    assert {a for a in s.legal_strings() if a.startswith("oneoff")} == {
        "oneoff 2c on Qh", "oneoff 2c on Qs", "oneoff 9c on Qh", "oneoff 9c on Qs"}


def test_C_S5_jack_ping_pong():
    s = position(hands=(["Js", "4c"], ["Jc", "2d", "5c"]), stacks=[("Th", 0, [])], turn=1)
    play(s, "jack Jc on Th")
    assert stack_side(s, "Th") == 1
    play(s, "jack Js on Th")
    assert stack_side(s, "Th") == 0 and s.jacks[C("Th")] == (C("Jc"), C("Js"))
    play(s, "oneoff 2d on Js", "decline")
    assert stack_side(s, "Th") == 1 and "Js" in names(s.scrap)
    assert s.observation(0)["stacks"] == [{"base": "Th", "controller": 1, "owner": 0, "jacks": ["Jc"]}]


def test_C_S6_six_with_jacks():
    s = position(hands=(["6c", "4c"], ["5d"]), stacks=[("Th", 0, ["Jc", "Js"])])
    assert stack_side(s, "Th") == 0
    play(s, "oneoff 6c", "decline")
    assert stack_side(s, "Th") == 0 and names(s.scrap) == {"6c", "Jc", "Js"}
    s = position(hands=(["6c", "4c"], ["5d"]), stacks=[("Th", 0, ["Jc"])])
    assert stack_side(s, "Th") == 1
    play(s, "oneoff 6c", "decline")
    assert stack_side(s, "Th") == 0 and s.jacks == {}


def test_C_S7_nine_on_a_jack():
    s = position(hands=(["9s", "4c"], ["5d"]), stacks=[("7d", 0, ["Jd"])])
    assert stack_side(s, "7d") == 1
    play(s, "oneoff 9s on Jd", "decline")
    assert stack_side(s, "7d") == 0
    assert "Jd" in names(s.hands[1]) and names(s.scrap) == {"9s"}


def test_C_S8_king_thresholds():
    s = position(hands=(["Kh", "4c"], ["5d"]), deck=["3c", "3d", "3h"], stacks=[("6c", 0, [])],
                 perms=(["Kc", "Kd", "Ks"], []))
    assert s.threshold(0) == 7 and s.points(0) == 6
    play(s, "draw")
    assert not s.is_terminal(), "3 kings and 6 points: no win (needs 7)"
    play(s, "draw", "king Kh")
    assert s.is_terminal() and s.outcome().ranks == (0, 1) and s.threshold(0) == 5


def test_C_S9_seven_forced_jack():
    s = position(hands=(["7c", "4c"], ["5s"]), deck=["Jh", "3c"], stacks=[("5d", 0, [])])
    play(s, "oneoff 7c", "decline")
    assert s.phase == SEVEN and s.legal_strings() == ["jack Jh on 5d"]
    play(s, "jack Jh on 5d")
    assert stack_side(s, "5d") == 1 and names(s.scrap) == {"7c"} and s.current_player() == 1


@pytest.mark.parametrize("variant", ["no point cards", "opponent queen"])
def test_C_S9_seven_reveals_unplayable_jack(variant):
    if variant == "no point cards":
        s = position(hands=(["7c", "4c"], ["5s"]), deck=["Jh", "3c"])
    else:
        s = position(hands=(["7c", "4c"], ["5s"]), deck=["Jh", "3c"], stacks=[("5d", 0, [])],
                     perms=([], ["Qs"]))
    play(s, "oneoff 7c", "decline")
    assert s.phase == MAIN and s.current_player() == 1
    assert names(s.scrap) == {"7c", "Jh"}
    obs = s.observation(1)
    assert obs["draws"] == [[0, 1, "seven", ["Jh"]]], "the scrapped card is shown to both"


def test_C_S10_three_and_suspension():
    s = position(hands=(["3d", "4c"], ["5s"]), scrap=["3c"])
    play(s, "oneoff 3d", "decline")
    assert s.phase == TAKE and s.legal_strings() == ["take 3c"]
    play(s, "take 3c")
    assert names(s.hands[0]) == {"3c", "4c"} and names(s.scrap) == {"3d"}
    s = position(hands=(["3d", "4c"], ["5s"]))
    assert "oneoff 3d" not in s.legal_strings()


def test_C_S11_hand_limit():
    hand = ["5c", "4c", "4d", "4h", "4s", "6c", "6d", "6h"]
    s = position(hands=(hand, ["Ks"]), deck=["3c", "3d", "3h"], hand_limit=8)
    assert "draw" not in s.legal_strings()
    play(s, "oneoff 5c", "decline")
    assert s.hands[0].bit_count() == 8 and len(s.deck) == 2
    s = position(hands=(hand, ["Ks"]), deck=["3c", "3d", "3h"])
    assert "draw" in s.legal_strings()
    play(s, "oneoff 5c", "decline")
    assert s.hands[0].bit_count() == 9 and names(s.hands[0]) >= {"3c", "3d"}


def test_C_S12_stalemate():
    s = position(hands=(["4c"], ["5d"]), stacks=[("9c", 0, []), ("3h", 1, [])])
    assert s.legal_strings()[0] == "pass"
    play(s, "pass", "pass")
    assert not s.is_terminal()
    play(s, "pass")
    assert s.is_terminal() and s.outcome().ranks == (0, 0) and s.outcome().scores == (9.0, 3.0)
    assert s.observation(0)["result"]["reason"] == "passes"
    s = position(hands=(["4c"], ["5d"]))
    play(s, "pass", "points 5d", "pass", "pass")
    assert not s.is_terminal(), "a played card restarts the count"
    play(s, "pass")
    assert s.is_terminal()


def test_C_S13_win_only_at_own_turn_end():
    s = position(hands=(["6c", "4c"], ["5s"]), deck=["2c", "2d"],
                 stacks=[("3d", 1, []), ("8h", 1, []), ("Ts", 1, ["Jc"])], perms=([], ["Kc"]))
    assert s.points(1) == 11 and s.threshold(1) == 14 and stack_side(s, "Ts") == 0
    play(s, "oneoff 6c", "decline")
    assert s.points(1) == 21 and s.threshold(1) == 21
    assert not s.is_terminal() and s.current_player() == 1
    play(s, "draw")
    assert s.is_terminal() and s.outcome().ranks == (1, 0)


def test_C_S14_ace_with_jacks():
    s = position(hands=(["Ac", "4c"], ["5s"]), stacks=[("9c", 0, ["Jc"]), ("2h", 0, [])])
    assert stack_side(s, "9c") == 1
    play(s, "oneoff Ac", "decline")
    assert s.ctrl == [0, 0] and s.jacks == {} and names(s.scrap) == {"Ac", "9c", "Jc", "2h"}


def test_C_S15_four_against_an_emptied_hand():
    s = position(hands=(["4c", "2s", "9d"], ["2h"]))
    assert "oneoff 4c" in s.legal_strings()
    play(s, "oneoff 4c", "counter 2h", "counter 2s", "decline")
    assert s.hands[1] == 0 and names(s.scrap) == {"2h", "2s", "4c"} and s.phase == MAIN
    s = position(hands=(["4c", "9d"], ["2h", "Kd"]))
    play(s, "oneoff 4c", "decline")
    assert s.phase == MAIN and s.current_player() == 1, "no DiscardForFour decision with two cards"
    assert names(s.scrap) == {"4c", "2h", "Kd"}
    shown = s.observation(0)["shown"]
    assert shown[0] == [0, 0, "4c"] and {tuple(x) for x in shown[1:]} == {(1, 1, "2h"), (1, 1, "Kd")}


def test_C_S16_nine_on_own_jack():
    s = position(hands=(["Js", "9h", "Tc"], ["5s", "6s"]), deck=["3c", "3d"], stacks=[("4d", 0, [])])
    play(s, "jack Js on 4d")
    assert stack_side(s, "4d") == 1
    play(s, "draw", "oneoff 9h on Js", "decline")
    assert "Js" in names(s.hands[1]) and stack_side(s, "4d") == 0


# ---------------------------------------------------------------- more rules


def test_jack_stack_scuttled_with_its_jacks():
    s = position(hands=(["Tc", "3c"], ["5s"]), stacks=[("9d", 0, ["Jc", "Jd", "Jh"])])
    assert stack_side(s, "9d") == 1
    play(s, "scuttle 9d with Tc")
    assert names(s.scrap) == {"Tc", "9d", "Jc", "Jd", "Jh"} and s.jacks == {} and s.ctrl == [0, 0]


def test_only_the_top_jack_is_a_target():
    s = position(hands=(["2c", "3c"], ["5s"]), stacks=[("9d", 1, ["Jc", "Jd"])])
    assert [a for a in s.legal_strings() if a.startswith("oneoff")] == ["oneoff 2c on Jd"]


def test_two_destroys_a_permanent_and_nine_returns_one():
    s = position(hands=(["2c", "9c"], ["5s"]), deck=["3c"], perms=([], ["8d", "Kh"]))
    play(s, "oneoff 2c on 8d", "decline")
    assert s.perm[1] == M(["Kh"]) and "8d" in names(s.scrap)
    play(s, "draw", "oneoff 9c on Kh", "decline")
    assert s.perm[1] == 0 and "Kh" in names(s.hands[1]) and "Kh" in s.observation(0)["opponent_known"]


def test_two_and_nine_may_target_own_permanents():
    s = position(hands=(["2c", "9c"], ["5s"]), perms=(["Kd"], []))
    assert {"oneoff 2c on Kd", "oneoff 9c on Kd"} <= set(s.legal_strings())


def test_four_victim_chooses_two_discards():
    s = position(hands=(["4c", "9d"], ["Kh", "3s", "7d"]))
    play(s, "oneoff 4c", "decline")
    assert s.phase == DISCARD and s.current_player() == 1
    assert sorted(s.legal_strings()) == ["discard 3s 7d", "discard 3s Kh", "discard 7d Kh"]
    play(s, "discard 3s 7d")
    assert names(s.hands[1]) == {"Kh"} and names(s.scrap) == {"4c", "3s", "7d"} and s.current_player() == 1


def test_four_needs_a_non_empty_opposing_hand():
    s = position(hands=(["4c", "9d"], []))
    assert "oneoff 4c" not in s.legal_strings()


def test_five_and_seven_need_a_deck():
    s = position(hands=(["5c", "7c"], ["3d"]))
    assert not [a for a in s.legal_strings() if a.startswith("oneoff")]
    s = position(hands=(["5c", "7c"], ["3d"]), deck=["9h"])
    play(s, "oneoff 5c", "decline")
    assert names(s.hands[0]) == {"7c", "9h"}, "a 5 with one card left draws one"


def test_seven_chains_into_a_countered_one_off():
    s = position(hands=(["7c", "4c"], ["2h", "5s"]), deck=["7d", "Ah", "3c"], stacks=[("9s", 1, [])])
    play(s, "oneoff 7c", "decline")
    assert s.phase == SEVEN and sorted(s.legal_strings()) == ["oneoff 7d", "points 7d"]
    play(s, "oneoff 7d", "decline")
    assert s.phase == SEVEN and "oneoff Ah" in s.legal_strings()
    play(s, "oneoff Ah", "counter 2h", "decline")
    assert stack_side(s, "9s") == 1, "the countered Ace fizzles"
    assert names(s.scrap) == {"7c", "7d", "Ah", "2h"} and s.phase == MAIN and s.current_player() == 1


def test_seven_card_is_private_until_played():
    s = position(hands=(["7c", "4c"], ["5s"]), deck=["9h", "3c"], perms=([], ["8s"]))
    play(s, "oneoff 7c", "decline")
    assert s.observation(0)["seven_card"] == "9h"
    assert s.observation(1)["seven_card"] is None and s.observation(1)["draws"][-1][3] == ["?"]
    play(s, "points 9h")
    assert s.observation(1)["draws"][-1][3] == ["9h"]


def test_suspended_cards_cannot_be_taken_by_a_three():
    s = position(hands=(["7c", "4c"], ["5s"]), deck=["3h", "3c"], scrap=["Kd"])
    play(s, "oneoff 7c", "decline", "oneoff 3h", "decline")
    assert s.phase == TAKE and s.legal_strings() == ["take Kd"]
    assert s.observation(1)["oneoff"]["suspended"] == ["7c", "3h"]


def test_queen_bars_counters_from_the_queens_opponent_only():
    s = position(hands=(["Ac", "2c"], ["2h", "5s"]), perms=([], ["Qd"]))
    play(s, "oneoff Ac")
    assert s.legal_strings() == ["counter 2h", "decline"], "the Ace's owner has no queen"
    play(s, "counter 2h")
    assert s.legal_strings() == ["decline"], "the 2h's owner controls a queen"


def test_glasses_expose_the_hand_and_later_draws():
    s = position(hands=(["8c", "4c"], ["5s", "Kd"]), deck=["3c", "9h", "9d"], turn=0)
    assert s.observation(0)["opponent_hand"] is None
    play(s, "glasses 8c")
    obs = s.observation(0)
    assert set(obs["opponent_hand"]) == {"5s", "Kd"} and obs["glimpses"] == [[0, ["5s", "Kd"]]]
    play(s, "draw")
    assert "3c" in s.observation(0)["opponent_hand"] and s.observation(0)["draws"][-1][3] == ["3c"]
    assert s.observation(1)["known_to_opponent"] == ["3c", "5s", "Kd"]
    play(s, "draw", "draw")
    assert s.observation(0)["opponent_hand"] == s.observation(0)["opponent_known"]


def test_max_turns_draw():
    s = position(hands=(["4c", "5c"], ["5d", "6d"]), deck=["3c", "3d", "3h", "3s"], max_turns=3)
    play(s, "draw", "draw")
    assert not s.is_terminal()
    play(s, "draw")
    assert s.is_terminal() and s.outcome().ranks == (0, 0)
    assert s.observation(1)["result"] == {"winner": None, "reason": "max_turns", "ranks": [0, 0]}


def test_nine_freezes_option():
    for freeze in (False, True):
        s = position(hands=(["9c", "4c"], ["5s", "6s"]), deck=["3c", "3d", "3h"], perms=([], ["Kh"]),
                     nine_freezes=freeze)
        play(s, "oneoff 9c on Kh", "decline")
        assert ("king Kh" in s.legal_strings()) is not freeze
        if freeze:
            assert s.observation(0)["frozen"] == [[], ["Kh"]]
        play(s, "draw", "draw")
        assert "king Kh" in s.legal_strings(), "the freeze lasts one turn of its holder"


def test_nine_freeze_on_own_card_lasts_through_next_turn():
    s = position(hands=(["9c", "4c"], ["5s", "6s"]), deck=["3c", "3d", "3h"], perms=(["Kh"], []),
                 nine_freezes=True)
    play(s, "oneoff 9c on Kh", "decline", "draw")
    assert "king Kh" not in s.legal_strings()
    play(s, "draw", "draw")
    assert "king Kh" in s.legal_strings()


def test_first_dealer_option():
    assert GAME.new_match(2, 5).current_player() == 1
    assert GAME.new_match(2, 5, first_dealer=1).current_player() == 0
    dealers = {GAME.new_match(2, seed, first_dealer="random").dealer for seed in range(20)}
    assert dealers == {0, 1}
    for seed in range(5):
        a = GAME.new_match(2, seed, first_dealer="random")
        assert a.dealer == GAME.new_match(2, seed, first_dealer="random").dealer
        assert a.hands[a.dealer].bit_count() == 6 and a.hands[1 - a.dealer].bit_count() == 5
        assert len(a.deck) == 41


@pytest.mark.parametrize("opts,match", [
    ({"hand_limit": 7}, "hand_limit"), ({"max_turns": 0}, "max_turns"), ({"nine_freezes": "yes"}, "nine_freezes"),
    ({"first_dealer": 2}, "first_dealer"), ({"colour": 1}, "unknown option"),
])
def test_option_errors(opts, match):
    with pytest.raises(OptionError, match=match):
        GAME.new_match(2, 1, **opts)


def test_two_players_only():
    with pytest.raises(PlayerCountError):
        GAME.new_match(3, 1)


@pytest.mark.parametrize("text", [
    "draw", "pass", "points 9d", "scuttle 9d with Tc", "glasses 8h", "queen Qs", "king Kd", "jack Jc on 9d",
    "oneoff Ac", "oneoff 2c on Qh", "counter 2h", "decline", "take 3c", "discard 4d 7s",
])
def test_notation_round_trip(text):
    assert GAME.format_action(GAME.parse_action(text)) == text


def test_discard_notation_is_normalised():
    assert GAME.format_action(GAME.parse_action("discard Kh 3s")) == "discard 3s Kh"


@pytest.mark.parametrize("text", ["", "draw 2", "points", "points 1x", "scuttle 9d Tc", "oneoff 2c",
                                  "discard 4d 4d", "jack Jc 9d", "play 9d"])
def test_parse_errors(text):
    with pytest.raises(ActionParseError):
        GAME.parse_action(text)


def test_no_action_after_the_end():
    s = position(hands=(["Kh"], ["5d"]), stacks=[("Tc", 0, []), ("Td", 0, [])], perms=(["Kc"], []))
    play(s, "king Kh")
    assert s.phase == OVER and s.legal_actions() == [] and s.current_player() == -1
    from engine.errors import GameOverError
    with pytest.raises(GameOverError):
        s.apply_string("pass")
