"""The append-only results store of a tournament (DESIGN "Journal").

The driver is the only writer of ``results/<tournament>/matches.jsonl``: one record per
line, written whole and flushed as each match ends. On open, a partial last line (the
trace of a killed driver) is moved to ``matches.jsonl.partial`` and the file is cut
after its last newline; ids already present are skipped by the executor. Attempts that
did not finish go to ``attempts.jsonl``. ``secret.json`` (mode 0600) holds the salt.

A results folder holds one tournament as configured. ``tournament.json`` (written by the
driver) records its settings and its schedule; a rerun with other settings (game, players,
options, clock, ...) is refused (:meth:`Journal.check_settings`), and so is a rerun in which a
recorded match's fingerprint changed (:meth:`Journal.check_fingerprints`). Records that fall
outside the current schedule (deals lowered, a bot removed) stay in ``matches.jsonl`` but are
not rated.

(~620 lines: the writer, the reader and the on-disk id index share the file's format and locking; the index is the part to move out next.)
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from arena.errors import JournalError
from arena.int_index import IntIndex
from arena.journal_changes import (
    bot_changes,
    field_changes,
    record_settings,
    recorded_settings,
    setting_changes,
)
from arena.record import MatchRecord, teams_of
from engine import ENGINE_VERSION
from engine.errors import CardArenaError

if TYPE_CHECKING:
    from arena.specs import MatchSpec

FORMAT = 1


def record_of(spec: MatchSpec, res: dict[str, Any], game_version: int) -> dict[str, Any]:
    """The journal record (DESIGN "Journal") of one finished match: ``spec``'s fields and the
    worker's result ``res`` (:meth:`arena.specs.MatchResult.to_json`), as written on disk."""
    return {"format": FORMAT, "match_id": spec.match_id, "tournament": spec.tournament,
            "fingerprint": spec.fingerprint, "game": spec.game, "game_version": game_version,
            "engine_version": ENGINE_VERSION, "options": spec.options, "deal_index": spec.deal_index,
            "deal_seed": spec.deal_seed, "rotation": spec.rotation, "lineup": list(spec.lineup),
            "seats": list(spec.seats), "bot_commands": list(spec.bot_commands), "clock": asdict(spec.clock),
            "bot_versions": res.get("bot_versions") or [],
            "status": res["status"], "outcome": res.get("outcome"), "faults": res.get("faults") or [],
            "time_ms": res.get("time_ms"), "move_ms": res.get("move_ms") or [], "actions": res.get("actions") or []}


