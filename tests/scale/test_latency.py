"""Decision times as exact counts (arena/latency.py): the p50/p99 equal numpy.percentile of every
decision bit for bit, whatever the chunking, merging and pickling; memory is per distinct value."""

from __future__ import annotations

import json
import pickle
import random
from array import array

import numpy as np
import pytest

from arena import latency as latmod
from arena.latency import DecisionTimes, Latency, summary


def journal_times(rng: random.Random, n: int, odd: bool) -> list[float]:
    """Times as the journal holds them: ``round(elapsed, 3)`` written by json and parsed back
    (plus, with ``odd``, values that are not whole microseconds: more decimals, negative, -0.0,
    huge, ints)."""
    xs: list[float] = []
    for _ in range(n):
        u = rng.random()
        if odd and u < 0.02:
            xs.append(rng.choice([-0.0, -1.5, 1e13, 0.1234567, 2.0000001, 7, 0, 1e-9]))
        elif u < 0.5:
            xs.append(round(rng.lognormvariate(0.0, 1.2), 3))
        else:
            xs.append(round(rng.uniform(0.1, 3.0), 3))
    return json.loads(json.dumps(xs))


def same(a: float | None, b: float) -> bool:
    return a is not None and np.float64(a).tobytes() == np.float64(b).tobytes()


@pytest.mark.parametrize("seed,odd", [(1, False), (2, True), (3, True)])
def test_percentiles_equal_every_decisions_bit_for_bit(seed, odd):
    rng = random.Random(seed)
    ref = array("d")
    parts = [DecisionTimes() for _ in range(3)]
    for _ in range(400):  # records' seats arrive in chunks of 1..40 decisions, into three "journal chunks"
        xs = journal_times(rng, rng.randint(1, 40), odd)
        ref.extend(xs)
        parts[rng.randrange(3)].extend(xs)
    whole = DecisionTimes()
    for p in parts:
        whole.extend(pickle.loads(pickle.dumps(p)))  # chunks are pickled in the journal cache
    x = np.frombuffer(ref, dtype=float)
    assert len(whole) == len(x)
    # bit for bit; with -0.0 among the times only up to the sign of a zero (numpy orders -0.0 and 0.0
    # as equal, so even the old array's percentile could give either)
    eq = np.array_equal if odd else (lambda a, b: a.tobytes() == b.tobytes())
    assert eq(whole.values(), np.sort(x))
    for q in (0, 1, 50, 90, 99, 99.9, 100):
        got, want = whole.percentile(q), float(np.percentile(x, q))
        assert (got == want) if odd and want == 0 else same(got, want), q
    s = summary(whole)
    assert s["moves"] == len(x) and same(s["p50_ms"], np.percentile(x, 50)) and same(s["p99_ms"], np.percentile(x, 99))


def test_percentile_read_off_the_counts_equals_numpy_for_every_size():
    """The order-statistic path (no array of every time) against numpy on 1..300 times, ties,
    every q: numpy's interpolation to the bit, both gamma branches (< 0.5 and >= 0.5)."""
    rng = random.Random(11)
    for n in list(range(1, 60)) + [rng.randint(60, 300) for _ in range(40)]:
        xs = [round(rng.choice([1.0, 1.001, 2.5, rng.uniform(0.1, 9.0)]), 3) for _ in range(n)]
        t = DecisionTimes()
        t.extend(json.loads(json.dumps(xs)))
        for q in (0, 0.5, 1, 33.3, 50, 66.7, 99, 99.9, 100, rng.uniform(0, 100)):
            assert same(t.percentile(q), float(np.percentile(np.array(xs), q))), (n, q)


def test_memory_is_per_distinct_value():
    rng = random.Random(5)
    t = DecisionTimes()
    n = 200_000
    for _ in range(n // 8):
        t.extend([round(rng.uniform(0.1, 3.0), 3) for _ in range(8)])
    assert len(t) == n
    # 2,901 distinct microsecond values: 12 bytes each (+ the buffer below FOLD), not 8 bytes a decision
    assert t.nbytes() <= 2901 * 12 + latmod.FOLD * 8 < n * 8 // 30


def test_nan_and_empty():
    t = DecisionTimes()
    assert t.percentile(50) is None and summary(t) == {"moves": 0, "p50_ms": None, "p99_ms": None}
    t.extend([1.0, float("nan"), 2.0])
    ref = np.array([1.0, float("nan"), 2.0])
    assert len(t) == 3 and np.isnan(t.percentile(50)) and np.isnan(np.percentile(ref, 50))
    with pytest.raises(TypeError):
        t.extend(["fast"])


def test_latency_add_by_seat():
    lat = Latency(["a", "b"])
    lat.add(("a", "b"), [[1.5, 2.5], [0.25]])
    lat.add(("b", "x"), [[3.0], [9.0]])  # a bot outside the field: not collected
    assert lat.times["a"].values().tolist() == [1.5, 2.5] and lat.times["b"].values().tolist() == [0.25, 3.0]
