"""System V shared memory a bot holds: segments outlive every mapping (``shmdt``), so their
pages are resident in none of the bot's processes and ``max_rss_mb`` must count them apart.

In a sandbox the bot has its own IPC namespace: every segment in it is the bot's, read from
``/proc/sysvipc/shm`` through util-linux ``nsenter`` (the file lists the reader's namespace,
whatever procfs it is read from). Without a sandbox the bot shares the arena's namespace:
the segments its known processes created (``cpid``) are its.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Collection

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


def _read_in_namespace(pid: int) -> str:
    """``/proc/sysvipc/shm`` as seen in ``pid``'s IPC namespace ("" when it cannot be read).
    Not root: the bot's user namespace is entered first (its owner has the capability there)."""
    nsenter, cat = shutil.which("nsenter"), shutil.which("cat")
    if not nsenter or not cat:
        return ""
    argv = [nsenter, f"--ipc=/proc/{pid}/ns/ipc"]
    if os.geteuid() != 0 and _ns(pid, "user") != _ns("self", "user"):
        argv[1:1] = [f"--user=/proc/{pid}/ns/user", "--preserve-credentials"]
    try:
        r = subprocess.run(argv + [cat, SHM_TABLE], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=READ_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        log.debug("nsenter for pid %d failed: %s", pid, e)
        return ""
    if r.returncode != 0:
        log.debug("nsenter for pid %d: %s", pid, r.stderr.decode("utf-8", "replace").strip())
        return ""
    return r.stdout.decode("ascii", "replace")


def sysv_shm_bytes(pids: Collection[int]) -> int:
    """Bytes of System V shared memory held by the bot whose processes are ``pids``.

    The first of ``pids`` in an IPC namespace other than the arena's names the bot's own: every
    segment there counts. If none is (no sandbox), the segments created by one of ``pids``
    count. Unreadable tables count 0.
    """
    own = _ns("self", "ipc")
    for pid in pids:
        ns = _ns(pid, "ipc")
        if ns is not None and ns != own:
            return sum(b for b, _ in parse_table(_read_in_namespace(pid)))
    try:
        with open(SHM_TABLE, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return 0
    mine = set(pids)
    return sum(b for b, cpid in parse_table(text) if cpid in mine)