class Journal:
    """The results folder of one tournament.

    The journal holds an exclusive lock on ``<folder>/.lock`` until :meth:`close`, so two
    ``arena run`` on one results folder cannot both write it (readers need no lock).

    :param folder: ``<results root>/<tournament>``; created if missing.
    :raises JournalError: if another run holds the folder, or ``matches.jsonl`` has a corrupt
        line before its end (names the line).
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # results reveal finished deals, which other rotations replay: arena-only (bot_user)
            os.chmod(self.folder, 0o700)
        except OSError as e:
            raise unwritable(self.folder, e, "use {path} as a results folder") from e
        self.path = self.folder / "matches.jsonl"
        self.attempts_path = self.folder / "attempts.jsonl"
        self.records = OnDisk(self.path)
        self._afd: int | None = None
        try:
            self._lock: int | None = self._acquire_lock()
        except OSError as e:
            raise unwritable(self.folder, e, "lock {path}") from e
        try:
            self._recover()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except BaseException as e:
            os.close(self._lock)
            if isinstance(e, OSError):
                raise unwritable(self.path, e, "open {path} for writing") from e
            raise

    def _acquire_lock(self) -> int:
        path = self.folder / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 64).decode().strip() or "?"
            finally:
                os.close(fd)
            raise JournalError(f"{self.folder} is in use by another arena run (pid {holder}); wait for it to "
                               "finish, or use another --results folder") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        return fd

    # -------------------------------------------------------------- recovery

    def _recover(self) -> None:
        if not self.path.exists():
            return
        size = self.path.stat().st_size
        with open(self.path, "rb") as f:  # the last newline, read backwards (no whole-file read)
            cut, pos = 0, size
            while pos > 0:
                step = min(1 << 16, pos)
                f.seek(pos - step)
                chunk = f.read(step)
                i = chunk.rfind(b"\n")
                if i >= 0:
                    cut = pos - step + i + 1
                    break
                pos -= step
            f.seek(cut)
            tail = f.read() if cut < size else b""
        if tail:
            with open(self.folder / "matches.jsonl.partial", "ab") as f:
                f.write(tail + b"\n")
            with open(self.path, "r+b") as f:
                f.truncate(cut)
        for lineno, offset, rec in _stream(self.path, validate=False):
            mid = str(rec.get("match_id"))
            if mid in self.records:
                raise JournalError(f"{self.path}: line {lineno}: match id {mid!r} is recorded twice")
            self.records.add(mid, offset)

    # -------------------------------------------------------------- writing

    def __contains__(self, match_id: str) -> bool:
        return match_id in self.records

    def append(self, record: dict[str, Any]) -> bool:
        """Write one match record (whole line, flushed).

        :returns: False (and writes nothing) if the id is already recorded.
        :raises JournalError: if the line cannot be written (disk full, folder gone read-only):
            the file is cut back to its last whole record first, so nothing recorded is lost.
        """
        mid = record["match_id"]
        if mid in self.records:
            return False
        offset = _write_line(self._fd, orjson.dumps(record) + b"\n", self.path, len(self.records))
        self.records.add(mid, offset)
        return True

    def attempt(self, record: dict[str, Any]) -> None:
        """Append an unfinished attempt (aborted, retried) to ``attempts.jsonl``.

        :raises JournalError: if it cannot be written (as :meth:`append`).
        """
        try:
            if self._afd is None:
                self._afd = os.open(self.attempts_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            raise unwritable(self.attempts_path, e, "open {path} for writing", len(self.records)) from e
        _write_line(self._afd, orjson.dumps(record) + b"\n", self.attempts_path, len(self.records))

    def close(self) -> None:
        """Close the files and release the folder's lock."""
        for fd in (self._fd, self._afd):
            if fd is not None and fd >= 0:
                os.close(fd)
        self._fd = -1
        self._afd = None
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None

    # -------------------------------------------------------------- salt

    def salt(self, configured: str | None = None, name: str | None = None) -> str:
        """The tournament's secret salt: ``configured`` if given, else ``secret.json`` (made on first run, mode 0600).

        :param name: the tournament's name (for the message).
        :raises JournalError: if a configured salt differs from the one the results were made with.
        """
        path = self.folder / "secret.json"
        if path.exists():
            stored = json.loads(path.read_text())["salt"]
            if configured is not None and configured != stored:
                who = f"tournament {name!r}: " if name else ""
                remedy = self._remedy("remove the config's 'salt' to keep the recorded one")
                raise JournalError(f"{who}{path}: the results were made with another salt (every deal derives "
                                   f"from it); {remedy}")
            return stored
        salt = configured if configured is not None else secrets.token_hex(16)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump({"salt": salt}, f)
        except OSError as e:
            path.unlink(missing_ok=True)
            raise unwritable(path, e, "write the tournament's salt to {path}") from e
        return salt

    # -------------------------------------------------------------- checks

    def _remedy(self, first: str = "restore the settings") -> str:
        """What to do about a refused folder: ``first``, or a new table elsewhere, or clear this one."""
        return (f"{first}, or give the tournament a new name (its `name:` in the tournaments file; `arena sprt "
                f"--name NAME` for a test) or run with another --results root to start a new table, or delete "
                f"or move {self.folder} away")

    def check_settings(self, name: str, settings: dict[str, Any]) -> None:
        """Refuse a results folder whose recorded tournament had other settings.

        The recorded settings are those of ``tournament.json`` (written by every run); a folder
        without them (written by an older version) is checked record by record. A folder with
        no recorded match is never refused.

        :param name: the tournament's name (for the message).
        :param settings: :func:`arena.schedule.tournament_settings` of the config.
        :raises JournalError: naming the tournament, each changed setting (old → new) and the remedies.
        """
        if not self.records:
            return
        recorded = recorded_settings(self.folder)
        if recorded is not None:
            changed = setting_changes(recorded, settings)
        else:
            changed = []
            for rec in self.records.values():
                changed = setting_changes(record_settings(rec), settings)
                if changed:
                    break
        if changed:
            n = len(self.records)
            raise JournalError(
                f"tournament {name!r}: the {n} match{'es' if n != 1 else ''} recorded in {self.folder} "
                f"{'were' if n != 1 else 'was'} played with other settings (changed: {'; '.join(changed)}), "
                f"and one table cannot rate both: {self._remedy()}")

    def _recorded_specs(self, specs) -> Iterator[tuple[Any, dict[str, Any]]]:
        """``(spec, its record)`` for every recorded match of ``specs``, in the schedule's order. A
        lazy schedule (:class:`arena.lazy_schedule.LazySchedule`) is looked up per recorded id
        (only the recorded specs are built; the mismatches sorted into the schedule's order)."""
        if not hasattr(specs, "position"):
            for spec in specs:
                rec = self.records.get(spec.match_id)
                if rec is not None:
                    yield spec, rec
            return
        bad: list[tuple[int, str]] = []
        for mid, rec in self.records.items():
            at = specs.locate(mid)
            if at is not None and rec.get("fingerprint") != specs.fingerprint(*at):
                bad.append((specs.position(mid), mid))
        for _pos, mid in sorted(bad):
            yield specs.get(mid), self.records[mid]

    def check_fingerprints(self, specs, fields_of) -> None:
        """Refuse to resume if an existing match's defining fields changed.

        :param specs: the schedule's MatchSpecs.
        :param fields_of: ``spec -> dict`` of the fingerprinted fields.
        :raises JournalError: naming the tournament, the first changed match, its changed keys
            (old → new) and every bot whose command or version changed in any recorded match
            (``bot 'greedy': cmd [python, greedy.py] → [python, greedy.py, --x]``).
        """
        first = None
        changed: list[str] = []
        bots: dict[str, list[str]] = {}
        for spec, rec in self._recorded_specs(specs):
            if rec.get("fingerprint") == spec.fingerprint:
                continue
            new = fields_of(spec)
            for bot, parts in bot_changes(rec, new).items():
                bots.setdefault(bot, parts)
            if first is None:
                first = spec
                changed = field_changes(rec, new)
        if first is None:
            return
        named = [f"bot {b!r}: {', '.join(parts)}" for b, parts in sorted(bots.items())]
        listed = named + [c for c in changed if not (named and c == "bot_commands")]
        raise JournalError(
            f"tournament {first.tournament!r}: match {first.match_id} in {self.path} was played with "
            f"different settings (changed: {'; '.join(listed) or 'fingerprint'}); {self._remedy()}")


