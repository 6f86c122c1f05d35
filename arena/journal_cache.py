"""The journal's typed prefix checkpointed next to it, so a table reads only the new lines (issue 18).

``<folder>/checkpoint-journal.pkl`` is a sequence of pickled **chunks**, one per call that found
new complete lines in ``matches.jsonl``. A chunk holds:

* ``start``, ``end``: the byte range of the journal it covers (``end`` just after a newline);
* ``digest``: SHA-256 (its first 128 bits) of the journal's bytes ``[0, end)`` — a running
  hash, so a chunk vouches for the whole prefix before it;
* ``cols``: its records (first occurrence of each match id, file order) in columns
  (:class:`arena.columns.Columns`, decision times left out), so a cached prefix loads as arrays;
* ``inside``: per row, whether it was in the tournament's schedule when read (bytes, 0/1);
* ``times``: per bot, the decision times of its inside rows (:class:`arena.latency.DecisionTimes`,
  as :class:`arena.tables.Latency` collects them);
* ``id_hash``: per row, its match id's :func:`id_hash` (repeated ids in new lines are found
  without hashing the cached ids again);
* ``schedule_key``: the digest of the schedule its rows were classified with (and every
  earlier chunk's rows checked against).

:func:`read` hashes the journal from byte 0 while it loads the chunks and keeps the longest run of
chunks whose digests match (a journal edited, truncated or replaced invalidates every chunk from
the change on), then parses only the bytes after the last valid chunk and appends one chunk for
them. The records, the inside/outside split and the decision times equal a full read's **bit for
bit** (same parse, same order). The cached split is used as it is when the schedule is the one
the last chunk was classified with (its digest, ``ok.schedule_key``); under another schedule the
cached rows are classified again from their ids and fingerprints at once (:func:`classify`), and
if that moves a cached record (``tournament.json`` changed), the cache is dropped and the
journal read whole.

It is a cache: deleting it costs time only; an unreadable or cut one is truncated to its valid
chunks (a writer killed mid-write leaves at most a partial last chunk).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.columns import Columns, RecordView, concat
from arena.errors import JournalError
from arena.int_index import IntIndex
from arena.journal import parse_line
from arena.latency import DecisionTimes
from arena.record import MatchRecord, id_hash
from engine.errors import CardArenaError

NAME = "checkpoint-journal.pkl"
#: bump when MatchRecord's fields, their parsing or the column layout change (another format is ignored)
FORMAT = 5  # 4: id hashes and the schedule key per chunk, SHA-256 prefix digests (scale6); 5: decision times as arena.latency.DecisionTimes (scale8)
_FIELDS = tuple(MatchRecord.__dataclass_fields__)
_HEADER = ("cardarena-journal-cache", FORMAT, _FIELDS)
_BLOCK = 1 << 20


def _digest() -> Any:
    """The running hash of the journal's bytes: SHA-256 (hardware-accelerated on current CPUs,
    about twice blake2b's speed; hashing the prefix is most of an incremental read at 1M records)."""
    return hashlib.sha256()


class _Seen:
    """The match ids already read, as hashes — a sorted array for the cached prefix ``cached``
    (``hashes``: its rows' :func:`id_hash`, kept in the chunks), a set for the new lines as
    ``tail`` collects them — with an exact check of the ids on a hash hit (8 bytes an id, not a
    set of strings)."""

    def __init__(self, cached: Columns, tail: Columns, hashes: np.ndarray) -> None:
        self.cached, self.tail = cached, tail
        self.hashes = hashes
        self.sorted = np.sort(self.hashes)
        self.new = IntIndex()  # the new ids' hashes (a set in ~16 bytes a hash, not ~64)
        self.new_hashes = array("q")

    def add(self, mid: str) -> bool:
        """Whether ``mid`` is new; if so it is remembered as the next row of ``tail``."""
        h = id_hash(mid)
        k = int(np.searchsorted(self.sorted, h))
        if k < len(self.sorted) and self.sorted[k] == h and any(
                self.cached.match_id(int(i)) == mid for i in np.flatnonzero(self.hashes == h)):
            return False
        if h in self.new and any(self.tail.match_id(int(i)) == mid for i in
                                 np.flatnonzero(np.frombuffer(self.new_hashes, dtype=np.int64) == h)):
            return False
        self.new[h] = 0
        self.new_hashes.append(h)
        return True


