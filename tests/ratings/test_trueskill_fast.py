"""arena/trueskill_fast.py equals the ``trueskill`` package's ``env.rate`` bit for bit (issue 18):
random matches (2–6 teams of 1–3 players, ties, lopsided ratings, several environments), the
package's error cases (extreme upsets), and whole replays through :class:`arena.ratings.Rater`
(partnerships, free-for-all, forfeits, the mpmath fallback) against the package's own path."""

from __future__ import annotations

import math
import random

import pytest
import trueskill

from arena import ratings
from arena.trueskill_fast import FastRate


def _env(rng: random.Random) -> trueskill.TrueSkill:
    mu = rng.choice([25.0, 0.0, 1500.0, 3.0])
    sigma = mu / 3 if mu else rng.uniform(0.5, 10)
    return trueskill.TrueSkill(mu=mu, sigma=sigma, beta=sigma * rng.choice([0.5, 0.5, 0.2, 1.5]),
                               tau=rng.choice([sigma / 100, 0.0, sigma / 10]),
                               draw_probability=rng.choice([0.01, 0.1, 0.33, 0.9]))


def _groups(rng: random.Random, env: trueskill.TrueSkill, g: int) -> list[tuple[trueskill.Rating, ...]]:
    spread = rng.choice([0.1, 1.0, 3.0, 8.0, 40.0])
    return [tuple(trueskill.Rating(rng.gauss(env.mu, env.sigma * spread), env.sigma * rng.uniform(0.02, 1.5))
                  for _ in range(rng.choice([1, 1, 2, 3]))) for _ in range(g)]


def _outcome(fn, *args, **kw):
    """``fn(*args, **kw)`` as ``("ok", [(pi, tau) per rating per group])`` or ``("raise", exception type)``."""
    try:
        new = fn(*args, **kw)
    except Exception as e:  # the package's errors are part of its behaviour
        return "raise", type(e)
    return "ok", [[(r.pi, r.tau) for r in grp] for grp in new]


@pytest.mark.parametrize("seed, n", [(1, 800), pytest.param(2, 3000, marks=pytest.mark.slow),
                                     pytest.param(3, 3000, marks=pytest.mark.slow)])
def test_random_matches_equal_the_package_to_the_last_bit(seed, n):
    rng = random.Random(seed)
    kinds = {"ok": 0, "raise": 0}
    ties = 0
    for _ in range(n):
        env = _env(rng)
        fast = FastRate(env)
        g = rng.choice([2, 2, 2, 2, 3, 4, 5, 6])
        groups = _groups(rng, env, g)
        ranks = [rng.randrange(g) for _ in range(g)] if rng.random() < 0.5 else rng.sample(range(g), g)
        ties += len(set(ranks)) < g
        want = _outcome(env.rate, groups, ranks=ranks)
        # the flat code itself (not its hand-over to the package): exact floats (==), and it
        # raises exactly where the package raises
        got = _outcome(fast._rate, groups, ranks, g)
        assert got == want or got[0] == want[0] == "raise", (groups, ranks)
        assert _outcome(fast.rate, groups, ranks) == want
        kinds[want[0]] += 1
    assert kinds["ok"] > 0.8 * n and kinds["raise"] >= n // 200 and ties > n // 5  # the cases were exercised


def test_extreme_upsets_raise_as_the_package_does():
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.1)
    fast = FastRate(env)
    weak, strong = trueskill.Rating(-400.0, 0.5), trueskill.Rating(400.0, 0.5)
    for groups, ranks in [([(weak,), (strong,)], [0, 1]), ([(strong,), (weak,)], [1, 0]),
                          ([(weak,), (strong,), (strong,)], [0, 1, 2])]:
        with pytest.raises(FloatingPointError):
            env.rate(groups, ranks=ranks)
        with pytest.raises(FloatingPointError):
            fast.rate(groups, ranks)