def unwritable(path: Path, e: OSError, doing: str, recorded: int | None = None) -> JournalError:
    """The one-paragraph error for a results folder or file the arena cannot write.

    ``doing`` names the step (``"use {path} as a results folder"``); the remedy fits the cause
    (a full disk, a path through a file, missing permissions).
    """
    import errno

    kept = (f" The {recorded} match{'es' if recorded != 1 else ''} recorded so far are kept (an unfinished "
            "line was cut off)." if recorded is not None else " Nothing was recorded there by this run.")
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        remedy = f"free disk space on that file system (`df {path.parent}`) or give another --results folder"
    elif e.errno == errno.EROFS:
        remedy = "the file system is mounted read-only: remount it writable or give another --results folder"
    elif e.errno in (errno.ENOTDIR, errno.EEXIST):
        remedy = "a file stands where a folder is needed: move it away or give another --results folder"
    else:
        remedy = "make the folder writable (or run as its owner), or give another --results folder"
    return JournalError(
        f"cannot {doing.format(path=path)}: {e.strerror or e}.{kept} Remedy: {remedy}; then run the "
        "same command again to play the rest")


def _write_line(fd: int, line: bytes, path: Path, recorded: int) -> int:
    """Append ``line`` whole to ``fd`` or not at all (a failed write is cut off again).

    :returns: the line's byte offset in the file.

    :raises JournalError: naming ``path``, with the remedies (:func:`unwritable`).
    """
    start = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(line)
    try:
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as e:
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise unwritable(path, e, "write a record to {path}", recorded) from e
    return start


#: the statuses a record can have (arena run writes them; DESIGN "Journal")
STATUSES = ("ok", "forfeit", "aborted", "disabled")


