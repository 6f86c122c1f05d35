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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

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
        ``self.get(id) == fingerprint`` for every pair at once (numpy: sorted fixed-width byte
        strings and a binary search; ~60 bytes a scheduled match held while it runs).
        ``(pairs,)`` uint8."""
        n = len(id_end)
        if not n:
            return np.zeros(0, np.uint8)
        sid, sfp = self._fixed_form()
        if sid is None or sfp is None or b"\0" in ids or b"\0" in fps:  # a NUL: fixed-width strings would drop it
            cut_i, cut_f = [0, *id_end], [0, *fp_end]
            return np.fromiter((self.get(bytes(ids[a:b]).decode("utf-8", "surrogatepass"))
                                == bytes(fps[c:d]).decode("utf-8", "surrogatepass")
                                for a, b, c, d in zip(cut_i, cut_i[1:], cut_f, cut_f[1:])), np.uint8, n)
        qid, long_id = _fixed(ids, id_end, sid.dtype.itemsize)
        qfp, long_fp = _fixed(fps, fp_end, sfp.dtype.itemsize)
        if not len(sid):
            return np.zeros(n, np.uint8)
        at = np.minimum(np.searchsorted(sid, qid), len(sid) - 1)
        return ((sid[at] == qid) & (sfp[at] == qfp) & ~long_id & ~long_fp).astype(np.uint8)

    def _fixed_form(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The ids and fingerprints as sorted fixed-width byte strings (built once; None, None if
        a NUL or the ids' order rules it out)."""
        got = getattr(self, "_fixed_cache", None)
        if got is None:
            ids, fps = (b.data.encode("utf-8", "surrogatepass") if isinstance(b.data, str) else b.data
                        for b in (self._ids, self._fps))
            if b"\0" in ids or b"\0" in fps:
                got = (None, None)
            else:
                ends = [np.append(b.start[1:] - 1, b.size).astype(np.int64) if len(b) else np.zeros(0, np.int64)
                        for b in (self._ids, self._fps)]
                wi, wf = (int(np.diff(np.concatenate(([-1], e))).max()) - 1 if len(e) else 1 for e in ends)
                sid = _fixed(ids, ends[0], max(wi, 1), sep=1)[0]
                sfp = _fixed(fps, ends[1], max(wf, 1), sep=1)[0]
                got = (sid, sfp) if not len(sid) or bool((sid[1:] > sid[:-1]).all()) else (None, None)
            self._fixed_cache = got
        return got


def _fixed(blob: bytes | bytearray, end: Any, width: int, sep: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The strings of ``blob`` cut at ``end`` (each followed by ``sep`` separator bytes) as a
    fixed-width ``S{width}`` array (NUL-padded), and per string whether it is longer than ``width``."""
    raw = np.frombuffer(blob, dtype=np.uint8) if len(blob) else np.zeros(1, np.uint8)
    e = np.asarray(end, dtype=np.int64)
    start = np.concatenate(([0], e[:-1] + sep)) if len(e) else e
    out = np.zeros((len(e), width), dtype=np.uint8)
    for c in range(0, len(e), 1 << 16):  # in slices: the index array stays small
        lo, hi = start[c:c + (1 << 16), None], e[c:c + (1 << 16), None]
        idx = lo + np.arange(width)[None, :]
        out[c:c + len(lo)] = np.where(idx < hi, raw[np.minimum(idx, len(raw) - 1)], 0)
    return out.view(f"S{width}").ravel(), (e - start) > width


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
