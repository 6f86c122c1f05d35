"""The journal's typed prefix checkpointed next to it, so a table reads only the new lines (issue 18).

``<folder>/checkpoint-journal.bin`` (format 7; no pickle anywhere: loading a results folder
someone sent runs no code) is a header (magic, format, the record's fields) and a sequence of
**chunks**, one per block of up to :data:`_ROWS` new records a read parsed from ``matches.jsonl``
(the format: :mod:`arena.journal_chunks`). A chunk is ``CHNK``, a JSON meta (length-prefixed),
raw arrays in the order and item types the meta lists, and the CRC-32 of meta and arrays
(against a damaged or cut file, see :class:`arena.journal_chunks.Crc`). It holds:

* ``start``, ``end``: the byte range of the journal it covers (``end`` just after a newline);
* ``digest``: CRC-32 of the journal's bytes ``[0, end)`` and ``end`` (:class:`Crc`) — a running
  check, so a chunk vouches for the whole prefix before it;
* its records (first occurrence of each match id, file order) as the arrays of
  :class:`arena.columns.Columns` (narrow item types; records kept whole as their journal lines,
  parsed again by ``orjson`` when read), checked for consistency when read back (:meth:`Columns.check`);
* ``inside``: per row, whether it was in the tournament's schedule when read (bytes, 0/1);
* ``times``: per bot, the decision times of its inside rows (:class:`arena.latency.DecisionTimes`
  as its three arrays);
* ``id_hash``: per row, its match id's :func:`id_hash` (repeated ids in new lines are found
  without hashing the cached ids again; :meth:`RecordView.id_hashes`);
* ``schedule_key``: the digest of the schedule its rows were classified with (and every
  earlier chunk's rows checked against).

:func:`read` checks the journal from byte 0 while it loads the chunks and keeps the longest run of
chunks whose digests match: an edit of the prefix — in place, same size, same ids — changes the
CRC-32 of ``[0, end)`` and invalidates every chunk from the change on (a journal truncated or
replaced likewise; the check is against accidents — see :class:`arena.journal_chunks.Crc`); it
then parses only the bytes after the last valid chunk, in blocks of :data:`_ROWS` records
straight into columns (no record object for a plain line; the schedule and the decision times
applied per block with numpy), and appends each block as a chunk as it closes. The columns are
not held: the chunks' arrays are checked (CRC) and read back when first used
(:class:`arena.deferred_columns.DeferredColumns`; the last block stays in memory), so an update
never loads the prefix and a full read holds one block. The records, the inside/outside split
and the decision times equal a full read's **bit for bit** (same values, same order). The cached split is used as it is when the schedule is the one the
last chunk was classified with (its digest, ``ok.schedule_key``); under another schedule the
cached rows are classified again from their ids and fingerprints at once (:func:`classify`), and
if that moves a cached record (``tournament.json`` changed), the cache is dropped and the
journal read whole.

It is a cache: deleting it costs time only; an unreadable, damaged (checksum), inconsistent or cut
one is truncated to its valid chunks (a writer killed mid-write leaves at most a partial last
chunk); the pickled cache of format <= 5 (``checkpoint-journal.pkl``) is never read and is removed
when the new one is written.

(~630 lines: what is read when — chunks checked, the new lines parsed into blocks, the split
checked against the schedule — is one job; the file format and its writer are in
:mod:`arena.journal_chunks`.)
"""

from __future__ import annotations

import fcntl
import mmap
import os
import weakref
import zlib
from array import array
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from arena import schedule_file, times_checkpoint
from arena.columns import Columns, concat
from arena.deferred_columns import DeferredColumns
from arena.errors import JournalError
from arena.heap import release_heap
from arena.int_index import IntIndex
from arena.journal import parse_line
from arena.journal_chunks import Crc, Sink, header, new_check, read_chunk, stamp
from arena.latency import DecisionTimes
from arena.record import MatchRecord, id_hash
from arena.record_view import RecordView
from arena.schedule_file import CompactSchedule
from engine.errors import CardArenaError

NAME = "checkpoint-journal.bin"
#: the longest journal line read (bytes); a record is a few KB (its stderr excerpts are capped)
MAX_LINE = 64 << 20
#: the cache's name up to format 5 (pickles): removed when the new one is written
OLD_NAME = "checkpoint-journal.pkl"
_BLOCK = 8 << 20  # bytes of the journal checked a step
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)