def _load_chunks(path: Path, journal: Any) -> tuple[list[dict[str, Any]], int, Any, int]:
    """The valid chunks of the cache at ``path`` against the open ``journal``: ``(chunks, journal
    offset, running hash at it, cache bytes to keep)``."""
    h = _digest()
    chunks: list[dict[str, Any]] = []
    offset = keep = 0
    try:
        f = open(path, "rb")
    except OSError:
        return chunks, 0, h, 0
    with f:
        try:
            if pickle.load(f) != _HEADER:
                return chunks, 0, h, 0
        except Exception:  # noqa: BLE001 - any unreadable header: not our cache
            return chunks, 0, h, 0
        keep = f.tell()
        while True:
            try:
                ch = pickle.load(f)
            except Exception:  # noqa: BLE001 - EOF or a chunk cut mid-write: the valid ones stay
                break
            if not isinstance(ch, dict) or ch.get("start") != offset:
                break
            h2 = h.copy()
            todo = ch["end"] - offset
            while todo > 0:
                data = journal.read(min(todo, _BLOCK))
                if not data:
                    break
                h2.update(data)
                todo -= len(data)
            if todo or h2.hexdigest()[:32] != ch["digest"]:
                break
            chunks.append(ch)
            h, offset, keep = h2, ch["end"], f.tell()
    return chunks, offset, h, keep


def _parse_tail(path: Path, journal: Any, offset: int, h: Any, cached: Columns, hashes: np.ndarray,
                ok: Callable[[MatchRecord], bool], bots: Sequence[str], first_line: int) -> dict[str, Any] | None:
    """The chunk of the complete lines after ``offset`` whose ids are not in ``cached`` (its ids'
    :func:`id_hash` ``hashes``); None if there is no new line."""
    journal.seek(offset)
    cols = Columns()
    seen = _Seen(cached, cols, hashes)
    inside = bytearray()
    times: dict[str, DecisionTimes] = {b: DecisionTimes() for b in bots}
    end = offset
    lineno = first_line
    for line in journal:
        if not line.endswith(b"\n"):
            break
        lineno += 1
        end += len(line)
        h.update(line)
        if not line.strip():
            continue
        raw = parse_line(path, lineno, line)
        if not seen.add(str(raw.get("match_id"))):
            continue
        try:
            rec = MatchRecord.from_json(raw, moves=False)
        except CardArenaError as e:  # an unknown game, a player count the game does not have
            raise JournalError(f"{path}: line {lineno}: {e}; move the file aside or fix the line") from e
        cols.append(rec)
        flag = ok(rec)
        inside.append(flag)
        if flag:
            for seat, ts in enumerate(raw.get("move_ms") or ()):
                got = times.get(rec.seats[seat]) if seat < len(rec.seats) else None
                if got is not None and ts:
                    got.extend(ts)
    if end == offset:
        return None
    return {"start": offset, "end": end, "digest": h.hexdigest()[:32], "lines": lineno - first_line, "cols": cols,
            "inside": bytes(inside), "times": {b: t for b, t in times.items() if t},
            "id_hash": seen.new_hashes.tobytes(), "schedule_key": getattr(ok, "schedule_key", None)}


def _split_holds(ok: Callable[[MatchRecord], bool], cols: Columns, flags: np.ndarray, key: Any) -> bool:
    """Whether the cached inside/outside ``flags`` of ``cols`` are what ``ok`` says now.

    No work when the schedule is the one the last chunk was classified with (``ok.schedule_key``,
    set by :func:`arena.results.in_schedule`: a digest of the schedule); else the cached rows are
    classified again — at once from their ids and fingerprints when ``ok.schedule`` is the
    mapping (:func:`classify`), else record by record."""
    if not len(flags):
        return True
    now_key = getattr(ok, "schedule_key", None)
    if now_key is not None and now_key == key:
        return True
    schedule = getattr(ok, "schedule", None)
    if schedule is not None:
        return bool(np.array_equal(classify(schedule, cols), flags))
    return all(ok(cols.record(i)) == was for i, was in enumerate(flags.tolist()))


def _strings(blob: bytes | bytearray, ends: Any) -> list[str]:
    """The strings of a concatenated UTF-8 ``blob`` cut at ``ends`` (one per row)."""
    text = blob.decode("utf-8", "surrogatepass")
    if len(text) != len(blob):  # not ASCII: cut the bytes, then decode each
        cuts = [0, *ends]
        return [bytes(blob[a:b]).decode("utf-8", "surrogatepass") for a, b in zip(cuts, cuts[1:])]
    cuts = [0, *ends]
    return [text[a:b] for a, b in zip(cuts, cuts[1:])]


def classify(schedule: Any, cols: Columns) -> np.ndarray:
    """Per row of ``cols``, 1 if its match id is in ``schedule`` (``match id -> fingerprint``,
    plain or :class:`arena.schedule_file.CompactSchedule`) with its fingerprint, else 0 — what
    :func:`arena.results.in_schedule` says of each record, without building the records
    (``(rows,)`` uint8)."""
    ids_blob = getattr(getattr(schedule, "_ids", None), "data", None)
    fps_blob = getattr(getattr(schedule, "_fps", None), "data", None)
    if isinstance(ids_blob, str) and isinstance(fps_blob, str):  # compact and ASCII: split at C speed
        table: Any = dict(zip(ids_blob.split("\n"), fps_blob.split("\n"))) if ids_blob else {}
    else:
        table = schedule
    ids, fps = _strings(cols.ids, cols.id_end), _strings(cols.fps, cols.fp_end)
    return np.fromiter((table.get(i) == f for i, f in zip(ids, fps)), dtype=np.uint8, count=len(ids))


