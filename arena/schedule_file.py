"""The schedule as ``tournament.json`` records it (``match id -> fingerprint``), compact when large.

Up to :data:`COMPACT_FROM` matches it is the plain JSON object ``"schedule": {id: fingerprint}``
(readable, what every earlier version wrote). From there on it is ``"schedule_compact"``: the ids
sorted (by their UTF-8 bytes, which is Python's string order) and joined by newlines, and their
fingerprints in the same order — two strings instead of a million-entry object. Read back
(:func:`schedule_of`) it is a :class:`CompactSchedule`: a read-only mapping over two byte blobs
and their offsets (~80 bytes a match at 1M instead of ~180 as a dict), looked up by binary
search, equal to the plain form entry for entry. Old files (``schedule`` only, or none) read as
before.
"""

from __future__ import annotations

import bisect
import os
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.results_folder import discard, open_regular, write_file

#: schedules of at least this many matches are written compact
COMPACT_FROM = 20_000
KEY = "schedule_compact"


def encode(schedule: Mapping[str, str]) -> dict[str, Any]:
    """The ``tournament.json`` entries of ``schedule`` (``{"schedule": ...}`` or ``{"schedule_compact": ...}``).

    :raises ValueError: if an id or a fingerprint contains a newline (ids never do: see
        :func:`arena.schedule.specs_for`).
    """
    if len(schedule) < COMPACT_FROM:
        return {"schedule": dict(schedule)}
    ids = sorted(schedule, key=lambda s: s.encode("utf-8", "surrogatepass"))
    fps = [schedule[i] for i in ids]
    if any("\n" in s for s in ids) or any("\n" in s for s in fps):
        raise ValueError("a match id or fingerprint contains a newline")
    return {KEY: {"format": 1, "count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(fps)}}


def encode_sorted(pairs: Iterable[tuple[str, str]], count: int) -> dict[str, Any]:
    """:func:`encode` of ``count`` ``(match id, fingerprint)`` pairs given in UTF-8 byte order of
    the ids (:meth:`arena.lazy_schedule.LazySchedule.sorted_pairs`): the compact strings are
    joined as the pairs stream (no dict of the schedule); pairs out of order or repeated ids are
    sorted / checked by :func:`encode` instead.

    :raises ValueError: as :func:`encode`.
    """
    if count < COMPACT_FROM:
        return encode(dict(pairs))
    ids: list[str] = []
    fps: list[str] = []
    last = b""
    ordered = True
    for mid, fp in pairs:
        key = mid.encode("utf-8", "surrogatepass")
        if ids and key <= last:
            ordered = False
        last = key
        ids.append(mid)
        fps.append(fp)
    if not ordered:
        return encode(dict(zip(ids, fps)))
    if any("\n" in s for s in ids) or any("\n" in s for s in fps):
        raise ValueError("a match id or fingerprint contains a newline")
    return {KEY: {"format": 1, "count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(fps)}}


class _Blob(Sequence[Any]):
    """The newline-joined strings of ``data`` as a sequence (str slices when ``data`` is ASCII —
    held as the JSON gave it, no copy — else bytes slices of its UTF-8, which sort the same);
    one int64 start per string."""

    def __init__(self, data: str) -> None:
        self.data: str | bytes = data if data.isascii() else data.encode("utf-8", "surrogatepass")
        raw = self.data.encode("ascii") if isinstance(self.data, str) else self.data
        cuts = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10) if raw else np.zeros(0, np.int64)
        del raw
        self.start = np.concatenate(([0], cuts + 1)).astype(np.int64) if data else np.zeros(0, np.int64)
        self.size = len(self.data)

    def __len__(self) -> int:
        return len(self.start)

    def __getitem__(self, i):
        end = int(self.start[i + 1]) - 1 if i + 1 < len(self.start) else self.size
        return self.data[int(self.start[i]):end]

    def key(self, s: str) -> str | bytes:
        """``s`` in the form the items have (str or UTF-8 bytes)."""
        return s if isinstance(self.data, str) else s.encode("utf-8", "surrogatepass")

    def text(self, i: int) -> str:
        """Item ``i`` as a str."""
        got = self[i]
        return got if isinstance(got, str) else got.decode("utf-8", "surrogatepass")


class CompactSchedule(Mapping[str, str]):
    """A ``match id -> fingerprint`` mapping over the compact form (see the module docstring).

    :raises ValueError: for a compact entry whose counts disagree (the ids must be sorted as :func:`encode` writes them).
    """

    def __init__(self, entry: Mapping[str, Any]) -> None:
        ids, fps = str(entry.get("ids", "")), str(entry.get("fingerprints", ""))
        self._ids = _Blob(ids)
        self._fps = _Blob(fps)
        n = len(self._ids)
        if n != len(self._fps) or n != int(entry.get("count", n)):
            raise ValueError(f"{n} ids, {len(self._fps)} fingerprints, count {entry.get('count')}")

    def _find(self, match_id: str) -> int:
        key = self._ids.key(match_id)
        i = bisect.bisect_left(self._ids, key)
        return i if i < len(self._ids) and self._ids[i] == key else -1

    def __getitem__(self, match_id: str) -> str:
        i = self._find(match_id) if isinstance(match_id, str) else -1
        if i < 0:
            raise KeyError(match_id)
        return self._fps.text(i)

    def __contains__(self, match_id: object) -> bool:
        return isinstance(match_id, str) and self._find(match_id) >= 0

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self._ids)):
            yield self._ids.text(i)

    def holds(self, ids: bytes | bytearray, id_end: Any, fps: bytes | bytearray, fp_end: Any) -> np.ndarray:
        """Per pair ``(id, fingerprint)`` given as concatenated UTF-8 blobs cut at ``*_end`` (one
        end offset per pair), 1 if the schedule maps the id to that fingerprint, else 0 —
        ``self.get(id) == fingerprint`` for every pair at once. ``(pairs,)`` uint8.

        A hash join in numpy (:class:`_Index`): each pair's 64-bit hash of its bytes is looked up
        among the schedule's sorted pair hashes, and a hit is confirmed by comparing the id's and the
        fingerprint's bytes with the entry's (exact: a hash decides nothing by itself). Equal-length
        ids (the usual ``tournament/lineup/dNNNNN/rNN``) are read in place, without a copy. A NUL
        byte, unsorted ids or two ids of one hash fall back to :meth:`get` per pair."""
        n = len(id_end)
        if not n:
            return np.zeros(0, np.uint8)
        few = n <= len(self) >> 6 and not hasattr(self, "_index_cache")  # an update's new lines: ~20 µs a
        index = None if few else self._index()  # lookup beats building the index (0.45 CPU-s at 1M)
        if index is None or b"\0" in ids or b"\0" in fps:  # a NUL: the NUL-padded rows would hide it
            cut_i, cut_f = [0, *id_end], [0, *fp_end]
            if index is None:  # a few pairs: the ids searched, the fingerprints compared one by one
                at = self._search(ids, cut_i)
                return np.fromiter((i >= 0 and self._fps.text(i) == bytes(fps[c:d]).decode("utf-8", "surrogatepass")
                                    for i, c, d in zip(at.tolist(), cut_f, cut_f[1:])), np.uint8, n)
            return np.fromiter((self.get(bytes(ids[a:b]).decode("utf-8", "surrogatepass"))
                                == bytes(fps[c:d]).decode("utf-8", "surrogatepass")
                                for a, b, c, d in zip(cut_i, cut_i[1:], cut_f, cut_f[1:])), np.uint8, n)
        return index.holds(ids, np.asarray(id_end, dtype=np.int64), fps, np.asarray(fp_end, dtype=np.int64))

    def _search(self, ids: bytes | bytearray, cut: list[int]) -> np.ndarray:
        """Per id of the blob ``ids`` cut at ``cut`` (``[0, end, end, ...]``), its index in the schedule
        or −1 — :meth:`_find` for each (the same ``bisect_left``, whatever the order of the ids),
        written out over the blob with the starts as one list: ~10 µs an id at 1M, not ~70."""
        b = self._ids
        n, data, size = len(b), b.data, b.size
        starts = b.start.tolist()
        out = np.full(len(cut) - 1, -1, np.int64)
        text = isinstance(data, str)
        for k, (a, c) in enumerate(zip(cut, cut[1:])):
            q: Any = bytes(ids[a:c])
            if text:
                q = q.decode("utf-8", "surrogatepass")
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) // 2
                if data[starts[mid]:(starts[mid + 1] - 1 if mid + 1 < n else size)] < q:
                    lo = mid + 1
                else:
                    hi = mid
            if lo < n and data[starts[lo]:(starts[lo + 1] - 1 if lo + 1 < n else size)] == q:
                out[k] = lo
        return out

    def _index(self) -> _Index | None:
        """The schedule's :class:`_Index` (built once; None if a NUL, unsorted ids or a shared hash rule it out)."""
        if not hasattr(self, "_index_cache"):
            ids, fps = (b.data.encode("utf-8", "surrogatepass") if isinstance(b.data, str) else b.data
                        for b in (self._ids, self._fps))
            got = None
            if b"\0" not in ids and b"\0" not in fps:
                ends = [np.append(b.start[1:] - 1, b.size).astype(np.int64) if len(b) else np.zeros(0, np.int64)
                        for b in (self._ids, self._fps)]
                got = _Index.of(ids, ends[0], fps, ends[1])
            self._index_cache: _Index | None = got
        return self._index_cache


