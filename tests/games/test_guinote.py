"""Guiñote (docs/rules/guinote.md): worked scenarios G-S1..G-S13, rules, options,
observations, information-set inferences and the greedy heuristic."""

from __future__ import annotations

import json
import random

import pytest

from bots.greedy.guinote import act as greedy
from engine.cards import parse_spanish
from engine.errors import ActionParseError, IllegalActionError, OptionError, PlayerCountError
from engine.registry import get_game
from tests import conformance as cf
from tests.games.helpers import play_out

G = get_game("guinote")
O, C, E, B = range(4)  # noqa: E741 - the suits o c e b


def c(text: str) -> int:
    return parse_spanish(text)


def mask(cards: str) -> int:
    m = 0
    for t in cards.split():
        m |= 1 << c(t)
    return m


def position(n: int, hands: list[str], trump: int, leader: int = 0, stock: str | None = None,
             **options) -> object:
    """A state with the given hands; ``stock`` = 'faceup fd1 fd2 ...' (fd1 drawn first) or
    None for an empty stock (strict play). Hands are padded with nothing: only the listed
    cards are held."""
    st = G.new_match(n, 12345, **options)
    st.hands = [mask(h) for h in hands]
    if stock is None:
        st.stock = []
    else:
        cards = [c(t) for t in stock.split()]
        st.stock = [cards[0]] + cards[:0:-1]
    st.trump = trump
    st.dealer = (leader - 1) % n
    st.leader = st.turn = leader
    st.trick = []
    st.history = []
    snap = st.clone()
    snap.start = snap
    st.start = snap
    return st


def play(st, *cards: str) -> None:
    for t in cards:
        st.apply_string(f"play {t}" if not t.startswith(("swap7", "call", "proceed")) else t)


def legal_cards(st) -> set[str]:
    return {s.split()[1] for s in st.legal_strings()}


# ---------------------------------------------------------------- worked scenarios

def test_G_S1_draw_phase_trump_wins():
    st = position(4, ["3c 5e", "1e 6e", "2o 6b", "12c 5b"], O, stock="4o 4e 4b 4c 7e")
    play(st, "3c", "1e", "2o", "12c")
    assert st.current_player() == 2 and st.legal_strings() == ["proceed"]
    assert st.hand_pts == [25, 0]


def test_G_S2_highest_of_suit_led():
    st = position(4, ["7c 5e", "11c 6e", "1b 6b", "3c 5b"], O, stock="4o 4e 4b 4c 7e")
    play(st, "7c", "11c", "1b", "3c")
    assert st.current_player() == 3
    assert st.hand_pts == [0, 24]


@pytest.mark.parametrize("hand,legal", [
    ("12c 5c 1o", {"12c"}),
    ("10c 5c 1o", {"10c", "5c"}),
    ("1o 4o 2b", {"1o", "4o"}),
])
def test_G_S3_strict_must_beat_or_trump(hand, legal):
    st = position(2, ["11c 2e 3e", hand], O)
    play(st, "11c")
    assert legal_cards(st) == legal


def test_G_S4_beat_the_current_winner_not_the_lead():
    st = position(4, ["4c 2e", "12c 3e", "3c 5c 6b", "6c 4e"], O)
    play(st, "4c", "12c")
    assert legal_cards(st) == {"3c"}


@pytest.mark.parametrize("hand,legal", [("3c 5c 6b", {"3c", "5c"}), ("2o 6b", {"2o", "6b"})])
def test_G_S5_partner_winning(hand, legal):
    st = position(4, ["4c 2e", "2c 3e", hand, "6c 4e"], O)
    play(st, "4c", "2c")
    assert legal_cards(st) == legal


def test_G_S6_must_follow_even_when_it_cannot_win():
    st = position(4, ["5c 2e", "2o 3e", "1c 3b", "6c 4e"], O)
    play(st, "5c", "2o")
    assert legal_cards(st) == {"1c"}
    play(st, "1c", "6c")
    assert st.current_player() == 1 and st.hand_pts == [0, 11]


