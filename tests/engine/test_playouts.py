"""The typed deal shuffle and the random-playout path (issue 19): same results as the references.

* ``engine/_shuffle.pyx`` is ``random.Random(seed).shuffle`` bit for bit, and
  ``engine.deal.shuffled`` still gives every recorded deal (a digest taken from the code
  before the kernel existed);
* :func:`engine.playouts.random_playout` (rollout kernels where the game's rollout policy is
  uniform) plays exactly the uniform loop ``legal[int(rng.random() * len(legal))]``;
* compiled and pure Python give the same playouts for the same seeds.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys

import pytest

from engine import compiled, registry
from engine.cards import mask_of
from engine.deal import deal_hands, deal_masks, forced_orders, shuffled
from engine.playouts import random_playout, uniform_rollout
from engine.seeds import deal_seed, h64, hand_rng, hand_seed
from tests.conftest import require

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: sha256 of ``shuffled(range(size), deal_seed("pin", "g", d), hand)`` for d < 200, hand < 3,
#: size in (32, 40, 52, 102), recorded with ``engine/deal.py`` before the typed shuffle (main at 793458d)
DEALS_DIGEST = "c4a01186658b5d693448e98795f0ffcb8d68cb5a992a69a0734fc1980b04ae91"


def deals_digest() -> str:
    """The digest :data:`DEALS_DIGEST` pins, computed by the current code."""
    h = hashlib.sha256()
    for d in range(200):
        s = deal_seed("pin", "g", d)
        for hand in range(3):
            for size in (32, 40, 52, 102):
                h.update(bytes(shuffled(range(size), s, hand)))
    return h.hexdigest()


def test_recorded_deals_unchanged() -> None:
    assert shuffled(range(52), 7, 0)[:10] == [22, 3, 28, 34, 21, 4, 45, 0, 32, 9]
    assert deals_digest() == DEALS_DIGEST


def test_hand_seed_is_h64() -> None:
    rng = random.Random(11)
    for _ in range(2000):
        d, i = rng.getrandbits(64), rng.randrange(1000)
        purpose = rng.choice(["shuffle", "first_dealer", "first_start", "dealer"])
        assert hand_seed(d, i, purpose) == h64(b"cardarena-hand", d, i, purpose)
        assert hand_rng(d, i, purpose).random() == random.Random(h64(b"cardarena-hand", d, i, purpose)).random()


def test_shuffled_is_the_seeded_random_shuffle() -> None:
    rng = random.Random(12)
    for _ in range(500):
        d, i, size = rng.getrandbits(64), rng.randrange(50), rng.randrange(0, 110)
        want = list(range(size))
        random.Random(h64(b"cardarena-hand", d, i, "shuffle")).shuffle(want)
        assert shuffled(range(size), d, i) == want


def test_deal_masks_is_shuffled_then_deal_hands() -> None:
    rng = random.Random(14)
    for _ in range(400):
        size = rng.choice([32, 40, 52, 102])
        n = rng.randrange(1, 6)
        per = rng.randrange(0, size // n + 1)
        d, i, first = rng.getrandbits(64), rng.randrange(9), rng.randrange(n)
        hands, rest = deal_hands(shuffled(range(size), d, i), n, per, first)
        assert deal_masks(range(size), d, i, n, per, first) == ([mask_of(h) for h in hands], rest)
    with pytest.raises(ValueError, match="cannot deal 7 cards to 6 seats"):
        deal_masks(range(40), 1, 0, 6, 7)
    # the audit hook still decides the deck
    with forced_orders(lambda cards, seed, hand: sorted(cards, reverse=True)):
        assert deal_masks(range(10), 5, 0, 2, 3, 1) == ([0b1110000000 >> 3, 0b1110000000], [3, 2, 1, 0])


def test_shuffle_kernel_equals_random_shuffle() -> None:
    k = compiled.kernel("engine._shuffle")
    if compiled.forced_pure():  # CARDARENA_PURE_PYTHON=1: the kernel must not be used, the
        assert k is None        # reference deals stay those pinned (test_recorded_deals_unchanged)
        assert deals_digest() == DEALS_DIGEST
        return
    require(k is not None or bool(os.environ.get("CI")),
            "engine/_shuffle.pyx not built (python setup.py build_ext --inplace)")
    assert k is not None
    rng = random.Random(13)
    seeds = [0, 1, 2**32 - 1, 2**32, 2**64 - 1] + [rng.getrandbits(64) >> rng.randrange(64) for _ in range(3000)]
    for seed in seeds:
        size = rng.choice([0, 1, 2, 32, 33, 40, 52, 64, 65, 102, 300, 700])
        want = list(range(size))
        random.Random(seed).shuffle(want)
        got = list(range(size))
        k.shuffle_seeded(got, seed)
        assert got == want, (seed, size)
    # past the first twist and into a second table (the lazy twist's edges)
    for seed in seeds[:40]:
        r = random.Random(seed)
        assert k.random_words(seed, 1300) == [r.getrandbits(32) for _ in range(1300)]
    with pytest.raises(OverflowError):
        k.shuffle_seeded([1, 2], 2**64)


def uniform_loop(game, state, rng) -> list[float]:
    """The reference random playout: ``Game.rollout_action``'s uniform policy, move by move."""
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply(legal[int(rng.random() * len(legal))])
    return state.outcome().rewards(game.teams(state.num_players))