class _Seen:
    """The match ids already read, as hashes — a sorted array for the cached prefix ``cached``
    (``hashes``: its rows' :func:`id_hash`, kept in the chunks), an :class:`IntIndex` (hash → first
    row) for the new lines as ``tail`` collects them — with an exact check of the ids on a hash
    hit (8 bytes an id, not a set of strings; a hit costs O(log n), so repeated ids cost no scan)."""

    def __init__(self, cached: Columns, tail_id: Callable[[int], str], hashes: np.ndarray) -> None:
        self.cached, self.tail_id = cached, tail_id
        self.hashes = hashes
        self.order = np.argsort(hashes, kind="stable")
        self.sorted = hashes[self.order]
        self.new = IntIndex()  # the new ids' hashes -> their first row
        self.new_hashes = array("q")
        self.clash: dict[int, list[int]] = {}  # a hash shared by new rows of different ids: their rows

    def add(self, mid: str) -> bool:
        """Whether ``mid`` is new; if so it is remembered as the next row of ``tail``."""
        h = id_hash(mid)
        k = int(np.searchsorted(self.sorted, h)) if len(self.sorted) else 0
        while k < len(self.sorted) and self.sorted[k] == h:
            if self.cached.match_id(int(self.order[k])) == mid:
                return False
            k += 1
        first = self.new.get(h)
        if first is not None:
            if any(self.tail_id(i) == mid for i in [first, *self.clash.get(h, ())]):
                return False
            self.clash.setdefault(h, []).append(len(self.new_hashes))
        else:
            self.new[h] = len(self.new_hashes)
        self.new_hashes.append(h)
        return True


_ROWS = 1 << 16  # records per block of the parse (bounded: no list of every line's dict)

def _close(m: Any) -> None:
    """Close the journal's map; if a view of it is still held (an exception's traceback, a
    profiler's frame), leave it to the garbage collector rather than raise over the real error."""
    try:
        m.close()
    except BufferError:  # pragma: no cover - only with a frame kept alive elsewhere
        pass


def _load_chunks(path: Path, journal: Any) -> tuple[list[dict[str, Any]], int, Any, int, Any]:
    """The valid chunks of the cache at ``path`` against the open ``journal``: ``(chunks, journal
    offset, running hash at it, cache bytes to keep, the cache file open again)`` — the chunks'
    columns not read (:func:`_deferred` reads them from that file, the one checked, when used);
    each chunk's ``at`` is its place in the file."""
    h = new_check()
    chunks: list[dict[str, Any]] = []
    offset = keep = 0
    try:
        f = _open_cache(path)
    except OSError:
        return chunks, 0, h, 0, None
    with f:
        head = header()
        if f.read(len(head)) != head:
            return chunks, 0, h, 0, None
        keep = f.tell()
        try:  # the journal's bytes checked in place (no copy through a buffer: ~0.1 CPU-s a GB)
            jmap: Any = mmap.mmap(journal.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # empty, or a file that cannot be mapped: no chunk holds
            return chunks, 0, h, keep, None
        try:
            while True:
                place = f.tell()
                ch = read_chunk(f, columns=False)
                if ch is None or not isinstance(ch.get("start"), int) or ch["start"] != offset \
                        or not isinstance(ch.get("end"), int) or not offset <= ch["end"] <= len(jmap):
                    break
                h2 = h.copy()
                with memoryview(jmap) as view:
                    for at in range(offset, ch["end"], _BLOCK):
                        stop = min(at + _BLOCK, ch["end"])
                        h2.update(view[at:stop])
                        if _DONTNEED is not None:  # the pages leave this process's resident set (not the page cache)
                            lo = at - at % mmap.PAGESIZE
                            jmap.madvise(_DONTNEED, lo, stop - lo)
                if stamp(h2, ch["end"]) != ch["digest"]:
                    break
                ch["at"] = place
                chunks.append(ch)
                h, offset, keep = h2, ch["end"], f.tell()
        finally:
            _close(jmap)
        source = os.fdopen(os.dup(f.fileno()), f.mode) if chunks else None  # this file, whatever replaces the path
    return chunks, offset, h, keep, source


def _open_cache(path: Path) -> Any:
    """The cache file open for reading, and writing when it can be (new chunks go after the valid ones)."""
    for mode, flags in (("r+b", os.O_RDWR), ("rb", os.O_RDONLY)):
        try:
            return os.fdopen(os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC), mode)
        except PermissionError:
            continue
    raise PermissionError(path)