def _malformed(rec: Any) -> str | None:
    """Why a decoded journal line is not a match record (None if it is one)."""
    if not isinstance(rec, dict):
        return f"expected a JSON object, got {type(rec).__name__}"
    for key, kind in (("match_id", str), ("game", str), ("seats", list), ("deal_index", int), ("rotation", int)):
        if not isinstance(rec.get(key), kind):
            return f"key {key!r} missing or not a {kind.__name__}"
    if rec["deal_index"] < 0 or rec["rotation"] < 0:
        return "a negative 'deal_index' or 'rotation'"
    if rec.get("status", "ok") not in STATUSES:
        return f"status {rec.get('status')!r} is none of {', '.join(STATUSES)}"
    out = rec.get("outcome")
    if rec.get("status") != "aborted":
        n = len(rec["seats"])
        if not (isinstance(out, dict) and isinstance(out.get("ranks"), list) and len(out["ranks"]) == n):
            return "key 'outcome' missing or without one rank per seat"
        ranks = out["ranks"]
        if n and not (all(type(r) is int for r in ranks) and 0 <= min(ranks) and max(ranks) < n):
            return f"ranks {ranks[:8]!r} are not whole numbers from 0 (first) to {n - 1}"
    return _uneven_sides(rec)


def _uneven_sides(rec: dict[str, Any]) -> str | None:
    """Why a partnership record's sides cannot be rated (None if they can): every side must hold
    the same number of distinct bots and no bot two sides — one bot per side (``partners: self``)
    or disjoint teams (``partners: mixed``), the only seatings the schedule makes; the ratings and
    the batch fit model a side as its distinct bots. A game the registry does not know is left to
    the reader (:meth:`MatchRecord.from_json` names it)."""
    seats = rec["seats"]
    try:
        teams = teams_of(rec["game"], len(seats))
    except Exception:
        return None
    if all(len(t) < 2 for t in teams):
        return None
    sides = [{str(seats[s]) for s in t} for t in teams]
    if len({len(s) for s in sides}) == 1 and sum(map(len, sides)) == len(set().union(*sides)):
        return None
    shown = " vs ".join("(" + ", ".join(str(seats[s]) for s in t) + ")" for t in teams)
    return (f"sides {shown} differ in their number of bots or share a bot (a partnership record seats "
            "one bot per side, partners: self, or disjoint teams, partners: mixed)")


