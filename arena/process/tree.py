"""The processes of one bot as the kernel sees them: walking the tree, pausing it, what it holds.

Read from ``/proc`` of the arena's PID namespace (a sandboxed bot's processes are there too,
under other numbers):

* :func:`walk` — the leader and every descendant, through the ``/proc/<pid>/task/<tid>/children``
  lists (a few small reads; no full ``/proc`` scan).
* :func:`stop_tree` / :func:`cont_tree` — SIGSTOP every process of a bot while it is not its
  turn and SIGCONT before its next message (``MatchSpec.pause_idle``, ``preset: competition``):
  busy children cannot take the CPU from the opponent. The tree is walked again until a walk
  made while every process found is stopped finds no new one (a ``children`` list read while its
  process runs can miss a child just forked: one walk let such children run on), and a process
  still running after a walk is signalled again (a tracer in the tree can swallow one stop).
* :func:`memfd_bytes` — memory held in ``memfd`` files open or mapped by the bot (not resident
  in any process until touched, and not on a capped tmpfs), counted in ``max_rss_mb``.
* :func:`pipe_holder` — which process of the bot itself (not the sandbox tool or the
  namespace's init, which keep the pipes open) still holds the arena's stdout pipe, if any: a bot
  that closed its stdout and stays alive is then noticed at once, not at its time-out.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterable


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's), [] if it is gone or unreadable."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return out


def walk(root: int, extra: Iterable[int] = ()) -> list[int]:
    """``root`` and its descendants, then ``extra`` pids (e.g. orphans re-parented to the
    arena) and their descendants, each once, parents before children."""
    seen: set[int] = set()
    out: list[int] = []
    todo = [root, *extra]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        out.append(pid)
        todo += children(pid)
    return out


#: walks of the tree :func:`stop_tree` makes at most (each stops what the last one missed)
STOP_PASSES = 20


def stop_tree(root: int, extra: Iterable[int] = ()) -> list[int]:
    """SIGSTOP ``root``, every descendant and ``extra``, until a walk of the tree made while
    every process found is stopped (state ``T``, :func:`wait_stopped`) finds no new one.

    One top-down walk is not enough: a ``children`` list read while its process still runs (a
    signalled process stops only when next scheduled) or while children come and go can miss
    one, and a child forked in that window runs on, forking in its turn. Once every process found
    is stopped no new one can appear, and the lists of stopped processes are exact, so the walk
    that signals nobody new proves the tree stopped. A process still running after a walk is
    signalled again: a tracer in the tree (ptrace) can swallow the stop of the process it traces,
    but not once it is stopped itself, and a traced process then waits in state ``t``. At most
    :data:`STOP_PASSES` walks (a tree that keeps outgrowing them is left partly running; its CPU
    time is still charged to it).

    :returns: the pids signalled (for :func:`cont_tree`)."""
    seen: set[int] = set()
    out: list[int] = []
    for _ in range(STOP_PASSES):
        new = _stop_unseen([root, *extra], seen, out)
        if wait_stopped(out) and not new:
            break
        for pid in out:  # still running: its stop was late, or swallowed by a tracer (ptrace)
            if _state(pid) not in b"TtZX":
                try:
                    os.kill(pid, signal.SIGSTOP)
                except (ProcessLookupError, PermissionError):
                    pass
    return out


def _stop_unseen(todo: list[int], seen: set[int], out: list[int]) -> int:
    """Walk from ``todo`` (every process's children listed, stopped or not), SIGSTOP each pid not
    in ``seen`` and add it to ``seen`` and ``out``. :returns: how many were signalled now."""
    walked: set[int] = set()
    new = 0
    while todo:
        pid = todo.pop()
        if pid in walked:
            continue
        walked.add(pid)
        if pid not in seen:
            seen.add(pid)
            try:
                os.kill(pid, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                continue
            out.append(pid)
            new += 1
        todo += children(pid)
    return new


def wait_stopped(pids: Iterable[int], timeout_s: float = 0.05) -> bool:
    """Wait until every pid of ``pids`` is stopped (state ``T``/``t``), a zombie or gone: a
    signalled process stops only once it is next scheduled, which on a loaded machine can
    take a few milliseconds during which it may still run. :returns: False on time-out."""
    todo = list(pids)
    deadline = time.perf_counter() + timeout_s
    while True:
        todo = [pid for pid in todo if _state(pid) not in b"TtZX"]
        if not todo:
            return True
        if time.perf_counter() >= deadline:
            return False
        time.sleep(0.0002)


def _state(pid: int) -> bytes:
    """The one-letter state of ``pid`` (``/proc/<pid>/stat``), ``X`` if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return b"X"


def cont_tree(pids: Iterable[int]) -> None:
    """SIGCONT every pid of ``pids`` (gone ones are skipped)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except (ProcessLookupError, PermissionError):
            pass


def memfd_paths(pid: int, maps: bool) -> list[str]:
    """Paths through which the arena can ``stat`` the memfd files of ``pid``: its open
    descriptors (``/proc/<pid>/fd/N``) and, with ``maps``, its mappings of memfds whose
    descriptor is closed (``/proc/<pid>/map_files/<range>``; needs root, else skipped)."""
    out: list[str] = []
    base = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(base)
    except OSError:
        return out
    files: set[tuple[int, int]] = set()  # one path per file (descriptors too: a dup is the same file)
    for fd in fds:
        try:
            if os.readlink(f"{base}/{fd}").startswith("/memfd:"):
                st = os.stat(f"{base}/{fd}")
                if (st.st_dev, st.st_ino) not in files:
                    files.add((st.st_dev, st.st_ino))
                    out.append(f"{base}/{fd}")
        except OSError:
            pass
    if maps:
        try:
            with open(f"/proc/{pid}/maps", "rb") as f:
                data = f.read()
        except OSError:
            return out
        seen: set[tuple[bytes, bytes]] = set()
        # a memfd mapping's path field *starts* with /memfd: (a file named /dev/shm/memfd:x is
        # not one); one path per file, however often it is mapped (60,000 mappings of one file
        # made each check stat 60,000 paths: seconds on the arena's loop, adversarial trial)
        for addr, dev, inode in _MEMFD_MAP.findall(data):
            if (dev, inode) not in seen:
                seen.add((dev, inode))
                out.append(f"/proc/{pid}/map_files/{addr.decode()}")
    return out


#: a ``/proc/<pid>/maps`` line of a memfd: address range, device, inode, path ``/memfd:...``
_MEMFD_MAP = re.compile(rb"^(\S+) \S+ \S+ (\S+) (\d+) +/memfd:", re.M)


def memfd_bytes(paths: Iterable[str]) -> int:
    """Bytes allocated to the distinct files behind ``paths`` (``st_blocks`` × 512, each
    inode once); unreadable paths are skipped."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key not in seen:
            seen.add(key)
            total += st.st_blocks * 512
    return total


def in_bot(pid: int) -> bool | None:
    """Whether ``pid`` is one of a sandboxed bot's own processes: in a child PID namespace
    and not its init (the sandbox tool's ``bwrap`` or ``sh``). None if it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"NSpid:"):
                    ids = line.split()[1:]
                    return len(ids) > 1 and ids[-1] != b"1"
    except OSError:
        return None
    return False


def pipe_holder(pids: Iterable[int], ino: int, fds: Iterable[str] | None = None) -> int | None:
    """The first of ``pids`` with a descriptor (any, or only those named in ``fds``) on the
    pipe with inode ``ino``, or None."""
    target = f"pipe:[{ino}]"
    for pid in pids:
        base = f"/proc/{pid}/fd"
        try:
            names = os.listdir(base) if fds is None else fds
        except OSError:
            continue
        for fd in names:
            try:
                if os.readlink(f"{base}/{fd}") == target:
                    return pid
            except OSError:
                pass
    return None