def _reopen(fd: int) -> Any:
    """A read-only file of the file ``fd`` is open on, with its own offset (``/proc/self/fd``; a
    ``dup`` shares the offset, used where ``/proc`` is missing)."""
    try:
        return open(f"/proc/self/fd/{fd}", "rb")
    except OSError:
        return os.fdopen(os.dup(fd), "rb")


def _deferred(path: Path, fd: int, chunks: list[dict[str, Any]]) -> DeferredColumns:
    """The columns of the checked ``chunks``, read when first used from the cache file ``fd`` is
    open on (the file checked or written, whatever replaces ``path`` meanwhile).

    :raises JournalError: (when used) if a chunk no longer reads back as the one checked — the
        file was cut or rewritten meanwhile, or its columns fail :meth:`arena.columns.Columns.check`
        (only a crafted file: their checksum held)."""
    source = _reopen(fd)
    cols = DeferredColumns([(ch["rows"], partial(_read_back, path, source, ch["at"], ch["digest"], ch["rows"]))
                            for ch in chunks])
    weakref.finalize(cols, source.close)  # the file is closed with the columns (read again after a release)
    return cols


def _read_back(path: Path, source: Any, at: int, digest: str, rows: int) -> Columns:
    """The columns of the chunk at ``at`` in ``source``, which must be the one checked (``digest``, ``rows``)."""
    source.seek(at)
    ch = read_chunk(source)
    if ch is None or ch["digest"] != digest or ch["rows"] != rows:
        raise JournalError(f"{path}: a chunk no longer reads back as the one checked (the file was cut or "
                           "rewritten meanwhile, or its columns are inconsistent): delete the file (a "
                           "cache: it is rebuilt from matches.jsonl) and run the command again")
    return ch["cols"]


class _Times:
    """The decision times of one parse block, flat (values, and per seat run: bot, length, row),
    folded per bot once the block's rows are classified (:meth:`fold`)."""

    def __init__(self, bots: Sequence[str]) -> None:
        self.index = {b: k for k, b in enumerate(bots)}
        self.values = array("d")
        self.bot = array("i")
        self.size = array("q")
        self.row = array("q")

    def add(self, row: int, seats: Sequence[str], move_ms: Any) -> None:
        """Record ``row``'s ``move_ms`` (per seat, its bot's times) as :class:`Latency` would."""
        index = self.index
        for seat, ts in enumerate(move_ms or ()):
            k = index.get(seats[seat]) if seat < len(seats) else None
            if k is not None and ts:
                before = len(self.values)
                self.values.extend(ts)
                self.bot.append(k)
                self.size.append(len(self.values) - before)
                self.row.append(row)

    def fold(self, inside: np.ndarray, into: list[DecisionTimes]) -> None:
        """Add the times of the rows with ``inside[row]`` to their bots' :class:`DecisionTimes`."""
        if not len(self.values):
            return
        size = np.frombuffer(self.size, np.int64)
        keep = np.repeat(inside[np.frombuffer(self.row, np.int64)] != 0, size)
        bot = np.repeat(np.frombuffer(self.bot, np.int32), size)[keep]
        x = np.frombuffer(self.values, np.float64)[keep]
        order = np.argsort(bot, kind="stable")
        bot, x = bot[order], x[order]
        cuts = np.flatnonzero(np.diff(bot)) + 1
        for lo, hi in zip([0, *cuts.tolist()], [*cuts.tolist(), len(bot)]):
            if hi > lo:
                into[int(bot[lo])].add_values(x[lo:hi])
        self.__init__(list(self.index))  # type: ignore[misc]