@pytest.mark.parametrize("hand,under,legal", [
    ("5o 10o 7b", False, {"5o", "10o"}),
    ("2o 7b", False, {"2o", "7b"}),
    ("2o 7b", True, {"2o"}),
])
def test_G_S7_over_trump_or_free(hand, under, legal):
    st = position(4, ["12c 2e 3e", "4o 3e 5e", hand, "6c 4e 7e"], O, must_undertrump=under)
    play(st, "12c", "4o")
    assert legal_cards(st) == legal


def test_G_S8_swap_seven():
    st = position(2, ["7o 5c", "4c 6e"], O, stock="3o 2e 2b 4b 5b")
    play(st, "5c", "4c")
    assert st.legal_strings() == ["swap7", "proceed"]
    play(st, "swap7")
    assert st.hands[0] & mask("3o") and not st.hands[0] & mask("7o")
    assert st.stock[0] == c("7o")
    assert st.legal_strings() == ["proceed"]
    low = position(2, ["7o 5c", "4c 6e"], O, stock="6o 2e 2b 4b 5b")
    play(low, "5c", "4c")
    assert low.legal_strings() == ["proceed"]
    with pytest.raises(IllegalActionError, match="swap7"):
        low.apply_string("swap7")


def test_G_S9_swap_then_call_forty_once():
    st = position(2, ["11o 7o 12c 11c 5c 1e", "4c 6e 2b 3b 4b 5b"], O, stock="12o 2e 3e 4e 5e")
    play(st, "5c", "4c")
    assert st.legal_strings() == ["swap7", "call c", "proceed"]
    play(st, "swap7")
    assert st.legal_strings() == ["call o", "call c", "proceed"]
    play(st, "call o")
    assert st.hand_pts == [40, 0]
    assert st.legal_strings() == ["proceed"]
    with pytest.raises(IllegalActionError):
        st.apply_string("call c")
    play(st, "proceed")
    assert st.legal_strings()[0].startswith("play")


def test_G_S10_swap_on_the_last_drawing_trick():
    st = position(2, ["7o 5c", "4c 6e"], O, stock="1o 2e")
    play(st, "5c", "4c", "swap7", "proceed")
    assert st.hands[0] == mask("1o 2e") and st.hands[1] == mask("6e 7o")
    assert st.stock == []
    play(st, "2e", "6e")          # strict play: 6e beats 2e
    assert st.current_player() == 1 and st.legal_strings() == ["play 7o"]


def test_G_S11_no_calls_after_the_stock_is_gone():
    st = position(2, ["12e 11e 5c", "4c 6b 7b"], O)
    play(st, "5c", "4c")
    assert st.current_player() == 0
    assert all(s.startswith("play ") for s in st.legal_strings())


def _end_of_first_hand(n: int, before_last: list[int], winner_leads: int = 0):
    """A first-hand state with one card each left (zero points), side points ``before_last``."""
    hands = ["4b", "2b", "5b", "6b"][:n]
    st = position(n, hands, O, leader=winner_leads)
    st.tricks_done = 40 // n - 1
    st.hand_pts = list(before_last)
    return st


def test_G_S12_first_hand_then_vueltas_go_out_at_once():
    st = _end_of_first_hand(2, [90, 90])          # A: 70 + 20 call, B: 50 + 40 call
    play(st, "4b", "2b")                           # A wins the last trick: +10
    assert not st.is_terminal() and st.hand_index() == 1
    assert st.scores == [100, 90] and st.dealer == 0 and st.current_player() == 1
    assert st.observation(0)["past"] == [{"dealer": 1, "points": [100, 90], "last_trick": 0}]
    st.hands = [mask("10c 1e"), mask("4b 6e")]
    st.trump = O
    st.turn = st.leader = 0
    play(st, "10c", "4b")
    assert st.is_terminal()
    out = st.outcome()
    assert out.ranks == (0, 1) and out.scores == (102.0, 90.0)


def test_G_S13_both_over_target_last_trick_wins():
    st = _end_of_first_hand(4, [100, 120])         # A: 60 + 40, B: 60 + 3 x 20
    play(st, "4b", "2b", "5b", "6b")               # seat 3 (side B) takes the last trick: B 130
    assert st.is_terminal() and st.outcome().ranks == (1, 0, 1, 0)
    st = _end_of_first_hand(4, [100, 120], winner_leads=1)
    st.hands = [mask("6b"), mask("4b"), mask("2b"), mask("5b")]
    play(st, "4b", "2b", "5b", "6b")               # seat 0 plays last with 6b and wins
    assert st.is_terminal()
    out = st.outcome()
    assert st.scores == [110, 120]
    assert out.ranks == (0, 1, 0, 1)
    assert out.scores == (110.0, 120.0, 110.0, 120.0)


