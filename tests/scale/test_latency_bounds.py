"""A crafted decision-times cache cannot size arrays (harden9 finding 2): counts past the bounds
are a damaged cache (ValueError), and the percentiles with odd times are read off the counts and
the sorted odd times — never by expanding the counts — and still equal numpy.percentile bit for bit."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from arena import times_checkpoint
from arena.latency import MAX_COUNT, MAX_TOTAL, DecisionTimes

QS = (0, 0.1, 1, 12.5, 25, 37.3, 50, 75, 90, 99, 99.9, 100)


def _same(a: float | None, b: float) -> bool:
    """Bit for bit (every NaN alike: numpy sets the result to its own NaN)."""
    assert a is not None
    return (np.isnan(a) and np.isnan(b)) or np.float64(a).tobytes() == np.float64(b).tobytes()


def _times(rng: np.random.Generator, odd: np.ndarray) -> DecisionTimes:
    t = DecisionTimes()
    t.add_values(np.round(rng.lognormal(0.0, 1.2, int(rng.integers(1, 3000))), 3))  # whole microseconds
    t.add_values(odd)
    return t


@pytest.mark.parametrize("seed", range(40))
def test_percentile_with_odd_times_equals_numpy_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = np.array([-0.5, -1e300, 1e300, 1e13, 2.5e-4, 0.1234567, np.inf, -np.inf, 5e9, -3.0])
    odd = np.concatenate([rng.normal(0.0, 4.0, int(rng.integers(0, 30))),  # negative and fractional
                          rng.choice(pool, int(rng.integers(0, 6)))])
    if seed % 5 == 0:
        odd = np.append(odd, np.nan)
    t = _times(rng, odd)
    values = t.values()
    assert len(t.odd) == len(odd)  # every odd time kept as given (none is a whole microsecond)
    for q in (*QS, float(rng.uniform(0, 100))):
        with np.errstate(invalid="ignore"):
            want = float(np.percentile(values, q))
        assert _same(t.percentile(q), want), (seed, q, t.percentile(q), want)
    if seed % 5 == 0:
        assert np.isnan(t.percentile(50))


def test_only_odd_times_and_one_time() -> None:
    rng = np.random.default_rng(7)
    t = DecisionTimes()
    t.add_values(rng.normal(0, 1, 101))  # no whole microsecond at all
    assert len(t.us) == 0
    for q in QS:
        assert _same(t.percentile(q), float(np.percentile(t.values(), q)))
    one = DecisionTimes()
    one.add_values(np.array([-2.5]))
    assert one.percentile(0) == one.percentile(100) == -2.5


def test_huge_counts_with_an_odd_time_are_read_without_expanding() -> None:
    # the crafted cache of the finding: 2^27 decisions of one value (1 GB as doubles) and one odd time
    t = DecisionTimes.of_arrays(np.array([1500, 2500], np.uint32), np.array([1 << 27, 1 << 27], np.int64),
                                np.array([0.0005]))
    tracemalloc.start()
    p50, p99, p0 = t.percentile(50), t.percentile(99), t.percentile(0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # sorted: 0.0005, then 2^27 times 1.5 (indices 1..2^27), then 2.5; the median index (n-1)/2 = 2^27
    assert (p50, p99, p0) == (1.5, 2.5, 0.0005)
    assert peak < 1 << 20, peak
    assert len(t) == (1 << 28) + 1


def test_median_index_falls_on_the_odd_time() -> None:
    # 2 whole values below and 2 above 1.0005: the median (index 2) is the odd time itself
    t = DecisionTimes.of_arrays(np.array([1000, 2000], np.uint32), np.array([2, 2], np.int64), np.array([1.0005]))
    assert t.percentile(50) == 1.0005 == float(np.percentile(t.values(), 50))


@pytest.mark.parametrize("counts", [[MAX_COUNT + 1], [1 << 62], [(1 << 62), (1 << 62), 1 << 40]])
def test_of_arrays_refuses_a_count_beyond_the_bound(counts: list[int]) -> None:
    us = np.arange(1, len(counts) + 1, dtype=np.uint32)
    with pytest.raises(ValueError, match="count above"):
        DecisionTimes.of_arrays(us, np.array(counts, np.int64), np.zeros(0))
    with pytest.raises(ValueError, match="count above"):
        DecisionTimes.merged([(us, np.array(counts, np.int64), np.zeros(0))])


def test_a_total_beyond_the_bound_is_refused_though_each_count_is_within() -> None:
    n = MAX_TOTAL // MAX_COUNT + 1  # 4097 values at the largest count: the total passes 2^52
    us = np.arange(1, n + 1, dtype=np.uint32)
    full = np.full(n, MAX_COUNT, np.int64)
    with pytest.raises(ValueError, match="in all"):
        DecisionTimes.of_arrays(us, full, np.zeros(0))
    half = n // 2  # in two parts of which neither passes it alone
    parts = [(us[:half], full[:half], np.zeros(0)), (us[half:], full[half:], np.zeros(0))]
    for u, c, o in parts:
        assert len(DecisionTimes.of_arrays(u, c, o)) == MAX_COUNT * len(u)
    with pytest.raises(ValueError, match="in all"):
        DecisionTimes.merged(parts)
    at = DecisionTimes.of_arrays(us[:-1], full[:-1], np.zeros(0))  # just within: accepted, exact length
    assert len(at) == MAX_COUNT * (n - 1) <= MAX_TOTAL


def test_a_crafted_times_checkpoint_is_a_damaged_cache(tmp_path: Path) -> None:
    bots = ["a", "b"]
    key = times_checkpoint.key_of("digest", bots)
    good = {b: DecisionTimes() for b in bots}
    good["a"].add_values(np.array([1.0, 2.0, 2.0]))
    times_checkpoint.save(tmp_path, key, bots, good)
    back = times_checkpoint.load(tmp_path, key, bots)
    assert back is not None and back["a"] == good["a"]  # the writer's own is read back
    path = tmp_path / times_checkpoint.NAME
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    assert json.loads(bytes(arrays["head"]).decode())["key"] == key
    for crafted in ([1 << 62, 1], [1 << 27, 1 << 62]):
        arrays["counts"] = np.array(crafted, np.int64)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        path.write_bytes(buf.getvalue())
        assert times_checkpoint.load(tmp_path, key, bots) is None
