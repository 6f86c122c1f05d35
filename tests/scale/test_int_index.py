"""arena/int_index.py: the counters' int -> int map answers as a dict would, across merges,
keys beyond int64, updates and pickling, in ~16 bytes an entry."""

from __future__ import annotations

import pickle
import random

import pytest

from arena.int_index import IntIndex


@pytest.mark.parametrize("seed", [1, 2])
def test_same_answers_as_a_dict(seed, monkeypatch):
    monkeypatch.setattr(IntIndex, "TAIL", 64)  # many merges
    rng = random.Random(seed)
    d: dict[int, int] = {}
    x = IntIndex()
    for step in range(6000):
        u = rng.random()
        key = rng.choice([rng.randrange(-50, 3000), rng.randrange(1 << 40) << 20, (1 << 63) + rng.randrange(9),
                          -(1 << 63) - 1, (1 << 63) - 1, -(1 << 63)])
        if u < 0.45:
            assert x.setdefault(key, len(d)) == d.setdefault(key, len(d))
        elif u < 0.55:
            x[key] = d[key] = step  # an update of a present or new key
        else:
            assert x.get(key) == d.get(key) and (key in x) == (key in d)
            if key in d:
                assert x[key] == d[key]
            else:
                with pytest.raises(KeyError):
                    x[key]
        if step % 1500 == 0:
            x = pickle.loads(pickle.dumps(x))
        assert len(x) == len(d)
    assert dict(x.items()) == d and x == d
    assert x.get("key") is None and "key" not in x


def test_memory_per_entry():
    x = IntIndex()
    for i in range(200_000):
        x[i * 7919 << 32 | i] = i
    x.items()  # nothing merged by iterating
    blob = pickle.dumps(x)
    assert len(x) == 200_000 and len(blob) < 200_000 * 16 + 1000
    y = pickle.loads(blob)
    assert y.nbytes() == 200_000 * 16 and y[7919 * 5 << 32 | 5] == 5