@pytest.mark.parametrize("name", registry.names())
def test_random_playout_is_the_uniform_loop(name: str) -> None:
    game = registry.get_game(name)
    for ci, (n, opts) in enumerate(game.configs):
        for d in range(6):
            start = game.new_match(n, deal_seed("playouts", name, 10 * ci + d), **opts)
            r1, r2 = random.Random(d), random.Random(d)
            want = uniform_loop(game, start.clone(), r1)
            s = start.clone()
            got = random_playout(game, s, r2)
            assert got == want, (name, ci, d)
            assert r1.getstate() == r2.getstate(), f"{name} config {ci}: different random draws"
            assert s.is_terminal() and s.outcome().rewards(game.teams(n)) == want


def test_uniform_rollout_flags() -> None:
    flags = {n: uniform_rollout(registry.get_game(n)) for n in registry.names()}
    # Cuckoo and Whiskey Poker roll out with their own card-aware policies
    assert not flags["cuckoo"] and not flags["whiskey_poker"]
    assert flags["agram"] and flags["guinote"] and flags["sedma"] and flags["argute"]


TRACE = r'''
import json, random
from engine import compiled, registry
from engine.playouts import random_playout
from engine.seeds import deal_seed
out = {"mode": compiled.mode(), "deal": compiled.kernel("engine._shuffle") is not None, "games": {}}
for name in registry.names():
    game = registry.get_game(name)
    rows = []
    for ci, (n, opts) in enumerate(game.configs):
        rng = random.Random(ci)
        for d in range(4):
            s = game.new_match(n, deal_seed("trace", name, 10 * ci + d), **opts)
            rows.append([random_playout(game, s, rng), list(s.outcome().scores), rng.random()])
    out["games"][name] = rows
print(json.dumps(out))
'''


def playout_trace(pure: bool) -> dict:
    """Random playouts of every config of every game, in a subprocess (pure Python forced or not)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env[compiled.PURE_ENV] = "1" if pure else "0"
    proc = subprocess.run([sys.executable, "-c", TRACE], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_random_playouts_compiled_equal_pure() -> None:
    require(compiled.kernel("engine._shuffle") is not None or bool(os.environ.get("CI")),
            "compiled core not built (python setup.py build_ext --inplace)")
    fast, slow = playout_trace(False), playout_trace(True)
    assert fast["deal"] and not slow["deal"]
    assert slow["mode"] == "pure"
    assert fast["games"].keys() == slow["games"].keys()
    for name, rows in slow["games"].items():
        assert fast["games"][name] == rows, name