def _parse_tail(path: Path, journal: Any, offset: int, h: Any, cached: Columns, hashes: np.ndarray,
                ok: Callable[[MatchRecord], bool], bots: Sequence[str], first_line: int,
                write: Callable[[dict[str, Any]], int | None], times: dict[str, DecisionTimes]) -> list[dict[str, Any]]:
    """The chunks of the complete lines after ``offset`` whose ids are not in ``cached`` (its ids'
    :func:`id_hash` ``hashes``), one per block of :data:`_ROWS` records parsed straight into
    columns (no record built for a plain line); [] if there is no new line.

    Each block is handed to ``write`` as it closes (its place in the cache, or None if not written):
    a written block's columns are dropped once the next one closes (``cols`` None: read back when
    used, :func:`_deferred`), so the parse holds one block of columns, not the journal's. Each
    block's decision times are added to ``times`` once written (the chunks returned hold none)."""
    journal.seek(offset)
    into = times
    out: list[dict[str, Any]] = []
    line_at = array("q")  # per new row, its line's place in the journal (the id of a dropped block's row)

    read_back: dict[int, str] = {}  # ids of dropped blocks' rows read again (each line read once)

    def tail_id(k: int) -> str:
        """The match id of new row ``k`` (blocks of :data:`_ROWS` rows)."""
        q, r = divmod(k, _ROWS)
        cols = out[q]["cols"] if q < len(out) else part
        if cols is not None:
            return cols.match_id(r)
        if k not in read_back:
            read_back[k] = _id_at(journal, line_at[k])
        return read_back[k]

    seen = _Seen(cached, tail_id, hashes)
    schedule = getattr(ok, "schedule", None)
    end = start = offset
    lineno = start_line = first_line
    part, flags, tl = Columns(), bytearray(), _Times(bots)

    def close() -> None:
        """Classify the block, fold its times, hand it to ``write`` as a chunk."""
        nonlocal part, flags, start, start_line
        if isinstance(schedule, CompactSchedule):  # the block's rows classified at once
            flags = bytearray(schedule.holds(part.ids, part.id_end, part.fps, part.fp_end).tobytes())
        times = [DecisionTimes() for _ in bots]
        tl.fold(np.frombuffer(flags, np.uint8) if flags else np.zeros(0, np.uint8), times)
        part.freeze()
        rows = len(seen.new_hashes)
        ch = {"start": start, "end": end, "digest": stamp(h, end), "lines": lineno - start_line, "cols": part,
              "rows": len(part), "inside": bytes(flags), "times": {b: t for b, t in zip(bots, times) if len(t)},
              "id_hash": seen.new_hashes[rows - len(part):rows].tobytes(),
              "schedule_key": getattr(ok, "schedule_key", None)}
        ch["at"] = write(ch)
        _merge_times(into, [ch])  # the per-bot totals, merged as they go (a block's own are ~20 MB at 1,000 bots)
        if out and out[-1]["at"] is not None:
            out[-1]["cols"] = None  # written: read back from the cache when used
            release_heap()  # its arrays' pages (freed in pieces the allocator would keep)
        out.append(ch)
        part, flags, start, start_line = Columns(), bytearray(), end, lineno

    while line := journal.readline(MAX_LINE):
        if not line.endswith(b"\n"):
            if len(line) == MAX_LINE:
                raise JournalError(f"{path}: line {lineno + 1} is longer than {MAX_LINE:,} bytes (a record is a few "
                                   "KB): the file is damaged or not a journal; move it aside or cut the line")
            break
        lineno += 1
        at = end
        end += len(line)
        h.update(line)
        if not line.strip():
            continue
        raw = parse_line(path, lineno, line)
        if not seen.add(raw["match_id"]):
            continue
        line_at.append(at)
        _add_record(part, flags, tl, raw, line, ok, path, lineno)
        if len(part) >= _ROWS:
            close()
    if len(part) or end > start:
        close()
    return out


