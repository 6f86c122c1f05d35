"""A batch of matches in one worker: the function the executor calls (DESIGN "Execution").

A batch is one lineup and one rotation over distinct deals, so a live process per seat
can serve all its matches without ever seeing the same deal twice (DESIGN "Isolation").
Processes are replaced after a fault, started per match for ``fresh_process`` bots, and
all closed when the batch ends or the generator is closed (the bots' working-directory
root goes with the last of them).

Before anything starts, :func:`arena.process.preflight` checks that every bot can run
(command and script found, sandbox able to start, ``bot_user`` able to read the bot);
otherwise :class:`arena.process.BotSetupError` is raised with the reasons.

Under Ray the worker ignores SIGCHLD (so the kernel reaps children itself and every exit
looks like code 0); for the duration of the batch SIGCHLD gets its default disposition
back (main thread only), and the previous one is restored at the end.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Iterator, Sequence

import orjson

from arena.errors import ArenaError
from arena.match import SeatPool, play_match
from arena.process import (
    PROJECT_ROOT,
    default_sigchld,
    hide_bot_folders,
    hide_from_sandbox,
    hide_results_root,
)
from arena.results_folder import make_dir, write_file
from arena.specs import BotSpec, MatchResult, MatchSpec


def match_file_name(match_id: str) -> str:
    """The file name of a match's logs: the match id with ``/`` replaced by ``__``."""
    return match_id.replace("/", "__")


def play_batch(specs: list[MatchSpec], bots: dict[str, BotSpec],
               results_dir: str | None) -> Iterator[MatchResult]:
    """Play ``specs`` in order and yield one :class:`MatchResult` per match as it ends.

    :param specs: matches of one lineup and one rotation (same ``seats``) over distinct deals.
    :param bots: the bot specifications by name (every name in ``seats``).
    :param results_dir: ``results/<tournament>``; when given, bots' stderr goes to
        ``logs/<bot>/<match file>.stderr`` (only when non-empty; seats of the same bot are
        sections of one file) and ``info`` objects to ``logs/<match file>.jsonl``, where the
        match file name is the match id with ``/`` replaced by ``__``.
    :raises ValueError: if the specs mix seat assignments or name an unknown bot.
    :raises BotSetupError: if a bot cannot run at all (see :func:`arena.process.preflight`).
    :raises engine errors: for a spec the engine refuses (unknown game, bad options).
    """
    if not specs:
        return
    seats = specs[0].seats
    for s in specs:
        if s.seats != seats:
            raise ValueError(f"a batch is one lineup and rotation: {s.match_id} seats {s.seats} "
                             f"differ from {seats}")
    missing = sorted({n for n in seats if n not in bots})
    if missing:
        raise ValueError(f"unknown bot(s) {', '.join(missing)}; known: {', '.join(sorted(bots))}")
    with default_sigchld():
        yield from _play(specs, bots, seats, results_dir)


def _play(specs: list[MatchSpec], bots: dict[str, BotSpec], seats: tuple[str, ...],
          results_dir: str | None) -> Iterator[MatchResult]:
    if results_dir is not None:
        hide_from_sandbox(results_dir)
        root = os.path.dirname(os.path.abspath(results_dir))
        # the whole results root (other tournaments' secrets and journals), unless it also holds
        # what bots need (the project, the bots' own folders), e.g. `--results .`
        needed = [PROJECT_ROOT, *(b.cwd for b in bots.values())]
        for b in bots.values():  # each bot's program: the interpreter and script its command names
            needed += [p for p in (os.path.join(b.cwd, a) for a in b.cmd) if os.path.isfile(p)][:2]
        if root not in ("/", os.path.expanduser("~")) and not any(_inside(p, root) for p in needed):
            hide_results_root(root)
    hide_bot_folders(bots.values())  # the tournament's other bots' programs (docs/security.md)
    pool = SeatPool([bots[n] for n in seats], specs[0].limits)
    logs = _Logs(results_dir, len(seats))
    try:
        for spec in specs:
            infos = InfoLog(spec.seats)
            result = play_match(spec, pool, infos.add)
            logs.ended(spec, [pool.take_stderr_parts(seat) for seat in range(len(seats))], infos.lines())
            pool.after_match()
            yield result
        pool.close()
        logs.closed([pool.take_stderr_parts(seat) for seat in range(len(seats))])
    finally:
        pool.close()
        pool.hub.close()


