"""The canonical order of the batch fit's results (arena/tallies.py ``_sort_by``, issue 18 tenth
pass): one sort of the keys packed into 63 bits gives exactly ``np.lexsort``'s permutation —
with repeated rows (stable), unique rows (the fast unstable sort), and keys too wide to pack."""

from __future__ import annotations

import numpy as np
import pytest

from arena.tallies import _sort_by


@pytest.mark.parametrize("kind", ["repeats", "unique", "wide", "empty", "one key"])
def test_packed_sort_equals_lexsort(kind):
    rng = np.random.default_rng(3)
    n = 0 if kind == "empty" else 20_000
    if kind == "repeats":
        keys = (rng.integers(0, 50, n), rng.integers(0, 4, n), rng.integers(0, 3, n))
    elif kind == "unique":
        block = rng.permutation(n)
        keys = (block, rng.integers(0, 1000, n), rng.integers(0, 1000, n), rng.integers(0, 2, n))
    elif kind == "wide":  # 40 + 30 bits: no packing, np.lexsort itself
        keys = (rng.integers(0, 2**40, n), rng.integers(0, 2**30, n))
    elif kind == "one key":
        keys = (rng.integers(0, 7, n),)
    else:
        keys = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    got = _sort_by(keys)
    assert got.tobytes() == np.lexsort(keys[::-1]).astype(got.dtype).tobytes()
    if n:
        assert (got != np.arange(n)).any()  # the rows were reordered (not already in order)
