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
from tests.games import gargon_physical
from tests.games.gargon_physical import chi2_gargon

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


#: audit (f) per game: (players, options, seed, keyword arguments of ``chi2_physical_deals``),
#: a small first-hand situation found for each (measured in docs/architecture.md "Exactness
#: over physical deals"). Sedma: the first positions (later ones carry each seat's drawn
#: history: too many worlds); Whiskey Poker: ``LOWEST_PAYS`` (no folds, so the open exchange
#: phase is reached and the opponent has given away all but two of its dealt cards); Guiñote:
#: a deal whose first trick's winner calls (12 + 11 shown, one card played: three of its dealt
#: cards unseen, C(30, 3) = 4060 worlds; the earlier positions have C(32, 5) and are skipped);
#: Gargon: ``replacement: none`` late in the hand, where the other hands hold 0-3 cards, with its
#: own per-colour enumeration (``PHYSICAL_AUDITS``, tests/games/gargon_physical.py).
PHYSICAL_SITUATIONS = {
    "agram": (2, {}, 0, {}),
    "argute": (3, {}, 0, {}),
    "cuckoo": (2, {}, 0, {}),
    "cuttle": (2, {}, 0, {}),
    "gargon": (3, {"replacement": "none"}, 3, {}),
    "guinote": (2, {}, 1, {"early": True, "budget": 5000}),
    "sedma": (2, {}, 0, {"early": True}),
    "whiskey_poker": (2, {"mode": "LOWEST_PAYS"}, 1, {"tries": 12}),
}
#: games audit (f) cannot cover yet, and why (their own brute-force tests over physical deals
#: are in tests/games/)
PHYSICAL_NOT_COVERED: dict[str, str] = {}
#: games whose audit (f) enumerates with their own exact enumerator (default
#: ``cf.chi2_physical_deals``): Gargon's exchange closure replays 70k-200k times
#: (docs/architecture.md "Exactness over physical deals")
PHYSICAL_AUDITS = {"gargon": chi2_gargon}


def test_physical_audit_names_every_game():
    assert set(PHYSICAL_SITUATIONS) | set(PHYSICAL_NOT_COVERED) == set(NAMES)
    assert not set(PHYSICAL_SITUATIONS) & set(PHYSICAL_NOT_COVERED)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PHYSICAL_SITUATIONS))
def test_samples_against_exact_physical_deals(name):
    """Audit (f): at the game's situation the exact distribution over physical deals fits the
    enumeration, and the sampler passes χ² against it (α = 0.001)."""
    n, opts, seed, kw = PHYSICAL_SITUATIONS[name]
    audit = PHYSICAL_AUDITS.get(name, cf.chi2_physical_deals)
    got = audit(registry.get_game(name), n, opts, seed=seed, **kw)
    assert got is not None, f"{name}: no position of the first hand fitted the exact enumeration"
    assert got["worlds"] >= 2 and got["p"] > 0.001


class _FavourSmallest:
    """An information set whose ``sample`` draws two worlds and keeps the one with the smaller
    world signature: a biased sampler (like Argute's old lowest-copy draw)."""

    def __init__(self, info) -> None:
        self.info = info

    def sample(self, rng):
        a, b = self.info.sample(rng), self.info.sample(rng)
        return min(a, b, key=cf.world_signature)


@pytest.mark.parametrize("name", ["agram", pytest.param("gargon", marks=pytest.mark.slow), "guinote", "sedma"])
def test_physical_audit_rejects_a_biased_sampler(name):
    n, opts, seed, kw = PHYSICAL_SITUATIONS[name]
    game = registry.get_game(name)
    audit = PHYSICAL_AUDITS.get(name, cf.chi2_physical_deals)
    with pytest.raises(AssertionError, match="χ² rejects the sampler"):
        audit(game, n, opts, seed=seed, **kw, infoset=lambda obs: _FavourSmallest(game.infoset(obs)))


class _IgnoreDealWeights:
    """An information set whose ``sample`` keeps a draw with probability ``lightest / weight``
    of its world: uniform over worlds, ignoring how many physical deals each has (like a
    sampler that treats a colour's two zeros as distinct faces)."""

    def __init__(self, info, exact) -> None:
        self.info, self.exact, self.lightest = info, exact, min(exact.values())

    def sample(self, rng):
        while True:
            world = self.info.sample(rng)
            if rng.random() < self.lightest / self.exact[cf.world_signature(world)]:
                return world


@pytest.mark.slow
def test_gargon_physical_audit_sees_deal_weights():
    """Gargon's situation has worlds of 32 and 64 deals (a colour's zeros apart or together in
    one hand): the sampler fits, a sampler uniform over worlds is rejected."""
    n, opts, seed, kw = PHYSICAL_SITUATIONS["gargon"]
    game = registry.get_game("gargon")
    found = gargon_physical.situation(game, n, opts, seed)
    assert found is not None
    exact = found[3]
    assert sorted(set(exact.values())) == [32, 64]
    assert gargon_physical.compare(game, found, game.infoset)["p"] > 0.001
    with pytest.raises(AssertionError, match="χ² rejects the sampler"):
        gargon_physical.compare(game, found, lambda obs: _IgnoreDealWeights(game.infoset(obs), exact))
