"""Reaping: no bot process, descendant or zombie outlives its use.

The arena process makes itself a child subreaper (:func:`make_subreaper`), so descendants
of a bot that escape its session (``setsid`` plus a double fork) are re-parented to the
arena rather than to init, where :func:`sweep_orphans` finds, kills and reaps them (by
their ``HOME``, which lies under a bot working-directory root). :func:`kill_all` ends
every bot process of this arena process (test finalizers, interpreter exit).

Under Ray the worker ignores SIGCHLD, so the kernel would reap bots by itself and every
exit would read "code 0": :func:`default_sigchld` gives SIGCHLD its default disposition
for the duration of a batch.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from arena.process.workdirs import is_bot_home, live_workdirs, remove_workdir

#: ``prctl`` option that makes the caller a child subreaper (linux/prctl.h).
PR_SET_CHILD_SUBREAPER = 36


class _Killable(Protocol):
    pid: int

    def kill(self) -> None:
        """End the process (SIGKILL)."""


class _Tracker:
    """Which bot processes this arena process started, and what they spawned.

    :ivar leaders: pids of bot processes spawned and not yet killed (never swept as orphans).
    :ivar descendants: pids ever seen as descendants of a bot (their zombies may be reaped).
    :ivar live: the bot processes not yet killed (weakly held).
    :ivar subreaper: whether :func:`make_subreaper` succeeded.
    """

    def __init__(self) -> None:
        self.leaders: set[int] = set()
        self.descendants: set[int] = set()
        self.live: weakref.WeakSet[_Killable] = weakref.WeakSet()
        self.subreaper = False

    def started(self, proc: _Killable) -> None:
        """Record a bot process just spawned."""
        self.leaders.add(proc.pid)
        self.live.add(proc)

    def ended(self, proc: _Killable) -> None:
        """Record a bot process killed and reaped."""
        self.leaders.discard(proc.pid)
        self.live.discard(proc)


TRACKER = _Tracker()


def live_leaders() -> set[int]:
    """Pids of the bot processes (the spawned leaders) currently alive in this process."""
    return set(TRACKER.leaders)


def make_subreaper() -> bool:
    """Make this process a child subreaper (Linux), so orphaned bot descendants are re-parented
    to it and can be found, killed and reaped. Idempotent; returns whether it succeeded."""
    if TRACKER.subreaper:
        return True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        TRACKER.subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        TRACKER.subreaper = False
    return TRACKER.subreaper


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``/proc/<pid>/stat`` state).

    The question while waiting for a signalled process to die: a zombie has died, only its
    exit status is left (to be reaped). Contrast :func:`arena.process.workdirs.pid_exists`.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def reap(pid: int) -> None:
    """Collect the exit status of child ``pid`` if it has exited (never blocks)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass


def reap_all(pids: set[int], timeout_s: float = 1.0) -> set[int]:
    """Collect the exit status of every child in ``pids`` that was just sent SIGKILL, waiting
    up to ``timeout_s`` in all for those still dying (a SIGKILL takes effect asynchronously:
    a non-blocking :func:`reap` right after it can come too early and leave a zombie, e.g. the
    sandbox's forked child re-parented to this subreaper when its leader died first). Pids
    that are not (or no longer) this process's children are skipped at once.

    :returns: the pids still not collected at the deadline.
    """
    left = set(pids)
    deadline = time.monotonic() + timeout_s
    while left:
        for pid in list(left):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid  # not our child (its own parent reaps it) or already collected
            except OSError:
                done = pid
            if done == pid:
                left.discard(pid)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.002)
    return left


def sweep_orphans(root: str | None = None) -> list[int]:
    """Kill and reap orphaned bot descendants re-parented to this (subreaper) process.

    An orphan is recognised as a bot's by its ``HOME``, which lies under a bot
    working-directory root of an arena (``root``, default any
    ``<tmp>/cardarena-bots-*`` folder: roots are removed and re-made between batches); a
    zombie as a bot's when it was seen as a bot's descendant or is a ``bwrap`` this process did
    not spawn (a sandbox's inner process). Only this process's own children are looked at.

    :returns: the pids killed.
    """
    killed: list[int] = []
    try:
        import psutil
        children = psutil.Process(os.getpid()).children()
    except Exception:  # noqa: BLE001
        return killed
    for child in children:
        if child.pid in TRACKER.leaders:
            continue
        try:
            env = child.environ()
        except Exception:  # noqa: BLE001 - gone or not ours
            env = {}
        try:
            zombie = child.status() == "zombie"
        except Exception:  # noqa: BLE001
            zombie = False
        home = env.get("HOME", "")
        ours = home.startswith(root + os.sep) if root else is_bot_home(home)
        if zombie and child.pid not in TRACKER.descendants:
            try:  # bwrap's inner process, re-parented here when the outer one exited without
                # reaping it (a bot that died at start-up: never seen as a descendant)
                sandbox_tool = child.name() == "bwrap"
            except Exception:  # noqa: BLE001 - gone
                sandbox_tool = False
            ours = ours or sandbox_tool
        if (zombie and child.pid in TRACKER.descendants) or ours:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.waitpid(child.pid, 0)
                killed.append(child.pid)
            except ChildProcessError:
                pass
            TRACKER.descendants.discard(child.pid)
    return killed


def kill_all() -> int:
    """Kill (and reap) every bot process of this arena process still running, then sweep
    orphans; for finalizers (a test that failed half-way, interpreter exit).

    :returns: how many processes were killed.
    """
    procs = list(TRACKER.live)
    for p in procs:
        p.kill()
    sweep_orphans()
    return len(procs)


def sigchld_ignored() -> bool:
    """Whether this process ignores SIGCHLD, as the kernel sees it (``SigIgn`` of
    ``/proc/self/status``): Ray's core worker ignores it with ``sigaction`` behind Python's
    back, so :func:`signal.getsignal` still says ``SIG_DFL`` there."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("SigIgn:"):
                    return bool((int(line.split()[1], 16) >> (signal.SIGCHLD - 1)) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN


class _SigchldGuard:
    """Nesting count of :func:`default_sigchld` blocks (changed under :attr:`lock`)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.changed = False


_SIGCHLD = _SigchldGuard()


@contextmanager
def default_sigchld() -> Iterator[bool]:
    """Within the block, SIGCHLD has its default disposition, so exit codes of child
    processes can be read.

    With SIGCHLD ignored (Ray workers), the kernel reaps children by itself and
    ``wait()`` reports every bot as "exited with code 0", losing crash codes and signals.
    Only the main thread may change dispositions: elsewhere this does nothing. Nested and
    interleaved blocks (several live batch generators) are counted: the previous
    disposition (ignored) is restored when the last one ends.

    :yields: whether SIGCHLD is at its default within the block.
    """
    g = _SIGCHLD
    if threading.current_thread() is not threading.main_thread():
        yield not sigchld_ignored()
        return
    with g.lock:
        if g.depth == 0 and sigchld_ignored():
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            g.changed = True
        g.depth += 1
    try:
        yield True
    finally:
        with g.lock:
            g.depth -= 1
            if g.depth == 0 and g.changed:
                g.changed = False
                try:
                    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
                except ValueError:  # finalized off the main thread (garbage collection)
                    pass


def _at_exit() -> None:
    kill_all()
    for d in live_workdirs():
        remove_workdir(d)


atexit.register(_at_exit)