# ---------------------------------------------------------------- rules

def test_deal_sizes_and_trump_card_2p_and_4p():
    for n, stock in ((2, 28), (4, 16)):
        st = G.new_match(n, 7)
        assert [h.bit_count() for h in st.hands] == [6] * n
        assert len(st.stock) == stock
        assert st.trump == st.stock[0] // 10
        assert st.current_player() == 1  # dealer 0, seat 1 leads


def test_drawing_order_winner_first_face_up_last():
    st = position(4, ["5c", "6c", "7c", "4c"], O, stock="3o 1e 2e 3e 4e 5e 6e 7e")
    play(st, "5c", "6c", "7c", "4c", "proceed")    # seat 2 won: draws 1e, then 3: 2e, 0: 3e, 1: 4e
    assert st.hands == [mask("3e"), mask("4e"), mask("1e"), mask("2e")]
    st.trick = []
    play(st, "1e", "2e", "3e", "4e", "proceed")    # seat 2 (1e) wins: 2:5e 3:6e 0:7e 1: face-up 3o
    assert st.hands == [mask("7e"), mask("3o"), mask("5e"), mask("6e")]
    obs = st.observation(0)
    assert obs["stock_size"] == 0 and obs["face_up"] is None


def test_window_after_every_draw_phase_trick_only_proceed_when_nothing_to_do():
    st = G.new_match(4, 3)
    rng = random.Random(3)
    windows = 0
    while st.hand_index() == 0 and not st.is_terminal():
        legal = st.legal_strings()
        if st.phase == 1:
            windows += 1
            assert legal[-1] == "proceed"
        st.apply_string(legal[rng.randrange(len(legal))])
    assert windows == 4


def test_hand_points_total_130_plus_calls():
    for seed in range(30):
        st = G.new_match(2, seed)
        rng = random.Random(seed)
        calls = 0
        while st.hand_index() == 0 and not st.is_terminal():
            legal = st.legal_actions()
            a = legal[rng.randrange(len(legal))]
            if 41 <= a <= 44:
                calls += 40 if a - 41 == st.trump else 20
            st.apply(a)
        total = sum(st.scores) if st.is_terminal() else sum(st.past[0][1:3])
        assert total == 130 + calls


def test_each_suit_called_once_per_hand():
    st = position(2, ["12c 11c 5c 1e", "4c 6e 2b 3b"], O, stock="12o 2e 3e 4e 5e 6e 7e")
    play(st, "5c", "4c", "call c", "proceed")
    st.hands[0] |= mask("12c 11c")  # pretend the pair is still there after the draw
    play(st, "1e", "6e")
    assert "call c" not in st.legal_strings()


def test_only_the_trick_winner_may_call_in_4p():
    st = position(4, ["5c 2e", "4c 12b 11b", "6c 3e", "7c 4e"], O, stock="4o 4b 5b 6b 7b 1b 2b 3b")
    play(st, "5c", "4c", "6c", "7c")               # seat 3 wins; its partner seat 1 holds 12b + 11b
    assert st.current_player() == 3 and st.legal_strings() == ["proceed"]


def test_illegal_action_errors_name_the_action_and_the_legal_set():
    st = position(2, ["11c 2e", "12c 5c 1o"], O)
    play(st, "11c")
    with pytest.raises(IllegalActionError) as err:
        st.apply_string("play 5c")
    assert "play 5c" in str(err.value) and "play 12c" in str(err.value)
    with pytest.raises(IllegalActionError):
        st.apply_string("proceed")


def test_notation_round_trip_and_parse_errors():
    for a in range(46):
        assert G.parse_action(G.format_action(a)) == a
    assert G.format_action(G.parse_action("play 12o")) == "play 12o"
    assert G.parse_action("call b") == 44 and G.parse_action("swap7") == 40
    for bad in ("play 8o", "call x", "swap 7", "Proceed", "play"):
        with pytest.raises(ActionParseError):
            G.parse_action(bad)