class _Logs:
    """The logs of a batch's matches, each seat's stderr cut at its end-of-match marks
    (:data:`arena.protocol.END_OF_MATCH_MARK`): what a bot writes after a match's ``end`` and
    before its mark (an ``on_end`` log) is that match's, though it is read during the next one;
    without marks, stderr goes to the match it was read in, and what is left when the batch's
    processes exit to the last one."""

    def __init__(self, results_dir: str | None, seats: int) -> None:
        self.results_dir = results_dir
        self.owed = [False] * seats  # per seat: the last match's mark has not been seen yet
        self.last: tuple[MatchSpec, list[str], list[bytes]] | None = None

    def ended(self, spec: MatchSpec, stderr: list[tuple[str | None, str, int]], infos: list[bytes]) -> None:
        """Match ``spec`` ended: its logs written (and the previous match's again, if its bots
        wrote more before their marks)."""
        mine, more = [], []
        for seat, (before, rest, marks) in enumerate(stderr):
            late = self.last is not None and self.owed[seat] and marks > 0
            more.append((before or "") if late else "")
            mine.append(rest if late else (before or "") + rest)
            self.owed[seat] = marks - (1 if late else 0) <= 0
        if self.last is not None and any(more):
            self._write(self.last[0], [a + b for a, b in zip(self.last[1], more)], self.last[2])
        self.last = (spec, mine, infos)
        self._write(spec, mine, infos)

    def closed(self, stderr: list[tuple[str | None, str, int]]) -> None:
        """The batch's processes exited: what they wrote since the last match ended is its."""
        rest = [(b or "") + a for b, a, _ in stderr]
        if self.last is not None and any(rest):
            spec, text, infos = self.last
            self._write(spec, [a + b for a, b in zip(text, rest)], infos)

    def _write(self, spec: MatchSpec, stderr: list[str], infos: list[bytes]) -> None:
        if self.results_dir is None:
            return
        try:
            _write_logs(self.results_dir, spec, stderr, infos)
        except (OSError, ArenaError) as e:  # a full disk or a planted link must not cost the result
            sys.stderr.write(f"cardarena: logs of {spec.match_id} not written: {e}\n")


#: ``info`` kept per seat and match in ``logs/<match>.jsonl``: the first and the last this many
#: bytes (an ``info`` on every move of a long match would fill the organiser's disk otherwise)
INFO_KEEP_BYTES = 32 * 1024


class InfoLog:
    """The ``info`` objects of one match as JSON lines, bounded per seat: the first and the last
    :data:`INFO_KEEP_BYTES` of each seat's lines, and one ``{"seat", "bot", "dropped": n}`` line
    for the ``n`` left out between them (in the order they came)."""

    def __init__(self, seats: Sequence[str]) -> None:
        self.seats = seats
        self.head: list[list[tuple[int, bytes]]] = [[] for _ in seats]
        self.tail: list[deque[tuple[int, bytes]]] = [deque() for _ in seats]
        self.size = [[0, 0] for _ in seats]  # bytes in head, in tail
        self.dropped = [0] * len(seats)
        self.n = 0

    def add(self, seat: int, move: int, info: dict) -> None:
        """Keep ``{seat, bot, move, info}`` of ``seat`` (the match's ``info_sink``)."""
        line = orjson.dumps({"seat": seat, "bot": self.seats[seat], "move": move, "info": info},
                            option=orjson.OPT_APPEND_NEWLINE)
        self.n += 1
        size = self.size[seat]
        if size[0] + len(line) <= INFO_KEEP_BYTES and not self.tail[seat] and not self.dropped[seat]:
            self.head[seat].append((self.n, line))
            size[0] += len(line)
            return
        self.tail[seat].append((self.n, line))
        size[1] += len(line)
        while size[1] > INFO_KEEP_BYTES:
            size[1] -= len(self.tail[seat].popleft()[1])
            self.dropped[seat] += 1

    def lines(self) -> list[bytes]:
        """The kept lines in arrival order, a seat's ``dropped`` line where its gap is."""
        out: list[tuple[float, bytes]] = []
        for seat in range(len(self.seats)):
            out += self.head[seat]
            out += self.tail[seat]
            if self.dropped[seat]:
                at = self.tail[seat][0][0] - 0.5 if self.tail[seat] else self.n + 0.5
                out.append((at, orjson.dumps({"seat": seat, "bot": self.seats[seat], "dropped": self.dropped[seat]},
                                             option=orjson.OPT_APPEND_NEWLINE)))
        return [line for _, line in sorted(out, key=lambda x: x[0])]


def _write_logs(results_dir: str, spec: MatchSpec, stderr: list[str], infos: list[bytes]) -> None:
    name = match_file_name(spec.match_id)
    logs = os.path.join(results_dir, "logs")
    by_bot: dict[str, list[tuple[int, str]]] = {}
    for seat, text in enumerate(stderr):
        if text:
            by_bot.setdefault(spec.seats[seat], []).append((seat, text))
    for bot, parts in by_bot.items():
        make_dir(logs)
        d = make_dir(os.path.join(logs, bot))  # refused (noted by the caller) if a link
        text = parts[0][1] if len(parts) == 1 else "".join(f"===== seat {seat} =====\n{t}\n" for seat, t in parts)
        write_file(os.path.join(d, name + ".stderr"), text)  # never through a planted link
    if infos:
        make_dir(logs)
        write_file(os.path.join(logs, name + ".jsonl"), b"".join(infos))


def _inside(path: str, root: str) -> bool:
    path = os.path.abspath(path)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
