"""Sedma: worked scenarios (docs/rules/sedma.md §2.7), rules, options, observations,
information sets and the greedy heuristic."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from bots.greedy import sedma as greedy
from engine.errors import (
    ActionParseError,
    IllegalActionError,
    InconsistentObservationError,
    OptionError,
)
from engine.games.sedma import Sedma
from engine.games.sedma.actions import END, RANKS
from engine.games.sedma.state import SedmaState
from engine.registry import get_game
from tests import conformance as cf
from tests.games.helpers import play_out

GAME: Sedma = get_game("sedma")  # type: ignore[assignment]


class Ids:
    """Allocates physical ids (rank * 4 + copy) for rank strings, each copy once."""

    def __init__(self, n: int = 2) -> None:
        self.next = [0] * 8
        if n == 3:
            self.limit = [4, 2, 4, 4, 4, 4, 4, 4]
        else:
            self.limit = [4] * 8

    def take(self, ranks: str) -> list[int]:
        out = []
        for r in ranks.split():
            x = RANKS.index(r)
            assert self.next[x] < self.limit[x], f"no copy of {r} left"
            out.append(4 * x + self.next[x])
            self.next[x] += 1
        return out

    def rest(self, n: int) -> list[int]:
        deck = [c for c in range(32) if not (n == 3 and c in (6, 7))]
        return [c for c in deck if c % 4 >= self.next[c >> 2]]


def mask(ids: list[int]) -> int:
    m = 0
    for c in ids:
        m |= 1 << c
    return m


def make(n: int, hands: list[str], stock: str = "", leader: int = 0, **options) -> tuple[SedmaState, Ids]:
    """A state at a hand start with the given hands (rank strings) and stock (draw order)."""
    ids = Ids(n)
    state = SedmaState(GAME, n, GAME.resolve_options(options), 12345)
    state.dealer = (leader - 1) % n
    hand_masks = [mask(ids.take(h)) for h in hands]
    state._set_hand(hand_masks, ids.take(stock) if stock else [])
    return state, ids


def play(state: SedmaState, *texts: str) -> None:
    for t in texts:
        state.apply_string(t)


# ---------------------------------------------------------------- worked scenarios (§2.7)

def test_S_S1_simple_beat_end():
    s, _ = make(2, ["K 8 9 J", "K 8 9 Q"], "J Q J Q", leader=0)
    play(s, "play K", "play K")
    assert s.observation(0)["trick"]["winning"] == 1
    assert s.current_player() == 0 and s.legal_strings() == ["end"]
    play(s, "end")
    obs = s.observation(0)
    assert obs["tricks"][-1]["winner"] == 1
    assert obs["card_points"] == [0, 0] and obs["won"] == [[], ["K", "K"]]
    assert s.current_player() == 1  # the winner leads


def test_S_S2_continuation_wins_back():
    s, _ = make(2, ["T T J Q", "7 8 9 K"], "J Q J Q K K", leader=0)
    play(s, "play T", "play 7")
    assert s.observation(0)["trick"]["winning"] == 1
    assert "continue T" in s.legal_strings()
    play(s, "continue T", "play 8", "end")
    obs = s.observation(0)
    assert obs["tricks"][-1]["winner"] == 0
    assert obs["card_points"] == [20, 0]
    assert sorted(obs["won"][0]) == sorted(["T", "7", "T", "8"])


def test_S_S2_second_seven_lets_leader_continue_again():
    s, _ = make(2, ["T T 7 Q", "7 7 9 K"], "J Q J Q K K", leader=0)
    play(s, "play T", "play 7", "continue T", "play 7")
    assert s.observation(0)["trick"]["winning"] == 1
    assert s.legal_strings() == ["continue 7", "end"]


def test_S_S3_four_players_match_the_starter():
    s, _ = make(4, ["A 7 J Q", "8 A 9 9", "9 K J J", "7 T Q Q"], "K K 8 8 8 9 Q J", leader=0)
    play(s, "play A", "play 8", "play 9", "play 7")
    assert s.observation(0)["trick"]["winning"] == 3
    play(s, "continue 7", "play A", "play K", "play T")
    assert s.observation(2)["trick"]["winning"] == 1  # the 10 does not count
    play(s, "end")
    obs = s.observation(0)
    assert obs["tricks"][-1]["winner"] == 1
    assert obs["card_points"] == [0, 30]
    assert s.current_player() == 1


def test_S_S4_starter_unbeaten():
    s, _ = make(3, ["9 J Q K", "8 J Q K", "K J Q T"], "A A A", leader=0)
    play(s, "play 9", "play 8", "play K", "end")
    assert s.observation(1)["tricks"][-1]["winner"] == 0


def test_S_S5_leader_may_continue_while_winning():
    s, _ = make(2, ["Q Q 7 J", "T A 9 K"], "J J 8 8", leader=0)
    play(s, "play Q", "play T")
    assert s.observation(1)["trick"]["winning"] == 0
    assert s.legal_strings() == ["continue 7", "continue Q", "end"]
    play(s, "continue Q")
    assert s.current_player() == 1  # B must add one more card
    play(s, "play A")
    assert s.observation(0)["trick"]["winning"] == 0


def test_S_S6_forced_end_is_still_a_decision():
    s, _ = make(2, ["9 J Q K", "9 8 A T"], "J Q 8 8", leader=0)
    play(s, "play 9", "play 8")
    obs = s.observation(1)
    assert obs["phase"] == "decide" and obs["to_act"] == 0
    assert s.current_player() == 0 and s.legal_strings() == ["end"]
    assert obs["actions"] == [[0, "play 9"], [1, "play 8"]]


def test_S_S7_short_stock():
    s, _ = make(2, ["9 9 J Q", "8 8 K K"], "A T", leader=0)
    play(s, "play 9", "play 8", "continue 9", "play 8", "end")
    assert s.observation(0)["tricks"][-1]["winner"] == 0
    assert s.observation(0)["hand_sizes"] == [3, 3]
    assert s.observation(0)["stock"] == 0
    assert s.observation(0)["drawn"] == ["A"]  # the winner draws first
    assert s.observation(1)["drawn"] == ["T"]
    play(s, "play J", "play K", "end")
    assert s.observation(0)["hand_sizes"] == [2, 2]  # no more drawing


def _last_trick_state(n: int, won_by: list[str], hands: list[str], won_sides: list[int], **options):
    """A hand whose only remaining cards are ``hands``; ``won_by[i]`` already taken by side ``won_sides[i]``."""
    s, ids = make(n, hands, leader=0, **options)
    for ranks, side in zip(won_by, won_sides, strict=True):
        s.won[side] |= mask(ids.take(ranks))
    rest = ids.rest(n)
    if rest:
        s.won[won_sides[-1]] |= mask(rest)
    return s


def test_S_S8_double_win():
    # side 0 holds all eight A/T; side 1 won one trick of 8/9/J; side 0 takes the last trick
    s = _last_trick_state(2, ["A A A A T T T T", "8 9"], ["J", "Q"], [0, 1], match="vp")
    play(s, "play J", "play Q")
    last = s.past[-1]
    assert last["points"] == [90, 0] and last["win"] == "double" and last["vp"] == [2, 0]
    assert s.vp == [2, 0]


def test_S_S8_triple_win():
    s, ids = make(2, ["J", "Q"], leader=0, match="vp")
    s.won[0] = mask(ids.rest(2))  # every other card of the pack
    play(s, "play J", "play Q")
    assert s.past[-1]["win"] == "triple" and s.vp == [3, 0]
    assert s.past[-1]["points"] == [90, 0]


def test_S_S9_actions_by_rank():
    s, _ = make(2, ["8 8 T A", "9 9 J Q"], "K K K K", leader=0)
    assert s.legal_strings() == ["play 8", "play T", "play A"]
    play(s, "play 8")
    assert s.observation(0)["hand"] == ["8", "T", "A"]


def test_S_S10_no_decision_with_an_empty_hand():
    s, _ = make(2, ["9", "8"], leader=0, match="vp")
    play(s, "play 9")
    assert s.current_player() == 1
    h = s.hand_index()
    play(s, "play 8")
    assert s.hand_index() == h + 1  # the trick and the hand ended, no decision point


def test_S_S11_placings_three_players():
    # 50/30/10: seat 0 takes A A A T (40) and the last trick (10); seat 1 A A T; seat 2 T
    s = _last_trick_state(3, ["A A A T", "A T T", "T"], ["J", "Q", "K"], [0, 1, 2])
    play(s, "play J", "play Q", "play K")
    out = s.outcome()
    assert out.scores == (50.0, 30.0, 10.0) and out.ranks == (0, 1, 2)
    s = _last_trick_state(3, ["A A A", "A T T T", "T"], ["J", "Q", "K"], [0, 1, 2])
    play(s, "play J", "play Q", "play K")
    out = s.outcome()
    assert out.scores == (40.0, 40.0, 10.0) and out.ranks == (0, 0, 2)


# ---------------------------------------------------------------- rules

def test_led_seven_only_sevens_count():
    s, _ = make(2, ["7 7 9 J", "7 K A Q"], "Q Q J J", leader=0)
    play(s, "play 7", "play A")
    assert s.observation(0)["trick"]["winning"] == 0
    assert s.legal_strings() == ["continue 7", "end"]
    play(s, "end")
    s2, _ = make(2, ["7 8 9 J", "7 K A Q"], "Q Q J J", leader=0)
    play(s2, "play 7", "play 7", "end")
    assert s2.observation(0)["tricks"][0]["winner"] == 1


def test_illegal_actions_name_the_legal_set():
    s, _ = make(2, ["9 9 7 J", "8 K A Q"], "Q Q J J", leader=0)
    with pytest.raises(IllegalActionError, match="play 9") as e:
        s.apply_string("play A")
    assert "play J" in str(e.value)
    with pytest.raises(IllegalActionError):
        s.apply_string("end")
    play(s, "play 9", "play 8")
    with pytest.raises(IllegalActionError, match="starter"):
        s.apply_string("continue J")
    with pytest.raises(IllegalActionError):
        s.apply_string("play J")
    with pytest.raises(ActionParseError):
        GAME.parse_action("play 6")
    assert GAME.parse_action("continue 10") == GAME.parse_action("continue T")


def test_decks_and_deal():
    for n, size, stock in ((2, 32, 24), (3, 30, 18), (4, 32, 16)):
        s = GAME.new_match(n, 99)
        obs = s.observation(0)
        assert obs["stock"] == stock and obs["hand_sizes"] == [4] * n
        assert sum(obs["unseen"].values()) == size - 4
        assert s.current_player() == 1  # dealer 0, dealer+1 leads
    assert sum(GAME.new_match(3, 5).observation(0)["unseen"].values()) + 4 == 30
    total8 = GAME.new_match(3, 5).observation(0)["unseen"]["8"] + GAME.new_match(3, 5).observation(0)["hand"].count("8")
    assert total8 == 2


def test_teams_and_partners_share_ranks():
    assert GAME.teams(4) == [[0, 2], [1, 3]]
    assert GAME.teams(3) == [[0], [1], [2]]
    final = cf.random_playout(GAME, 4, {}, 7)
    out = final.outcome()
    assert out.ranks[0] == out.ranks[2] and out.ranks[1] == out.ranks[3]
    assert sorted({out.ranks[0], out.ranks[1]}) == [0, 1]
    assert out.scores[0] + out.scores[1] == 90


def test_every_hand_scores_ninety():
    for seed in range(30):
        for n in (2, 3, 4):
            final = cf.random_playout(GAME, n, {}, seed, check_every_step=False)
            assert sum(final.past[-1]["points"]) == 90


def test_next_dealer_rules():
    # 2p: loser deals
    s = _last_trick_state(2, ["A A A A T T T T", "8 9"], ["J", "Q"], [0, 1], match="vp")
    s.dealer = 0
    play(s, "play J", "play Q")
    assert s.dealer == 1 and s.current_player() == 0
    # 4p, dealing side won: next seat deals
    s = _last_trick_state(4, ["A A A A", "T T"], ["J", "Q", "K", "9"], [0, 1], match="vp")
    s.dealer = 2
    play(s, "play J", "play Q", "play K", "play 9")
    assert s.past[-1]["winners"] == [0] and s.dealer == 3 and s.current_player() == 0
    # 4p, dealing side lost: the dealer's partner deals
    s = _last_trick_state(4, ["A A A A", "T T"], ["J", "Q", "K", "9"], [0, 1], match="vp")
    s.dealer = 1
    play(s, "play J", "play Q", "play K", "play 9")
    assert s.dealer == 3 and s.current_player() == 0
    # 3p: the seat before the winner deals
    s = _last_trick_state(3, ["A A A T", "A T", "T T"], ["J", "Q", "K"], [1, 0, 2], match="vp")
    play(s, "play J", "play Q", "play K")
    assert s.past[-1]["points"] == [30, 40, 20]
    assert s.past[-1]["winners"] == [1] and s.dealer == 0 and s.current_player() == 1


def test_three_player_tie_awards_no_vp():
    s = _last_trick_state(3, ["A A A", "A T T T", "T"], ["J", "Q", "K"], [0, 1, 2], match="vp")
    s.dealer = 2
    play(s, "play J", "play Q", "play K")
    assert s.past[-1]["win"] == "tie" and s.vp == [0, 0, 0]
    assert s.dealer == 0  # S-5: next seat after the dealer


def test_vp_match_reaches_target_and_cap():
    final = cf.random_playout(GAME, 2, {"match": "vp", "vp_target": 5}, 3)
    assert max(final.vp) >= 5
    assert list(final.outcome().scores) == [float(v) for v in final.vp]
    assert sum(e["vp"][0] + e["vp"][1] for e in final.past) == sum(final.vp)
    capped = cf.random_playout(GAME, 3, {"match": "vp", "vp_target": 1000, "max_hands": 3}, 4)
    assert capped.hand_index() == 3 and capped.is_terminal()
    assert capped.outcome().ranks == tuple(
        sum(1 for o in capped.vp if o > v) for v in capped.vp)


def test_options_validated():
    assert set(GAME.options) == {"first_dealer", "match", "vp_target", "max_hands"}
    assert GAME.resolve_options({}) == {"first_dealer": 0, "match": "single", "vp_target": 10, "max_hands": 200}
    for bad in ({"match": "best_of"}, {"vp_target": 0}, {"max_hands": -1}, {"first_dealer": "left"},
                {"stake": 1}):
        with pytest.raises(OptionError):
            GAME.new_match(2, 1, **bad)
    with pytest.raises(OptionError, match="first_dealer"):
        GAME.new_match(3, 1, first_dealer=3)
    s = GAME.new_match(4, 1, first_dealer=2)
    assert s.dealer == 2 and s.current_player() == 3


def test_random_first_dealer_from_deal_seed():
    dealers = {GAME.new_match(4, seed, first_dealer="random").dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}
    for seed in range(5):
        assert GAME.new_match(4, seed, first_dealer="random").dealer == \
            GAME.new_match(4, seed, first_dealer="random").dealer


def test_hand_rewards_follow_the_hand_result():
    s = _last_trick_state(2, ["A A A A T T T T", "8 9"], ["J", "Q"], [0, 1], match="vp")
    assert s.hand_rewards() == [0.5, 0.5]
    play(s, "play J", "play Q")
    assert s.hand_rewards() == [1.0, 0.0]


# ---------------------------------------------------------------- observations

def test_observation_holds_own_cards_only():
    s = GAME.new_match(4, 42)
    rng = random.Random(0)
    for _ in range(9):
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    for seat in range(4):
        obs = s.observation(seat)
        text = json.dumps(obs)
        assert "seed" not in text
        assert set(obs) >= {"game", "players", "seat", "options", "hand_index", "actions", "hand", "dealt",
                            "drawn", "hand_sizes", "stock", "trick", "tricks", "won", "card_points",
                            "unseen", "vp", "past_hands", "teams", "dealer", "phase", "to_act"}
        assert Counter(obs["hand"]) == Counter(
            "789TJQKA"[c >> 2] for c in range(32) if s.hands[seat] >> c & 1)
        # everything about other seats' hands is their sizes
        others = [s.observation(o) for o in range(4) if o != seat]
        public = {k for k in obs if k not in ("seat", "hand", "dealt", "drawn", "unseen")}
        for o in others:
            assert {k: o[k] for k in public} == {k: obs[k] for k in public}


def test_unseen_counts_exclude_hand_and_plays():
    s, _ = make(2, ["A A 7 J", "T 9 K Q"], "8 8 8 8", leader=0)
    play(s, "play A", "play T")
    u = s.observation(0)["unseen"]
    assert u["A"] == 4 - 2 and u["T"] == 3 and u["7"] == 3 and u["8"] == 4


# ---------------------------------------------------------------- information sets

def test_infoset_samples_respect_the_observation():
    s = GAME.new_match(3, 8)
    rng = random.Random(1)
    for _ in range(14):
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    obs = s.observation(2)
    info = GAME.infoset(obs)
    for i in range(20):
        w = info.sample(random.Random(i))
        assert w.observation(2) == obs
        assert Counter(w.observation(2)["hand"]) == Counter(obs["hand"])
        assert [h.bit_count() for h in w.hands] == obs["hand_sizes"]
        again = cf.replay_world(w)
        assert again.world_key() == w.world_key()


def test_infoset_count_is_the_multinomial_of_unseen_cards():
    from math import comb
    s = GAME.new_match(2, 3)
    info = GAME.infoset(s.observation(0))
    # 28 unseen physical cards: 4 to the opponent, 24 to the stock (as a set; order is free)
    assert info.count() == comb(28, 4)
    s4 = GAME.new_match(4, 3)
    assert GAME.infoset(s4.observation(2)).count() == comb(28, 4) * comb(24, 4) * comb(20, 4)


def test_ending_a_trick_implies_nothing():
    # §2.4: the leader ended without continuing, yet may hold the starter's rank or a 7
    s, _ = make(2, ["9 9 J Q", "8 K K Q"], "7 7 7 7 9 9 A A A A T T T T J J J Q Q K K 8 8 8",
                leader=0)
    play(s, "play 9", "play 8", "end")
    info = GAME.infoset(s.observation(1))
    seen = Counter()
    for i in range(60):
        w = info.sample(random.Random(i))
        held = w.hands[0]
        seen["9 or 7"] += bool(held & 0xF or (held >> 8) & 0xF)
    assert seen["9 or 7"] > 0


def test_infoset_rejects_impossible_observations():
    obs = GAME.new_match(2, 3).observation(0)
    bad = dict(obs, hand=["A", "A", "A", "A"], dealt=["A", "A", "A", "A"], actions=[[1, "play A"]])
    with pytest.raises(InconsistentObservationError):
        GAME.infoset(bad)
    with pytest.raises(InconsistentObservationError):
        GAME.infoset(dict(obs, stock=5))


def test_audit_positions_vp_three_players():
    for i, state in enumerate(cf.random_positions(GAME, 3, {"match": "vp", "vp_target": 4}, seed=3, count=4)):
        for seat in range(3):
            cf.audit_position(GAME, state, seat, samples=4, seed=i)



# ---------------------------------------------------------------- uniformity over physical deals (CA-3)

def _deal_state(n: int, hands: list[str], stock: str, leader: int = 0) -> SedmaState:
    """A hand start with the given hands and the front of the stock; the rest of the deck
    follows in rank order (it is never drawn in the positions below)."""
    ids = Ids(n)
    state = SedmaState(GAME, n, GAME.resolve_options({}), 12345)
    state.dealer = (leader - 1) % n
    hand_masks = [mask(ids.take(h)) for h in hands]
    front = ids.take(stock) if stock else []
    state._set_hand(hand_masks, front + ids.rest(n))
    return state


def _multisets(pool: Counter, size: int, ranks: list[int], i: int = 0):
    """Every sub-multiset of ``pool`` (rank -> copies) with ``size`` cards, as a Counter."""
    if size == 0:
        yield Counter()
        return
    if i == len(ranks):
        return
    x = ranks[i]
    for k in range(min(pool[x], size), -1, -1):
        for rest in _multisets(pool, size - k, ranks, i + 1):
            out = Counter(rest)
            if k:
                out[x] = k
            yield out


def _sequences(pool: Counter, length: int):
    if length == 0:
        yield ()
        return
    for x in sorted(r for r in pool if pool[r] > 0):
        pool[x] -= 1
        for rest in _sequences(pool, length - 1):
            yield (x,) + rest
        pool[x] += 1


def physical_deal_weights(state: SedmaState, seat: int) -> Counter:
    """Brute force: the hidden hands of every physical deal consistent with ``seat``'s observation.

    The hidden deck positions are the other seats' dealt hands, the stock positions they
    drew and the undrawn stock; ``seat``'s own dealt and drawn positions keep their cards.
    Every filling of the hidden positions with the remaining cards (as ranks: each rank
    sequence stands for the same number of physical deals) is built into a deal, the
    hand's actions are replayed, and it counts if ``seat``'s observation is reproduced.
    The undrawn stock is never looked at before the observation, so its fillings are
    counted (multinomial), not built one by one; a dealt hand is only tried if it holds
    the cards its seat played before its first draw (the others fail the replay anyway).
    Returns ``{hidden hands: number of
    rank sequences}`` with hidden hands = per other seat its current ranks, sorted.
    """
    from math import factorial

    n = state.n
    obs = state.observation(seat)
    start = state.hand_start()
    actions = state.hand_history()
    # who drew each stock position (public), by replaying the true hand
    drawer: list[int] = []
    must = {p: Counter() for p in range(n)}
    s = start.clone()
    for a in actions:
        before = s.spos
        p = s.cur
        if a < END and p not in drawer:
            must[p][a & 7] += 1
        s.apply(a)
        drawer.extend((s.lastw + i) % n for i in range(s.spos - before))
    undrawn = len(start.stock) - len(drawer)
    own_dealt = [c >> 2 for c in range(32) if start.hands[seat] >> c & 1]
    own_drawn = {k: start.stock[k] >> 2 for k, p in enumerate(drawer) if p == seat}
    pool = Counter(c >> 2 for c in deck_ids(n))
    for x in own_dealt + list(own_drawn.values()):
        pool[x] -= 1
    others = [p for p in range(n) if p != seat]
    ndraws = {p: drawer.count(p) for p in others}
    out: Counter = Counter()

    def build(choice: dict) -> SedmaState | None:
        nxt = [0] * 8
        limit = [2 if (n == 3 and x == 1) else 4 for x in range(8)]

        def take(x: int) -> int:
            assert nxt[x] < limit[x]
            c = 4 * x + nxt[x]
            nxt[x] += 1
            return c

        hands = [0] * n
        for x in own_dealt:
            hands[seat] |= 1 << take(x)
        for p in others:
            for x in sorted(choice[p][0].elements()):
                hands[p] |= 1 << take(x)
        stock: list[int] = []
        ptr = {p: 0 for p in others}
        for k, p in enumerate(drawer):
            if p == seat:
                stock.append(take(own_drawn[k]))
            else:
                stock.append(take(choice[p][1][ptr[p]]))
                ptr[p] += 1
        stock.extend(take(x) for x in sorted(choice["rest"].elements()))
        st = SedmaState(GAME, n, start.opts, 1)
        st.dealer = start.dealer
        st._set_hand(hands, stock)
        try:
            for a in actions:
                st.apply(a)
        except IllegalActionError:
            return None
        return st if st.observation(seat) == obs else None

    def rec(i: int, left: Counter, weight: int, choice: dict) -> None:
        if i == len(others):
            rest = +left
            w = weight * factorial(undrawn)
            for k in rest.values():
                w //= factorial(k)
            choice["rest"] = rest
            st = build(choice)
            if st is not None:
                key = tuple(tuple(sorted(RANKS[c >> 2] for c in range(32) if st.hands[p] >> c & 1)) for p in others)
                out[key] += w
            return
        p = others[i]
        if any(left[x] < k for x, k in must[p].items()):
            return
        base = left - must[p]
        for extra in _multisets(base, 4 - sum(must[p].values()), sorted(x for x in base if base[x] > 0)):
            dealt = extra + must[p]
            w = factorial(4)
            for k in dealt.values():
                w //= factorial(k)
            left2 = left - dealt
            for draws in _sequences(Counter(left2), ndraws[p]):
                choice[p] = (dealt, draws)
                rec(i + 1, left2 - Counter(draws), weight * w, choice)

    rec(0, +pool, 1, {})
    return out


def deck_ids(n: int) -> list[int]:
    return [c for c in range(32) if not (n == 3 and c in (6, 7))]


def sampled_hidden_hands(state: SedmaState, seat: int, samples: int, seed: int) -> Counter:
    info = GAME.infoset(json.loads(json.dumps(state.observation(seat))))
    rng = random.Random(seed)
    others = [p for p in range(state.n) if p != seat]
    counts: Counter = Counter()
    for _ in range(samples):
        w = info.sample(rng)
        counts[tuple(tuple(sorted(RANKS[c >> 2] for c in range(32) if w.hands[p] >> c & 1)) for p in others)] += 1
    return counts


def chi2_against_physical_deals(state: SedmaState, seat: int, samples: int, seed: int) -> float:
    """χ² p-value of the sampler's hidden hands against the brute-force physical-deal weights
    (categories with fewer than 5 expected samples pooled)."""
    from scipy.stats import chisquare

    exact = physical_deal_weights(state, seat)
    assert len(exact) >= 2
    got = sampled_hidden_hands(state, seat, samples, seed)
    assert set(got) <= set(exact), f"sampled hidden hands no physical deal gives: {set(got) - set(exact)}"
    total = sum(exact.values())
    f_obs, f_exp = [], []
    pooled_o = pooled_e = 0.0
    for key, w in exact.items():
        e = samples * w / total
        if e < 5:
            pooled_o += got[key]
            pooled_e += e
        else:
            f_obs.append(got[key])
            f_exp.append(e)
    if pooled_e:
        f_obs.append(pooled_o)
        f_exp.append(pooled_e)
    return float(chisquare(f_obs, f_exp).pvalue)


def _pos_2p_draw() -> tuple[SedmaState, int]:
    # seat 0 leads a 9 and wins; both draw one card; seat 0 leads a king, seat 1 (observer) to play
    s = _deal_state(2, ["9 J Q K", "8 T A A"], "K 9")
    play(s, "play 9", "play 8", "end", "play K")
    return s, 1


def _pos_2p_sevens() -> tuple[SedmaState, int]:
    # seat 0 plays two 7s in the first trick, draws two cards and plays a third 7
    s = _deal_state(2, ["7 7 K Q", "9 8 J A"], "7 8 9 T")
    play(s, "play 7", "play 9", "continue 7", "play 8", "end", "play 7")
    return s, 1


def _pos_3p_first_trick() -> tuple[SedmaState, int]:
    # seats 0 and 1 both played nines; seat 2 (observer) to play in the second round
    s = _deal_state(3, ["9 9 K A", "9 8 J Q", "7 T T J"], "")
    play(s, "play 9", "play 9", "play T", "continue 9", "play 8")
    return s, 2


def _pos_4p_first_trick() -> tuple[SedmaState, int]:
    # three rounds of the first trick; seat 2 (observer) to play in the third
    s = _deal_state(4, ["A K 9 8", "K 7 T Q", "J Q T 9", "A A 8 7"], "", leader=3)
    play(s, "play A", "play A", "play K", "play T", "continue A", "play K", "play 7", "play 9",
         "continue 7", "play 9", "play T")
    return s, 2


PHYSICAL_POSITIONS = {
    "2p-draw": _pos_2p_draw,
    "2p-sevens": _pos_2p_sevens,
    "3p-first-trick": _pos_3p_first_trick,
    "4p-first-trick": _pos_4p_first_trick,
}


@pytest.mark.parametrize("name", sorted(PHYSICAL_POSITIONS))
def test_samples_are_uniform_over_physical_deals(name):
    state, seat = PHYSICAL_POSITIONS[name]()
    p = chi2_against_physical_deals(state, seat, samples=10000, seed=7)
    assert p > 0.001, f"{name}: χ² rejects uniformity over physical deals (p = {p:.3g})"

# ---------------------------------------------------------------- greedy heuristic

def _act(state: SedmaState) -> str:
    p = state.current_player()
    return greedy.act(state.observation(p), state.legal_strings(), random.Random(0))


def test_greedy_takes_points_with_the_starter_rank_or_a_seven():
    s, _ = make(2, ["A 8 9 J", "A Q 7 K"], "J Q J Q", leader=0)
    play(s, "play A")
    assert _act(s) in ("play A", "play 7")
    s, _ = make(2, ["T 8 9 J", "9 Q 7 K"], "J Q J Q", leader=0)
    play(s, "play T")
    assert _act(s) == "play 7"


def test_greedy_follows_cheaply_without_points():
    s, _ = make(2, ["Q 8 9 J", "A T 7 K"], "J Q J Q", leader=0)
    play(s, "play Q")
    assert _act(s) == "play K"


def test_greedy_leader_decisions():
    s, _ = make(2, ["T T J Q", "7 8 9 K"], "J Q J Q K K", leader=0)
    play(s, "play T", "play 7")
    assert _act(s) == "continue T" or _act(s) == "continue 7"
    s, _ = make(2, ["T T J Q", "8 8 9 K"], "J Q J Q K K", leader=0)
    play(s, "play T", "play 8")
    assert _act(s) == "end"  # own side winning
    s, _ = make(2, ["9 9 J Q", "9 8 7 K"], "J Q J Q K K", leader=0)
    play(s, "play 9", "play 9")
    assert _act(s) == "end"  # nothing worth fighting for


def test_greedy_leads_a_plain_card_and_keeps_points():
    s, _ = make(2, ["A T 9 9", "8 8 9 K"], "J Q J Q K K", leader=0)
    assert _act(s) == "play 9"


def test_greedy_beats_random():
    rng = random.Random(5)
    wins = 0
    for d in range(60):
        s = play_out(GAME.new_match(2, d), greedy.act, {d % 2}, rng)
        wins += s.outcome().ranks[d % 2] == 0
    assert wins >= 36