_SLICE = 1 << 16  # rows a step (the temporaries stay a few MB)
#: a schedule whose longest id or fingerprint is wider than this and than 4x the median one is
#: not indexed (every row is padded to the longest: one 50 KB id in a crafted tournament.json
#: would cost GBs), and rows a step are cut so one step's rows stay within _ROW_BYTES
_WIDE = 256
_ROW_BYTES = 32 << 20
_MIX = np.uint64(0x9E3779B97F4A7C15)


class _Strings:
    """The strings of a blob cut at ``end`` (each followed by ``sep`` separator bytes), read as
    NUL-padded rows of ``width`` bytes on demand (:meth:`rows`) — a sliding window over the blob
    itself, so no padded copy of the strings is held; a string longer than ``width`` is cut (and
    flagged in :attr:`long`)."""

    def __init__(self, blob: Any, end: np.ndarray, sep: int, width: int | None = None) -> None:
        raw = np.frombuffer(blob, dtype=np.uint8) if len(blob) else np.zeros(0, np.uint8)
        n = len(end)
        self.start = np.concatenate(([0], end[:-1] + sep)).astype(np.int64) if n else np.zeros(0, np.int64)
        self.size = end - self.start
        self.width = w = max(int(self.size.max()) if n else 1, 1) if width is None else width
        self.long = self.size > w
        self.cut = len(raw) - w  # windows starting after it run past the blob: read from ``tail``
        self.win = np.lib.stride_tricks.sliding_window_view(raw, w) if self.cut >= 0 else np.zeros((0, w), np.uint8)
        self.tail_lo = max(self.cut + 1, 0)
        self.tail = np.lib.stride_tricks.sliding_window_view(np.concatenate([raw[self.tail_lo:], np.zeros(w, np.uint8)]), w)

    def __len__(self) -> int:
        return len(self.start)

    def rows(self, idx: np.ndarray | slice) -> np.ndarray:
        """The strings at ``idx`` as a ``(m, width)`` uint8 matrix, NUL-padded (a copy)."""
        s, size = self.start[idx], self.size[idx]
        far = s > self.cut
        if far.any():
            out = np.empty((len(s), self.width), np.uint8)
            out[~far] = self.win[s[~far]]
            out[far] = self.tail[s[far] - self.tail_lo]
        else:
            out = self.win[s]
        for j in range(max(int(size.min()), 0) if len(size) else self.width, self.width):
            out[:, j] *= size > j  # the bytes past a string's end (a separator, the next string), a column at a time
        return out


