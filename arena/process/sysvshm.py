"""System V shared memory a bot holds: segments outlive every mapping (``shmdt``), so their
pages are resident in none of the bot's processes and ``max_rss_mb`` must count them apart.

In a sandbox the bot has its own IPC namespace: every segment in it is the bot's, read from
``/proc/sysvipc/shm`` through util-linux ``nsenter`` (the file lists the reader's namespace,
whatever procfs it is read from). Without a sandbox the bot shares the arena's namespace:
the segments its known processes created (``cpid``) are its. :class:`ShmGauge` keeps the figure
of one bot.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Collection
from typing import IO

log = logging.getLogger(__name__)

#: the segment table, one line per segment after the header.
SHM_TABLE = "/proc/sysvipc/shm"
#: longest wait for ``nsenter … cat``, seconds.
READ_TIMEOUT_S = 2.0


def _ns(pid: int | str, kind: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return None


def parse_table(text: str) -> list[tuple[int, int]]:
    """``(bytes, cpid)`` of every segment in a ``/proc/sysvipc/shm`` text: resident plus
    swapped bytes (``rss`` + ``swap`` columns; an untouched segment holds none), creator pid."""
    lines = text.splitlines()
    if not lines:
        return []
    head = lines[0].split()
    try:
        i_rss, i_swap, i_cpid = head.index("rss"), head.index("swap"), head.index("cpid")
    except ValueError:
        return []
    out = []
    for line in lines[1:]:
        f = line.split()
        try:
            out.append((int(f[i_rss]) + int(f[i_swap]), int(f[i_cpid])))
        except (IndexError, ValueError):
            continue
    return out


def _nsenter_argv(pid: int) -> list[str] | None:
    """``nsenter … cat /proc/sysvipc/shm`` in ``pid``'s IPC namespace (None without util-linux).
    Not root: the bot's user namespace is entered first (its owner has the capability there)."""
    nsenter, cat = shutil.which("nsenter"), shutil.which("cat")
    if not nsenter or not cat:
        return None
    argv = [nsenter, f"--ipc=/proc/{pid}/ns/ipc"]
    if os.geteuid() != 0 and _ns(pid, "user") != _ns("self", "user"):
        argv[1:1] = [f"--user=/proc/{pid}/ns/user", "--preserve-credentials"]
    return [*argv, cat, SHM_TABLE]


class ShmGauge:
    """System V shared memory held by one bot, polled without blocking the arena.

    :meth:`update` returns the last figure read and starts the next read: in a sandbox, one
    ``nsenter … cat`` (about 10 ms, run in the background into a scratch file; a read still
    running after :data:`READ_TIMEOUT_S` is killed and counts 0); without one, the arena's own
    table (segments the bot's processes created).

    :ivar bytes: the last figure, bytes (resident plus swapped pages of the segments).
    """

    def __init__(self) -> None:
        self.bytes = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None
        self._since = 0.0

    def update(self, pids: Collection[int]) -> int:
        """Collect a finished read, start the next one for the bot of ``pids``; the figure, bytes."""
        if self._proc is not None:
            if self._proc.poll() is None:
                if time.monotonic() - self._since < READ_TIMEOUT_S:
                    return self.bytes
                self._end_read()
                self.bytes = 0
            else:
                self._proc = None
                assert self._out is not None
                self._out.seek(0)
                self.bytes = sum(b for b, _ in parse_table(self._out.read().decode("ascii", "replace")))
        own = _ns("self", "ipc")
        inside = next((p for p in pids if _ns(p, "ipc") not in (None, own)), None)
        if inside is None:
            self.bytes = _own_namespace_bytes(pids)
            return self.bytes
        argv = _nsenter_argv(inside)
        if argv is None:
            return self.bytes
        if self._out is None:
            self._out = tempfile.TemporaryFile(prefix="cardarena-shm-")
        self._out.seek(0)
        self._out.truncate()
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self._out,
                                          stderr=subprocess.DEVNULL, close_fds=True)
            self._since = time.monotonic()
        except OSError as e:
            log.debug("nsenter for pid %d failed: %s", inside, e)
        return self.bytes

    def _end_read(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def close(self) -> None:
        """End a read still running; drop the scratch file."""
        self._end_read()
        if self._out is not None:
            self._out.close()
            self._out = None


def _own_namespace_bytes(pids: Collection[int]) -> int:
    """Bytes of the segments in the arena's own IPC namespace created by one of ``pids``."""
    try:
        with open(SHM_TABLE, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return 0
    mine = set(pids)
    return sum(b for b, cpid in parse_table(text) if cpid in mine)
