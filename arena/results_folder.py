"""What the arena checks in a results folder before it trusts or writes it (docs/security.md).

A results folder may come from someone else (a student sends one, a shared folder): reading it
must not write outside it nor fail with a traceback. :func:`refuse_links` refuses symbolic links
among the folder's entries and in its page folders (a planted ``leaderboard.csv -> ~/.bashrc``
would be written through); :func:`check_meta` checks ``tournament.json``'s fields that name files
or size the tables (bot names become ``bots/<name>.html``) against the configuration's own rules.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import zipfile
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.specs import BOT_NAME

#: the sub-folders the arena writes into (pages, logs)
SUBFOLDERS = ("bots", "replays", "logs")
#: the largest field the tables are built for (pairwise matrices of bots² numbers)
MAX_BOTS = 10_000
_NAME = re.compile(BOT_NAME)


def refuse_links(folder: str | Path, inside: tuple[str, ...] = ()) -> None:
    """Refuse a results folder holding a symbolic link (the folder itself may be one).

    Checked: every entry of ``folder`` (its :data:`SUBFOLDERS` among them) and of the sub-folders
    named in ``inside`` — those the caller writes into (``logs/`` holds a file per match: it is
    scanned by a run, not by every table).

    :raises ArenaError: naming the first link found and the remedy.
    """
    root = Path(folder)
    dirs = [root, *(root / s for s in inside)]
    for d in dirs:
        try:
            entries = list(os.scandir(d))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as e:
            raise ArenaError(f"cannot read the results folder {d}: {e.strerror or e}") from e
        for entry in entries:
            if entry.is_symlink():
                raise ArenaError(
                    f"{entry.path} is a symbolic link (to {os.readlink(entry.path)}): the arena writes into this "
                    "results folder and would write through it. Remove the link (or copy the folder's regular "
                    "files into a new folder), then run the command again")
            if d == root:
                _vet_entry(entry)


def _vet_entry(entry: os.DirEntry) -> None:
    """Drop a cache the arena could not read safely.

    A ``checkpoint*`` cache that is not a regular file (a FIFO would hang its read) or a ``.npz``
    cache holding a compressed member (a small file inflating to gigabytes in ``np.load``) is
    deleted, so it is rebuilt from ``matches.jsonl``; a ``checkpoint*`` folder (at a cache's or its
    temporary file's name every save would fail) is removed if empty (:func:`_drop_dir`). The other files are checked where they are
    read (``tournament.json``: :func:`read_meta`; the journal: :mod:`arena.journal`) or written
    (:func:`write_file`).

    :raises ArenaError: naming the cache, when it cannot be deleted (or the folder holds files).
    """
    kind = entry.stat(follow_symlinks=False).st_mode
    name = entry.name
    if not name.startswith("checkpoint"):
        return
    if stat.S_ISDIR(kind):
        _drop_dir(entry.path)
        return
    if stat.S_ISREG(kind) and (not name.endswith(".npz") or npz_stored(entry.path)):
        return
    try:
        os.unlink(entry.path)
    except OSError as e:
        raise ArenaError(f"{entry.path} is not a cache the arena can read (a FIFO, a device or a compressed "
                         f"archive) and cannot be deleted ({e.strerror or e}): delete it by hand (it is "
                         "rebuilt from matches.jsonl)") from e


def _drop_dir(path: str) -> None:
    """Remove the folder ``path`` that has a cache's name (``checkpoint*``: a cache or its temporary
    file could not be written there); an empty one is removed, one holding files is refused.

    :raises ArenaError: naming the folder and the remedy, when it is not empty or cannot be removed.
    """
    try:
        os.rmdir(path)
    except OSError as e:
        raise ArenaError(f"{path} is a folder, but the arena keeps its caches and their temporary files under "
                         f"names starting with 'checkpoint' in this results folder and cannot remove it "
                         f"({e.strerror or e}). Move it out of the results folder (or rename it so it does not "
                         "start with 'checkpoint'), then run the command again") from e


def discard(path: str | Path) -> None:
    """Delete the file ``path`` if it can be (a cache's temporary file after a failed save); never
    raises — a folder of that name, a read-only folder or a vanished file leave things as they are
    (the folder check, :func:`refuse_links`, removes ``checkpoint*`` folders before the next run)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def npz_stored(path: str | Path) -> bool:
    """Whether the ``.npz`` at ``path`` holds only uncompressed (STORED) members: then ``np.load``
    inflates nothing, and reads no more than the file's own size.  False if it is no zip archive."""
    try:
        with zipfile.ZipFile(path) as z:
            return all(i.compress_type == zipfile.ZIP_STORED and i.file_size == i.compress_size for i in z.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return False


def write_file(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` in a results folder, never through a link.

    The file is created or truncated with ``O_NOFOLLOW`` (a planted ``logs/<bot>/<match>.stderr ->
    ~/.bashrc`` is refused, not written through) and must be a regular file (a FIFO is refused,
    not waited on); its folder must be a real folder (:func:`make_dir`).

    :raises ArenaError: ``path`` or its folder is a link or not a regular file / folder.
    :raises OSError: any other failure to write (a full disk).
    """
    path = Path(path)
    _check_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise _not_regular(path) from e
        raise
    with os.fdopen(fd, "wb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _not_regular(path)
        os.set_blocking(fd, True)
        f.truncate(0)
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def make_dir(path: str | Path) -> Path:
    """Create the folder ``path`` in a results folder (parents too) and check it is no link.

    :raises ArenaError: ``path`` is a symbolic link or not a folder.
    """
    path = Path(path)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        pass  # a file or a dangling link there: reported just below
    _check_dir(path)
    return path


def _check_dir(path: Path) -> None:
    """Raise :class:`ArenaError` unless ``path`` is a real folder (``lstat``: a link is refused)."""
    if not stat.S_ISDIR(os.lstat(path).st_mode):
        raise _not_regular(path)


def _not_regular(path: Path) -> ArenaError:
    """The error for a link, FIFO or other non-regular entry where the arena writes."""
    what = "a symbolic link" if path.is_symlink() else "not a regular file or folder"
    return ArenaError(f"{path} is {what}: the arena writes there and will not write through it or wait on it. "
                      "Remove it (or copy the folder's regular files into a new folder), then run the command again")


def open_regular(path: str | Path) -> Any:
    """``path`` opened for reading as a binary file, if it is a regular file.

    Opened without blocking (a FIFO is not waited on), then checked with ``fstat``.

    :raises OSError: it cannot be opened, or is no regular file (``EINVAL``): callers reading
        a cache treat it as absent.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` is a regular file itself (``lstat``: no link, FIFO, device or folder)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_meta(path: Path) -> dict[str, Any]:
    """``tournament.json`` at ``path``, parsed and checked (:func:`check_meta`).

    :raises ArenaError: unreadable, not JSON, or a field fails its check.
    """
    if path.exists() and not is_regular(path):
        raise ArenaError(f"{path} is not a regular file (a link, FIFO or device): the arena will not read it. "
                         "Replace it with the tournament.json `arena run` wrote, or run the tournament again "
                         "into a new folder (its matches.jsonl can be copied there)")
    try:
        meta = json.loads(path.read_bytes())
    except OSError as e:
        raise ArenaError(f"cannot read {path}: {e.strerror or e}") from e
    except ValueError as e:
        raise ArenaError(f"{path} is not valid JSON ({e}); it is written by `arena run`: run the tournament "
                         "again into this folder to rewrite it (its matches.jsonl is kept)") from e
    check_meta(meta, path)
    return meta


def check_meta(meta: Any, path: Path | str = "tournament.json") -> None:
    """Check the fields of ``tournament.json`` that name files or size the tables.

    ``name`` and every bot name follow the configuration's name rule (a letter or digit, then
    letters, digits, ``_.-``); ``bots`` a list of at most :data:`MAX_BOTS` distinct names;
    ``players`` a whole number ≥ 1; ``ratings``' ``mu``, ``sigma``, ``tau``,
    ``draw_probability`` finite numbers in their ranges (or ``"default"`` / ``"auto"``).

    :raises ArenaError: naming the file, the key and the remedy.
    """
    def bad(key: str, why: str) -> ArenaError:
        """The error naming ``path``, the ``key`` and ``why``, with the remedy."""
        return ArenaError(f"{path}: {key} {why}. This file is written by `arena run`; a results folder from "
                          "elsewhere may have been edited: rerun the tournament into a new folder "
                          "(its matches.jsonl can be copied there)")

    if not isinstance(meta, dict):
        raise bad("the top level", "is not an object")
    name = meta.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise bad("'name'", f"is {name!r}, not a tournament name (letters, digits, '_.-')")
    bots = meta.get("bots")
    if not isinstance(bots, list) or not all(isinstance(b, str) for b in bots):
        raise bad("'bots'", "is not a list of bot names")
    if len(bots) > MAX_BOTS:
        raise bad("'bots'", f"lists {len(bots)} bots; the tables are built for at most {MAX_BOTS}")
    for b in bots:
        if not _NAME.match(b):
            raise bad("'bots'", f"holds {b!r}, not a bot name (a letter or digit, then letters, digits, '_.-')")
    if len(set(bots)) != len(bots):
        raise bad("'bots'", "names a bot twice")
    players = meta.get("players")
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise bad("'players'", f"is {players!r}, not a whole number >= 1")
    _check_ratings(meta.get("ratings", {}), bad)


def _check_ratings(r: Any, bad: Any) -> None:
    """The ``ratings`` block of :func:`check_meta`."""
    if not isinstance(r, dict):
        raise bad("'ratings'", "is not an object")

    def number(key: str, low: float, high: float, words: tuple[str, ...] = ()) -> None:
        """Raise :func:`bad` unless ``r[key]`` is absent, one of ``words``, or finite in ``[low, high]``."""
        if key not in r or r[key] in words:
            return
        v = r[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not low <= v <= high:
            alt = "".join(f" or {w!r}" for w in words)
            raise bad(f"'ratings.{key}'", f"is {v!r}, not a number in [{low:g}, {high:g}]{alt}")

    number("mu", -1e6, 1e6)
    number("sigma", 1e-6, 1e6)
    number("tau", 0.0, 1e6, ("default",))
    number("draw_probability", 0.0, 0.999, ("auto",))
