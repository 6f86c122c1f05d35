"""Gargon's one-pass replay (``engine.games.gargon.rollout.replay``, used by the infoset's worlds
when compiled) gives exactly the state of ``GargonState.apply`` per action, and rejects what
``apply`` rejects (docs/rules/gargon.md §4.3–§4.5)."""

from __future__ import annotations

import random

import pytest

from engine import registry
from engine.errors import IllegalActionError
from engine.games.gargon import actions as A
from engine.games.gargon.rollout import replay

SETTINGS: list[tuple[int, dict]] = [
    (3, {}),
    (4, {"replacement": "none", "first_start": 2}),
    (5, {"pass_draw": "match_start_count"}),
    (3, {"amulets": [2] * 16, "first_start": "random"}),
]


def random_match(game, n, opts, seed):
    """A fresh match and the actions of one random playing of it."""
    rng = random.Random(seed)
    s = game.new_match(n, seed, **opts)
    start = s.clone()
    acts = []
    while not s.is_terminal():
        legal = s.legal_actions()
        a = legal[rng.randrange(len(legal))]
        s.apply(a)
        acts.append(a)
    return start, acts


@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_replay_equals_apply_at_every_cut(setting: int) -> None:
    game = registry.get_game("gargon")
    n, opts = SETTINGS[setting]
    checked = 0
    for seed in range(6):
        start, acts = random_match(game, n, opts, 300 + seed)
        for cut in sorted({0, 1, 2, 7, len(acts) // 3, len(acts) // 2, len(acts) - 1, len(acts)}):
            a, b = start.clone(), start.clone()
            replay(a, acts[:cut])
            for x in acts[:cut]:
                b.apply(x)
            where = f"setting {setting} seed {seed} cut {cut}/{len(acts)}"
            assert a.world_key() == b.world_key(), where
            assert a.legal_actions() == b.legal_actions(), where
            assert a.is_terminal() == b.is_terminal(), where
            for seat in range(n):
                assert a.observation(seat) == b.observation(seat), where
            for x in acts[cut:cut + 5]:   # the replayed state plays on like the applied one
                a.apply(x)
                b.apply(x)
            assert a.world_key() == b.world_key(), where
            checked += 1
    assert checked >= 6 * 6


def test_replay_rejects_what_apply_rejects() -> None:
    game = registry.get_game("gargon")
    start, acts = random_match(game, 3, {}, 11)
    rng = random.Random(5)
    rejected = 0
    for cut in range(0, len(acts), 3):
        s = start.clone()
        replay(s, acts[:cut])
        legal = set(s.legal_actions())
        bad = [x for x in range(A.STOP + 1) if x not in legal]
        x = rng.choice(bad)
        before = s.world_key()
        with pytest.raises(IllegalActionError):
            s.clone().apply(x)
        t = start.clone()
        with pytest.raises(IllegalActionError, match="gargon"):
            replay(t, acts[:cut] + [x] + acts[cut:])
        assert t.world_key() == start.world_key(), "a rejected replay leaves the state unchanged"
        assert s.world_key() == before
        rejected += 1
    assert rejected == len(range(0, len(acts), 3))
    with pytest.raises(IllegalActionError, match="the match is over"):
        replay(start.clone(), acts + [A.DONE])
