"""The bot processes of one lineup's seats across the matches of a batch (DESIGN "Bot protocol v1").

:class:`SeatPool` spawns a seat's process when a match first asks for it, keeps it alive across
the matches of a batch, replaces it after a fault and closes it after each match for
``fresh_process`` bots; the match state machine (:mod:`arena.match`) asks it for processes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena.errors import BotFault
from arena.process import BotProcess, Hub, new_workdir, preflight, remove_workdir
from arena.specs import BotSpec, Limits


class SeatPool:
    """The bot processes of the seats of one lineup and rotation (one per seat).

    A process stays alive across the matches of a batch; it is replaced after a fault,
    and closed after every match for ``fresh_process`` bots.

    :param bots: the bot of each seat.
    :param limits: process limits.
    :param hub: the selector the processes are registered with.
    :param check: run :func:`arena.process.preflight` first (commands and scripts exist,
        the sandbox starts, ``bot_user`` can run every bot).
    :ivar stderr_text: per seat, stderr captured from processes retired during the
        current match (collected by :meth:`take_stderr`).
    :raises BotSetupError: when the pre-flight check fails (nothing was started).
    """

    def __init__(self, bots: Sequence[BotSpec], limits: Limits, hub: Hub | None = None,
                 check: bool = True) -> None:
        if check:
            preflight(bots, limits)
        self.bots = list(bots)
        self.limits = limits
        self.hub = hub or Hub()
        self.procs: list[BotProcess | None] = [None] * len(bots)
        self.stderr_text: list[list[tuple[str | None, str, int]]] = [[] for _ in bots]
        self.spawns = 0

    def get(self, seat: int) -> BotProcess:
        """The live process of ``seat`` (spawned if there is none or it has exited).

        :raises BotCrashed: if the command cannot be started.
        """
        proc = self.procs[seat]
        if proc is not None and proc.alive() and not proc.eof and proc.violation is None:
            return proc
        if proc is not None:
            self.retire(seat)
        return self.spawn(seat)

    def spawn(self, seat: int) -> BotProcess:
        """A new process for ``seat`` (the old one is retired first)."""
        if self.procs[seat] is not None:
            self.retire(seat)
        workdir = new_workdir(self.bots[seat].name)
        try:
            proc = BotProcess(self.bots[seat], self.limits, workdir, seat)
        except BotFault as e:
            remove_workdir(workdir)
            e.process = None  # type: ignore[attr-defined]
            e.seat = seat  # type: ignore[attr-defined]
            raise
        self.hub.add(proc)
        self.procs[seat] = proc
        self.spawns += 1
        return proc

    def retire(self, seat: int) -> None:
        """Kill the process of ``seat`` (keeping its stderr) and delete its working directory."""
        proc = self.procs[seat]
        if proc is None:
            return
        self.procs[seat] = None
        proc.kill()
        self.stderr_text[seat].append(proc.stderr.take_parts())
        remove_workdir(proc.workdir)

    def take_stderr(self, seat: int) -> str:
        """Everything the seat's processes wrote to stderr since the last call (head+tail capped
        per process; end-of-match marks removed)."""
        before, rest, _ = self.take_stderr_parts(seat)
        return (before or "") + rest

    def take_stderr_parts(self, seat: int) -> tuple[str | None, str, int]:
        """:meth:`take_stderr` cut at the first end-of-match mark (:data:`arena.protocol.END_OF_MATCH_MARK`):
        ``(text before it or None, the rest, marks seen)``."""
        parts = self.stderr_text[seat]
        proc = self.procs[seat]
        if proc is not None:
            self.hub.pump(0)
            parts.append(proc.stderr.take_parts())
        self.stderr_text[seat] = []
        before: str | None = None
        rest: list[str] = []
        for b, a, _ in parts:
            if before is None and b is not None:
                before, rest = "".join(rest) + b, [a]
            else:
                rest.append(a if b is None else b + a)
        return before, "".join(rest), sum(m for _, _, m in parts)

    def after_match(self) -> None:
        """Close ``fresh_process`` bots; recycle processes near their CPU-time limit."""
        cpu = self.limits.cpu_s
        for seat, proc in enumerate(self.procs):
            if proc is None:
                continue
            if self.bots[seat].fresh_process:
                self._close(seat, 0.2)
            elif cpu and proc.cpu_seconds() > 0.5 * cpu:
                self._close(seat, 0.2)

    def _close(self, seat: int, wait_s: float) -> int | None:
        proc = self.procs[seat]
        if proc is None:
            return None
        self.hub.remove(proc)
        rc = proc.close(wait_s)
        self.procs[seat] = None
        self.stderr_text[seat].append(proc.stderr.take_parts())
        remove_workdir(proc.workdir)
        return rc

    def close(self, wait_s: float = 1.0) -> list[int | None]:
        """Close every process: stdin first (bots exit on EOF), then wait, then kill.

        :returns: per seat, the exit code of a bot that exited by itself, else None.
        """
        for proc in self.procs:
            if proc is not None:
                try:
                    if proc.proc.stdin is not None:
                        proc.proc.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + wait_s
        return [self._close(seat, max(0.0, deadline - time.monotonic())) for seat in range(len(self.procs))]