def parse_lines(path: Path, data: bytes, validate: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for each non-blank line of journal ``data`` read from ``path``.

    :param validate: also check each record's keys (:func:`_malformed`); the writer's own
        journal (:class:`Journal`) only needs the JSON and the match id.
    :raises JournalError: naming the file and line of a line that is not JSON (or, with
        ``validate``, not a match record).
    """
    for lineno, line in enumerate(data.splitlines(), 1):
        if line.strip():
            yield lineno, parse_line(path, lineno, line, validate)


def parse_line(path: Path, lineno: int, line: bytes, validate: bool = True) -> dict[str, Any]:
    """One non-blank journal line as a record (see :func:`parse_lines`).

    :raises JournalError: naming ``path`` and ``lineno`` for a line that is not JSON (or, with
        ``validate``, not a match record).
    """
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise JournalError(f"{path}: line {lineno} is not valid JSON ({e}); move the file aside or fix "
                           "the line") from e
    problem = _malformed(rec) if validate else None
    if problem:
        raise JournalError(f"{path}: line {lineno}: {problem}; move the file aside or fix the line")
    return rec


class OnDisk(Mapping[str, dict[str, Any]]):
    """The journal's records as a read-only mapping ``match id -> record dict``, kept on disk.

    Memory per record: its id (UTF-8, in one blob), one byte offset (``array('q')``) and its
    id's 64-bit hash in an :class:`arena.int_index.IntIndex` (~70 bytes a record at 1M, not a
    dict of strings at ~160), not the record: a record is parsed again from ``matches.jsonl``
    when asked for (:meth:`__getitem__`), and :meth:`items` streams the file in order. This is
    what keeps the driver flat on long runs. A hash shared by two ids is resolved by comparing
    the ids.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._ids = bytearray()
        self._id_end = array("q")
        self._offsets = array("q")
        self._by_hash = IntIndex()  # hash(id) -> its row
        self._shared: dict[int, list[int]] = {}  # hash -> further rows with that hash (rare)

    def _id(self, row: int) -> bytes:
        return bytes(self._ids[self._id_end[row - 1] if row else 0:self._id_end[row]])

    def _row(self, match_id: object) -> int:
        """The row of ``match_id``, or -1."""
        if not isinstance(match_id, str):
            return -1
        h = hash(match_id)
        row = self._by_hash.get(h)
        if row is None:
            return -1
        key = match_id.encode("utf-8", "surrogatepass")
        if self._id(row) == key:
            return row
        return next((r for r in self._shared.get(h, ()) if self._id(r) == key), -1)

    def add(self, match_id: str, offset: int) -> None:
        """Index one record written at byte ``offset`` of the file (an id not indexed yet)."""
        row = len(self._offsets)
        h = hash(match_id)
        if self._by_hash.get(h) is None:
            self._by_hash[h] = row
        else:
            self._shared.setdefault(h, []).append(row)
        self._ids += match_id.encode("utf-8", "surrogatepass")
        self._id_end.append(len(self._ids))
        self._offsets.append(offset)

    def __contains__(self, match_id: object) -> bool:
        return self._row(match_id) >= 0

    def __len__(self) -> int:
        return len(self._offsets)

    def __iter__(self) -> Iterator[str]:
        for row in range(len(self._offsets)):
            yield self._id(row).decode("utf-8", "surrogatepass")

    def __getitem__(self, match_id: str) -> dict[str, Any]:
        i = self._row(match_id)
        if i < 0:
            raise KeyError(match_id)
        with open(self.path, "rb") as f:
            f.seek(self._offsets[i])
            return orjson.loads(f.readline())

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:  # type: ignore[override]
        """``(match id, record)`` in file order, streamed (a record indexed twice: its first line)."""
        for _lineno, offset, rec in _stream(self.path, validate=False):
            mid = str(rec.get("match_id"))
            i = self._row(mid)
            if i >= 0 and self._offsets[i] == offset:
                yield mid, rec

    def values(self) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        """The records in file order, streamed."""
        return (rec for _mid, rec in self.items())


def _stream(path: Path, validate: bool = True) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """``(line number, byte offset, record)`` for each whole non-blank line of ``path``, read line
    by line (a partial last line is left out).

    :raises JournalError: as :func:`parse_lines`.
    """
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        offset = 0
        for lineno, line in enumerate(f, 1):
            start, offset = offset, offset + len(line)
            if not line.endswith(b"\n"):
                return
            if not line.strip():
                continue
            yield lineno, start, parse_line(path, lineno, line, validate)


def read_records(folder: str | Path) -> list[MatchRecord]:
    """The complete records of ``folder/matches.jsonl`` as :class:`arena.record.MatchRecord`
    values (read-only; safe while a run writes it).

    A partial last line (a match being written, or a killed driver's) is ignored; a repeated
    match id keeps its first record.

    :raises JournalError: naming the file and line of a corrupt record.
    """
    return list(iter_records(folder))


def iter_records(folder: str | Path) -> Iterator[MatchRecord]:
    """:func:`read_records`, streamed: the file is read line by line, each dict dropped once typed.

    :raises JournalError: as :func:`read_records`.
    """
    for _raw, rec in iter_raw_records(folder):
        yield rec


def iter_raw_records(folder: str | Path, moves: bool = True) -> Iterator[tuple[dict[str, Any], MatchRecord]]:
    """``(line dict, record)`` for each complete record of ``folder/matches.jsonl``, streamed (as
    :func:`iter_records`; the dict is only valid until the next one is asked for).

    :param moves: keep the decision times in the record (False: only in the dict).
    :raises JournalError: as :func:`read_records`.
    """
    path = Path(folder) / "matches.jsonl"
    seen: set[str] = set()
    for lineno, _offset, rec in _stream(path):
        mid = str(rec.get("match_id"))
        if mid in seen:
            continue
        seen.add(mid)
        try:
            yield rec, MatchRecord.from_json(rec, moves)
        except CardArenaError as e:  # an unknown game, a player count the game does not have
            raise JournalError(f"{path}: line {lineno}: {e}; move the file aside or fix the line") from e
