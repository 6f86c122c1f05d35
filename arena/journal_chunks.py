"""The journal cache's file format: its header and its checksummed chunks (issue 18).

``checkpoint-journal.bin`` (:mod:`arena.journal_cache` says what it holds and when it is read)
is :func:`header` and a sequence of chunks: ``CHNK``, a length-prefixed JSON meta, the raw arrays
in the order and item types the meta lists, and the CRC-32 (:class:`Crc`) of meta and arrays. No
pickle anywhere: a results folder someone sent runs no code when read. :func:`encode` writes a
chunk, :func:`read_chunk` reads one back (its columns kept, or only checked), :class:`Sink`
appends a read's chunks to the file.
"""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import orjson

from arena.columns import Columns
from arena.latency import checked_total
from arena.record import MatchRecord

__all__ = ["FORMAT", "Crc", "Sink", "encode", "header", "new_check", "read_chunk", "stamp"]

#: bump when MatchRecord's fields, their parsing or the column layout change (another format is ignored)
FORMAT = 7  # 7: CRC-32 prefix checks and chunk checksums (read2); 6: raw arrays and JSON, no pickle; narrow item types; journal lines of records kept whole (scale9); 4: id hashes and the schedule key per chunk, SHA-256 prefix digests (scale6); 5: decision times as arena.latency.DecisionTimes (scale8)
_FIELDS = tuple(MatchRecord.__dataclass_fields__)
_MAGIC = b"cardarena-jcache\n"
_STEP = 1 << 20  # bytes checked a step when a chunk's columns are only checked (one buffer a chunk)


class Crc:
    """The running check of the journal's bytes: CRC-32 (``zlib.crc32``), with the two methods of
    a ``hashlib`` object the reader uses. About twice SHA-256's speed here (0.44 against 0.92 CPU-s
    over 1 GB, no SHA extensions), and the prefix check is against accidents, not forgers (a forger
    who can edit the journal can rewrite the cache: docs/security.md, "Results folders"): an edit of
    up to 32 consecutive bits (a rank, a digit, a status letter) is always caught, any other change
    of the prefix escapes with probability 2**-32; a truncated journal is shorter than the chunk's
    ``end``, a foreign cache's chunks name other bytes."""

    __slots__ = ("crc",)

    def __init__(self, crc: int = 0) -> None:
        self.crc = crc

    def update(self, data: Any) -> None:
        """Add ``data`` (a bytes-like object) to the check."""
        self.crc = zlib.crc32(data, self.crc)

    def copy(self) -> Crc:
        """An independent check of the same bytes so far."""
        return Crc(self.crc)

    def digest(self) -> bytes:
        """The check as 4 bytes (little-endian: a cache chunk's last bytes)."""
        return struct.pack("<I", self.crc)

    def hexdigest(self) -> str:
        """The check as 8 hex digits (``crc32:`` and the length are the chunk's ``digest``, see :func:`stamp`)."""
        return f"{self.crc:08x}"


def new_check() -> Crc:
    """The running check of the journal's bytes ``[0, end)`` (:class:`Crc`)."""
    return Crc()


def stamp(h: Crc, end: int) -> str:
    """A chunk's ``digest``: the check of the journal's bytes ``[0, end)`` and ``end`` itself."""
    return f"crc32:{h.hexdigest()}:{end}"


_CHUNK = b"CHNK"
_ARRAYS = ("id_end", "fp_end", "game", "status", "deal", "rot", "time", "seat_end", "seats", "ranks", "scores",
           "versions", "shape")
_TYPES = frozenset("bhiqdBI")
#: the arrays of a chunk's columns (:func:`read_chunk` with ``columns=False`` checks them, keeps none)
_COLUMN_ARRAYS = frozenset(("ids", "fps", *_ARRAYS, "extra"))
_PER_RECORD = ("id_end", "fp_end", "game", "status", "deal", "rot", "time", "seat_end", "shape")


def header() -> bytes:
    """The cache file's first bytes: magic, format and the record's fields (another: ignored)."""
    meta = orjson.dumps({"format": FORMAT, "fields": list(_FIELDS)})
    return _MAGIC + struct.pack("<Q", len(meta)) + meta


