"""Gargon's fast world paths against the code they replace (issue 19, fourth pass).

``infoset.draw_single`` must make exactly the draws of ``Sampler.sample``; sampled worlds
(which skip the assignment check) must equal ``world()`` of the same assignment; the lazy
hand-start snapshot must equal the state right after the deal.
"""

from __future__ import annotations

import random

import pytest

from engine import registry
from engine.games.gargon import infoset as I
from engine.games.gargon.state import GargonState


def _positions(n: int, opts: dict, seed: int, count: int, max_moves: int = 120) -> list:
    """Observations of the seat to act at random points of random matches."""
    game = registry.get_game("gargon")
    rng = random.Random(seed)
    out = []
    for k in range(count):
        state = game.new_match(n, seed * 100 + k, **opts)
        for _ in range(rng.randrange(max_moves)):
            if state.is_terminal():
                break
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            out.append((game, state, state.observation(state.current_player())))
    return out


@pytest.mark.parametrize("n,opts", [(3, {}), (5, {}), (4, {"replacement": "none", "first_start": 2})])
def test_draw_single_is_the_samplers_draws(n: int, opts: dict) -> None:
    used = 0
    for game, _, obs in _positions(n, opts, 31 + n, 12):
        info = game.infoset(obs)
        _, common, _, _, single = info._build_stage1()
        if single is None:
            continue
        used += 1
        for seed in range(5):
            a, b = random.Random(seed), random.Random(seed)
            assert I.draw_single(single[0], single[1], single[2], a.random) == common.sample(b)[0]
            assert a.random() == b.random()   # the same number of draws
    assert used >= 6


def test_sampled_worlds_equal_checked_worlds_and_lazy_snapshots_the_deal() -> None:
    for game, state, obs in _positions(3, {}, 5, 10):
        info = game.infoset(obs)
        w = info.sample(random.Random(3))
        assert w.observation(info.seat) == obs   # the world fits the observation
        start = w.hand_start()
        fresh = GargonState.from_deal(game, w.n, game.resolve_options(obs["options"]), w.dealt,
                                      w.dealt_piles, w.first_start, w.deal_seed, w.first_opt)
        assert start.world_key() == fresh.world_key()
        assert start.hist_len == 0 and start.hand_start().world_key() == fresh.world_key()
        assert state.hand_start().world_key() == game.new_match(3, state.deal_seed).world_key()


def test_direct_worlds_equal_arranged_worlds() -> None:
    """Worlds whose blocks need no arrangement skip ``_arrange``: the same world, the same draws."""
    direct = 0
    for game, _, obs in _positions(3, {}, 9, 16, 40):
        info = game.infoset(obs)
        for seed in range(3):
            a, b = random.Random(seed), random.Random(seed)
            got = info.sample(a)
            info._direct = None   # the arranging path
            want = info.sample(b)
            direct += info._direct_plan() is not None
            info._direct = False
            assert got.world_key() == want.world_key() and a.random() == b.random()
    assert direct >= 6
