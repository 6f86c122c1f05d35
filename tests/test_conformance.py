"""Runs the conformance suite (tests/conformance.py) on every registered game.

Each game's ``Game.configs`` lists the (players, options) pairs exercised.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import registry
from tests import conformance as cf

NAMES = registry.names()  # captured at import: test-only games registered later are not conformance subjects
CASES = [(name, n, opts) for name in NAMES for (n, opts) in registry.get_game(name).configs]
IDS = [f"{name}-{n}p-{'-'.join(f'{k}={v}' for k, v in opts.items()) or 'default'}" for name, n, opts in CASES]


def test_every_game_has_configs():
    for name in NAMES:
        game = registry.get_game(name)
        assert game.configs, f"{name} declares no configs for the conformance suite"
        assert game.name == name
        for n, opts in game.configs:
            game.resolve_options(opts)
            assert game.min_players <= n <= game.max_players


@pytest.mark.parametrize("name,n,opts", CASES, ids=IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**62))
def test_random_playouts(name, n, opts, seed):
    game = registry.get_game(name)
    final = cf.random_playout(game, n, opts, seed)
    cf.check_observation_shape(game, final)


@pytest.mark.parametrize("name,n,opts", CASES, ids=IDS)
def test_determinism_and_public_actions(name, n, opts):
    game = registry.get_game(name)
    for seed in (1, 2, 3):
        cf.check_determinism(game, n, opts, seed)
        cf.check_public_actions(game, n, opts, seed)


@pytest.mark.parametrize("name,n,opts", CASES, ids=IDS)
def test_determinization_audit(name, n, opts):
    game = registry.get_game(name)
    positions = cf.random_positions(game, n, opts, seed=11, count=12)
    assert positions
    for i, state in enumerate(positions):
        cf.check_observation_shape(game, state)
        for seat in range(n):
            cf.audit_position(game, state, seat, samples=4 if seat else 8, seed=i)


@pytest.mark.parametrize("name,n,opts", CASES, ids=IDS)
def test_chi2_against_exact_enumeration(name, n, opts):
    game = registry.get_game(name)
    rng = random.Random(5)
    tested = 0
    for attempt in range(60):
        positions = cf.random_positions(game, n, opts, seed=rng.getrandbits(32), count=4)
        for state in positions:
            # walk towards the end of the hand, where few worlds remain
            seat = rng.randrange(n)
            if cf.chi2_uniformity(game, state, seat, seed=attempt):
                tested += 1
        if tested >= 2:
            break
    # large information sets: exact enumeration on conditioned slices (a few free cards)
    sliced = 0
    for i, state in enumerate(cf.random_positions(game, n, opts, seed=23, count=8)):
        if cf.chi2_conditioned(game, state, i % n, free=4, seed=i):
            sliced += 1
    assert tested + sliced >= 2, f"{name}: no position had two or more consistent worlds to compare"


#: games whose samples are compared with the exact distribution over physical deals today; a
#: game that drops out of it (or a χ² failure anywhere) fails the test below
MIN_PHYSICAL_GAMES = 4


@pytest.mark.slow
def test_samples_against_exact_physical_deals():
    """Audit (f) on every game: for each, up to two configs and two seeds are tried until a small
    first-hand position fits the exact enumeration; every comparison that runs must pass χ²."""
    covered, missed = [], []
    for name in NAMES:
        game = registry.get_game(name)
        done = any(cf.chi2_physical_deals(game, n, opts, seed=seed)
                   for n, opts in game.configs[:2] for seed in (0, 1))
        (covered if done else missed).append(name)
    assert len(covered) >= MIN_PHYSICAL_GAMES, (
        f"exact physical-deal comparison ran for {covered} only; no small position fitted for {missed}")