def encode(ch: dict[str, Any], f: Any) -> None:
    """Write a chunk to ``f``: ``CHNK``, the JSON meta's length and meta, the raw arrays, then
    the CRC-32 of all but ``CHNK`` (written piece by piece: no copy of the chunk is built)."""
    cols: Columns = ch["cols"]
    arrays: list[tuple[str, str, Any]] = [("ids", "B", cols.ids), ("fps", "B", cols.fps)]
    arrays += [(n, getattr(cols, n).typecode, getattr(cols, n)) for n in _ARRAYS]
    arrays += [("inside", "B", ch["inside"]), ("id_hash", "q", ch["id_hash"])]
    lines = [(int(i), bytes(line)) for i, line in sorted(cols.extra.items())]
    arrays.append(("extra", "B", b"".join(line for _, line in lines)))
    times = []
    for bot, t in ch["times"].items():
        us, counts, odd = t.arrays()
        arrays += [("us", "I", us.astype(np.uint32)), ("counts", "I" if counts.dtype == np.uint32 else "q", counts), ("odd", "d", odd)]
        times.append(bot)
    views = [memoryview(x).cast("B") for _, _, x in arrays]
    spec = [[n, tc, len(v) // np.dtype(tc).itemsize] for (n, tc, _), v in zip(arrays, views)]
    meta = orjson.dumps({k: ch[k] for k in ("start", "end", "digest", "lines", "schedule_key")} | {
        "rows": len(cols), "names": cols.names, "arrays": spec, "extra": [[i, len(line)] for i, line in lines],
        "times": times})
    h = Crc()
    f.write(_CHUNK)
    pieces: list[Any] = [struct.pack("<Q", len(meta)), meta, *views]
    for piece in pieces:
        h.update(piece)
        f.write(piece)
    f.write(h.digest())


def read_chunk(f: Any, columns: bool = True) -> dict[str, Any] | None:
    """The next chunk of the open cache ``f`` (None at its end, or if it is cut, damaged or foreign).

    :param columns: False: the columns' arrays are checked (their CRC) but not kept — the chunk's
        ``cols`` is None and ``rows`` its record count (:func:`_deferred` reads them when used)."""
    try:
        if f.read(4) != _CHUNK:
            return None
        head = f.read(8)
        h = Crc()
        h.update(head)
        size = os.fstat(f.fileno()).st_size
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else 0
        if n > size - f.tell():
            return None  # a length beyond the file: cut or not ours
        meta_b = f.read(n)
        h.update(meta_b)
        meta = orjson.loads(meta_b)
        got: dict[str, list] = {}
        scratch = memoryview(bytearray(_STEP)) if not columns else None
        for name, tc, count in meta["arrays"]:
            if tc not in _TYPES or not isinstance(count, int) or count < 0 \
                    or count * np.dtype(tc).itemsize > size - f.tell():
                return None  # an unknown type, or more bytes than the file holds (never allocated)
            if scratch is not None and name in _COLUMN_ARRAYS:
                if not _check_only(f, count * np.dtype(tc).itemsize, h, scratch):
                    return None  # cut
                got.setdefault(name, []).append(count)
                continue
            # one allocation each, read into (no bytes object in between); bytes as a bytearray
            a: Any = bytearray(count) if tc == "B" else array(tc, [0]) * count
            view = memoryview(a).cast("B")
            if f.readinto(view) != len(view):
                return None  # cut
            h.update(view)
            got.setdefault(name, []).append(a)
        if f.read(4) != h.digest():
            return None
        return _decode(meta, got)
    except (OSError, ValueError, MemoryError, OverflowError, KeyError, TypeError, IndexError, AttributeError,
            struct.error):  # orjson.JSONDecodeError is a ValueError
        return None


def _check_only(f: Any, nbytes: int, h: Crc, buf: memoryview) -> bool:
    """Add the next ``nbytes`` of ``f`` to ``h`` through the buffer ``buf`` (False if ``f`` ends first)."""
    while nbytes:
        got = f.readinto(buf[:min(nbytes, len(buf))])
        if not got:
            return False
        h.update(buf[:got])
        nbytes -= got
    return True


def _decode(meta: dict[str, Any], got: dict[str, list]) -> dict[str, Any] | None:
    """The chunk of a checksummed ``meta`` and its arrays, its columns checked (None if inconsistent);
    columns only counted (:func:`read_chunk`'s ``columns=False``): ``cols`` None, the lengths checked,
    ``times`` a function returning them (:func:`_times_of`; it raises ``ValueError`` for bad ones)."""
    inside, hashes = bytes(got["inside"][0]), got["id_hash"][0]
    rows = meta["rows"]
    if isinstance(got["ids"][0], int):  # deferred: the per-record columns' lengths and the extra rows' sizes
        if not isinstance(rows, int) or len(inside) != rows or len(hashes) != rows \
                or any(got[n][0] != rows for n in _PER_RECORD) \
                or sum(int(size) for _i, size in meta["extra"]) != got["extra"][0]:
            return None
        return {**{k: meta[k] for k in ("start", "end", "digest", "lines", "schedule_key")}, "cols": None,
                "rows": rows, "inside": inside, "id_hash": hashes,
                "times": partial(_times_of, meta, got)}  # decoded when merged (unused with the totals checkpoint)
    cols = Columns()
    cols.names = [str(n) for n in meta["names"]]
    cols._code = {n: i for i, n in enumerate(cols.names)}
    cols.ids, cols.fps = got["ids"][0], got["fps"][0]  # bytearrays as read (no copy)
    for n in _ARRAYS:
        setattr(cols, n, got[n][0])
    blob, at = bytes(got["extra"][0]), 0
    for i, size in meta["extra"]:
        cols.extra[int(i)] = blob[at:at + size]
        at += size
    cols.check()
    if len(inside) != len(cols) or len(hashes) != len(cols) or at != len(blob) or rows != len(cols):
        return None
    return {**{k: meta[k] for k in ("start", "end", "digest", "lines", "schedule_key")},
            "cols": cols, "rows": rows, "inside": inside, "id_hash": hashes, "times": _times_of(meta, got)}


def _times_of(meta: dict[str, Any], got: dict[str, list]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The chunk's decision times per bot as :meth:`arena.latency.DecisionTimes.arrays` (views of
    its ``us``, ``counts`` and ``odd`` arrays; merged with the other chunks' at once:
    :meth:`arena.latency.DecisionTimes.merged`).

    :raises ValueError: for arrays that are no multiset (unequal lengths, a count below 1)."""
    times = {}
    for k, bot in enumerate(meta["times"]):
        us, counts = np.frombuffer(got["us"][k], np.uint32), _np_of(got["counts"][k])
        if len(us) != len(counts) or (len(counts) and int(counts.min()) < 1):
            raise ValueError("decision times: microseconds and counts of unequal length, or a count below 1")
        checked_total(counts, len(got["odd"][k]))  # a crafted count would size arrays
        times[str(bot)] = (us, counts, np.frombuffer(got["odd"][k], np.float64))
    return times


def _np_of(a: array) -> np.ndarray:
    """An ``array`` as numpy (no copy), of its own item type."""
    return np.frombuffer(a, dtype=a.typecode) if len(a) else np.zeros(0, a.typecode)


class Sink:
    """Where a read's new chunks go (:func:`arena.journal_cache._parse_tail`'s ``write``), by ``mode``: ``append`` after
    the cache's ``keep`` valid bytes in the file ``fd`` is open on (the one checked); ``fresh`` into
    a new file that replaces ``path`` at :meth:`finish`; ``copy`` the same after a copy of the first
    ``keep`` bytes of ``fd`` (chunks after them parsed again: a reader that checked the old file
    reads it unchanged through its own descriptor); ``off`` nowhere (a read-only cache).
    Written with ``pwrite`` (the file's offset is its readers'); after the first failure (a full
    disk) nothing more is written — the chunks not written stay in memory, those written stay valid."""

    def __init__(self, path: Path, keep: int, fd: int | None, mode: str, old: Path | None = None) -> None:
        self.path, self.keep, self.mode, self.fd, self.old = path, keep, mode, fd, old
        self.pos, self.wrote, self.stopped = keep, False, mode == "off"
        self.tmp = path.with_suffix(".tmp")
        if mode in ("fresh", "copy"):
            src, self.fd = fd, None
            try:
                self.fd = os.open(self.tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
                self.pos = 0
                if mode == "fresh":
                    self._put(header())
                else:
                    assert src is not None
                    self._copy(src, keep)
            except OSError:
                self.stopped = True
                if self.fd is not None:
                    os.close(self.fd)
                    self.fd = None
                self.tmp.unlink(missing_ok=True)

    def _copy(self, src: int, n: int) -> None:
        """The first ``n`` bytes of the file ``src`` is open on, written at this file's start."""
        while self.pos < n:
            got = os.pread(src, min(n - self.pos, 1 << 20), self.pos)
            if not got:
                raise OSError(f"{self.path}: the cache ended at byte {self.pos:,} while copied")
            self._put(got)

    def _put(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        while len(view):
            n = os.pwrite(self.fd, view, self.pos)  # type: ignore[arg-type]
            self.pos += n
            view = view[n:]

    def write(self, ch: dict[str, Any]) -> int | None:
        """Append chunk ``ch``; its place in the file, or None if it was not written."""
        if self.stopped or self.fd is None:
            return None
        at = self.pos
        try:
            if self.mode == "append" and not self.wrote:
                os.ftruncate(self.fd, self.keep)  # a partial chunk after the valid ones goes
            encode(ch, SimpleNamespace(write=self._put))
            self.wrote = True
            return at
        except OSError:
            self.stopped, self.pos = True, at
            try:
                os.ftruncate(self.fd, at)
            except OSError:
                pass  # a partial last chunk: the next read cuts it
            return None

    def finish(self) -> None:
        """A fresh file put in place (its valid chunks, even after a failed write); an appended one
        cut to its valid chunks when nothing was added."""
        if self.fd is None:
            return
        try:
            if self.mode in ("fresh", "copy"):
                os.replace(self.tmp, self.path)
                if self.old is not None:
                    self.old.unlink(missing_ok=True)  # the pickled cache of format <= 5
            elif self.mode == "append" and not self.wrote and os.fstat(self.fd).st_size != self.keep:
                os.ftruncate(self.fd, self.keep)
        except OSError:
            if self.mode in ("fresh", "copy"):
                self.tmp.unlink(missing_ok=True)  # what was written is still read through the open file
        if self.mode in ("fresh", "copy"):
            os.close(self.fd)
        self.fd = None