def _write(path: Path, keep: int, chunk: dict[str, Any] | None) -> None:
    """Cut the cache to its ``keep`` valid bytes and append ``chunk`` (a fresh file when ``keep`` is 0)."""
    try:
        if keep == 0:
            tmp = path.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                pickle.dump(_HEADER, f, protocol=5)
                if chunk is not None:
                    pickle.dump(chunk, f, protocol=5)
            os.replace(tmp, path)
            return
        with open(path, "r+b") as f:
            f.truncate(keep)
            f.seek(keep)
            if chunk is not None:
                pickle.dump(chunk, f, protocol=5)
    except OSError:
        path.with_suffix(".tmp").unlink(missing_ok=True)


def read(folder: str | Path, ok: Callable[[MatchRecord], bool], bots: Sequence[str],
         cache: bool = True, prefixes: list | None = None) -> tuple[RecordView, int, dict[str, DecisionTimes], dict[str, Any]]:
    """The journal's records split by ``ok`` (the schedule), read from the cache and the new lines.

    :param ok: whether a record belongs to the schedule (:func:`arena.results.in_schedule`).
    :param bots: the bots whose decision times are collected.
    :param cache: False: ignore the cache, read the whole journal and write a fresh cache.
    :param prefixes: if given, filled with ``(end, digest, inside records in [0, end))`` per
        vouched-for byte prefix (every valid chunk, then the new one): :mod:`arena.tallies`' key
        (the interface of branch scale4).
    :returns: ``(inside records in file order, count of the others, per-bot decision times,
        info)`` — the records as a lazy :class:`arena.columns.RecordView` over columns (no record
        object is held); ``info``: ``{"cached": records taken from the cache, "parsed": records
        parsed now}``.
    :raises JournalError: naming the file and line of a corrupt record (as
        :func:`arena.journal.read_records`).
    """
    folder = Path(folder)
    path = folder / "matches.jsonl"
    cpath = folder / NAME
    times: dict[str, DecisionTimes] = {b: DecisionTimes() for b in bots}
    try:
        journal = open(path, "rb")
    except FileNotFoundError:
        return RecordView(concat([])), 0, times, {"cached": 0, "parsed": 0}
    with journal:
        chunks, offset, h, keep = _load_chunks(cpath, journal) if cache else ([], 0, _digest(), 0)
        if len(chunks) == 1:  # the usual case after a rebuild: its columns as they are (no copy)
            cols = chunks[0]["cols"]
            cols.freeze()
        else:
            cols = concat(ch["cols"] for ch in chunks)
        for ch in chunks:
            ch["cols"] = None  # the chunks' own columns are not held twice
        flags = np.frombuffer(b"".join(ch["inside"] for ch in chunks), dtype=np.uint8)
        if not _split_holds(ok, cols, flags, chunks[-1].get("schedule_key") if chunks else None):
            return read(folder, ok, bots, cache=False, prefixes=prefixes)  # the schedule changed
        hashes = np.frombuffer(b"".join(ch.pop("id_hash") for ch in chunks), dtype=np.int64)
        for ch in chunks:
            for b, ts in ch.pop("times").items():
                if b in times:
                    if len(times[b]):
                        times[b].extend(ts)
                    else:
                        times[b] = ts  # the unpickled array itself (no copy)
        cached = len(cols)
        first_line = sum(ch["lines"] for ch in chunks)
        tail = _parse_tail(path, journal, offset, h, cols, hashes, ok, bots, first_line)
    if tail is not None:
        if len(cols):
            cols = concat([cols, tail["cols"]])
        else:  # nothing cached: the new chunk's columns as they are (no copy)
            cols = tail["cols"]
            cols.freeze()
        flags = np.concatenate([flags, np.frombuffer(tail["inside"], dtype=np.uint8)])
        for b, ts in tail["times"].items():
            if len(times[b]):
                times[b].extend(ts)
            else:
                times[b] = ts  # the chunk's array itself (no second copy; the chunk is only written)
    try:
        size = cpath.stat().st_size
    except OSError:
        size = -1
    if not chunks:
        _write(cpath, 0, tail)
    elif tail is not None or keep != size:
        _write(cpath, keep, tail)
    if prefixes is not None:  # (end, digest, inside records before end): arena.tallies' checkpoint
        n_in = 0
        for ch in [*chunks, *([tail] if tail is not None else [])]:
            n_in += sum(ch["inside"])
            prefixes.append((ch["end"], ch["digest"], n_in))
    inside = np.flatnonzero(flags).astype(np.int64)
    return RecordView(cols, inside), len(cols) - len(inside), times, {"cached": cached, "parsed": len(cols) - cached}
