"""The action enumeration and the observation encodings: sizes, coverage, content, purity."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from bots.rl.actions import ActionSpace, ActionSpaceError, all_actions
from bots.rl.layouts import LAYOUTS, layout
from engine import registry
from tests.conformance import audit_position
from tests.rl.helpers import CONFIGS, config_id, positions

# sizes derivable from the rules' action lists
EXPECTED_SIZES = {
    "agram": 35,    # one 'play <card>' per card of the 35-card deck
    "argute": 10,   # bid 0..3, play 0..5
    "cuckoo": 5,    # keep swap accept block cut
    "guinote": 46,  # 40 cards, swap7, call o/c/e/b, proceed
    "sedma": 17,    # play x8 ranks, continue x8, end
}


def test_every_game_has_a_layout():
    # the arena tests register a toy game for the whole session: only the engine's games count
    engine_games = {n for n, target in registry.GAMES.items() if not target.startswith("tests.")}
    assert set(LAYOUTS) == engine_games


@pytest.mark.parametrize("name", sorted(EXPECTED_SIZES))
def test_action_list_sizes(name):
    game = registry.get_game(name)
    acts = all_actions(game)
    assert len(acts) == EXPECTED_SIZES[name]
    assert acts == sorted(acts)
    strings = [game.format_action(a) for a in acts]
    assert len(set(strings)) == len(strings)


def test_cuttle_action_list_holds_every_notation():
    space = ActionSpace.of(registry.get_game("cuttle"))
    strings = {space.string_at(i) for i in range(space.size)}
    for s in ("draw", "pass", "decline", "points 9d", "scuttle 9d with Tc", "jack Jc on 9d",
              "oneoff 2c on Qh", "discard 4d 7s", "take 3c", "counter 2h", "glasses 8h"):
        assert s in strings


def test_index_errors_name_the_game_and_value():
    space = ActionSpace.of(registry.get_game("agram"))
    with pytest.raises(ActionSpaceError, match="agram: action index 35 is outside 0..34"):
        space.action_at(35)
    with pytest.raises(ActionSpaceError, match="agram: action 999"):
        space.index_of(999)


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
def test_masks_and_encodings_over_random_play(cfg):
    """Every legal action is in the list (mask sum = legal count) and every seat's encoding
    has the layout's size, finite values, for positions all along random matches."""
    name, n, opts = cfg
    game = registry.get_game(name)
    space = ActionSpace.of(game)
    lay = layout(game, n, opts)
    for state in positions(game, n, opts, seed=7, count=6):
        legal = state.legal_actions()
        mask = space.mask(legal)
        assert mask.sum() == len(legal)
        assert {space.action_at(i) for i in np.flatnonzero(mask)} == set(legal)
        for seat in range(n):
            v = lay.encode(json.loads(json.dumps(state.observation(seat))))
            assert v.shape == (lay.size,) and v.dtype == np.float32
            assert np.isfinite(v).all()


def field(lay, vec, name):
    i = [f.name for f in lay.fields].index(name)
    off, size = lay.offsets[i], lay.fields[i].size
    return vec[off:off + size]


def test_agram_encoding_content():
    """Own hand, the trick by relative seat and the hand sizes land where the layout says."""
    game = registry.get_game("agram")
    space = ActionSpace.of(game)
    deck = [space.string_at(i).split()[1] for i in range(space.size)]
    lay = layout(game, 3)
    state = game.new_match(3, 11)
    state.apply(state.legal_actions()[0])   # the first player leads
    leader = state.observation(0)["trick"][0][0]
    for seat in range(3):
        obs = state.observation(seat)
        vec = lay.encode(obs)
        hand = field(lay, vec, "hand")
        assert sorted(deck[i] for i in np.flatnonzero(hand)) == sorted(obs["hand"])
        trick = field(lay, vec, "trick").reshape(3, len(deck))
        led_card = obs["trick"][0][1]
        row = (leader - seat) % 3
        assert trick[row, deck.index(led_card)] == 1 and trick.sum() == 1
        sizes = field(lay, vec, "hand_sizes") * 6
        assert list(sizes) == [obs["hand_sizes"][(seat + k) % 3] for k in range(3)]


def test_observation_of_another_game_is_refused():
    lay = layout("agram", 2)
    obs = registry.get_game("sedma").new_match(2, 1).observation(0)
    with pytest.raises(ValueError, match="layout of agram with 2 players got an observation of 'sedma'"):
        lay.encode(obs)


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
def test_encodings_hold_no_hidden_information(cfg):
    """The engine's observation-purity check (tests/conformance.py ``audit_position``) run on
    each position, then applied to the encodings: worlds sampled from a seat's information set
    (the same observation, other hidden cards) encode identically for that seat, through the
    env's own observe(); the sampled worlds really differ, and other seats' encodings see it."""
    from bots.rl.env import CardArenaEnv

    name, n, opts = cfg
    game = registry.get_game(name)
    env = CardArenaEnv(game, n, opts)
    env.reset(seed=0)
    differ = others_see = 0
    for k, state in enumerate(positions(game, n, opts, seed=3, count=3)):
        for seat in range(n) if n <= 5 else (0, n - 1):
            audit_position(game, state, seat, samples=2, seed=k)   # the suite's check on the dicts
            obs = json.loads(json.dumps(state.observation(seat)))
            env.state = state
            want = env.observe(f"player_{seat}")
            info = game.infoset(obs)
            for i in range(2):
                world = info.sample(random.Random(100 * k + i))
                differ += world.world_key() != state.world_key()
                env.state = world
                got = env.observe(f"player_{seat}")
                assert np.array_equal(got["observation"], want["observation"]), (name, seat)
                assert np.array_equal(got["action_mask"], want["action_mask"]), (name, seat)
                # another seat, who sees the cards that changed, does get another encoding
                others_see += any(not np.array_equal(env.layout.encode(world.observation(t)),
                                                     env.layout.encode(state.observation(t)))
                                  for t in range(n) if t != seat)
    assert differ > 0, f"{name}: no sampled world differed from the true one: the check proves nothing"
    assert others_see > 0, f"{name}: the encodings never reflect the hidden cards that changed"


@pytest.mark.parametrize("name", registry.names())
def test_docs_show_the_current_layout(name):
    """docs/rl.md holds each game's layout table as bots/rl/layouts.py builds it."""
    from pathlib import Path

    game = registry.get_game(name)
    doc = (Path(__file__).resolve().parent.parent.parent / "docs" / "rl.md").read_text()
    assert layout(game, game.min_players).markdown() in doc, "regenerate with python -m bots.rl.layouts"