def _words(rows: np.ndarray) -> np.ndarray:
    """Rows of bytes as big-endian 64-bit words (NUL-padded to a multiple of 8): the same order as the bytes."""
    m, w = rows.shape
    pad = np.zeros((m, -(-w // 8) * 8), np.uint8)
    pad[:, :w] = rows
    return pad.view(">u8").astype(np.uint64)


def _hash(words: np.ndarray) -> np.ndarray:
    """A 64-bit hash per row of ``words`` (multiply-xorshift; equal rows, equal hashes). ``(m,)`` uint64."""
    h = np.zeros(len(words), np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h ^= words[:, j]
            h *= _MIX
            h ^= h >> np.uint64(29)
    return h


def _increasing(w: np.ndarray) -> bool:
    """Whether the rows of big-endian words ``w`` are strictly increasing (as their bytes)."""
    if len(w) < 2:
        return True
    d = w[1:] != w[:-1]
    k = d.argmax(axis=1)
    r = np.arange(len(k))
    return bool((d[r, k] & (w[1:][r, k] > w[:-1][r, k])).all())


def _pair(hid: np.ndarray, hfp: np.ndarray) -> np.ndarray:
    """The hash of pairs ``(id, fingerprint)`` from their strings' hashes (:func:`_hash`). ``(m,)`` uint64."""
    return _hash(np.stack([hid, hfp], axis=1))


def _step(sid: _Strings, sfp: _Strings) -> int:
    """Rows a step for strings of these widths: :data:`_SLICE`, fewer for wide ones (:data:`_ROW_BYTES`)."""
    return max(1, min(_SLICE, _ROW_BYTES // max(sid.width + sfp.width, 1)))


class _Index:
    """The compact schedule for :meth:`CompactSchedule.holds`: its ids and fingerprints as
    :class:`_Strings` over the encoded blobs, and the hashes of its ``(id, fingerprint)`` pairs,
    sorted (``order``: their entries; :meth:`pairs`)."""

    def __init__(self, sid: _Strings, sfp: _Strings, hashes: np.ndarray, order: np.ndarray) -> None:
        self.sid, self.sfp, self.hashes, self.order = sid, sfp, hashes, order

    @classmethod
    def of(cls, ids: bytes, id_end: np.ndarray, fps: bytes, fp_end: np.ndarray) -> _Index | None:
        """The index of the newline-separated ``ids``/``fps`` (None if the ids are not strictly
        increasing — :meth:`CompactSchedule.get`'s binary search needs them so — or two pairs share a hash)."""
        sid, sfp = _Strings(ids, id_end, 1), _Strings(fps, fp_end, 1)
        n = len(sid)
        if n and any(s.width > _WIDE and s.width > 4 * float(np.median(s.size)) for s in (sid, sfp)):
            return None  # an outlier width: per-pair lookups (CompactSchedule.get) instead of padded rows
        step = _step(sid, sfp)
        hashes = np.empty(n, np.uint64)
        last = np.zeros((0, -(-sid.width // 8)), np.uint64)
        for c in range(0, n, step):
            w = _words(sid.rows(slice(c, c + step)))
            if not _increasing(np.concatenate([last, w])):
                return None
            hashes[c:c + step] = _pair(_hash(w), _hash(_words(sfp.rows(slice(c, c + step)))))
            last = w[-1:]
        order = np.argsort(hashes)
        hashes = hashes[order]
        if n > 1 and bool((hashes[1:] == hashes[:-1]).any()):
            return None
        return cls(sid, sfp, hashes, order.astype(np.int32) if n < 1 << 31 else order)

    def pairs(self) -> np.ndarray:
        """The sorted 64-bit hashes of the schedule's ``(id, fingerprint)`` pairs (uint64): what
        :meth:`has_all` of a later schedule checks (the journal cache keeps them)."""
        return self.hashes

    def has_all(self, pairs: np.ndarray) -> bool:
        """Whether every pair hash of ``pairs`` (sorted, as :meth:`pairs`) is one of this schedule's:
        a schedule that only added matches to the one of ``pairs`` (up to a 64-bit hash collision)."""
        if not len(pairs):
            return True
        if not len(self.hashes):
            return False
        at = np.minimum(np.searchsorted(self.hashes, pairs), len(self.hashes) - 1)
        return bool((self.hashes[at] == pairs).all())

    def holds(self, ids: bytes | bytearray, id_end: np.ndarray, fps: bytes | bytearray, fp_end: np.ndarray) -> np.ndarray:
        """:meth:`CompactSchedule.holds` of NUL-free blobs (``*_end``: int64 end offsets)."""
        n = len(id_end)
        out = np.zeros(n, np.uint8)
        if not len(self.hashes):
            return out
        start = np.concatenate(([0], id_end[:-1]))
        fstart = np.concatenate(([0], fp_end[:-1]))
        step = _step(self.sid, self.sfp)
        for c in range(0, n, step):  # a slice of pairs at a time: a few MB of temporaries
            d = min(c + step, n)
            lo, flo = int(start[c]), int(fstart[c])
            qid = _Strings(memoryview(ids)[lo:int(id_end[d - 1])], id_end[c:d] - lo, 0, self.sid.width)
            qfp = _Strings(memoryview(fps)[flo:int(fp_end[d - 1])], fp_end[c:d] - flo, 0, self.sfp.width)
            q, qf = qid.rows(slice(None)), qfp.rows(slice(None))
            h = _pair(_hash(_words(q)), _hash(_words(qf)))
            by = np.argsort(h)  # the lookups in sorted order: a few times faster than in file order
            at = np.empty(d - c, np.int64)
            at[by] = np.minimum(np.searchsorted(self.hashes, h[by]), len(self.hashes) - 1)
            row = self.order[at]
            ok = (self.hashes[at] == h) & ~qid.long & ~qfp.long
            ok &= (self.sid.rows(row) == q).all(axis=1) & (self.sfp.rows(row) == qf).all(axis=1)
            out[c:d] = ok
        return out


def schedule_of(meta: Mapping[str, Any]) -> Mapping[str, str] | None:
    """The schedule ``tournament.json`` (``meta``) records, plain or compact; None if it has none
    (written before schedules were recorded).

    :raises ValueError: for a malformed compact entry (see :class:`CompactSchedule`).
    """
    compact = meta.get(KEY)
    if isinstance(compact, Mapping):
        return CompactSchedule(compact)
    plain = meta.get("schedule")
    return plain if isinstance(plain, dict) else None


#: next to the journal cache: the pair hashes of the schedule its rows were last classified with
PAIRS_NAME = "checkpoint-schedule.bin"
_PMAGIC = b"cardarena-schedule-pairs 1\n"


def save_pairs(folder: str | Path, key: str, schedule: CompactSchedule) -> None:
    """Keep ``schedule``'s sorted pair hashes (:meth:`_Index.pairs`) under its digest ``key`` in
    ``folder/checkpoint-schedule.bin`` (8 bytes a match and a CRC-32; written aside, then renamed;
    nothing if it has no index or a file cannot be written: it is a cache). Builds the index
    when the lookups did not (a few new lines are looked up one by one: :meth:`CompactSchedule.holds`)."""
    index = schedule._index()
    if index is None:
        return
    path = Path(folder) / PAIRS_NAME
    head = _PMAGIC + key.encode("ascii", "replace") + b"\n"
    body = index.pairs().astype("<u8").tobytes()
    try:  # never through a link
        write_file(path.with_suffix(".tmp"), head + body + struct.pack("<I", zlib.crc32(body, zlib.crc32(head))))
        os.replace(path.with_suffix(".tmp"), path)
    except (OSError, ArenaError):
        discard(path.with_suffix(".tmp"))


def pairs_key(folder: str | Path) -> str | None:
    """The schedule digest of ``folder``'s kept pair hashes (None if there are none)."""
    try:
        with open_regular(Path(folder) / PAIRS_NAME) as f:  # a FIFO is not waited on
            head = f.read(len(_PMAGIC) + 200)
    except OSError:
        return None
    if not head.startswith(_PMAGIC) or b"\n" not in head[len(_PMAGIC):]:
        return None
    return head[len(_PMAGIC):head.index(b"\n", len(_PMAGIC))].decode("ascii", "replace")


def load_pairs(folder: str | Path, key: str) -> np.ndarray | None:
    """The sorted pair hashes kept for the schedule of digest ``key`` (uint64), or None (none, of
    another schedule, cut or damaged)."""
    head = _PMAGIC + key.encode("ascii", "replace") + b"\n"
    try:
        with open_regular(Path(folder) / PAIRS_NAME) as f:
            data = f.read()
    except OSError:
        return None
    n = len(data) - len(head) - 4
    if not data.startswith(head) or n < 0 or n % 8 or struct.unpack("<I", data[-4:])[0] != zlib.crc32(data[:-4]):
        return None
    got = np.frombuffer(data, dtype="<u8", count=n // 8, offset=len(head)).astype(np.uint64)
    return got if not len(got) or bool((got[1:] > got[:-1]).all()) else None


def only_adds(schedule: Any, pairs: np.ndarray | None) -> bool:
    """Whether ``schedule`` (a :class:`CompactSchedule`) maps every id of the schedule whose
    sorted pair hashes are ``pairs`` to the same fingerprint — it only added matches — up to a
    64-bit hash collision (False if unknown)."""
    if pairs is None or not isinstance(schedule, CompactSchedule):
        return False
    index = schedule._index()
    return index is not None and index.has_all(pairs)
