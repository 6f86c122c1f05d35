"""The small Python bot SDK (DESIGN "Bot protocol v1").

Write a function ``act(observation, legal, ctx)`` that returns an action string from
``legal`` (or ``(action, info)`` with a small JSON-ready ``info`` dict for the match log)
and call :func:`run`::

    from bots import sdk

    def act(observation, legal, ctx):
        return ctx.rng.choice(legal)

    if __name__ == "__main__":
        sdk.run(act, name="my-bot", version="1")

:func:`run` reads arena messages from stdin, answers ``start`` with ``ready`` (reseeding
``ctx.rng`` from the message's ``seed`` every time, so a bot is reproducible), answers
``act`` with ``action`` echoing the request id, calls the optional ``on_end`` hook at
``end``, and returns 0 when the arena closes stdin. While it runs, the protocol owns
stdout: a stray ``print()`` goes to stderr (the bot's log). Full guide: ``docs/sdk.md``.
The SDK depends on nothing but the standard library (orjson is used when installed).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

try:  # orjson is faster; the SDK works without it
    import orjson

    def _loads(b: bytes) -> Any:
        return orjson.loads(b)

    def _dumps(o: Any) -> bytes:
        return orjson.dumps(o, option=orjson.OPT_APPEND_NEWLINE)
except ImportError:  # pragma: no cover - exercised only without orjson
    import json

    def _loads(b: bytes) -> Any:
        return json.loads(b)

    def _dumps(o: Any) -> bytes:
        return (json.dumps(o, separators=(",", ":")) + "\n").encode()

PROTOCOL = 1


@dataclass
class Context:
    """What a bot knows about the current match besides the observation.

    :ivar game, options, players, seat, teams, match: from ``start`` (``match`` is an
        opaque token).
    :ivar seed: the seed of ``start``; ``rng`` is a :class:`random.Random` reseeded from it
        at every ``start``.
    :ivar resume: true when this process was restarted mid-match (``random`` fault policy).
    :ivar clock: the latest clock, ``{"move_ms": ..., "bank_ms": ...}`` in milliseconds.
    :ivar request_id: the id of the ``act`` being answered.
    :ivar memory: a dict the bot may use freely; cleared at every ``start``.
    """

    game: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    players: int = 0
    seat: int = 0
    teams: list[list[int]] = field(default_factory=list)
    match: str = ""
    seed: int = 0
    resume: bool = False
    clock: dict[str, int] = field(default_factory=dict)
    request_id: int = 0
    rng: random.Random = field(default_factory=random.Random)
    memory: dict[str, Any] = field(default_factory=dict)


ActFn = Callable[[dict, list, Context], "str | tuple[str, dict | None]"]


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def run(act: ActFn, name: str = "bot", version: str = "1",
        on_start: Callable[[Context], None] | None = None,
        on_end: Callable[[Context, dict, dict], None] | None = None,
        stdin: Any = None, stdout_fd: int | None = None) -> int:
    """Serve the protocol until stdin closes.

    :param act: ``act(observation, legal, ctx) -> action`` or ``(action, info)``; exceptions
        propagate (the process then exits non-zero, which the arena records as a crash).
    :param name, version: announced in ``ready``.
    :param on_start: called with the context after every ``start`` (before ``ready``).
    :param on_end: called with ``(ctx, outcome, observation)`` at every ``end``.
    :param stdin: a binary stream to read (default ``sys.stdin.buffer``).
    :param stdout_fd: the file descriptor to write (default: a private copy of fd 1; while
        :func:`run` serves, ``print()`` and anything else written to fd 1 go to stderr, so a
        debugging print cannot break the protocol).
    :returns: 0 at end of input.
    """
    inp = stdin if stdin is not None else sys.stdin.buffer
    if stdout_fd is not None:
        return _serve(act, name, version, on_start, on_end, inp, stdout_fd)
    out = _keep_stdout()
    try:
        return _serve(act, name, version, on_start, on_end, inp, out)
    finally:
        _give_back_stdout(out)


def _keep_stdout() -> int:
    """Keep the protocol's stdout to the SDK: a private copy of fd 1 is returned, and fd 1 then
    points at stderr, so a stray ``print()`` (or a C library's write to stdout) lands in the
    bot's log instead of corrupting the protocol."""
    sys.stdout.flush()
    out = os.dup(1)
    os.dup2(2, 1)
    return out


def _give_back_stdout(out: int) -> None:
    """Undo :func:`_keep_stdout` (fd 1 is the protocol's stdout again)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os.dup2(out, 1)
    os.close(out)


def _serve(act: ActFn, name: str, version: str, on_start: Callable[[Context], None] | None,
           on_end: Callable[[Context, dict, dict], None] | None, inp: Any, out: int) -> int:
    """The message loop of :func:`run`, writing the protocol to ``out``."""
    ctx = Context()
    ready = _dumps({"type": "ready", "protocol": PROTOCOL, "name": name, "version": version})
    readline = inp.readline
    while True:
        line = readline()
        if not line:
            return 0
        line = line.strip()
        if not line:
            continue
        msg = _loads(line)
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "act":
            ctx.request_id = msg["id"]
            ctx.clock = msg.get("clock") or ctx.clock
            res = act(msg["observation"], msg["legal"], ctx)
            if isinstance(res, tuple):
                action, info = res
                reply = {"type": "action", "id": msg["id"], "action": action}
                if info is not None:
                    reply["info"] = info
            else:
                reply = {"type": "action", "id": msg["id"], "action": res}
            _write(out, _dumps(reply))
        elif kind == "start":
            ctx = Context(game=msg.get("game", ""), options=msg.get("options") or {},
                          players=msg.get("players", 0), seat=msg.get("seat", 0),
                          teams=msg.get("teams") or [], match=msg.get("match", ""),
                          seed=msg.get("seed", 0), resume=bool(msg.get("resume", False)),
                          clock=msg.get("clock") or {}, rng=random.Random(msg.get("seed", 0)))
            if on_start is not None:
                on_start(ctx)
            _write(out, ready)
        elif kind == "end":
            if on_end is not None:
                on_end(ctx, msg.get("outcome") or {}, msg.get("observation") or {})
            _end_of_match()
        # unknown message types are ignored (protocol: unknown fields/messages are ignored)


#: the end-of-match mark (arena.protocol.END_OF_MATCH_MARK): what the bot wrote to stderr before
#: it goes to the log of the match that ended (an on_end log line), what follows to the next one's
END_OF_MATCH_MARK = b"\x1ecardarena: end of match\x1e\n"


def _end_of_match() -> None:
    """Write the end-of-match mark to stderr (fd 2, one write; nothing if stderr is closed)."""
    try:
        sys.stderr.flush()
        os.write(2, END_OF_MATCH_MARK)
    except (OSError, ValueError, AttributeError):
        pass


def log(*parts: Any) -> None:
    """Print to stderr (the arena keeps the head and tail in the bot's log)."""
    print(*parts, file=sys.stderr, flush=True)


def _number(text: str, convert: Callable[[str], float], what: str, bound: str) -> float:
    """``convert(text)`` if it is finite and satisfies ``bound`` (``">= 1"``, ``"> 0"``, ``">= 0"``).

    :raises argparse.ArgumentTypeError: ``expected <what> <bound>, got <text>``.
    """
    import argparse
    import math

    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {text!r}") from None
    op, limit = bound.split()
    ok = value >= float(limit) if op == ">=" else value > float(limit)
    if not math.isfinite(value) or not ok:
        shown = value if convert is int else text
        raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {shown}")
    return value


def positive_int(text: str) -> int:
    """An ``argparse`` type: an int >= 1 (e.g. ``--iterations``).

    :raises argparse.ArgumentTypeError: naming the value.
    """
    return int(_number(text, int, "an integer", ">= 1"))


def positive_float(text: str) -> float:
    """An ``argparse`` type: a finite number > 0 (e.g. ``--time-ms``).

    :raises argparse.ArgumentTypeError: naming the value.
    """
    return _number(text, float, "a finite number", "> 0")


def non_negative_float(text: str) -> float:
    """An ``argparse`` type: a finite number >= 0 (e.g. the exploration constant ``--c``).

    :raises argparse.ArgumentTypeError: naming the value.
    """
    return _number(text, float, "a finite number", ">= 0")