def _add_record(part: Columns, flags: bytearray, tl: _Times, raw: dict[str, Any], line: bytes,
                ok: Callable[[MatchRecord], bool], path: Path, lineno: int) -> None:
    """Append a new line's record (``raw``, parsed from ``line``) to the block: its columns, its
    inside flag (unless a compact schedule classifies the block at once) and its decision times.

    :raises JournalError: naming ``path`` and ``lineno`` for a field of another type or an
        unknown game."""
    schedule = getattr(ok, "schedule", None)
    by_blob, by_dict = isinstance(schedule, CompactSchedule), isinstance(schedule, dict)
    try:
        seats = part.append_raw(raw, line)
        rec = None
        if seats is None or not (by_blob or by_dict):
            rec = MatchRecord.from_json(raw, moves=False)
            if seats is None:
                part.append_whole(rec, line)
        if not by_blob:
            if by_dict:
                fp = schedule.get(raw["match_id"])  # type: ignore[union-attr]
                flags.append(fp is not None and fp == str(raw.get("fingerprint", "")))
            else:
                flags.append(bool(ok(rec)))  # type: ignore[arg-type]
        tl.add(len(part) - 1, raw["seats"], raw.get("move_ms"))
    except CardArenaError as e:  # an unknown game, a player count the game does not have
        raise JournalError(f"{path}: line {lineno}: {e}; move the file aside or fix the line") from e
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError, IndexError) as e:
        raise JournalError(f"{path}: line {lineno}: a field is not of the type `arena run` writes "
                           f"({type(e).__name__}: {e}); move the file aside or fix the line") from e


def _id_at(journal: Any, at: int) -> str:
    """The match id of the journal line starting at byte ``at`` (read with ``pread``: the parse's
    place in the file is kept; the line gathered in one buffer, linear in its length)."""
    line = bytearray()
    while len(line) < MAX_LINE:
        got = os.pread(journal.fileno(), 1 << 20, at + len(line))
        if not got:
            break
        cut = got.find(b"\n")
        line += got if cut < 0 else got[:cut + 1]
        if cut >= 0:
            break
    return str(orjson.loads(line)["match_id"])