def test_unusual_input_is_the_packages_own():
    env = trueskill.TrueSkill(draw_probability=0.1)
    fast = FastRate(env)
    r = env.create_rating()
    for groups, ranks in [([(r,)], [0]), ([(r,), ()], [0, 1]), ([(r,), (r,)], [0])]:
        with pytest.raises(ValueError):
            fast.rate(groups, ranks)
    mp = trueskill.TrueSkill(draw_probability=0.1, backend="mpmath")
    assert not FastRate(mp).usable  # a non-float backend: the package's graph
    got = FastRate(mp).rate([(r,), (r,)], [0, 1])
    assert [x.mu for (x,) in got] == [x.mu for (x,) in mp.rate([(r,), (r,)], ranks=[0, 1])]


def test_draw_margin_is_the_packages():
    env = trueskill.TrueSkill(draw_probability=0.25)
    fast = FastRate(env)
    for size in (2, 3, 4, 6):
        assert fast.margin(size) == trueskill.calc_draw_margin(0.25, size, env)


def _package_only(monkeypatch):
    """Make :class:`arena.ratings.Rater` use the package's ``env.rate`` (the reference path)."""
    def build(env):
        f = FastRate(env)
        f.usable = False
        return f
    monkeypatch.setattr(ratings, "FastRate", build)


def _replay(rng: random.Random, shape: str, n: int) -> tuple[list[dict], dict, int]:
    """Feed ``n`` random results through a Rater: moved bots per result, the final state, fallbacks."""
    bots = [f"b{i:02d}" for i in range(16)]
    skill = {b: rng.gauss(0, 6) for b in bots}
    rater = ratings.Rater(0.12, "default", fixed=["b00"])
    moved = []
    for _ in range(n):
        if shape == "ffa":
            k = rng.choice([3, 4, 5])
            sides = [[b] for b in rng.sample(bots, k)]
        elif shape == "partners":
            four = rng.sample(bots, 4)
            sides = [four[:2], four[2:]]
        else:
            sides = [[b] for b in rng.sample(bots, 2)]
        perf = [sum(skill[b] for b in s) + rng.gauss(0, 4) for s in sides]
        ranks = [sorted(perf, reverse=True).index(p) for p in perf]
        if rng.random() < 0.15:
            ranks = [0] * len(sides)
        frozen = [1] if shape == "pairs" and rng.random() < 0.1 else []
        moved.append(rater.update(sides, ranks, frozen_sides=frozen))
    if shape == "pairs":  # an upset too extreme for floats: the mpmath fallback
        rater.cur["b01"] = trueskill.Rating(-300.0, 0.3)
        rater.cur["b02"] = trueskill.Rating(300.0, 0.3)
        moved.append(rater.update([["b01"], ["b02"]], [0, 1]))
    return moved, {b: (r.pi, r.tau) for b, r in rater.cur.items()}, rater.fallbacks


@pytest.mark.parametrize("shape", ["pairs", "ffa", "partners"])
def test_rater_replays_equal_the_packages_bit_for_bit(shape, monkeypatch):
    got = _replay(random.Random(7), shape, 600)
    _package_only(monkeypatch)
    want = _replay(random.Random(7), shape, 600)
    assert got == want
    if shape == "pairs":
        assert got[2] == 1 and math.isfinite(got[1]["b01"][0])  # the fallback ran, in both


def test_journal_replay_with_auto_draws_and_partnerships_equals_the_packages(monkeypatch):
    from tests.scale.test_checkpoint import BOTS, records

    recs = records(400, players=2, seed=5, ties=True) + records(200, players=4, seed=6)
    got = ratings.rate(recs, BOTS, draw_probability="auto")
    _package_only(monkeypatch)
    want = ratings.rate(recs, BOTS, draw_probability="auto")
    assert got.ratings == want.ratings and got.history == want.history
    assert len(got.history) == 600


def test_journal_replay_with_forfeits_and_partnerships_equals_the_packages(monkeypatch):
    from tests.scale import test_columns as tc

    recs = tc.records(700, seed=11)
    assert any(r.status == "forfeit" for r in recs) and any(len(r.seats) == 4 for r in recs)
    got = ratings.rate(recs, tc.BOTS, draw_probability=0.2, rate_forfeits=True)
    _package_only(monkeypatch)
    want = ratings.rate(recs, tc.BOTS, draw_probability=0.2, rate_forfeits=True)
    assert got.ratings == want.ratings and got.history == want.history
