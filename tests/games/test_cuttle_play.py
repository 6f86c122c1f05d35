"""Cuttle observations, information sets, random playouts and the greedy heuristic."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bots.greedy import cuttle as greedy
from engine.cards import french_str, parse_french
from engine.games.cuttle.actions import JACKS, K_TAKE, SEVEN
from engine.games.cuttle.state import CuttleState
from tests import conformance as cf
from tests.games.cuttle_helpers import GAME, M, play, position
from tests.games.helpers import play_out

ROOT = Path(__file__).resolve().parents[2]


def test_ten_thousand_random_playouts():
    """10,000 uniformly random matches (one plain loop): no crash, never an empty legal set."""
    rng = random.Random(2024)
    configs = [opts for _, opts in GAME.configs]
    ends = {"win": 0, "draw": 0}
    for i in range(10_000):
        s = GAME.new_match(2, rng.getrandbits(62), **configs[i % len(configs)])
        while not s.is_terminal():
            legal = s.legal_actions()
            assert legal
            s.apply(legal[rng.randrange(len(legal))])
        ends["win" if s.winner in (0, 1) else "draw"] += 1
    assert ends["win"] > 9000 and ends["draw"] > 0


def _find(pred, opts=None, seeds=range(400)):
    """The first (state, seed) reached by random play where ``pred(state)`` holds."""
    for seed in seeds:
        rng = random.Random(seed)
        s = GAME.new_match(2, seed, **(opts or {}))
        while not s.is_terminal():
            if pred(s):
                return s
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
    raise AssertionError("no such position in random play")


def test_observation_has_no_seed_and_only_own_cards():
    s = GAME.new_match(2, 123456789)
    for seat in (0, 1):
        obs = s.observation(seat)
        text = json.dumps(obs)
        assert "123456789" not in text and "seed" not in text
        assert set(obs["hand"]) == set(obs["initial_hand"])
        for c in range(52):
            if s.hands[1 - seat] >> c & 1:
                assert f'"{french_str(c)}"' not in text
        assert obs["opponent_hand"] is None and obs["hand_sizes"] == [6, 5]


@pytest.mark.parametrize("opts", [{}, {"hand_limit": 8, "nine_freezes": True}])
def test_glasses_samples_keep_the_exposed_hand(opts):
    s = _find(lambda st: any(st.perm[p] & M(["8c", "8d", "8h", "8s"]) and st.hands[1 - p] for p in (0, 1))
              and st.draws and len(st.history) > 6, opts)
    seat = 0 if s.perm[0] & M(["8c", "8d", "8h", "8s"]) else 1
    obs = json.loads(json.dumps(s.observation(seat)))
    assert obs["opponent_hand"] is not None
    info = GAME.infoset(obs)
    for i in range(30):
        w = info.sample(random.Random(i))
        assert w.hands[1 - seat] == s.hands[1 - seat]
        assert w.observation(seat) == obs
    cf.audit_position(GAME, s, seat, samples=8)
    cf.audit_position(GAME, s, 1 - seat, samples=8)


def test_audit_after_glasses_left_the_table():
    def pred(st):
        return any(st.glimpses[p] and not st.perm[p] & M(["8c", "8d", "8h", "8s"]) for p in (0, 1)) and \
            len(st.history) > len(st.draws) + 4
    s = _find(pred, seeds=range(3000))
    for seat in (0, 1):
        cf.audit_position(GAME, s, seat, samples=8, seed=3)


def test_audit_with_a_pending_seven():
    s = _find(lambda st: st.phase == SEVEN, seeds=range(3000))
    for seat in (0, 1):
        cf.audit_position(GAME, s, seat, samples=8, seed=5)
    obs = s.observation(1 - s.turn_p)
    info = GAME.infoset(obs)
    assert "seven card" in info.problem().names
    seen = {info.sample(random.Random(i)).seven for i in range(40)}
    assert len(seen) > 1


def test_seven_card_is_never_an_unplayable_jack_in_samples():
    # seat 1 (non-dealer) plays a 7 with no point card on the table: a jack drawn would be scrapped
    deal = GAME.new_match(2, 7)
    hands = [M(["2c", "3c", "4c", "5c", "6c", "Kc"]), M(["7d", "8d", "9d", "Td", "Qd"])]
    rest = [c for c in range(52) if not (hands[0] | hands[1]) >> c & 1]
    rest.remove(parse_french("9h"))
    s = CuttleState.from_deal(GAME, deal.options, 0, hands, [parse_french("9h")] + rest, 1)
    play(s, "oneoff 7d", "decline")
    assert s.phase == SEVEN
    info = GAME.infoset(s.observation(0))
    for i in range(200):
        w = info.sample(random.Random(i))
        assert not JACKS >> w.seven & 1
        assert w.observation(0) == s.observation(0)


def test_three_take_is_known_in_every_sample():
    s = _find(lambda st: st.history and st.history[-1] >> 12 == K_TAKE, seeds=range(3000))
    taker = s.actors[-1]
    taken = s.history[-1] >> 6 & 63
    obs = s.observation(1 - taker)
    assert GAME.format_action(s.history[-1]).split()[1] in obs["opponent_known"]
    info = GAME.infoset(obs)
    for i in range(10):
        assert info.sample(random.Random(i)).hands[taker] >> taken & 1


def test_sample_depends_on_the_observation_only():
    s = _find(lambda st: len(st.history) > 12)
    obs = s.observation(0)
    a = GAME.infoset(obs).sample(random.Random(9))
    b = GAME.infoset(json.loads(json.dumps(obs))).sample(random.Random(9))
    assert a.world_key() == b.world_key()


def test_chi2_on_late_positions():
    tested = 0
    for seed in range(300):
        rng = random.Random(seed)
        s = GAME.new_match(2, seed)
        while not s.is_terminal() and tested < 3:
            if 1 <= len(s.deck) <= 3 and s.phase == 0:
                if cf.chi2_uniformity(GAME, s, s.current_player(), seed=seed):
                    tested += 1
                    break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if tested >= 3:
            break
    assert tested >= 3


def test_rules_copy_matches_shared():
    shared = ROOT.parent / "shared" / "rules" / "cuttle.md"
    ours = (ROOT / "docs" / "rules" / "cuttle.md").read_text()
    if shared.exists():
        text = shared.read_text()
        assert ours.startswith(text.rstrip("\n")), "docs/rules/cuttle.md must keep the shared text unchanged"


# ---------------------------------------------------------------- greedy heuristic


def _act(s, seat=None):
    seat = s.current_player() if seat is None else seat
    return greedy.act(s.observation(seat), s.legal_strings(), random.Random(0))


def test_greedy_takes_the_win():
    s = position(hands=(["9c", "Th", "3c"], ["5s"]), deck=["2c"], stacks=[("Tc", 0, []), ("2d", 0, [])])
    assert _act(s) == "points 9c"


def test_greedy_scuttles_when_it_pays():
    s = position(hands=(["3c", "Th"], ["5s"]), deck=["2c"], stacks=[("Td", 1, []), ("9s", 1, [])])
    assert _act(s) == "scuttle Td with Th", "the opponent is 2 points from winning"
    s = position(hands=(["Th"], ["5s"]), deck=["2c"], stacks=[("3d", 1, [])])
    assert _act(s) == "points Th", "scuttling a 3 with a 10 does not pay"


def test_greedy_scores_points_otherwise():
    s = position(hands=(["7c", "3h"], ["5s"]), deck=["2c"])
    assert _act(s) == "points 7c"


def test_greedy_counters_a_harmful_ace_and_declines_a_harmless_one():
    s = position(hands=(["Ac", "4h"], ["2s", "5s"]), deck=["2c"], stacks=[("Td", 1, []), ("9s", 1, [])])
    play(s, "oneoff Ac")
    assert _act(s) == "counter 2s"
    s = position(hands=(["Ac", "4h"], ["2s", "5s"]), deck=["2c"], stacks=[("Td", 0, [])])
    play(s, "oneoff Ac")
    assert _act(s) == "decline"


def test_greedy_three_and_four_choices():
    s = position(hands=(["3d", "4h"], ["5s"]), scrap=["Ks", "2c", "4c"], deck=["2d"])
    play(s, "oneoff 3d", "decline")
    assert _act(s) == "take Ks"
    s = position(hands=(["4c", "9d"], ["Kh", "3s", "7d"]))
    play(s, "oneoff 4c", "decline")
    assert _act(s) == "discard 3s 7d"


def test_greedy_beats_random():
    wins = 0
    for i in range(60):
        s = play_out(GAME.new_match(2, 1000 + i), greedy.act, {i % 2}, random.Random(i))
        wins += s.winner == i % 2
    assert wins >= 45


def test_rebuilt_deal_is_uniform_over_the_opponents_hidden_slots():
    """Seat 1 (5 dealt cards) draws unseen, then plays 9d: 9d lay in any of its 6 hidden slots alike."""
    hands = [M(["2c", "3c", "4c", "5c", "6c", "Kc"]), M(["9d", "7h", "8h", "Th", "Qh"])]
    rest = [c for c in range(52) if not (hands[0] | hands[1]) >> c & 1]
    s = CuttleState.from_deal(GAME, GAME.resolve_options({}), 0, hands, rest, 1)
    play(s, "draw", "draw", "points 9d")
    info = GAME.infoset(json.loads(json.dumps(s.observation(0))))
    nine = parse_french("9d")
    drawn = 0
    n = 3000
    rng = random.Random(4)
    for _ in range(n):
        w = info.sample(rng)
        start = w.hand_start()
        if not start.hands[1] >> nine & 1:
            drawn += 1
            assert w.draws[0][3] == (nine,)
    assert 400 <= drawn <= 600, f"9d was the drawn card in {drawn} of {n} samples; expected about {n // 6}"


def test_world_plan_reuse_gives_the_fresh_info_sets_worlds():
    """``world`` keeps the observation-only parts of a sample (slots, deadlines, parsed draws and
    actions) and the slot samplers: a reused info set must give, sample by sample, the world and
    generator state of a fresh info set of the same observation (glimpses, unseen draws, 7s)."""
    rng = random.Random(31)
    compared = 0
    for ci, (_n, opts) in enumerate(GAME.configs):
        for _ in range(40):
            s = GAME.new_match(2, rng.getrandbits(40), **opts)
            for _ in range(rng.randrange(10, 120)):
                if s.is_terminal():
                    break
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
            if s.is_terminal():
                continue
            obs = s.observation(s.current_player())
            reused = GAME.infoset(obs)
            for k in range(4):
                ra, rb = random.Random(k), random.Random(k)
                a, b = reused.sample(ra), GAME.infoset(obs).sample(rb)
                assert a.world_key() == b.world_key(), (ci, k)
                assert ra.getstate() == rb.getstate()
                compared += 1
    assert compared >= 100


def test_hand_start_is_the_deal_when_taken_late():
    """The hand-start snapshot is built on first use: after 40 random moves (and from a clone made
    before that), ``hand_start()`` is the fresh deal, and replaying the history from it gives
    the state again."""
    rng = random.Random(12)
    for seed in range(30):
        opts = GAME.configs[seed % len(GAME.configs)][1]
        s = GAME.new_match(2, seed, **opts)
        early = s.clone()
        for _ in range(40):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        fresh = GAME.new_match(2, seed, **opts)
        for st in (s, early):
            start = st.hand_start()
            assert start.world_key() == fresh.world_key()
            assert start.observation(0) == fresh.observation(0)
        again = s.hand_start()
        for a in s.hand_history():
            again.apply(a)
        assert again.world_key() == s.world_key()
        assert s.hand_start().world_key() == fresh.world_key()   # the replay did not touch the snapshot
