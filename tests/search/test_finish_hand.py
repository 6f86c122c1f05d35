"""A state's ``finish_hand`` (the hand-rollout fast path of ``engine.search.rollout``, issue 19)
gives exactly the rewards, hand index and random numbers of the ``rollout_action`` loop."""

from __future__ import annotations

import random

import pytest

from engine import registry
from engine.errors import GameOverError
from engine.search.rollout import rollout_rewards


def has_finish_hand(name: str) -> bool:
    """Whether the game's states offer ``finish_hand``."""
    game = registry.get_game(name)
    n, opts = game.configs[0]
    return hasattr(game.new_match(n, 1, **opts), "finish_hand")


GAMES = [g for g in registry.names() if has_finish_hand(g)]


def loop(game, s, rng: random.Random, teams: list[list[int]]) -> tuple:
    """The reference: ``rollout_action`` + ``apply`` until the hand ends (the generic loop)."""
    hand0 = s.hand_index()
    while not s.is_terminal() and s.hand_index() == hand0:
        s.apply(game.rollout_action(s, rng))
    rewards = s.outcome().rewards(teams) if s.is_terminal() else s.hand_rewards()
    return rewards, s.hand_index(), s.is_terminal()


def test_the_fast_games_are_covered() -> None:
    assert {"agram", "cuckoo", "whiskey_poker"} <= set(GAMES)


@pytest.mark.parametrize("name", GAMES)
def test_finish_hand_equals_the_rollout_loop(name: str) -> None:
    game = registry.get_game(name)
    rng = random.Random(3)
    checked = overs = 0
    for i in range(240):
        n, opts = game.configs[i % len(game.configs)]
        s = game.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 40)):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if s.is_terminal():
            continue
        teams = game.teams(n)
        r1, r2 = random.Random(i), random.Random(i)
        want = loop(game, s.clone(), r1, teams)
        t = s.clone()
        got = t.finish_hand(r2, teams), t.hand_index(), t.is_terminal()
        assert got == want, f"{name} position {i}"
        assert r1.getstate() == r2.getstate(), f"{name} position {i}: other random numbers drawn"
        # the search's entry point takes the fast path and returns the same
        r3 = random.Random(i)
        assert rollout_rewards(game, s.clone(), r3, teams, s.hand_index(), True) == want[0]
        assert r3.getstate() == r1.getstate()
        checked += 1
        overs += want[2]
        if want[2]:
            with pytest.raises(GameOverError):
                t.finish_hand(random.Random(0), teams)
    assert checked > 100 and overs > 0