def _split_holds(ok: Callable[[MatchRecord], bool], cols: Columns, flags: np.ndarray, key: Any, folder: Path) -> bool:
    """Whether the cached inside/outside ``flags`` of ``cols`` are what ``ok`` says now.

    No work when the schedule is the one the last chunk was classified with (``ok.schedule_key``,
    set by :func:`arena.results.in_schedule`: a digest of the schedule). Under another compact
    schedule that only *added* matches to that one (its pair hashes kept in
    ``checkpoint-schedule.bin``, :func:`arena.schedule_file.only_adds`) the inside rows stay
    inside and only the outside ones are looked up; else the cached rows are classified again —
    at once from their ids and fingerprints when ``ok.schedule`` is the mapping
    (:func:`classify`), else record by record."""
    if not len(flags):
        return True
    now_key = getattr(ok, "schedule_key", None)
    if now_key is not None and now_key == key:
        return True
    schedule = getattr(ok, "schedule", None)
    if isinstance(key, str) and schedule_file.only_adds(schedule, schedule_file.load_pairs(folder, key)):
        out = np.flatnonzero(flags == 0)
        if len(out) <= max(len(flags) >> 6, 1024):  # few: their ids and fingerprints cut out one by one
            ids, id_end, fps, fp_end = bytearray(), array("q"), bytearray(), array("q")
            for i in out.tolist():
                ids += cols.match_id(i).encode("utf-8", "surrogatepass")
                id_end.append(len(ids))
                fps += cols.fingerprint(i).encode("utf-8", "surrogatepass")
                fp_end.append(len(fps))
            assert isinstance(schedule, CompactSchedule)  # only_adds said so
            return not schedule.holds(ids, id_end, fps, fp_end).any()
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
    if isinstance(schedule, CompactSchedule):
        return schedule.holds(cols.ids, cols.id_end, cols.fps, cols.fp_end)
    ids, fps = _strings(cols.ids, cols.id_end), _strings(cols.fps, cols.fp_end)
    return np.fromiter((schedule.get(i) == f for i, f in zip(ids, fps)), dtype=np.uint8, count=len(ids))


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
        info)`` — the records as a lazy :class:`arena.record_view.RecordView` over columns (no record
        object is held); ``info``: ``{"cached": records taken from the cache, "parsed": records
        parsed now}``.
    :raises JournalError: naming the file and line of a corrupt record (as
        :func:`arena.journal.read_records`).
    """
    folder = Path(folder)
    path = folder / "matches.jsonl"
    cpath = folder / NAME
    times: dict[str, DecisionTimes] = {b: DecisionTimes() for b in bots}
    if path.exists() and not path.is_file():  # a FIFO would block for ever, a device never end
        raise JournalError(f"{path} is not a regular file; a results folder's journal is the file `arena run` "
                           "writes: move it aside")
    try:
        journal = open(path, "rb")
    except FileNotFoundError:
        return RecordView(concat([])), 0, times, {"cached": 0, "parsed": 0}  # noqa: E501
    with journal:
        owner = _lock(journal)
        source: Any  # the cache file checked (None: none)
        chunks, offset, h, keep, source = _load_chunks(cpath, journal) if cache else ([], 0, new_check(), 0, None)
        coalesce = owner and len(run := _small_run(chunks)) >= COALESCE
        if coalesce:  # many small chunks: parsed again as one, into a copy (a locked-out reader may hold them)
            chunks, offset, keep = chunks[:len(chunks) - len(run)], run[0]["start"], run[0]["at"]
            h = Crc(int(chunks[-1]["digest"].split(":")[1], 16)) if chunks else new_check()
        cached_cols: Columns = _deferred(cpath, source.fileno(), chunks) if chunks else concat([])  # read when used
        flags = np.frombuffer(b"".join(ch["inside"] for ch in chunks), dtype=np.uint8)
        if not _split_holds(ok, cached_cols, flags, chunks[-1].get("schedule_key") if chunks else None, folder):
            if source is not None:
                source.close()
            journal.close()  # its lock released first
            return read(folder, ok, bots, cache=False, prefixes=prefixes)  # the schedule changed
        parts = [np.frombuffer(ch["id_hash"], dtype=np.int64) for ch in chunks]
        hashes = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, np.int64)
        del parts
        try:
            totals = _cached_times(folder, bots, chunks, times)
        except ValueError:  # the chunks' times together beyond any real count: a crafted cache
            if source is not None:
                source.close()
            journal.close()
            return read(folder, ok, bots, cache=False, prefixes=prefixes)
        cached = len(cached_cols)
        mode = ("off" if not owner else "fresh" if not chunks else "copy" if coalesce
                else "append" if "+" in source.mode else "off")
        sink = Sink(cpath, keep, source.fileno() if mode in ("append", "copy") else None, mode, folder / OLD_NAME)
        try:
            new = _parse_tail(path, journal, offset, h, cached_cols, hashes, ok, bots,
                              sum(ch["lines"] for ch in chunks), sink.write, times)
            cols = _columns(cpath, chunks, new, sink.fd if mode in ("fresh", "copy") and sink.fd is not None
                            else source.fileno() if source else None)
        finally:
            sink.finish()
            if source is not None:
                source.close()
    del cached_cols
    if new:
        flags = np.concatenate([flags, *(np.frombuffer(ch["inside"], dtype=np.uint8) for ch in new)])
        hashes = np.concatenate([hashes, *(np.frombuffer(ch["id_hash"], dtype=np.int64) for ch in new)])
    cols.id_hash = hashes  # RecordView.id_hashes
    release_heap()
    vouched = _prefixes([*chunks, *new])
    if owner:
        _keep_side_caches(folder, ok, chunks, new, vouched, bots, times if new or totals is None else None)
    if prefixes is not None:  # (end, digest, inside records before end): the counters' and replay's checkpoints
        prefixes.extend(vouched)
    inside = np.flatnonzero(flags).astype(np.int64)
    return RecordView(cols, inside), len(cols) - len(inside), times, {"cached": cached, "parsed": len(cols) - cached}


def _lock(journal: Any) -> bool:
    """Whether this read may write the folder's cache: one writer at a time (two would append
    their chunks at one place). A reader that finds the lock taken reads the cache and writes
    nothing — it never waits (a reader stopped with ^Z must not hang the others). The journal's
    own writer (:mod:`arena.journal`) takes no lock on it; closing ``journal`` releases it."""
    try:
        fcntl.flock(journal.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _cached_times(folder: Path, bots: Sequence[str], chunks: list[dict[str, Any]],
                  times: dict[str, DecisionTimes]) -> dict[str, DecisionTimes] | None:
    """Put the cached ``chunks``' decision times into ``times``: the checkpointed totals when they
    are the chunks' (returned), else the chunks' own merged (None returned).

    :raises ValueError: the chunks' times together beyond any real count (a crafted cache)."""
    if not chunks:
        return None
    totals = times_checkpoint.load(folder, times_checkpoint.key_of(_prefixes(chunks)[-1][1], bots), bots)
    if totals is None:
        _merge_times(times, chunks)
        return None
    times.update(totals)  # the chunks' own are not merged again
    for ch in chunks:
        ch.pop("times")
    return totals


