"""An int -> int map in ~16 bytes an entry, for the tables' counters at a million records (issue 18).

:class:`arena.tallies.Tallies` numbers its duplicate blocks, its (block, bot) slots and its fit
blocks with maps from a packed int key to the next free index — one entry per record or per
block. As Python dicts they cost ~130–150 bytes an entry (the table, a 32-byte int key, an int
value): ~300 MB at 1M records. :class:`IntIndex` keeps the same map as two sorted ``int64``
arrays (binary search) plus a small dict of the latest keys, merged into the arrays every
:data:`IntIndex.TAIL` new keys; keys outside int64 stay in a plain dict. Lookups return the same
values as the dict would; only :meth:`IntIndex.items`' order differs (sorted keys, then the
recent ones), which no caller relies on.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from typing import Any

import numpy as np

_LO, _HI = -(1 << 63), (1 << 63) - 1


class IntIndex:
    """A mutable mapping ``int -> int`` with the dict methods the counters use (``get``, ``[]``,
    ``[]=``, ``setdefault``, ``in``, ``len``, ``items``); picklable as two arrays."""

    __slots__ = ("_keys", "_vals", "_kv", "_vv", "tail", "big")
    TAIL = 1 << 15  #: recent keys kept in a dict before a merge into the sorted arrays

    def __init__(self) -> None:
        self._set(np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.tail: dict[int, int] = {}
        self.big: dict[int, int] = {}  # keys beyond int64

    def _set(self, keys: np.ndarray, vals: np.ndarray) -> None:
        self._keys, self._vals = keys, vals
        self._kv, self._vv = keys.data, vals.data  # memoryviews: Python ints by index, bisect works on them

    def _find(self, key: int) -> int | None:
        v = self.tail.get(key)
        if v is not None:
            return v
        if not isinstance(key, int):
            return None
        if not _LO <= key <= _HI:
            return self.big.get(key)
        kv = self._kv
        i = bisect_left(kv, key)
        if i < len(kv) and kv[i] == key:
            return self._vv[i]
        return None

    def _merge(self) -> None:
        if not self.tail:
            return
        n = len(self.tail)
        keys = np.concatenate([self._keys, np.fromiter(self.tail.keys(), np.int64, n)])
        vals = np.concatenate([self._vals, np.fromiter(self.tail.values(), np.int64, n)])
        order = np.argsort(keys, kind="stable")
        self._set(keys[order], vals[order])
        self.tail = {}

    def get(self, key: int, default: Any = None) -> Any:
        """The value of ``key``, else ``default``."""
        v = self._find(key)
        return default if v is None else v

    def __getitem__(self, key: int) -> int:
        v = self._find(key)
        if v is None:
            raise KeyError(key)
        return v

    def __setitem__(self, key: int, value: int) -> None:
        if not _LO <= key <= _HI:
            self.big[key] = value
            return
        if key not in self.tail:
            kv = self._kv
            i = bisect_left(kv, key)
            if i < len(kv) and kv[i] == key:
                self._vals[i] = value
                return
        self.tail[key] = value
        if len(self.tail) >= self.TAIL:
            self._merge()

    def setdefault(self, key: int, default: int) -> int:
        """As ``dict.setdefault``."""
        v = self._find(key)
        if v is None:
            self[key] = default
            return default
        return v

    def __contains__(self, key: object) -> bool:
        return isinstance(key, int) and self._find(key) is not None

    def __len__(self) -> int:
        return len(self._keys) + len(self.tail) + len(self.big)

    def items(self) -> Iterator[tuple[int, int]]:
        """``(key, value)`` pairs: the merged ones by key, then the recent ones, then those beyond int64."""
        yield from zip(self._keys.tolist(), self._vals.tolist())
        yield from list(self.tail.items())
        yield from list(self.big.items())

    def nbytes(self) -> int:
        """Bytes of the sorted arrays (the recent keys' dict not counted)."""
        return int(self._keys.nbytes + self._vals.nbytes)

    def __getstate__(self) -> tuple[bytes, bytes, dict[int, int]]:
        self._merge()
        return (self._keys.tobytes(), self._vals.tobytes(), self.big)

    def __setstate__(self, state: tuple[bytes, bytes, dict[int, int]]) -> None:
        keys, vals, self.big = state
        self._set(np.frombuffer(keys, np.int64).copy(), np.frombuffer(vals, np.int64).copy())
        self.tail = {}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (IntIndex, dict)):
            return len(self) == len(other) and dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
