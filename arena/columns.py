"""The journal's records in columns: a compact in-memory form (issue 18).

:class:`Columns` holds a run of typed records (:class:`arena.record.MatchRecord`) as arrays —
match ids and fingerprints as one UTF-8 blob each with offsets, seats as small ints into one
name table (bots, games, statuses, versions interned once), ranks and scores flat per seat,
deal index, rotation, status and time per record, each in the narrowest integer type its
values fit — about 100 bytes a two-player record (ids and fingerprints 55 of them) instead of
~650 as an object. The reader appends journal lines' dicts directly (:meth:`Columns.append_raw`,
no record built). Records that do not fit the plain layout (faults, unusual
types) are kept whole in a sparse side table, so every record round-trips **equal** to the
one :meth:`MatchRecord.from_json` built (lineup, teams, side ranks and rewards are derived
again the same way). :mod:`arena.record_view` reads chosen rows of them as a sequence of records.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np
import orjson

from arena.record import MatchRecord, _share, teams_of
from engine.core import rank_rewards


class Columns:
    """Records as columns, appended one by one (:meth:`append`), then read by index (:meth:`record`).

    Integer columns are stored in the narrowest item type their values fit (:meth:`freeze`; scores
    as narrow ints when all are whole numbers), so a two-player record takes ~100 bytes; the
    journal cache writes the arrays raw (:mod:`arena.journal_cache`, no pickle).
    """

    #: per row, :func:`arena.record.id_hash` of its match id, when the reader kept them (:meth:`arena.record_view.RecordView.id_hashes`)
    id_hash: np.ndarray | None = None

    def __init__(self) -> None:
        self.names: list[str] = []          # bots, games, statuses, versions (interned once)
        self._code: dict[str, int] = {}
        self.ids = bytearray()              # match ids, UTF-8, concatenated
        self.id_end = array("q")            # per record: end of its id in ``ids``
        self.fps = bytearray()
        self.fp_end = array("q")
        self.game = array("i")
        self.status = array("i")
        self.deal = array("q")
        self.rot = array("q")
        self.time = array("d")              # NaN: None
        self.seat_end = array("q")          # per record: end of its seats in the per-seat columns
        self.seats = array("i")             # per seat: bot code
        self.ranks = array("q")             # per seat (records with ranks only: flag ``shape``)
        self.scores = array("d")            # per seat (records with scores only)
        self.versions = array("i")          # per seat (records with versions only)
        #: per record, bit 0 ranks, bit 1 scores, bit 2 versions, bit 3 int scores, bit 4 int time
        self.shape = array("b")
        self.extra: dict[int, tuple | bytes] = {}  # record index -> the whole record's fields or journal line (not plain)
        self._memo: dict[tuple[int, str, bytes], tuple] = {}  # see _tuple

    # ------------------------------------------------------------------ building

    def _c(self, name: str) -> int:
        code = self._code.get(name)
        if code is None:
            code = self._code[name] = len(self.names)
            self.names.append(name)
        return code

    def __len__(self) -> int:
        return len(self.id_end)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for derived in ("_code", "_memo", "_rank_at", "_score_at", "_version_at"):
            state.pop(derived, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._code = {n: i for i, n in enumerate(self.names)}
        self._memo = {}
        self.freeze()

    def tail_after(self, row: int) -> tuple[int, Columns] | None:
        """``(offset, tail)`` if rows ``row..`` of these columns are rows ``row - offset..`` of
        other, smaller columns ``tail`` (:class:`arena.deferred_columns.DeferredColumns`); None here."""
        return None

    def pieces(self) -> list[tuple[int, int, Any]] | None:
        """``(first row, rows, read)`` per piece read alone (:class:`arena.deferred_columns.DeferredColumns`); None here."""
        return None

    def release(self) -> None:
        """Drop what can be read again when next used (:class:`arena.deferred_columns.DeferredColumns`); nothing here."""

    def nbytes(self) -> int:
        """The bytes its arrays hold (the name table and the whole records of :attr:`extra` not counted)."""
        return sum(len(getattr(self, n)) * (getattr(self, n).itemsize if isinstance(getattr(self, n), array) else 1)
                   for n in ("ids", "id_end", "fps", "fp_end", "game", "status", "deal", "rot", "time", "seat_end",
                             "seats", "ranks", "scores", "versions", "shape"))

    def append_raw(self, raw: dict[str, Any], line: bytes) -> tuple[int, ...] | None:
        """Add one validated journal line's dict (:func:`arena.journal.parse_line`) if it is plain —
        the same columns :meth:`append` of ``MatchRecord.from_json(raw, moves=False)`` would give,
        without building the record — and return its seat codes; None (nothing added) if it is not
        plain (the caller appends the record, see :meth:`append_whole`).

        :raises engine errors: for an unknown game or a player count it does not have (as
            ``from_json``)."""
        seats = raw["seats"]
        n = len(seats)
        out = raw.get("outcome")
        if type(out) is not dict:
            return None
        ranks = out.get("ranks")
        scores = out.get("scores")
        t = raw.get("time_ms")
        versions = raw.get("bot_versions")
        deal, rot = raw["deal_index"], raw["rotation"]
        if (raw.get("faults") or type(ranks) is not list or len(ranks) != n or not n or type(deal) is not int
                or type(rot) is not int or abs(deal) >= 1 << 62 or abs(rot) >= 1 << 62
                or not (t is None or (type(t) is float and t == t) or (type(t) is int and abs(t) < 1 << 53))
                or (versions and (type(versions) is not list or len(versions) != n))
                or any(type(b) is not str for b in seats)):
            return None
        st = raw.get("status", "aborted")
        mid, fp = raw["match_id"], raw.get("fingerprint", "")
        if type(st) is not str or type(fp) is not str or any(type(r) is not int or abs(r) >= 1 << 62 for r in ranks):
            return None
        kinds = 0
        if scores is not None:
            if type(scores) is not list or len(scores) != n:
                return None
            if all(type(x) is float for x in scores):
                kinds = 2
            elif all(type(x) is int and abs(x) < 1 << 53 for x in scores):
                kinds = 2 | 8
            else:
                return None
        if versions and not all(v is None or type(v) is str for v in versions):
            return None
        game = raw["game"]
        teams_of(game, n)  # raises for an unknown game, as from_json does
        c = self._c
        self.ids += mid.encode("utf-8", "surrogatepass")
        self.id_end.append(len(self.ids))
        self.fps += fp.encode("utf-8", "surrogatepass")
        self.fp_end.append(len(self.fps))
        self.game.append(c(game))
        self.status.append(c(st))
        codes = tuple(c(b) for b in seats)
        self.seats.extend(codes)
        self.seat_end.append(len(self.seats))
        self.deal.append(deal)
        self.rot.append(rot)
        self.time.append(float("nan") if t is None else float(t))
        self.ranks.extend(ranks)
        if scores is not None:
            self.scores.extend([float(x) for x in scores])
        if versions:
            self.versions.extend([c(v or "") for v in versions])
            kinds |= 4
        self.shape.append(1 | kinds | (16 if type(t) is int else 0))
        return codes

    def append_whole(self, rec: MatchRecord, line: bytes | None = None) -> None:
        """Add ``rec`` (built from journal ``line``, kept as the line's bytes when given)."""
        before = len(self.extra)
        self.append(rec)
        if line is not None and len(self.extra) > before:
            self.extra[len(self) - 1] = bytes(line)

    def append(self, rec: MatchRecord) -> None:
        """Add one record (its ``move_ms`` are not kept: the reader streams them elsewhere)."""
        self.ids += rec.match_id.encode("utf-8", "surrogatepass")
        self.id_end.append(len(self.ids))
        self.fps += rec.fingerprint.encode("utf-8", "surrogatepass")
        self.fp_end.append(len(self.fps))
        self.game.append(self._c(rec.game))
        self.status.append(self._c(rec.status))
        for b in rec.seats:
            self.seats.append(self._c(b))
        self.seat_end.append(len(self.seats))
        n = len(rec.seats)
        ranks, scores, versions, t = rec.ranks, rec.scores, rec.bot_versions, rec.time_ms
        kinds = {type(x) for x in scores} if scores is not None else set()
        plain = (not rec.faults and not rec.move_ms and type(rec.deal_index) is int and type(rec.rotation) is int
                 and abs(rec.deal_index) < 1 << 62 and abs(rec.rotation) < 1 << 62
                 and (t is None or (type(t) is float and t == t) or (type(t) is int and abs(t) < 1 << 53))
                 and rec.lineup == _lineup(rec.match_id)
                 and (ranks is None or (len(ranks) == n and all(type(r) is int and abs(r) < 1 << 62
                                                                for r in ranks)))
                 and (scores is None or (len(scores) == n and (kinds <= {float} or (kinds == {int} and all(
                     abs(x) < 1 << 53 for x in scores)))))
                 and (not versions or len(versions) == n))
        shape = -1
        self.deal.append(rec.deal_index if plain else 0)
        self.rot.append(rec.rotation if plain else 0)
        self.time.append(float(t) if plain and t is not None else float("nan"))
        if plain:
            shape = (1 if ranks is not None else 0) | (2 if scores is not None else 0) | (4 if versions else 0) \
                | (8 if kinds == {int} else 0) | (16 if type(t) is int else 0)
            if ranks is not None:
                self.ranks.extend(ranks)
            if scores is not None:
                self.scores.extend(float(x) for x in scores)
            if versions:
                self.versions.extend(self._c(v) for v in versions)
        else:
            self.extra[len(self.shape)] = tuple(getattr(rec, f) for f in _FIELDS)
        self.shape.append(shape)

    def freeze(self) -> None:
        """Index the per-seat columns (called once the appends are done; :meth:`record` needs it)."""
        for name, tc in _INTS.items():  # narrow, or in the item type other modules read it as
            col = getattr(self, name)
            setattr(self, name, _narrow(col) if name in NARROW else _widened(col, _wider(col.typecode, tc)))
        self.scores = _narrow_scores(self.scores)
        self._memo = {}  # its keys are bytes of the columns' item types, which may have changed
        shape = _np(self.shape)
        dt = np.int32 if len(self.seats) < 1 << 31 else np.int64  # an offset is below the seats' count: 4 bytes a record
        seats = np.diff(_np(self.seat_end).astype(np.int64), prepend=0).astype(dt)
        plain = shape >= 0

        def starts(bit: int) -> np.ndarray:
            """Per record, its offset into the per-seat column whose shape flag is ``bit``."""
            n = np.where(plain & (shape & bit != 0), seats, dt(0))
            at = np.zeros(len(n), dt)
            np.cumsum(n[:-1], out=at[1:])
            return at

        self._rank_at, self._score_at, self._version_at = starts(1), starts(2), starts(4)

    def check(self) -> None:
        """Check the columns are consistent (a cache read back): ends rising within their blobs,
        codes within the name table, per-seat columns as long as their records' seats.

        :raises ValueError: naming the first inconsistency."""
        n = len(self.id_end)
        for name in (*_INTS, "time", "shape", "scores"):
            if getattr(self, name).typecode not in {"time": "d", "shape": "b", "scores": "bhiqd"}.get(name, "bhiq"):
                raise ValueError(f"column {name}: item type {getattr(self, name).typecode!r}")
        if any(len(getattr(self, c)) != n for c in ("fp_end", "game", "status", "deal", "rot", "time", "seat_end",
                                                    "shape")):
            raise ValueError("the per-record columns differ in length")
        for end, size in ((self.id_end, len(self.ids)), (self.fp_end, len(self.fps)), (self.seat_end, len(self.seats))):
            e = _np(end).astype(np.int64)
            if n and (int(e[0]) < 0 or bool((np.diff(e) < 0).any()) or int(e[-1]) != size) or (not n and size):
                raise ValueError("an end column does not cut its blob")
        for c in ("game", "status", "seats", "versions"):
            a = _np(getattr(self, c))
            if len(a) and (int(a.min()) < 0 or int(a.max()) >= len(self.names)):
                raise ValueError(f"column {c}: a code outside the name table")
        shape = _np(self.shape)
        seats = np.diff(_np(self.seat_end).astype(np.int64), prepend=0)
        if any(int(k) < 0 or int(k) >= n for k in self.extra) or bool((shape[shape >= 0] > 31).any()) \
                or set(np.flatnonzero(shape < 0).tolist()) != set(self.extra):
            raise ValueError("the records kept whole do not match the shape column")
        for bit, c in ((1, "ranks"), (2, "scores"), (4, "versions")):
            if int(seats[(shape >= 0) & (shape & bit != 0)].sum()) != len(getattr(self, c)):
                raise ValueError(f"column {c}: not one value per seat of its records")
        self.freeze()

    # ------------------------------------------------------------------ reading

    def match_id(self, i: int) -> str:
        """The match id of record ``i``."""
        return self.ids[self.id_end[i - 1] if i else 0:self.id_end[i]].decode("utf-8", "surrogatepass")

    def fingerprint(self, i: int) -> str:
        """The fingerprint of record ``i``."""
        return self.fp_bytes(i).decode("utf-8", "surrogatepass")

    def id_bytes(self, i: int) -> bytes:
        """The match id of record ``i`` as its UTF-8 bytes."""
        return bytes(self.ids[self.id_end[i - 1] if i else 0:self.id_end[i]])

    def fp_bytes(self, i: int) -> bytes:
        """The fingerprint of record ``i`` as its UTF-8 bytes."""
        return bytes(self.fps[self.fp_end[i - 1] if i else 0:self.fp_end[i]])

    def side_key(self, i: int) -> tuple:
        """``(status code, game code, ranks bytes)`` of plain record ``i`` with ranks: what its side
        ranks and digest tail depend on."""
        a, b = (self.seat_end[i - 1] if i else 0), self.seat_end[i]
        at = int(self._rank_at[i])
        return (self.status[i], self.game[i], self.ranks[at:at + b - a].tobytes())

    def side_ranks(self, i: int) -> tuple:
        """The side ranks of plain record ``i`` with ranks (as :meth:`MatchRecord.from_json`)."""
        a, b = (self.seat_end[i - 1] if i else 0), self.seat_end[i]
        n = b - a
        return _derived(self._tuple(3, self.ranks, int(self._rank_at[i]), n), teams_of(self.names[self.game[i]], n))[1]

    def _tuple(self, kind: int, col: array, at: int, n: int) -> tuple:
        """The shared tuple of ``col[at:at + n]`` read as ``kind`` (0 names, 1 float scores, 2 int
        scores, 3 ranks with their side ranks and rewards), memoized by its bytes."""
        raw = col[at:at + n]
        key = (kind, col.typecode, raw.tobytes())
        got = self._memo.get(key)
        if got is None:
            if kind == 0:
                got = tuple([self.names[c] for c in raw])
            elif kind == 1:
                got = _share(tuple(raw) if col.typecode == "d" else tuple([float(x) for x in raw]))
            elif kind == 2:
                got = _share(tuple(int(x) for x in raw))
            else:
                got = tuple(raw)
            if len(self._memo) < 1 << 14:
                self._memo[key] = got
        return got

    def record(self, i: int) -> MatchRecord:
        """Record ``i`` as a :class:`MatchRecord` equal to the one appended (:meth:`freeze` first)."""
        whole = self.extra.get(i)
        if whole is not None:
            if isinstance(whole, bytes):  # a journal line: built again as the reader built it
                return MatchRecord.from_json(orjson.loads(whole), moves=False)
            return MatchRecord(*whole)
        names = self.names
        mid = self.match_id(i)
        a, b = (self.seat_end[i - 1] if i else 0), self.seat_end[i]
        n = b - a
        seats = self._tuple(0, self.seats, a, n)
        game = names[self.game[i]]
        shape = self.shape[i]
        ranks = scores = None
        side_ranks: tuple = ()
        rewards: tuple = ()
        teams = teams_of(game, n)
        if shape & 1:
            ranks, side_ranks, rewards = _derived(self._tuple(3, self.ranks, self._rank_at[i], n), teams)
        if shape & 2:
            scores = self._tuple(2 if shape & 8 else 1, self.scores, self._score_at[i], n)
        versions: tuple = ()
        if shape & 4:
            versions = _share(self._tuple(0, self.versions, self._version_at[i], n))
        t = self.time[i]
        time_ms = None if t != t else (int(t) if shape & 16 else t)
        fp = self.fps[self.fp_end[i - 1] if i else 0:self.fp_end[i]].decode("utf-8", "surrogatepass")
        rec = _new(MatchRecord)
        for put, v in zip(_SETTERS, (mid, _lineup(mid), game, self.deal[i], self.rot[i], seats, names[self.status[i]],
                                     ranks, scores, (), versions, (), time_ms, fp, teams, side_ranks, rewards)):
            put(rec, v)
        return rec


_FIELDS = tuple(MatchRecord.__dataclass_fields__)
#: the slots' setters: a record built field by field as the frozen dataclass's __init__ does, without its call
_SETTERS = tuple(getattr(MatchRecord, f).__set__ for f in _FIELDS)
_new = object.__new__
_DERIVED: dict[tuple, tuple] = {}


def _derived(ranks: tuple, teams: tuple) -> tuple[tuple, tuple, tuple]:
    """``(ranks, side_ranks, rewards)`` shared tuples, as :meth:`MatchRecord.from_json` computes them."""
    key = (ranks, teams)
    got = _DERIVED.get(key)
    if got is None:
        ranks = _share(ranks)
        got = (ranks, _share(tuple(ranks[t[0]] for t in teams)), _share(tuple(rank_rewards(list(ranks), teams))))
        if len(_DERIVED) < 1 << 16:
            _DERIVED[key] = got
    return got


def _lineup(mid: str) -> str:
    parts = mid.split("/")
    return parts[1] if len(parts) > 1 else ""


def concat(parts: Iterable[Columns], into_first: bool = False) -> Columns:
    """One :class:`Columns` of ``parts`` in order (codes renumbered into one name table), frozen.

    :param into_first: extend the first part in place and empty the others' columns as they are
        copied (the journal cache's chunks: no second copy of the cached prefix is held)."""
    it = iter(parts)  # taken one by one: a generator reading them holds one part at a time
    out = next(it, None) if into_first else None
    out = Columns() if out is None else out
    for p in it:
        base = len(out)
        remap = np.array([out._c(n) for n in p.names] or [0], dtype=np.int64)
        for blob, end in (("ids", "id_end"), ("fps", "fp_end"), (None, "seat_end")):
            off = len(getattr(out, blob)) if blob else len(out.seats)
            if blob:
                _grow(out, blob, lambda c, more=getattr(p, blob): c.extend(more))
            _extend(out, end, _np(getattr(p, end)).astype(np.int64) + off)
        for name in ("game", "status", "seats", "versions"):
            _extend(out, name, remap[_np(getattr(p, name))] if len(getattr(p, name)) else np.zeros(0, np.int64))
        for name in ("deal", "rot", "ranks"):
            _extend(out, name, _np(getattr(p, name)))
        if len(p.scores):
            if not len(out.scores):
                out.scores = array(p.scores.typecode)
            if out.scores.typecode == p.scores.typecode:
                out.scores.extend(p.scores)
            elif "d" in (out.scores.typecode, p.scores.typecode):
                out.scores = _widened(out.scores, "d")
                out.scores.extend(_widened(p.scores, "d"))
            else:
                _extend(out, "scores", _np(p.scores))
        for name in ("time", "shape"):
            _grow(out, name, lambda c, more=getattr(p, name): c.extend(more))
        out.extra.update({base + i: row for i, row in p.extra.items()})
        if into_first:
            p.__init__()  # type: ignore[misc]  # its columns are copied: freed now
    out.freeze()
    return out


def _extend(out: Columns, name: str, values: np.ndarray) -> None:
    """Append integer ``values`` to column ``name`` of ``out``, widening its item type if needed."""
    col = getattr(out, name)
    if not len(values):
        return
    tc = _wider(col.typecode, _code_for(int(values.min()), int(values.max())))
    setattr(out, name, _widened(col, tc))
    _grow(out, name, lambda c: c.frombytes(values.astype(tc).tobytes()))


def _grow(out: Columns, name: str, append: Any) -> None:
    """``append(column)`` for column ``name`` of ``out``; if a numpy view of the column is still
    alive somewhere (it cannot be resized then: ``BufferError``, seen with a profiler's frame
    references), on a copy of it, which replaces it."""
    col = getattr(out, name)
    try:
        append(col)
    except BufferError:
        col = col[:]  # array and bytearray slices are copies
        append(col)
        setattr(out, name, col)


def _np(col: array) -> np.ndarray:
    """The ``array`` ``col`` as a numpy array of its item type (no copy)."""
    return np.frombuffer(col, dtype=col.typecode) if len(col) else np.zeros(0, col.typecode)


#: the integer columns stored in the narrowest item type their values fit (:meth:`Columns.freeze`)
_INTS = {"id_end": "q", "fp_end": "q", "seat_end": "q", "game": "i", "status": "i", "deal": "q", "rot": "q",
         "seats": "i", "ranks": "q", "versions": "i"}
#: the integer columns stored narrow. The others keep the item type of ``_INTS``, because the
#: replay's and the counters' column paths (branches scale10, scale11) read them with
#: ``np.frombuffer(cols.<name>, dtype=<that type>)``; once they read ``arena.columns._np(col)``
#: (the column's own type) every name of ``_INTS`` can be added (tests/scale/test_cache_format.py
#: checks all of them narrow)
NARROW: frozenset[str] = frozenset({"rot", "versions"})
_WIDTHS = (("b", 1 << 7), ("h", 1 << 15), ("i", 1 << 31), ("q", 1 << 63))


def _code_for(lo: int, hi: int) -> str:
    """The narrowest signed item type holding ``[lo, hi]``."""
    return next(tc for tc, lim in _WIDTHS if -lim <= lo and hi < lim)


def _narrow(col: array) -> array:
    """``col`` in the narrowest signed item type its values fit (``col`` itself if already)."""
    if not len(col):
        return array("b")
    a = np.frombuffer(col, dtype=col.typecode)
    tc = _code_for(int(a.min()), int(a.max()))
    return col if tc == col.typecode else array(tc, a.astype(tc).tobytes())


def _narrow_scores(col: array) -> array:
    """The scores column as narrow ints when every score is a whole number (not -0.0) that a
    double holds exactly (:meth:`Columns.record` turns them back into the same floats or ints by
    the record's shape bit 8); else ``col`` as doubles."""
    if col.typecode != "d" or not len(col):
        return col
    a = np.frombuffer(col, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        whole = bool((np.abs(a) < 1 << 53).all() and (a == np.rint(a)).all() and not np.signbit(a[a == 0]).any())
    return _narrow(array("q", a.astype(np.int64).tobytes())) if whole else col


def _widened(col: array, tc: str) -> array:
    """``col`` in item type ``tc`` (at least as wide; ``col`` itself if the same)."""
    if col.typecode == tc:
        return col
    return array(tc, _np(col).astype(tc).tobytes())


def _wider(a: str, b: str) -> str:
    """The wider of two integer item types."""
    order = "bhiq"
    return a if order.index(a) >= order.index(b) else b