def test_vueltas_call_can_end_the_match_at_once():
    st = position(2, ["12o 11o 5c 1e", "4c 6e 2b 3b"], O, stock="1o 2e 3e 4e 5e 6e 7e")
    st.hand_no = 1
    st.scores = [70, 60]
    play(st, "5c", "4c")
    assert st.scores == [70, 60]
    play(st, "call o")
    assert st.is_terminal() and st.scores == [110, 60] and st.outcome().ranks == (0, 1)


def test_vueltas_without_winner_deals_another_hand_target_201():
    st = G.new_match(2, 99, target=201)
    rng = random.Random(1)
    seen = set()
    while not st.is_terminal():
        seen.add(st.hand_index())
        legal = st.legal_actions()
        st.apply(legal[rng.randrange(len(legal))])
    assert max(st.scores) >= 201 and len(seen) >= 2
    assert st.outcome().ranks[st.winner] == 0


def test_new_hand_dealt_by_last_trick_winner_with_hand_index():
    from engine.games.guinote.actions import POWER, SUIT
    from engine.tricks import trick_winner
    for seed in range(10):
        st = G.new_match(4, seed)
        rng = random.Random(seed)
        while st.hand_index() == 0 and not st.is_terminal():
            before = st.clone()
            legal = st.legal_actions()
            a = legal[rng.randrange(len(legal))]
            st.apply(a)
        if st.is_terminal():
            continue
        last = before.trick + [a]
        winner = (before.leader + trick_winner(last, SUIT, POWER, before.trump)) % 4
        assert st.dealer == winner == st.past[0][3]
        assert st.current_player() == (winner + 1) % 4
        assert st.hand_history() == [] and st.observation(0)["actions"] == []
        assert [h.bit_count() for h in st.hands] == [6] * 4 and len(st.stock) == 16
        return
    raise AssertionError("no match reached a second hand")


# ---------------------------------------------------------------- options and players

def test_options_defaults_and_validation():
    assert G.resolve_options({}) == {"first_dealer": 0, "target": 101, "must_undertrump": False}
    for bad in ({"target": 100}, {"must_undertrump": "yes"}, {"first_dealer": "left"}, {"colour": 1}):
        with pytest.raises(OptionError):
            G.new_match(2, 1, **bad)
    with pytest.raises(OptionError, match="first_dealer"):
        G.new_match(2, 1, first_dealer=3)
    assert G.new_match(4, 1, first_dealer=3).dealer == 3


