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
from collections.abc import Iterator

import orjson

from arena.match import SeatPool, play_match
from arena.process import (
    PROJECT_ROOT,
    default_sigchld,
    hide_bot_folders,
    hide_from_sandbox,
    hide_results_root,
)
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
    try:
        for spec in specs:
            infos: list[bytes] = []

            def sink(seat: int, move: int, info: dict, _spec: MatchSpec = spec,
                     infos: list[bytes] = infos) -> None:
                """Append ``{seat, bot, move, info}`` to ``infos`` as one JSON line."""
                infos.append(orjson.dumps({"seat": seat, "bot": _spec.seats[seat], "move": move,
                                           "info": info}, option=orjson.OPT_APPEND_NEWLINE))

            result = play_match(spec, pool, sink)
            stderr = [pool.take_stderr(seat) for seat in range(len(seats))]
            pool.after_match()
            if results_dir is not None:
                try:
                    _write_logs(results_dir, spec, stderr, infos)
                except OSError as e:  # a full disk must not cost the played match its result
                    sys.stderr.write(f"cardarena: logs of {spec.match_id} not written: {e}\n")
            yield result
    finally:
        pool.close()
        pool.hub.close()


def _write_logs(results_dir: str, spec: MatchSpec, stderr: list[str], infos: list[bytes]) -> None:
    name = match_file_name(spec.match_id)
    logs = os.path.join(results_dir, "logs")
    by_bot: dict[str, list[tuple[int, str]]] = {}
    for seat, text in enumerate(stderr):
        if text:
            by_bot.setdefault(spec.seats[seat], []).append((seat, text))
    for bot, parts in by_bot.items():
        d = os.path.join(logs, bot)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".stderr"), "w", encoding="utf-8") as f:
            if len(parts) == 1:
                f.write(parts[0][1])
            else:
                for seat, text in parts:
                    f.write(f"===== seat {seat} =====\n{text}\n")
    if infos:
        os.makedirs(logs, exist_ok=True)
        with open(os.path.join(logs, name + ".jsonl"), "wb") as f:
            f.writelines(infos)


def _inside(path: str, root: str) -> bool:
    path = os.path.abspath(path)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
