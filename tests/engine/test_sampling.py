"""The exact constrained sampler against brute-force enumeration."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from engine.errors import InconsistentObservationError
from engine.sampling import Sampler, SamplingProblem


def brute_force(problem: SamplingProblem) -> Counter:
    """Every assignment (sets per location) that respects capacities and allowed masks."""
    caps = problem.capacities
    allowed = dict(zip(problem.cards, problem.allowed))
    out: Counter = Counter()

    def rec(j, remaining, acc):
        if j == len(caps):
            if not remaining:
                out[tuple(acc)] += 1
            return
        for combo in itertools.combinations(remaining, caps[j]):
            if all(allowed[c] >> j & 1 for c in combo):
                rest = [c for c in remaining if c not in combo]
                rec(j + 1, rest, acc + [tuple(sorted(combo))])

    rec(0, sorted(problem.cards), [])
    return out


def test_voids_and_pins_counted_exactly():
    # 7 cards; west (cap 2) is void in cards 0-2, east (cap 2), undealt (cap 3); card 6 pinned to east
    full = 0b111
    allowed = [0b110, 0b110, 0b110, full, full, full, 0b010]
    p = SamplingProblem(list(range(7)), [2, 2, 3], allowed, ["west", "east", "undealt"])
    s = Sampler(p)
    exact = brute_force(p)
    assert s.total == sum(exact.values()) == len(exact)
    # east holds 6 plus one of the other 6 cards; west takes 2 of cards 3-5 not used by east
    # east = {6, x}: x in {0,1,2} leaves west C(3,2) = 3 choices from {3,4,5}; x in {3,4,5} leaves 1
    assert s.total == 3 * 3 + 3 * 1


def test_chi_square_uniform_over_consistent_assignments():
    allowed = [0b110, 0b110, 0b111, 0b111, 0b111, 0b101, 0b011]
    p = SamplingProblem(list(range(7)), [2, 2, 3], allowed)
    s = Sampler(p)
    exact = brute_force(p)
    rng = random.Random(20261129)
    n = 60 * len(exact)
    counts = Counter()
    for _ in range(n):
        a, _ = s.sample(rng)
        key = tuple(tuple(sorted(x)) for x in a)
        assert key in exact
        counts[key] += 1
    keys = sorted(exact)
    assert chisquare([counts[k] for k in keys]).pvalue > 0.001


def test_zero_completions_raise_naming_locations():
    # two cards that may only go to a location of capacity 1
    p = SamplingProblem([0, 1, 2], [1, 2], [0b01, 0b01, 0b11], ["west", "stock"])
    with pytest.raises(InconsistentObservationError, match="west=1"):
        Sampler(p)


def test_capacity_mismatch_is_an_error():
    with pytest.raises(InconsistentObservationError, match="3 unseen cards"):
        Sampler(SamplingProblem([0, 1, 2], [1, 1], [0b11] * 3))


def test_hidden_choices_uniform_and_counted():
    p = SamplingProblem([0, 1], [1, 1], [0b11, 0b11], choices=[[0, 1, 2, 3], ["x", "y"]])
    s = Sampler(p)
    assert s.total == 2 * 4 * 2
    rng = random.Random(3)
    c = Counter(tuple(s.sample(rng)[1]) for _ in range(8000))
    assert len(c) == 8
    assert chisquare(list(c.values())).pvalue > 0.001


def test_build_by_location_name():
    p = SamplingProblem.build([("west", 1), ("east", 1)], [10, 11], {10: ["east"]})
    s = Sampler(p)
    assert s.total == 1
    a, _ = s.sample(random.Random(0))
    assert a == [[11], [10]]


def test_same_seed_same_sample():
    p = SamplingProblem(list(range(12)), [4, 4, 4], [0b111] * 12)
    s = Sampler(p)
    assert s.sample(random.Random(9)) == s.sample(random.Random(9))
    assert s.total == 34650  # 12! / (4! 4! 4!)


def test_large_colour_partition_is_fast_to_build():
    # Gargon-like: 6 colour classes, 60 single-card positions each allowing one colour
    cards = list(range(60))
    colour = [c % 6 for c in cards]
    caps = [1] * 60
    allowed = [0] * 60
    for pos in range(60):
        for c in cards:
            if colour[c] == pos % 6:
                allowed[c] |= 1 << pos
    s = Sampler(SamplingProblem(cards, caps, allowed))
    assert s.total == 3628800 ** 6  # 10! per colour
    a, _ = s.sample(random.Random(1))
    assert all(colour[loc[0]] == j % 6 for j, loc in enumerate(a))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_problems_match_brute_force(data):
    n_cards = data.draw(st.integers(1, 7))
    n_loc = data.draw(st.integers(1, 3))
    caps = [0] * n_loc
    for _ in range(n_cards):
        caps[data.draw(st.integers(0, n_loc - 1))] += 1
    full = (1 << n_loc) - 1
    allowed = [data.draw(st.integers(1, full)) for _ in range(n_cards)]
    p = SamplingProblem(list(range(n_cards)), caps, allowed)
    exact = brute_force(p)
    if not exact:
        with pytest.raises(InconsistentObservationError):
            Sampler(p)
        return
    s = Sampler(p)
    assert s.total == len(exact)
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(20):
        a, _ = s.sample(rng)
        assert tuple(tuple(sorted(x)) for x in a) in exact
        assert [len(x) for x in a] == caps
