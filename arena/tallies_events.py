"""What a chunk of records adds to the tables' counters, as numpy arrays (issue 18).

:func:`events_of` turns records ``lo .. hi`` into one :class:`Events`: per record its lineup and
deal, then every credit (:func:`credits`), every ``ok`` reward, the pairs that met, the batch
fit's results and the faults — each list in file order (within a record in the order
:class:`arena.tallies.Tallies` adds them). The plain records of an
:class:`arena.record_view.RecordView` (``ok``, no faults, a distinct bot in every seat, sides of equal
size: one bot each or partnerships) are read straight from its columns without building a record;
the others are built and read one by one.
Both give the same events (``tests/scale/test_tallies.py``).

:class:`Sorted` and :func:`number` number keys (lineup hashes, blocks, slots) in order of first
appearance with sorted key arrays instead of a dict per key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arena.record import MatchRecord, teams_of
from engine.core import rank_rewards


def credits(rec: MatchRecord) -> list[tuple[str, int, bool, int, float]]:
    """The entries one record adds to the bots' rows: ``(bot, seat, win, rank, score)`` per
    counted bot (partners: one entity per side, its first seat).

    * aborted matches (or no outcome): nothing;
    * ``ok``: every bot, its seat's rank and reward (:attr:`MatchRecord.rewards`);
    * ``forfeit``: likewise, but a bot that faulted never counts a win;
    * ``disabled`` (a match not played because a bot was disabled): only the disabled bots
      count it, as a loss (score 0, last place); the other seats never started, so they are
      credited with nothing — no match, no win, no score (a walkover included).
    """
    ranks = rec.ranks
    if ranks is None or rec.status == "aborted":
        return []
    faulty = {f.bot for f in rec.faults} if rec.status == "forfeit" else set()
    disabled = {f.bot for f in rec.faults if f.cls == "disabled"} if rec.disabled else set()
    last = len(rec.sides) - 1
    rewards = rec.rewards
    out = []
    seen: set[str] = set()
    for seat, b in enumerate(rec.seats):
        if b in seen:
            continue
        seen.add(b)
        if disabled:
            if b in disabled:
                out.append((b, seat, False, last, 0.0))
            continue
        out.append((b, seat, ranks[seat] == 0 and b not in faulty, ranks[seat], rewards[seat]))
    return out


_CHECK = 1 << 18  # keys compared a slice at a time when an index is loaded
_MOVE = 1 << 18  # entries moved a slice at a time by Sorted.add


class Sorted:
    """``int64 key -> id``: sorted key arrays (the ids of :class:`arena.tallies.Tallies`' lineups,
    blocks, slots and fit blocks), ~12 bytes an entry.

    The arrays have spare capacity (never written, so never resident: fresh mappings); an
    :meth:`add` moves the entries up in place, a slice at a time from the end, so a 4M-entry
    index gains keys without a second copy of itself (a four-player 1M update's peak)."""

    def __init__(self, keys: np.ndarray | None = None, vals: np.ndarray | None = None, n: int | None = None) -> None:
        """:param n: the entries of ``keys`` and ``vals`` in use (default: all; the rest is capacity)."""
        self._k = np.zeros(0, np.int64) if keys is None else np.asarray(keys, np.int64)
        self._v = np.zeros(0, np.int32) if vals is None else np.asarray(vals, np.int32)
        self.n = len(self._k) if n is None else n
        k, last = self._k, self.n - 1
        ascending = all(bool((k[i + 1:min(i + _CHECK, last) + 1] > k[i:min(i + _CHECK, last)]).all())
                        for i in range(0, max(last, 0), _CHECK))  # in slices: no 2nd copy of the keys
        if not 0 <= self.n <= min(len(self._k), len(self._v)) or not ascending:
            raise ValueError("an index's keys must be ascending, one value each")

    @property
    def keys(self) -> np.ndarray:
        """The keys, ascending (a view)."""
        return self._k[:self.n]

    @property
    def vals(self) -> np.ndarray:
        """Each key's id (int32, a view)."""
        return self._v[:self.n]

    def __len__(self) -> int:
        return self.n

    def find(self, q: np.ndarray) -> np.ndarray:
        """Per key of ``q``, its id (int64; -1 if absent)."""
        q = np.asarray(q, np.int64)
        if not self.n:
            return np.full(len(q), -1, np.int64)
        keys = self.keys
        i = np.minimum(np.searchsorted(keys, q), self.n - 1)
        return np.where(keys[i] == q, self.vals[i].astype(np.int64), -1)

    def reserve(self, n: int) -> None:
        """Make room for ``n`` entries in all (the spare is not resident until used)."""
        if n > len(self._k):
            self._grow(n)

    def _grow(self, cap: int) -> None:
        for name, dtype in (("_k", np.int64), ("_v", np.int32)):
            grown = np.zeros(cap, dtype)
            grown[:self.n] = getattr(self, name)[:self.n]
            setattr(self, name, grown)  # the old array freed before the next is copied

    def add(self, keys: np.ndarray, vals: np.ndarray) -> None:
        """Add absent, distinct ``keys`` with their ids."""
        m = len(keys)
        if not m:
            return
        o = np.argsort(keys, kind="stable")
        k, v = np.asarray(keys, np.int64)[o], np.asarray(vals, np.int32)[o]
        at = np.searchsorted(self.keys, k)  # new key j goes before old entry at[j]: to at[j] + j
        n = self.n
        if n + m > len(self._k):  # room for this and about a quarter more (the spare is not resident)
            self._grow(n + m + (n + m) // 4 + 64)
        for lo in range((n - 1) // _MOVE * _MOVE, -1, -_MOVE):  # old entries up, last slice first
            hi = min(n, lo + _MOVE)
            idx = np.arange(lo, hi)
            dest = idx + np.searchsorted(at, idx, side="right")  # >= its source: slices above are moved
            for arr in (self._k, self._v):
                arr[dest] = arr[lo:hi].copy()
        place = at + np.arange(m)
        self._k[place], self._v[place] = k, v
        self.n = n + m


def number(keys: np.ndarray, index: Sorted, start: int) -> tuple[np.ndarray, np.ndarray]:
    """Per key of ``keys`` (in file order), its id in ``index``; the absent ones are numbered
    ``start, start + 1, ...`` in order of first appearance and added.

    :returns: ``(ids, the new keys in the order numbered)``."""
    keys = np.asarray(keys, np.int64)
    got = index.find(keys)
    miss = np.flatnonzero(got < 0)
    if not len(miss):
        return got, np.zeros(0, np.int64)
    u, first, inv = np.unique(keys[miss], return_index=True, return_inverse=True)
    o = np.argsort(first, kind="stable")
    rank = np.empty(len(u), np.int64)
    rank[o] = np.arange(len(u))
    got[miss] = start + rank[inv.ravel()]
    index.add(u, start + rank)
    return got, u[o]


@dataclass
class Events:
    """What records ``lo .. hi`` add (codes into :attr:`names`, records numbered ``0 .. n−1``).

    :ivar register: names in the order the counters first meet them (faults, credits, rewards).
    :ivar lineup: ``(n,)`` per record, its code into :attr:`lineup_names` (−1: not finished).
    :ivar c_*: credits (record, bot, win, rank, score); :ivar e_*: ``ok`` rewards (record, bot, reward).
    :ivar pairs: ``(q, 2)`` bots that met (ordered, distinct); :ivar r_*: the batch fit's results
        (record, shape code into ``r_shapes``, pattern code into ``r_pats``, bots flat in side order).
    :ivar faults: ``(record, MatchRecord, its faults naming a bot)`` of records with faults.
    """

    n: int
    names: list[str]
    register: list[str] = field(default_factory=list)
    lineup_names: list[str] = field(default_factory=list)
    lineup: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    deal: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    c_rec: Any = None
    c_bot: Any = None
    c_win: Any = None
    c_rank: Any = None
    c_score: Any = None
    e_rec: Any = None
    e_bot: Any = None
    e_x: Any = None
    pairs: Any = None
    r_rec: Any = None
    r_shape: Any = None
    r_pat: Any = None
    r_flat: Any = None
    r_shapes: list[tuple[int, int]] = field(default_factory=list)
    r_pats: list[tuple[int, ...]] = field(default_factory=list)
    faults: list[tuple[int, MatchRecord, list[Any]]] = field(default_factory=list)


class _Codes(dict):
    """``item -> code`` numbered in order of first use (``table``: the items by code)."""

    def __init__(self, items: Sequence[Any] = ()) -> None:
        super().__init__()
        self.table: list[Any] = []
        for x in items:
            self(x)

    def fill(self, items: list[Any]) -> None:
        """Number distinct ``items`` (none numbered yet) in order."""
        self.update(zip(items, range(len(self.table), len(self.table) + len(items))))
        self.table.extend(items)

    def __call__(self, x: Any) -> int:
        c = self.get(x)
        if c is None:
            c = self[x] = len(self.table)
            self.table.append(x)
        return c


class _Py:
    """The events of records built one by one (lists, merged with the columns' arrays)."""

    def __init__(self) -> None:
        self.reg: list[tuple[int, int, str]] = []
        self.c: list[tuple[int, int, bool, int, float]] = []
        self.e: list[tuple[int, int, float]] = []
        self.pairs: list[tuple[int, int]] = []
        self.r: list[tuple[int, int, int, list[int]]] = []

    def add(self, k: int, rec: MatchRecord, ev: Events, names: _Codes, lineups: _Codes, shapes: _Codes,
            pats: _Codes, fld: set[str], results: Callable[[MatchRecord], Iterable[Any]]) -> None:
        """Record ``k``'s events."""
        faults = [f for f in rec.faults if f.bot is not None]  # an arena-side fault names no bot
        sub = 0
        for f in faults:
            self.reg.append((k, sub, str(f.bot)))
            sub += 1
        if faults:
            ev.faults.append((k, rec, faults))
        if not rec.finished:
            return
        ev.lineup[k] = lineups(rec.lineup)
        ev.deal[k] = rec.deal_index
        for b, _seat, win, rank, score in credits(rec):
            self.reg.append((k, sub, b))
            sub += 1
            self.c.append((k, names(b), bool(win), int(rank), float(score)))
        if rec.played:
            rewards = rec.rewards
            seen: set[str] = set()
            for seat, b in enumerate(rec.seats):
                if b not in seen:
                    seen.add(b)
                    self.reg.append((k, sub, b))
                    sub += 1
                    self.e.append((k, names(b), float(rewards[seat])))
        met = [names(b) for b in dict.fromkeys(rec.seats)]
        self.pairs.extend((a, b) for a in met for b in met if a != b)
        for sides, rk in results(rec):
            flat = [b for s in sides for b in s]
            if all(b in fld for b in flat):
                shape = (len(sides), len(sides[0]) if sides else 0)
                self.r.append((k, shapes(shape), pats(tuple(rk)), [names(b) for b in flat]))


def _merge(k_a: np.ndarray, k_b: Sequence[int]) -> np.ndarray:
    """The stable order of events ``a`` then ``b`` by their record numbers (a record's events
    all from one side)."""
    return np.argsort(np.concatenate([k_a, np.asarray(k_b, np.int64)]), kind="stable")


def events_of(records: Sequence[MatchRecord], lo: int, hi: int, fld: set[str],
              results: Callable[[MatchRecord], Iterable[Any]]) -> Events:
    """The :class:`Events` of ``records[lo:hi]`` (``fld``: the field's names: only their results
    go to the batch fit; ``results``: the batch fit's results of one record,
    :func:`arena.batchfit.record_results`; a plain ``ok`` record's are its sides by their ranks)."""
    n = hi - lo
    view = hasattr(records, "cols") and hasattr(records, "rows")  # an arena.record_view.RecordView
    names = _Codes(records.cols.names if view else ())  # type: ignore[attr-defined]
    ev = Events(n, names.table, lineup=np.full(n, -1, np.int64), deal=np.zeros(n, np.int64))
    lineups, shapes, pats = _Codes(), _Codes(), _Codes()
    bulk = _bulk(records, lo, hi, names, lineups, shapes, pats, fld) if view else None
    py = _Py()
    rest = range(n) if bulk is None else bulk.rest.tolist()
    for k in rest:
        rec = records.cols.record(int(records.rows[lo + k])) if view else records[lo + k]  # type: ignore
        py.add(k, rec, ev, names, lineups, shapes, pats, fld, results)
    b = bulk or _Bulk.empty()
    if len(b.k):
        ev.lineup[b.k] = b.lineup
        ev.deal[b.k] = b.deal
    p = b.s.shape[1]
    ck = np.repeat(b.k, p)
    o = _merge(ck, [x[0] for x in py.c])
    ev.c_rec = np.concatenate([ck, np.array([x[0] for x in py.c], np.int64)])[o]
    ev.c_bot = np.concatenate([b.s.ravel(), np.array([x[1] for x in py.c], np.int64)])[o]
    ev.c_win = np.concatenate([(b.ranks == 0).ravel(), np.array([x[2] for x in py.c], bool)])[o]
    ev.c_rank = np.concatenate([b.ranks.ravel(), np.array([x[3] for x in py.c], np.int64)])[o]
    ev.c_score = np.concatenate([b.rewards.ravel(), np.array([x[4] for x in py.c], np.float64)])[o]
    o = _merge(ck, [x[0] for x in py.e])
    ev.e_rec = np.concatenate([ck, np.array([x[0] for x in py.e], np.int64)])[o]
    ev.e_bot = np.concatenate([b.s.ravel(), np.array([x[1] for x in py.e], np.int64)])[o]
    ev.e_x = np.concatenate([b.rewards.ravel(), np.array([x[2] for x in py.e], np.float64)])[o]
    ev.pairs = np.concatenate([b.pairs, np.unique(np.array(py.pairs, np.int64).reshape(-1, 2), axis=0)])
    _results(ev, b, py)
    ev.lineup_names, ev.r_shapes, ev.r_pats = lineups.table, shapes.table, pats.table
    ev.register = _register(b, py, names.table)
    return ev


def _results(ev: Events, b: _Bulk, py: _Py) -> None:
    """The merged results (file order) with their bots flat."""
    o = _merge(b.r_k, [x[0] for x in py.r])
    ev.r_rec = np.concatenate([b.r_k, np.array([x[0] for x in py.r], np.int64)])[o]
    ev.r_shape = np.concatenate([np.full(len(b.r_k), b.shape_code, np.int64),
                                 np.array([x[1] for x in py.r], np.int64)])[o]
    ev.r_pat = np.concatenate([b.r_pat, np.array([x[2] for x in py.r], np.int64)])[o]
    lens = np.concatenate([np.full(len(b.r_k), b.r_flat.shape[1], np.int64),
                           np.array([len(x[3]) for x in py.r], np.int64)])
    src = np.concatenate([b.r_flat.ravel(), np.array([c for x in py.r for c in x[3]], np.int64)])
    starts = np.concatenate(([0], np.cumsum(lens)[:-1]))
    ln = lens[o]
    idx = np.repeat(starts[o] - np.concatenate(([0], np.cumsum(ln)[:-1])), ln) + np.arange(int(ln.sum()))
    ev.r_flat = src[idx]


def _register(b: _Bulk, py: _Py, table: list[str]) -> list[str]:
    """Names in the order the counters meet them first (the bulk rows' seats, in seat order)."""
    first: list[tuple[int, int, str]] = []
    if len(b.k):
        codes, at = np.unique(b.s.ravel(), return_index=True)
        p = b.s.shape[1]
        first = [(int(b.k[i // p]), i % p, table[c]) for c, i in zip(codes.tolist(), at.tolist())]
    seen: set[str] = set()
    out = []
    for _k, _sub, name in sorted(first + py.reg, key=lambda x: (x[0], x[1])):
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


@dataclass
class _Bulk:
    """The plain rows' events (``k`` their record numbers; ``s`` their seats' name codes)."""

    k: np.ndarray
    rest: np.ndarray
    s: np.ndarray
    ranks: np.ndarray
    rewards: np.ndarray
    lineup: np.ndarray
    deal: np.ndarray
    pairs: np.ndarray
    r_k: np.ndarray
    r_pat: np.ndarray
    r_flat: np.ndarray
    shape_code: int = 0

    @classmethod
    def empty(cls) -> _Bulk:
        """No events: every array of length 0 (a chunk without plain records)."""
        z = np.zeros(0, np.int64)
        z2 = np.zeros((0, 1), np.int64)
        return cls(z, z, z2, z2, np.zeros((0, 1)), z, z, np.zeros((0, 2), np.int64), z, z, z2)


def _bulk(view: Any, lo: int, hi: int, names: _Codes, lineups: _Codes, shapes: _Codes, pats: _Codes,
          fld: set[str]) -> _Bulk | None:
    """The events of the plain rows of ``view[lo:hi]`` from its columns (None: none is plain):
    ``ok``, the chunk's commonest game and player count, distinct bots in the seats, sides of
    equal size (one bot each, or partnerships such as ``partners: mixed``)."""
    cols, rows = view.cols, view.rows[lo:hi]
    if not len(rows):
        return None
    shape = np.frombuffer(cols.shape, np.int8)[rows]
    status = np.frombuffer(cols.status, np.int32)[rows]
    game = np.frombuffer(cols.game, np.int32)[rows]
    end = np.frombuffer(cols.seat_end, np.int64)
    start = np.concatenate(([0], end[:-1]))[rows]
    nseat = end[rows] - start
    ok = (shape >= 0) & (shape & 1 != 0) & (status == cols._code.get("ok", -2))
    if not ok.any():
        return None
    g0, p = int(game[ok][0]), int(nseat[ok][0])  # the commonest case: the journal's game and players
    teams = teams_of(cols.names[g0], p)
    size = len(teams[0]) if teams else 0
    if p < 2 or len(teams) < 2 or any(len(t) != size for t in teams):
        return None  # sides of unequal sizes: built one by one
    ok &= (game == g0) & (nseat == p)
    k = np.flatnonzero(ok)
    s = np.frombuffer(cols.seats, np.int32)[start[k, None] + np.arange(p)].astype(np.int64)
    ss = np.sort(s, axis=1)
    distinct = (ss[:, 1:] != ss[:, :-1]).all(axis=1)
    span_lo, span_hi, fixed, clean = _lineups(cols, rows[k])
    keep = distinct & clean
    k, s, fixed = k[keep], s[keep], fixed[keep]
    plain = np.zeros(len(rows), bool)
    plain[k] = True
    rest = np.flatnonzero(~plain)
    ranks = np.frombuffer(cols.ranks, np.int64)[cols._rank_at[rows[k], None] + np.arange(p)]
    u, inv = _unique_rows(ranks)
    side = [t[0] for t in teams]  # a side's rank is its first seat's
    order = [i for t in teams for i in t]  # the fit's bots flat, side by side (MatchRecord.sides)
    rew = np.array([rank_rewards(list(r), teams) for r in u.tolist()], np.float64).reshape(len(u), p)
    pat = np.array([pats(tuple(int(r[i]) for i in side)) for r in u.tolist()], np.int64)
    width = fixed.shape[1]
    if width:
        lu, linv = np.unique(fixed.view(f"S{width}").ravel(), return_inverse=True)
        raw = lu.tolist()
        lineups.fill([x.decode("utf-8", "surrogatepass") for x in raw])  # the first lineups of the chunk
        lineups.raw = raw  # type: ignore[attr-defined]
        lcode = linv.ravel().astype(np.int64)
    else:
        lcode = np.full(len(k), lineups(""), np.int64)
    pairs = np.concatenate([s[:, [a, b]] for a in range(p) for b in range(p) if a != b])
    m = max(len(names.table), 1)
    pairs = np.unique(pairs[:, 0] * m + pairs[:, 1])
    pairs = np.stack([pairs // m, pairs % m], axis=1)
    infield = np.array([n in fld for n in names.table], bool)
    rated = infield[s].all(axis=1)
    return _Bulk(k, rest, s, ranks, rew[inv], lcode, np.frombuffer(cols.deal, np.int64)[rows[k]],
                 pairs, k[rated], pat[inv][rated], s[rated][:, order], shapes((len(teams), size)))


def _unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(a, axis=0, return_inverse=True)`` of a small-valued int matrix, by one int key a row."""
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    base = hi - lo + 1
    if a.size == 0 or base ** a.shape[1] >= 1 << 62:
        u, inv = np.unique(a, axis=0, return_inverse=True)
        return u, inv.ravel()
    key = ((a - lo) * base ** np.arange(a.shape[1] - 1, -1, -1)).sum(axis=1)
    uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return a[first], inv.ravel()


def _lineups(cols: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row, its lineup's byte span in ``cols.ids`` (the id's second ``/`` part), the bytes in a
    fixed-width ``uint8`` array (NUL-padded) and whether they hold no NUL of their own."""
    end = np.frombuffer(cols.id_end, np.int64)
    start = np.concatenate(([0], end[:-1]))[rows]
    end = end[rows]
    if not len(rows):
        z = np.zeros(0, np.int64)
        return z, z, np.zeros((0, 0), np.uint8), np.zeros(0, bool)
    a, b = int(start.min()), int(end.max())
    blob = np.frombuffer(cols.ids, np.uint8)[a:b]
    slash = np.flatnonzero(blob == 47) + a
    first = np.searchsorted(slash, start)
    s1 = np.where(first < len(slash), slash[np.minimum(first, max(len(slash) - 1, 0))], end) if len(slash) else end
    has1 = s1 < end
    s2 = np.where(first + 1 < len(slash), slash[np.minimum(first + 1, max(len(slash) - 1, 0))], end) \
        if len(slash) else end
    lo = np.where(has1, s1 + 1, end)
    hi = np.where(has1, np.minimum(s2, end), end)
    n = hi - lo
    width = int(n.max())
    full = np.frombuffer(cols.ids, np.uint8)
    idx = lo[:, None] + np.arange(width)[None, :]
    inside = idx < hi[:, None]
    fixed = np.where(inside, full[np.minimum(idx, max(len(full) - 1, 0))], 0).astype(np.uint8) if width else \
        np.zeros((len(rows), 0), np.uint8)
    clean = ~((fixed == 0) & inside).any(axis=1)
    return lo, hi, fixed, clean