def test_first_dealer_random_comes_from_the_deal_seed():
    dealers = {G.new_match(4, s, first_dealer="random").dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert all(G.new_match(4, s, first_dealer="random").dealer == G.new_match(4, s, first_dealer="random").dealer
               for s in range(10))


def test_players_and_teams():
    assert G.teams(2) == [[0], [1]] and G.teams(4) == [[0, 2], [1, 3]]
    for n in (1, 3, 5):
        with pytest.raises(PlayerCountError):
            G.new_match(n, 1)


# ---------------------------------------------------------------- observation

def test_observation_hides_other_hands_and_shows_public_facts():
    st = position(2, ["12o 11o 7o 5c", "4c 6e 2b 3b"], O, stock="1o 2e 3e 4e 5e 6e 7e")
    play(st, "5c", "4c", "swap7", "call o", "proceed")
    obs1 = st.observation(1)
    assert obs1["hand"] == ["3e", "6e", "2b", "3b"]
    assert "12o" not in json.dumps(obs1["hand"]) and obs1["hand_sizes"] == [4, 4]
    assert obs1["shown"][0] == ["1o", "11o", "12o"]
    assert obs1["swap"] == 0 and obs1["face_up"] == "7o" and obs1["trump_card"] == "1o"
    assert obs1["calls"] == [[0, "o", 40]] and obs1["hand_points"] == [40, 0]
    assert obs1["actions"] == [[0, "play 5c"], [1, "play 4c"], [0, "swap7"], [0, "call o"], [0, "proceed"]]
    assert obs1["drawn"] == ["3e"] and st.observation(0)["drawn"] == ["2e"]
    assert "seed" not in json.dumps(obs1).lower()


def test_observation_face_up_drawer_is_public():
    st = G.new_match(2, 4)
    rng = random.Random(4)
    while st.stock:
        face_up = st.stock[0]       # the 7 of trumps after a swap
        legal = st.legal_actions()
        st.apply(legal[rng.randrange(len(legal))])
    for seat in (0, 1):
        obs = st.observation(seat)
        drawer = obs["face_up_drawer"]
        assert drawer in (0, 1) and st.hands[drawer] >> face_up & 1
        assert G.format_action(face_up).split()[1] in obs["shown"][drawer]


def test_docs_list_every_action_and_field():
    for word in ("play", "swap7", "call", "proceed"):
        assert word in G.actions_doc
    st = G.new_match(4, 1)
    for key in st.observation(0):
        assert key in G.observation_doc, key


# ---------------------------------------------------------------- information sets

def _play_to(n: int, seed: int, until, **options):
    """Random play from a fresh match until ``until(state)``; returns the state or None."""
    st = G.new_match(n, seed, **options)
    rng = random.Random(seed)
    while not st.is_terminal() and st.hand_index() == 0:
        if until(st):
            return st
        legal = st.legal_actions()
        st.apply(legal[rng.randrange(len(legal))])
    return None


def _samples(st, seat: int, k: int = 30):
    info = G.infoset(json.loads(json.dumps(st.observation(seat))))
    return [info.sample(random.Random(i)) for i in range(k)]


def test_void_is_respected_by_every_sample():
    found = 0
    for seed in range(200):
        st = _play_to(2, seed, lambda s: not s.stock and len(s.trick) == 0 and s.tricks_done >= 16)
        if st is None:
            continue
        info = G.infoset(json.loads(json.dumps(st.observation(0))))
        if not info.pub.forbidden[1]:
            continue
        for w in _samples(st, 0, 20):
            assert w.hands[1] & info.pub.forbidden[1] == 0
            assert w.hands[0] == st.hands[0]
        found += 1
        if found >= 3:
            break
    assert found >= 3


def test_strict_forbidden_cases():
    from engine.games.guinote.actions import SUIT_MASK
    from engine.games.guinote.rules import strict_forbidden
    # 2p, lead 11c, reply 5c (did not beat 11c): no higher club
    assert strict_forbidden(c("5c"), [c("11c")], 0, 1, 2, O, False) == mask("1c 3c 12c")
    # reply off-suit non-trump: void in clubs and no trumps
    assert strict_forbidden(c("6b"), [c("11c")], 0, 1, 2, O, False) == SUIT_MASK[C] | SUIT_MASK[O]
    # 4p: P0 12c, P1 4o, P2 plays 7b: void in clubs, no trump above 4o (free choice)
    assert strict_forbidden(c("7b"), [c("12c"), c("4o")], 0, 2, 4, O, False) == \
        SUIT_MASK[C] | mask("5o 6o 7o 10o 11o 12o 3o 1o")
    # ... with must_undertrump: no trumps at all
    assert strict_forbidden(c("7b"), [c("12c"), c("4o")], 0, 2, 4, O, True) == SUIT_MASK[C] | SUIT_MASK[O]
    # under-trumping 2o under 4o: void in clubs, no trump above 4o
    assert strict_forbidden(c("2o"), [c("12c"), c("4o")], 0, 2, 4, O, False) == \
        SUIT_MASK[C] | mask("5o 6o 7o 10o 11o 12o 3o 1o")
    # partner winning: following is free, not following only shows the void
    assert strict_forbidden(c("5c"), [c("4c"), c("2c")], 0, 2, 4, O, False) == 0
    assert strict_forbidden(c("6b"), [c("4c"), c("2c")], 0, 2, 4, O, False) == SUIT_MASK[C]
    # following a trumped trick: nothing
    assert strict_forbidden(c("1c"), [c("5c"), c("2o")], 0, 2, 4, O, False) == 0


def test_call_and_swap_pin_cards_in_every_sample():
    st = G.new_match(2, 8)
    st.hands = [mask("12o 11o 7o 5c 1e 2e"), mask("4c 6e 2b 3b 4b 5b")]
    st.stock = [c("1o")] + st.stock[1:]
    rest = [x for x in range(40) if not (st.hands[0] | st.hands[1]) >> x & 1 and x != c("1o")]
    st.stock = [c("1o")] + rest[:27]
    st.trump = O
    st.turn = st.leader = 0
    st.dealer = 1
    st.history = []
    snap = st.clone()
    snap.start = snap
    st.start = snap
    play(st, "5c", "4c", "swap7", "call o", "proceed")
    for w in _samples(st, 1, 20):
        assert w.hands[0] & mask("12o 11o 1o") == mask("12o 11o 1o")
        assert w.stock[0] == c("7o")
        start = w.hand_start()
        assert start.hands[0] & mask("12o 11o 7o") == mask("12o 11o 7o")   # held before showing them
        assert start.hands[1] == snap.hands[1]


def test_shown_card_came_from_the_deal_or_an_earlier_draw_uniformly():
    # 4p, observer seat 0: seat 1 played Y in trick 1 (so Y was dealt) and X in trick 2 after
    # one draw. Its dealt six and its draw hold Y, X and its five hidden cards; the draw is
    # any of X and the five hidden cards alike: X was drawn with probability 1/6.
    hits = total = 0
    for seed in range(60):
        st = G.new_match(4, seed)
        rng = random.Random(seed)
        while st.tricks_done <= 1:
            if st.tricks_done == 1 and st.phase == 0 and (1 - st.leader) % 4 < len(st.trick):
                break
            legal = st.legal_actions()
            st.apply(legal[rng.randrange(len(legal))])
        if st.tricks_done != 1:
            continue
        x = st.trick[(1 - st.leader) % 4]
        info = G.infoset(json.loads(json.dumps(st.observation(0))))
        for i in range(100):
            w = info.sample(random.Random(1000 * seed + i))
            total += 1
            hits += not (w.hand_start().hands[1] >> x & 1)
    assert total >= 3000
    assert abs(hits / total - 1 / 6) < 0.02


def test_samples_depend_on_the_observation_only_and_replay():
    for n in (2, 4):
        for st in cf.random_positions(G, n, {}, seed=3, count=3):
            for seat in range(n):
                cf.audit_position(G, st, seat, samples=8, seed=seat)


def test_chi2_on_strict_positions_with_inferences():
    # 4p strict play (with voids etc.); 2p end of the draw phase (in 2p strict play the
    # opponent's hand is known exactly)
    rng = random.Random(2)
    late_strict = lambda s: not s.stock and s.tricks_done >= 7              # noqa: E731
    late_draw = lambda s: 0 < len(s.stock) <= 4 and s.phase == 0           # noqa: E731
    for n, opts, until in ((4, {"must_undertrump": True}, late_strict), (4, {}, late_strict), (2, {}, late_draw)):
        tested = 0
        for seed in range(40):
            st = _play_to(n, rng.getrandbits(32), until, **opts)
            if st is None:
                continue
            seat = rng.randrange(n)
            info = G.infoset(json.loads(json.dumps(st.observation(seat))))
            if n == 4 and not any(info.pub.forbidden):
                continue
            if cf.chi2_uniformity(G, st, seat, limit=1500, seed=seed):
                tested += 1
                if tested == 2:
                    break
        assert tested == 2, (n, opts)


def test_infoset_rejects_inconsistent_observations():
    from engine.errors import InconsistentObservationError
    st = G.new_match(2, 1)
    obs = json.loads(json.dumps(st.observation(0)))
    obs["actions"] = [[0, "play 1o"]]   # seat 1 leads the first trick
    with pytest.raises(InconsistentObservationError):
        G.infoset(obs)


# ---------------------------------------------------------------- greedy heuristic

def _greedy(st):
    """The greedy choice in a hand-made position (its observation fields that the heuristic reads)."""
    seat = st.current_player()
    obs = {"players": st.n, "seat": seat, "trump_suit": "oceb"[st.trump],
           "trick": [[(st.leader + i) % st.n, G.format_action(x)[5:]] for i, x in enumerate(st.trick)],
           "hand": [G.format_action(x)[5:] for x in range(40) if st.hands[seat] >> x & 1]}
    return greedy(obs, st.legal_strings(), random.Random(0))


def _obs_state(n, hands, trump, stock=None, leader=0):
    return position(n, hands, trump, leader=leader, stock=stock)


def test_greedy_swaps_then_calls_trumps_then_proceeds():
    st = _obs_state(2, ["12o 11o 7o 12c 11c 5c", "4c 6e 2b 3b 4b 5b"], O, stock="1o 2e 3e 4e 5e")
    play(st, "5c", "4c")
    assert _greedy(st) == "swap7"
    play(st, "swap7")
    assert _greedy(st) == "call o"
    play(st, "call o")
    assert _greedy(st) == "proceed"


def test_greedy_takes_points_with_the_cheapest_winner_and_follows_cheaply():
    st = _obs_state(2, ["1c 5e", "3c 4c 2o 5b"], O, stock="6o 2e 3e 4e 5e")
    play(st, "1c")                       # an ace on the table: trump it with the cheapest trump
    assert _greedy(st) == "play 2o"
    st = _obs_state(2, ["4c 5e", "1c 6c 2o 5b"], O, stock="6o 2e 3e 4e 5e")
    play(st, "4c")                       # last to play: win with the ace (its 11 points come home)
    assert _greedy(st) == "play 1c"
    st = _obs_state(2, ["1b 5e", "1c 6c 2o 5c"], O, stock="6o 2e 3e 4e 5e")
    play(st, "1b")                       # ace of bastos: worth trumping
    assert _greedy(st) == "play 2o"
    st = _obs_state(2, ["4b 5e", "1c 6c 2o 5c"], O, stock="6o 2e 3e 4e 5e")
    play(st, "4b")                       # nothing on the table, cannot win it cheaply: throw the 5c
    assert _greedy(st) == "play 5c"


def test_greedy_leads_cheap_and_loads_points_on_partner_trick():
    st = _obs_state(4, ["1c 3o 4e 12b", "2c", "3c", "4c"], O)
    assert _greedy(st) == "play 4e"     # lead: the cheapest non-trump
    stock = "6o 2e 3e 4e 5e 6e 7e 1b"
    st = _obs_state(4, ["5c 5e", "2c 7e", "1c 6b", "3b 12b 4b"], O, stock=stock)
    play(st, "5c", "2c", "1c")          # seat 3 last; opponent seat 2 wins with the ace, no club, no trump
    assert _greedy(st) == "play 4b"     # gives away nothing
    st = _obs_state(4, ["4c 5e", "1c 7e", "2c 6b", "3b 12b 5b"], O, stock=stock)
    play(st, "4c", "1c", "2c")          # seat 3 last; partner seat 1 wins with the ace: load the 3b
    assert _greedy(st) == "play 3b"
    st = _obs_state(4, ["4c 5e", "1c 7e", "2c 6b", "3b 12b 5b"], O, stock=stock)
    play(st, "4c", "1c")                # seat 2 (not last), opponent winning an ace, can't beat: cheapest
    assert _greedy(st) == "play 2c"


def test_greedy_returns_a_legal_action_in_random_play():
    for n in (2, 4):
        for seed in range(5):
            play_out(G.new_match(n, seed), greedy, range(n), random.Random(seed))


def test_greedy_beats_random():
    wins = 0
    for seed in range(40):
        st = play_out(G.new_match(2, seed), greedy, {seed % 2}, random.Random(seed))
        wins += st.outcome().ranks[seed % 2] == 0
    assert wins >= 32


def test_terminal_state_refuses_actions_and_outcome_needs_the_end():
    from engine.errors import GameOverError
    st = G.new_match(2, 21)
    with pytest.raises(GameOverError):
        st.outcome()
    rng = random.Random(21)
    while not st.is_terminal():
        legal = st.legal_actions()
        st.apply(legal[rng.randrange(len(legal))])
    assert st.current_player() == -1 and st.legal_actions() == []
    with pytest.raises(GameOverError):
        st.apply(45)
    obs = st.observation(0)
    assert obs["phase"] == "over" and obs["winner"] == [st.winner]
    assert st.hand_rewards() == [1.0 if s == st.winner else 0.0 for s in (0, 1)]
