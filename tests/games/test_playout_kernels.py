"""Rollout kernels (``Game.playout``, issue 19) give exactly the generic rollout loop's results.

For every game with a kernel and every one of its configs: from positions reached by random
play (mid-trick, post-trick windows, later hands), the kernel and the loop
``state.apply(game.rollout_action(state, rng))`` of :func:`engine.search.rollout.rollout_rewards`
must return the same rewards and leave the random generator in the same state (the same
draws); played to the end of the match they must also reach the same final world.
"""

from __future__ import annotations

import random

import pytest

from engine import registry

KERNEL_GAMES = [name for name in registry.names() if getattr(registry.get_game(name), "playout", None)]


def loop_rewards(game, state, rng, teams, hand0, hand_rollouts):
    """The generic rollout loop (``rollout_rewards`` without the kernel)."""
    if hand_rollouts:
        while not state.is_terminal() and state.hand_index() == hand0:
            state.apply(game.rollout_action(state, rng))
        if not state.is_terminal():
            return state.hand_rewards()
    else:
        while not state.is_terminal():
            state.apply(game.rollout_action(state, rng))
    return state.outcome().rewards(teams)


def positions(game, n, opts, count, seed):
    """``count`` states after a random number of random moves (some in later hands)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 120)):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        out.append(s)
    return out


def test_kernel_games_listed() -> None:
    assert {"argute", "cuckoo", "guinote", "sedma", "whiskey_poker"} <= set(KERNEL_GAMES)


@pytest.mark.parametrize("name", KERNEL_GAMES)
def test_kernel_equals_loop(name: str) -> None:
    game = registry.get_game(name)
    checked = 0
    for ci, (n, opts) in enumerate(game.configs):
        teams = game.teams(n)
        for k, s in enumerate(positions(game, n, opts, 40, 100 + ci)):
            for hand_rollouts in (True, False):
                a, b = s.clone(), s.clone()
                hand0 = s.hand_index()
                ra, rb = random.Random(k), random.Random(k)
                got = game.playout(a, ra, teams, hand0, hand_rollouts)
                want = loop_rewards(game, b, rb, teams, hand0, hand_rollouts)
                where = f"{name} config {ci} position {k} hand_rollouts={hand_rollouts}"
                assert got == want, where
                assert ra.getstate() == rb.getstate(), where + ": different number of draws"
                if not hand_rollouts:
                    assert a.world_key() == b.world_key(), where
                    assert a.outcome() == b.outcome(), where
                    for seat in range(n):   # the record too (e.g. Cuckoo's discard knowers)
                        assert a.observation(seat) == b.observation(seat), where
                checked += 1
    assert checked == 2 * 40 * len(game.configs)


# ---------------------------------------------------------------- Cuttle (its own block)

def test_cuttle_kernel_every_rule_path() -> None:
    """Cuttle's kernel against the loop on 200 positions per config, played to the end: same
    rewards, draws, final world and observations — and those playouts went through every
    action kind, the 7's card, glasses glimpses, a 9's freeze and a counter chain of two."""
    from engine.games.cuttle import actions as A

    game = registry.get_game("cuttle")
    kinds: set[int] = set()
    sevens = glimpses = freezes = chains = 0
    for ci, (n, opts) in enumerate(game.configs):
        teams = game.teams(n)
        for k, s in enumerate(positions(game, n, opts, 200, 900 + ci)):
            a, b = s.clone(), s.clone()
            ra, rb = random.Random(5000 + k), random.Random(5000 + k)
            got = game.playout(a, ra, teams, s.hand_index(), False)
            want = loop_rewards(game, b, rb, teams, s.hand_index(), False)
            where = f"cuttle config {ci} position {k}"
            assert got == want, where
            assert ra.getstate() == rb.getstate(), where
            assert a.world_key() == b.world_key(), where
            assert (a.draws, a.shown, a.glimpses, a.exposed, a.public) == \
                (b.draws, b.shown, b.glimpses, b.exposed, b.public), where
            for seat in range(n):
                assert a.observation(seat) == b.observation(seat), where
            hist = b.history
            kinds.update(x >> 12 for x in hist)
            sevens += sum(1 for d in b.draws if d[2] == 2)
            glimpses += len(b.glimpses[0]) + len(b.glimpses[1])
            chains += sum(1 for i in range(1, len(hist)) if hist[i] >> 12 == hist[i - 1] >> 12 == A.K_COUNTER)
            if opts.get("nine_freezes"):
                freezes += sum(1 for x in hist if x >> 12 == A.K_ONEOFF_T and A.NINES >> (x >> 6 & 63) & 1)
    assert kinds == set(range(A.K_DRAW, A.K_DISCARD + 1))
    assert min(sevens, glimpses, freezes, chains) > 0, (sevens, glimpses, freezes, chains)


def test_cuttle_kernel_rewards_and_later_hand() -> None:
    """Draws score 0.5 each, other teams go through ``Outcome.rewards``, and a hand rollout
    asked for a hand that is not the current one returns ``hand_rewards`` without moving."""
    game = registry.get_game("cuttle")
    s = game.new_match(2, 11, max_turns=4)
    got = game.playout(s.clone(), random.Random(1), [[0], [1]], 0, True)
    assert got == [0.5, 0.5]   # nobody reaches 21 points in 4 turns: the turn cap draws
    assert game.playout(s.clone(), random.Random(1), [[0, 1]], 0, True) == [1.0, 1.0]
    r = random.Random(2)
    before = r.getstate()
    c = s.clone()
    assert game.playout(c, r, [[0], [1]], 1, True) == [0.5, 0.5]
    assert r.getstate() == before and c.world_key() == s.world_key()



def test_cuttle_replay_equals_apply() -> None:
    """``rollout.replay`` (the sampled worlds' history replay) leaves exactly the state of one
    ``apply`` per action, from the deal of 150 random matches per config; an illegal action
    or one after the end raises the state's own error."""
    from engine.errors import GameOverError, IllegalActionError
    from engine.games.cuttle.actions import DRAW
    from engine.games.cuttle.rollout import replay

    game = registry.get_game("cuttle")
    rng = random.Random(77)
    for ci, (n, opts) in enumerate(game.configs):
        for k in range(150):
            seed = rng.getrandbits(40)
            played = game.new_match(n, seed, **opts)
            for _ in range(rng.randrange(0, 200)):
                if played.is_terminal():
                    break
                legal = played.legal_actions()
                played.apply(legal[rng.randrange(len(legal))])
            fresh = game.new_match(n, seed, **opts)
            replay(fresh, played.hand_history())
            assert fresh.world_key() == played.world_key(), (ci, k)
            for seat in range(n):
                assert fresh.observation(seat) == played.observation(seat), (ci, k)
            assert fresh.legal_actions() == played.legal_actions(), (ci, k)
    s = game.new_match(2, 3)
    bad = next(a for a in range(1 << 16) if a not in s.legal_actions())
    with pytest.raises(IllegalActionError):
        replay(s, [s.legal_actions()[0], bad])
    assert len(s.hand_history()) == 1   # the legal first action was applied
    over = game.new_match(2, 4, max_turns=1)   # the first turn (a draw) is the last one
    with pytest.raises(GameOverError):
        replay(over, [DRAW, DRAW])


# ---------------------------------------------------------------- Gargon (issue 19, helper cy5)

from engine import compiled  # noqa: E402
from engine.games.gargon import rollout as gargon_rollout  # noqa: E402
from engine.games.gargon.game import Gargon  # noqa: E402


def test_gargon_uses_its_kernel_when_compiled() -> None:
    """``Gargon.playout`` is the kernel exactly when it is compiled (interpreted, the loop is faster)."""
    if compiled.is_compiled(gargon_rollout):
        assert Gargon.playout is gargon_rollout.playout
    else:
        assert Gargon.playout is None
    assert isinstance(registry.get_game("gargon"), Gargon)

def gargon_positions(game, n, opts, count, seed):
    """Random-play positions of Gargon spread over the whole match (every phase, late rounds)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = game.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 200)):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        out.append(s)
    return out


GARGON_SETTINGS: list[tuple[int, dict]] = [
    (3, {"amulets": [1, 0, 3, 0, 2, 7, 0, 1, 1, 0, 4, 0, 0, 9, 2, 1]}),
    (5, {"pass_draw": "match_start_count", "replacement": "none"}),
    (4, {"first_start": "random"}),
    (3, {"replacement": "none", "amulets": [0] * 16}),
]


@pytest.mark.parametrize("setting", range(len(GARGON_SETTINGS)))
def test_gargon_kernel_equals_loop_everywhere(setting: int) -> None:
    """Gargon's kernel from every phase (selections, pass draws, replacements), with other amulet
    tables (the kernel's score tables switch) and team sides: the loop's world, rewards and draws."""
    game = registry.get_game("gargon")
    n, opts = GARGON_SETTINGS[setting]
    phases = set()
    for k, s in enumerate(gargon_positions(game, n, opts, 60, 700 + setting)):
        phases.add(s.phase)
        for teams in (game.teams(n), [list(range(n - 1)), [n - 1]]):
            a, b = s.clone(), s.clone()
            ra, rb = random.Random(k), random.Random(k)
            got = gargon_rollout.playout(a, ra, teams, 0, k % 2 == 0)   # also when pure
            want = loop_rewards(game, b, rb, teams, 0, k % 2 == 0)
            where = f"gargon setting {setting} position {k} teams {teams}"
            assert got == want, where
            assert ra.getstate() == rb.getstate(), where + ": different number of draws"
            assert a.world_key() == b.world_key(), where
            assert a.outcome() == b.outcome(), where
            assert a.observation(k % n) == b.observation(k % n), where
    # selections, pass draws, replacement draws (when the setting has them) and finished matches
    want_phases = {0, 1, 3} if opts.get("replacement") == "none" else {0, 1, 2, 3}
    assert phases == want_phases, phases
