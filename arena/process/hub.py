"""The pipe hub: one epoll set over the stdin/stdout/stderr pipes of many bot processes.

stdout is split into lines (each capped), stderr is drained continuously into a head+tail
capture, and :meth:`Hub.wait_line` waits for the next line of one process while polling a
deadline and calling a housekeeping ``tick`` every 100 ms (exits, resident memory, wall
budget).
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable

from arena.errors import BotCrashed, BotTimeout
from arena.process.bot import CHUNK, TICK_S, BotProcess

_read = os.read
_perf_counter = time.perf_counter


class Hub:
    """One epoll set over the pipes of many bot processes.

    Reads whatever is available into each process's line queue and stderr capture, and
    writes pending stdin bytes, so no pipe ever fills while the arena waits for one bot.
    (``select.epoll`` is used directly: the :mod:`selectors` wrapper costs several µs per
    wait, a visible share of a ~30 µs round trip.)
    """

    def __init__(self) -> None:
        self.ep = select.epoll()
        self.fds: dict[int, tuple[BotProcess, int]] = {}
        self.procs: set[BotProcess] = set()
        #: when the next housekeeping is due (``perf_counter`` time), across waits: replies
        #: faster than :data:`TICK_S` must not postpone the checks for ever (adversarial
        #: finding: a bot's forked child held 800 MiB under a 100 MiB limit while every seat
        #: replied within 100 ms)
        self.next_tick = 0.0

    def add(self, proc: BotProcess) -> None:
        """Watch ``proc``'s stdout and stderr (and stdin while bytes are pending)."""
        proc._hub = self
        self.procs.add(proc)
        for fd, kind in ((proc.stdout_fd, 1), (proc.stderr_fd, 2)):
            self.ep.register(fd, select.EPOLLIN)
            self.fds[fd] = (proc, kind)
        if proc._pending:
            self._want_write(proc, True)

    def remove(self, proc: BotProcess) -> None:
        """Stop watching ``proc`` (idempotent)."""
        if proc not in self.procs:
            return
        self.procs.discard(proc)
        for fd in (proc.stdout_fd, proc.stderr_fd, proc.stdin_fd):
            self._drop(fd)
        proc._hub = None

    def _want_write(self, proc: BotProcess, on: bool) -> None:
        fd = proc.stdin_fd
        if on:
            if fd not in self.fds:
                self.ep.register(fd, select.EPOLLOUT)
                self.fds[fd] = (proc, 0)
        else:
            self._drop(fd)

    def pump(self, timeout: float, stamp: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for pipe activity and handle all of it.

        :param stamp: the time to give the lines read (default: now) — the start of a stall of
            this loop, for lines that arrived while it ran (:meth:`wait_line`)."""
        events = self.ep.poll(timeout)
        if not events:
            return
        now = _perf_counter() if stamp is None else stamp
        fds = self.fds
        for fd, _mask in events:
            entry = fds.get(fd)
            if entry is None:
                continue
            proc, kind = entry
            if kind == 0:
                proc._flush()
                continue
            try:
                data = _read(fd, CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if kind == 1:
                proc._on_stdout(data, now)
                if not data:
                    self._drop(fd)
            elif data:
                proc.stderr.feed(data)
            else:
                self._drop(fd)

    def _drop(self, fd: int) -> None:
        if self.fds.pop(fd, None) is not None:
            try:
                self.ep.unregister(fd)
            except (OSError, ValueError):
                pass

    def wait_line(self, proc: BotProcess, deadline: float,
                  tick: Callable[[], None] | None = None) -> tuple[bytes, float]:
        """The next stdout line of ``proc``, waiting until ``deadline`` (``perf_counter`` time).

        Every :data:`TICK_S` (of this hub's time, however short each wait) ``tick()`` is
        called (it may raise a fault for any process) and ``proc`` itself is checked (exit,
        memory, flood): also before a reply already read is returned.

        :returns: ``(line, t_read)``.
        :raises BotTimeout: nothing arrived by the deadline.
        :raises BotCrashed: stdout closed or the process exited.
        :raises ProtocolError: an oversized line or a flood.
        """
        lines = proc.lines
        first = True
        if _perf_counter() >= self.next_tick:
            self._checks(proc, tick)
        while True:
            if lines:
                if proc.violation is not None:
                    raise proc._tag(proc.violation)
                return lines.popleft()
            if proc.violation is not None:
                raise proc._tag(proc.violation)
            if proc.eof:  # stdout closed, or its stdin (the bot exited before reading what it was sent)
                if self._drain(proc):
                    continue
                if proc.alive():
                    _settle(proc)
                raise proc._tag(BotCrashed(f"bot {proc.name!r} {proc.describe_exit()}"))
            now = _perf_counter()
            if now >= deadline:
                raise proc._tag(BotTimeout(f"bot {proc.name!r} did not reply in time"))
            if first:
                # first pass: the reply is often in the pipe already (on a shared core the bot
                # ran while the request was written), and reading it directly saves an
                # epoll_wait; otherwise this costs one failed read while the bot thinks
                first = False
                fd = proc.stdout_fd
                entry = self.fds.get(fd)
                if entry is not None and entry[0] is proc:
                    try:
                        data = _read(fd, CHUNK)
                    except BlockingIOError:
                        pass
                    except OSError:
                        proc._on_stdout(b"", now)
                        self._drop(fd)
                        continue
                    else:
                        proc._on_stdout(data, _perf_counter())
                        if not data:
                            self._drop(fd)
                        continue
            elif now >= self.next_tick:
                self._checks(proc, tick)
                continue
            self.pump(max(0.0, min(deadline, self.next_tick) - now))

    def _checks(self, proc: BotProcess, tick: Callable[[], None] | None) -> None:
        """The checks of :meth:`wait_line` (the next due :data:`TICK_S` later), without charging the other processes' checks to ``proc``: what the
        pipes hold is read first, then ``proc``'s own checks run, then the others' (``tick``);
        a line that arrives meanwhile is given the time ``proc``'s own checks ended. A bot that
        makes its checks slow (thousands of memfds or mappings to look at) pays for them while
        it thinks, and cannot make its thinking opponent time out (seventh adversarial trial and
        its re-check, 2026-12-04: a stamp from the start of all checks gave the slow bot itself
        its thinking time free)."""
        self.pump(0)
        if proc.lines:
            return
        self.next_tick = _perf_counter() + TICK_S
        if not proc.alive() and (proc.lines or self._drain(proc)):
            return
        proc.check()
        own = _perf_counter()
        try:
            if tick is not None:
                tick()
        finally:  # also when another seat's check raised: a reply that came meanwhile is read
            self.pump(0, stamp=own)

    def _drain(self, proc: BotProcess) -> bool:
        """Read what an exited process's stdout pipe still holds; whether a line is now waiting
        (the exit was seen before the pipe's last data: which one came first was a race)."""
        fd = proc.stdout_fd
        entry = self.fds.get(fd)
        if entry is None or entry[0] is not proc:
            return bool(proc.lines)
        while True:
            try:
                data = _read(fd, CHUNK)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            proc._on_stdout(data, _perf_counter())
            if not data:
                self._drop(fd)
                break
        return bool(proc.lines)

    def close(self) -> None:
        """Close the epoll set (processes are not killed)."""
        for p in list(self.procs):
            self.remove(p)
        self.ep.close()



def _settle(proc: BotProcess, wait_s: float = 0.5) -> bool:
    """Give a process that closed stdout a moment to exit, so its exit code can be reported."""
    try:
        proc.returncode = proc.proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
    return True

