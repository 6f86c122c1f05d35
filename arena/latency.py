"""Decision times per bot as exact, mergeable counts (the reliability table's p50/p99, issue 18).

The journal records each decision time in ms rounded to the microsecond (``round(elapsed, 3)``,
:mod:`arena.match`). :class:`DecisionTimes` keeps one bot's times as a multiset: the count of
each whole number of microseconds that occurred (``uint32`` value + ``uint32`` count — ``int64``
beyond 2³² — 8 bytes per *distinct* value), plus the rare times that are not a whole microsecond (hand-written journals,
negative or huge values, NaN) as they are. The percentiles are those of the multiset, and as
``numpy.percentile`` depends only on the sorted values, the p50/p99 equal those of the old
``array('d')`` of every decision **bit for bit** (``k / 1000`` is the double the journal's
``"x.yyy"`` parses to: both are the correctly rounded value of the same decimal).

Memory: 8 bytes per distinct microsecond value a bot used (12 once a count passes 2³²), and never more than the 8
bytes a decision of the plain array (below :data:`FOLD` new times are buffered as doubles first).
At 1M two-player records with 8 decisions a seat (16M decisions, times spread over 0.1–3 ms)
that is ~23 MB instead of 128 MB; real bots' times cluster, so usually less.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: new times buffered (as doubles) before they are folded into the counts
FOLD = 2048
_US = 1000.0
#: the most decisions one microsecond value may count, and one bot may have, in a cache read back
#: (a journal of 2^40 decisions would be petabytes: beyond, the cache is damaged or crafted)
MAX_COUNT = 1 << 40
MAX_TOTAL = 1 << 52
_EMPTY_U = np.zeros(0, np.uint32)
_EMPTY_C = np.zeros(0, np.int64)
_EMPTY_F = np.zeros(0, np.float64)


def checked_total(counts: np.ndarray, odd: int) -> int:
    """The number of decisions of ``counts`` (each ≥ 1) and ``odd`` odd times, checked against
    :data:`MAX_COUNT` and :data:`MAX_TOTAL` (a crafted cache would size arrays by them).

    :raises ValueError: a count or the total beyond its bound (a damaged cache)."""
    if len(counts) and int(counts.max()) > MAX_COUNT:
        raise ValueError(f"decision times: a count above {MAX_COUNT}")
    if float(counts.sum(dtype=np.float64)) + odd > MAX_TOTAL:  # a float sum: an int64 one could wrap
        raise ValueError(f"decision times: more than {MAX_TOTAL} in all")
    return int(counts.sum(dtype=np.int64)) + odd


def _narrow(counts: np.ndarray) -> np.ndarray:
    """Counts as ``uint32`` when they fit (4 bytes a distinct value saved), else ``int64``."""
    if len(counts) and int(counts.max()) >= 1 << 32:
        return counts.astype(np.int64)
    return counts.astype(np.uint32)


class DecisionTimes:
    """One bot's decision times (ms) as a multiset (see the module docstring).

    ``extend`` takes an iterable of numbers (as ``array('d').extend``: ints become floats, a
    non-number raises ``TypeError``) or another :class:`DecisionTimes` (merged); ``len`` is the
    number of decisions. Picklable (arrays only).
    """

    __slots__ = ("buf", "us", "counts", "odd", "folded")

    def __init__(self) -> None:
        self.buf = array("d")
        self.us: np.ndarray = _EMPTY_U        # sorted distinct whole microseconds
        self.counts: np.ndarray = _EMPTY_C    # their counts (uint32 when they fit, else int64)
        self.odd: np.ndarray = _EMPTY_F       # times that are not a whole microsecond, as given
        self.folded = 0                       # decisions in us/counts/odd

    def __len__(self) -> int:
        return self.folded + len(self.buf)

    def extend(self, xs: Iterable[float] | DecisionTimes) -> None:
        """Add decision times (ms), or merge another bot's :class:`DecisionTimes`."""
        if isinstance(xs, DecisionTimes):
            xs._fold()
            self._fold()
            self._add(xs.us, xs.counts, xs.odd)
            return
        self.buf.extend(xs)
        if len(self.buf) >= FOLD:
            self._fold()

    def add_values(self, x: np.ndarray) -> None:
        """Add the decision times ``x`` (ms, float64 array) at once (as :meth:`extend`)."""
        self._fold()
        self._fold_array(np.asarray(x, dtype=np.float64))

    def _fold(self) -> None:
        if not len(self.buf):
            return
        x = np.array(self.buf, dtype=np.float64)
        self.buf = array("d")
        self._fold_array(x)

    def _fold_array(self, x: np.ndarray) -> None:
        if not len(x):
            return
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.rint(x * _US)
            exact = ~np.signbit(x) & (k < 2.0 ** 32) & (k / _US == x)  # NaN: not exact
        us, cnt = np.unique(k[exact].astype(np.uint32), return_counts=True)
        self._add(us, cnt.astype(np.int64), x[~exact])

    def _add(self, us: np.ndarray, counts: np.ndarray, odd: np.ndarray) -> None:
        if len(us):
            if not len(self.us):
                self.us, self.counts = us.copy(), _narrow(counts)
            else:  # two sorted runs of distinct values: insert the new ones, then add the counts
                at = np.searchsorted(self.us, us)
                hit = (at < len(self.us)) & (self.us[np.minimum(at, len(self.us) - 1)] == us)
                u = np.insert(self.us, at[~hit], us[~hit]) if not hit.all() else self.us
                c = np.insert(self.counts.astype(np.int64), at[~hit], 0) if not hit.all() else self.counts.astype(np.int64)
                c[np.searchsorted(u, us)] += counts
                self.us, self.counts = u, _narrow(c)
        if len(odd):
            self.odd = np.concatenate([self.odd, odd])
        self.folded += int(counts.sum()) + len(odd)

    def values(self) -> np.ndarray:
        """Every decision time (ms), sorted (float64; one array of ``len(self)`` built on demand)."""
        self._fold()
        out = np.concatenate([np.repeat(self.us, self.counts).astype(np.float64) / _US, self.odd])
        out.sort()
        return out

    def percentile(self, q: float) -> float | None:
        """``numpy.percentile`` (linear) of the times at ``q`` (0–100); None without any time.

        Read off the counts and the sorted odd times (two order statistics, numpy's own index
        clipping and interpolation formula) without building the array of every time, so it
        equals ``np.percentile(self.values(), q)`` bit for bit (a test compares them; NaN if a
        time is NaN, as numpy). Only the sign of a zero result may differ when ``-0.0`` is a time."""
        self._fold()
        n = self.folded
        if not n:
            return None
        odd = np.sort(self.odd) if len(self.odd) else self.odd  # NaN last, as numpy's partition
        if len(odd) and np.isnan(odd[-1]):
            return float("nan")
        ends = np.cumsum(self.counts, dtype=np.int64)  # decisions at or below each whole microsecond
        virtual = np.float64(n - 1) * np.true_divide(q, 100)  # numpy's 'linear' virtual index
        lo = np.floor(virtual)
        if virtual >= n - 1:
            lo = hi = np.float64(-1)
        elif virtual < 0:
            lo = hi = np.float64(0)
        else:
            hi = lo + 1
        gamma = np.float64(virtual - lo)  # numpy's, from the clipped index (-1 at the top)
        a, b = (self._at(int(k) if k >= 0 else n - 1, ends, odd) for k in (lo, hi))
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, as numpy's
            diff = b - a
            return float(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)  # numpy's _lerp

    def _at(self, k: int, ends: np.ndarray, odd: np.ndarray) -> np.float64:
        """The ``k``-th smallest time (0-based) of the whole microseconds (cumulative counts
        ``ends``) and the sorted ``odd`` times, the odd ones placed after equal whole ones."""
        if len(odd):
            below = np.searchsorted(self.us.astype(np.float64) / _US, odd, side="right")  # whole ones <= each odd
            rank = np.arange(len(odd), dtype=np.int64) + np.concatenate(([0], ends))[below]  # odd ones' places
            j = int(np.searchsorted(rank, k, side="left"))  # odd ones before place k
            if j < len(odd) and rank[j] == k:
                return np.float64(odd[j])
            k -= j
        return np.float64(self.us[np.searchsorted(ends, k, side="right")]) / _US

    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return len(self.buf) * 8 + self.us.nbytes + self.counts.nbytes + self.odd.nbytes

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(us uint32, counts uint32 or int64, odd float64)``: the multiset (see the module docstring)."""
        self._fold()
        return self.us, self.counts, self.odd

    @classmethod
    def of_arrays(cls, us: np.ndarray, counts: np.ndarray, odd: np.ndarray) -> DecisionTimes:
        """The times of :meth:`arrays` (``us`` sorted and distinct, ``counts`` ≥ 1).

        :raises ValueError: if the arrays are not of that form, or a count exceeds :data:`MAX_COUNT`
            or their total :data:`MAX_TOTAL` (a damaged cache)."""
        if len(us) != len(counts) or (len(us) and (bool((np.diff(us.astype(np.int64)) <= 0).any())
                                                   or int(counts.min()) < 1)):
            raise ValueError("decision times: microseconds not sorted and distinct, or counts below 1")
        total = checked_total(counts, len(odd))
        t = cls()
        t.us, t.counts, t.odd = us, _narrow(counts), odd
        t.folded = total
        return t

    @classmethod
    def merged(cls, parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> DecisionTimes:
        """The union of several multisets given as :meth:`arrays` (``us`` distinct within a part,
        in any order) in one step — what :meth:`extend` of each would give, without a merge per
        part (a 1M-record journal cache holds 16 parts for each of 1,000 bots).

        :raises ValueError: for a count below 1 or above :data:`MAX_COUNT`, a total above
            :data:`MAX_TOTAL`, or arrays of unequal length (a damaged cache)."""
        if any(len(u) != len(c) for u, c, _o in parts):
            raise ValueError("decision times: microseconds and counts of unequal length")
        t = cls()
        us = np.concatenate([np.asarray(u, np.uint32) for u, _c, _o in parts]) if parts else _EMPTY_U
        counts = np.concatenate([np.asarray(c, np.int64) for _u, c, _o in parts]) if parts else _EMPTY_C
        if len(counts) and int(counts.min()) < 1:
            raise ValueError("decision times: a count below 1")
        odd = [np.asarray(o, np.float64) for _u, _c, o in parts if len(o)]
        total = checked_total(counts, sum(len(o) for o in odd))
        if len(us):
            order = np.argsort(us, kind="stable")  # timsort: the parts are sorted runs
            s, c = us[order], counts[order]
            starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
            t.us, t.counts = s[starts], _narrow(np.add.reduceat(c, starts))
        t.odd = np.concatenate(odd) if odd else _EMPTY_F
        t.folded = total
        return t

    def __getstate__(self) -> tuple[Any, ...]:
        self._fold()  # raw bytes: a few bytes of pickle overhead, not numpy's per array
        wide = bool(len(self.counts)) and int(self.counts.max()) >= 1 << 32
        return (self.us.tobytes(), self.counts.astype(np.int64 if wide else np.uint32).tobytes(), wide,
                self.odd.tobytes(), self.folded)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        us, counts, wide, odd, self.folded = state
        self.us = np.frombuffer(us, dtype=np.uint32).copy()
        self.counts = _narrow(np.frombuffer(counts, dtype=np.int64 if wide else np.uint32))
        self.odd = np.frombuffer(odd, dtype=np.float64).copy()
        self.buf = array("d")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DecisionTimes):
            return NotImplemented
        return len(self) == len(other) and self.values().tobytes() == other.values().tobytes()

    __hash__ = None  # type: ignore[assignment]


class Latency:
    """Every bot's decision times (ms): one :class:`DecisionTimes` per bot.

    Fed while the journal streams (:meth:`add`), so the records need not keep their
    ``move_ms`` (:meth:`arena.record.MatchRecord.from_json` with ``moves=False``).
    """

    def __init__(self, bots: Sequence[str]) -> None:
        self.times: dict[str, DecisionTimes] = {b: DecisionTimes() for b in bots}

    def add(self, seats: Sequence[str], move_ms: Sequence[Sequence[float]] | None) -> None:
        """Add one record's decision times: ``move_ms[seat]`` for the bot in ``seats[seat]``."""
        for seat, times in enumerate(move_ms or ()):
            got = self.times.get(seats[seat]) if seat < len(seats) else None
            if got is not None and times:
                got.extend(times)


def summary(times: DecisionTimes | None) -> dict[str, Any]:
    """``{"moves", "p50_ms", "p99_ms"}`` of one bot's times (None percentiles without any)."""
    if times is None or not len(times):
        return {"moves": 0, "p50_ms": None, "p99_ms": None}
    return {"moves": len(times), "p50_ms": times.percentile(50), "p99_ms": times.percentile(99)}
