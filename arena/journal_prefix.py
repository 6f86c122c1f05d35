"""Which chunks of the journal cache still vouch for the journal: their checksums and the CRC-32
of the journal's bytes ``[0, end)`` each records (:mod:`arena.journal_cache`).

Checking them reads the whole journal (1 GB at 1M records: ~0.5 CPU-s of ``zlib.crc32``, which
runs without the GIL) and the cache's columns. :func:`load_chunks` does it at once;
:class:`Check` does it in a thread while the reader trusts the chunks' own records (``check=False``:
no CRC computed, the running check at the last chunk taken from its ``digest``) and parses the
new lines; the reader asks :meth:`Check.holds` before anything it returns or keeps beyond the
cache itself depends on the chunks, and reads again with the check done first when it says no
(a chunk written meanwhile after an invalid one is behind it in the chain, so never vouched for).
"""

from __future__ import annotations

import mmap
import os
import threading
from typing import Any

from arena.journal_chunks import Crc, header, new_check, read_chunk, stamp

_BLOCK = 8 << 20  # bytes of the journal checked a step
_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)

Loaded = tuple[list[dict[str, Any]], int, Crc, int, Any]


def open_cache(path: Any) -> Any:
    """The cache file open for reading, and writing when it can be (new chunks go after the valid ones).

    :raises OSError: if it cannot be opened at all (missing, a symlink, unreadable)."""
    for mode, flags in (("r+b", os.O_RDWR), ("rb", os.O_RDONLY)):
        try:
            return os.fdopen(os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC), mode)
        except PermissionError:
            continue
    raise PermissionError(path)


def reopen(fd: int) -> Any:
    """A read-only file of the file ``fd`` is open on, with its own offset (``/proc/self/fd``; a
    ``dup`` shares the offset, used where ``/proc`` is missing)."""
    try:
        return open(f"/proc/self/fd/{fd}", "rb")
    except OSError:
        return os.fdopen(os.dup(fd), "rb")


def _close(m: Any) -> None:
    """Close the journal's map; if a view of it is still held (an exception's traceback, a
    profiler's frame), leave it to the garbage collector rather than raise over the real error."""
    try:
        m.close()
    except BufferError:  # pragma: no cover - only with a frame kept alive elsewhere
        pass


def load_chunks(path: Any, journal: Any, check: bool = True) -> Loaded:
    """The chunks of the cache at ``path`` against the open ``journal``: ``(chunks, journal
    offset, running check at it, cache bytes to keep, the cache file open again)`` — the chunks'
    columns not read; each chunk's ``at`` is its place in the file.

    :param check: False: the chunks as their records say (continuous, inside the journal's
        length), neither checksum computed — :class:`Check` decides whether they hold."""
    try:
        f = open_cache(path)
    except OSError:
        return [], 0, new_check(), 0, None
    with f:
        got = chunks_of(f, journal, check)
        source = os.fdopen(os.dup(f.fileno()), f.mode) if got[0] else None  # this file, whatever replaces the path
    return (*got, source)


def chunks_of(f: Any, journal: Any, check: bool, stop: threading.Event | None = None,
              most: int | None = None) -> tuple[list[dict[str, Any]], int, Crc, int]:
    """:func:`load_chunks` of the open cache file ``f`` (read from its start): at most ``most``
    chunks; ``stop`` set: the chunks checked so far."""
    h = new_check()
    chunks: list[dict[str, Any]] = []
    offset = keep = 0
    head = header()
    if f.read(len(head)) != head:
        return chunks, 0, h, 0
    keep = f.tell()
    try:  # the journal's bytes checked in place (no copy through a buffer: ~0.1 CPU-s a GB)
        jmap: Any = mmap.mmap(journal.fileno(), 0, access=mmap.ACCESS_READ) if check else None
        size = os.fstat(journal.fileno()).st_size
    except (OSError, ValueError):  # empty, or a file that cannot be mapped: no chunk holds
        return chunks, 0, h, keep
    try:
        while (stop is None or not stop.is_set()) and (most is None or len(chunks) < most):
            place = f.tell()
            ch = read_chunk(f, columns=False, check=check)
            if ch is None or not isinstance(ch.get("start"), int) or ch["start"] != offset \
                    or not isinstance(ch.get("end"), int) or not offset <= ch["end"] <= size:
                break
            h2 = _advance(jmap, h, offset, ch["end"]) if check else _recorded(ch["digest"])
            if h2 is None or stamp(h2, ch["end"]) != ch["digest"]:
                break
            ch["at"] = place
            chunks.append(ch)
            h, offset, keep = h2, ch["end"], f.tell()
    finally:
        if jmap is not None:
            _close(jmap)
    return chunks, offset, h, keep


def _advance(jmap: Any, h: Crc, start: int, end: int) -> Crc:
    """The running check ``h`` (at ``start``) carried over the journal's bytes up to ``end``."""
    h2 = h.copy()
    with memoryview(jmap) as view:
        for at in range(start, end, _BLOCK):
            stop = min(at + _BLOCK, end)
            h2.update(view[at:stop])
            if _DONTNEED is not None:  # the pages leave this process's resident set (not the page cache)
                lo = at - at % mmap.PAGESIZE
                jmap.madvise(_DONTNEED, lo, stop - lo)
    return h2


def _recorded(digest: Any) -> Crc | None:
    """The running check a chunk's ``digest`` (``crc32:<8 hex>:<end>``) records; None if malformed."""
    parts = digest.split(":") if isinstance(digest, str) else ()
    if len(parts) != 3 or parts[0] != "crc32" or len(parts[1]) != 8:
        return None
    try:
        return Crc(int(parts[1], 16))
    except ValueError:
        return None


class Check:
    """The chunks' check (:func:`load_chunks` with ``check=True``) running in a thread over the
    cache file ``source`` is open on (its own descriptor: the same file whatever replaces the
    path) and ``journal``.

    :meth:`holds` waits for it and says whether it keeps exactly the ``chunks`` the reader trusted
    (no more are read: the reader appends its new ones meanwhile); :meth:`cancel` stops it (an
    error or a re-read: its result is not wanted)."""

    def __init__(self, source: Any, journal: Any, chunks: list[dict[str, Any]]) -> None:
        self._most = len(chunks)
        self._file = reopen(source.fileno())
        self._journal = journal
        self._stop = threading.Event()
        self._got: tuple[list[dict[str, Any]], int, Crc, int] | None = None
        self._thread = threading.Thread(target=self._run, name="journal-check", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._got = chunks_of(self._file, self._journal, True, self._stop, self._most)
        except Exception:  # noqa: BLE001 - an unreadable file: nothing vouched for (holds() says no)
            self._got = None
        finally:
            self._file.close()

    def holds(self, chunks: list[dict[str, Any]]) -> bool:
        """Whether the checked chunks are ``chunks`` (same places, digests and ranges)."""
        self._thread.join()
        if self._got is None or self._stop.is_set():
            return False
        mine = self._got[0]
        return len(mine) == len(chunks) and all(
            (a["at"], a["digest"], a["start"], a["end"], a["rows"]) == (b["at"], b["digest"], b["start"], b["end"], b["rows"])
            for a, b in zip(mine, chunks))

    def cancel(self) -> None:
        """Stop the check (between two chunks) and wait for it."""
        self._stop.set()
        self._thread.join()