def _keep_side_caches(folder: Path, ok: Callable[[MatchRecord], bool], chunks: list[dict[str, Any]],
                      new: list[dict[str, Any]], vouched: list[tuple[int, str, int]], bots: Sequence[str],
                      times: dict[str, DecisionTimes] | None) -> None:
    """After a read that may write: the schedule's pair hashes (for :func:`_split_holds`) when its
    rows were classified with a schedule not yet kept, and the decision times' totals (``times``,
    None: unchanged) under the new last prefix."""
    now_key = getattr(ok, "schedule_key", None)
    if isinstance(now_key, str) and (new or (chunks and chunks[-1].get("schedule_key") == now_key)) \
            and isinstance(getattr(ok, "schedule", None), CompactSchedule) and schedule_file.pairs_key(folder) != now_key:
        schedule_file.save_pairs(folder, now_key, ok.schedule)  # type: ignore[attr-defined]
    if vouched and times is not None:
        times_checkpoint.save(folder, times_checkpoint.key_of(vouched[-1][1], bots), bots, times)


#: this many trailing chunks of under _ROWS // 16 records each (an ``arena leaderboard`` every few
#: seconds during a run adds one each time) are parsed again into one: reading a chunk costs ~1.6
#: ms, and 20,000 of them made every read take 40 s
COALESCE = 16


def _small_run(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trailing chunks of fewer than ``_ROWS // 16`` records each."""
    k = len(chunks)
    while k and chunks[k - 1]["rows"] < max(_ROWS // 16, 1):
        k -= 1
    return chunks[k:]


def _prefixes(chunks: list[dict[str, Any]]) -> list[tuple[int, str, int]]:
    """Per chunk, the prefix of the journal it vouches for: ``(end, digest/CRC-32 of the inside
    flags so far, inside records before end)`` — which rows are inside is part of it: a new
    schedule that keeps the count but not the set (fewer deals, then a gauntlet) must not resume
    the old counters."""
    out, n_in, seen = [], 0, 0
    for ch in chunks:
        n_in += ch["inside"].count(1)
        seen = zlib.crc32(ch["inside"], seen)
        out.append((ch["end"], f"{ch['digest']}/{seen:08x}", n_in))
    return out


def _merge_times(times: dict[str, DecisionTimes], chunks: list[dict[str, Any]]) -> None:
    """Add the chunks' decision times (popped from them) to ``times``' bots': a new block's
    :class:`DecisionTimes` merged into the totals, cached chunks' arrays merged per bot in one
    step (:meth:`DecisionTimes.merged`: a merge per chunk and bot cost 2 CPU-s at 1M records)."""
    pieces: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    for ch in chunks:
        got = ch.pop("times")
        for b, ts in (got() if callable(got) else got).items():  # a cached chunk's: decoded now
            if b not in times:
                continue
            if isinstance(ts, DecisionTimes):
                if len(times[b]):
                    times[b].extend(ts)
                else:
                    times[b] = ts  # the block's own (no copy)
            else:
                pieces.setdefault(b, []).append(ts)
    for b, parts in pieces.items():
        if len(times[b]):
            parts.insert(0, times[b].arrays())
        times[b] = DecisionTimes.merged(parts)


def _columns(path: Path, chunks: list[dict[str, Any]], new: list[dict[str, Any]], fd: int | None) -> Columns:
    """The columns of the cached ``chunks`` and of the ``new`` ones: those in the cache file ``fd``
    is open on (the cached, and the new ones written and dropped) read when used, then the blocks
    still held (each with its rows' ``id_hash``)."""
    held = [ch for ch in new if ch["cols"] is not None]
    stored = [*chunks, *new[:len(new) - len(held)]]
    assert all(ch["cols"] is None for ch in stored), "the blocks held are the last ones"
    tail = concat([ch["cols"] for ch in held], into_first=True) if held else None
    if tail is not None:
        tail.id_hash = np.concatenate([np.frombuffer(ch["id_hash"], dtype=np.int64) for ch in held])
    if not stored:
        return tail if tail is not None else concat([])
    assert fd is not None
    cols = _deferred(path, fd, stored)
    if tail is not None:
        cols.follow_with(tail)
    return cols
