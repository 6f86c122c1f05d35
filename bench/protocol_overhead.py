"""Protocol overhead (issue 8): the arena's ``act`` -> ``action`` round trip against raw pipes.

Both measurements use the same two processes: this process (the arena side) and one bot
process that answers every ``act`` line with an ``action`` line (it finds the id with a
byte search, so its own cost is the same in both phases).

* **raw**: ``os.write`` of the encoded ``act`` bytes, blocking ``os.read`` until the reply's
  newline (the floor any pipe protocol pays).
* **arena**: what :mod:`arena.match` does per decision: ``encode_act`` (orjson) of a real
  observation, non-blocking write, :meth:`arena.process.Hub.wait_line` with the deadline
  polled, ``parse_action`` (decode + validation) and the legal-set check.

Run on one core (both processes pinned to CPU 0) and on two (arena on CPU 0, bot on CPU 1).
Besides the wall times, the arena side's own CPU time per round trip is printed for each phase
(``time.thread_time``, read outside the timed spans): the difference is the arena's Python work.
Usage: ``python bench/protocol_overhead.py [--n 20000] [--game agram]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena.process import BotProcess, Hub, new_workdir, remove_workdir  # noqa: E402
from arena.protocol import encode_act, encode_start, parse_action, parse_ready  # noqa: E402
from arena.specs import BotSpec, Limits  # noqa: E402
from engine import registry  # noqa: E402

BOT = textwrap.dedent(r'''
    import os, sys
    inp = sys.stdin.buffer
    while True:
        line = inp.readline()
        if not line:
            break
        if line.startswith(b'{"type":"start"'):
            os.write(1, b'{"type":"ready","protocol":1,"name":"echo","version":"1"}\n')
            continue
        i = line.find(b'"id":') + 5
        j = line.find(b",", i)
        k = line.find(b'"legal":["', j) + 10
        e = line.find(b'"', k)
        os.write(1, b'{"type":"action","id":' + line[i:j] + b',"action":"' + line[k:e] + b'"}\n')
''')


def sample_observation(game_name: str):
    """A mid-match observation and legal set of ``game_name`` (seat to move)."""
    game = registry.get_game(game_name)
    n, opts = game.configs[0] if game.configs else (game.min_players, {})
    state = game.new_match(n, 12345, **opts)
    rng = random.Random(1)
    for _ in range(5):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    seat = state.current_player()
    return state.observation(seat), state.legal_strings()


def run(n: int, game: str, cpus: tuple[int, int] | None) -> dict[str, float]:
    """Time ``n`` ``act`` -> ``action`` round trips per phase (raw, arena) against an echo bot.

    :param cpus: ``(arena CPU, bot CPU)`` to pin the two processes to, or None to leave affinity alone.
    :returns: ``bytes`` (the ``act`` line's length), medians ``raw_us`` / ``arena_us`` and their ``ratio``,
        means ``raw_mean_us`` / ``arena_mean_us``, arena-side CPU per round trip ``raw_cpu_us`` /
        ``arena_cpu_us`` (all in µs).
    """
    obs, legal = sample_observation(game)
    spec = BotSpec("echo", (sys.executable, "-c", BOT))
    proc = BotProcess(spec, Limits(), new_workdir("echo"), 0)
    hub = Hub()
    hub.add(proc)
    try:
        proc.send(encode_start(game=game, options={}, players=2, seat=0, teams=[[0], [1]],
                               match="m", seed=1, move_ms=1000, bank_ms=0))
        parse_ready(hub.wait_line(proc, time.perf_counter() + 10)[0])
        if cpus is not None:
            os.sched_setaffinity(0, {cpus[0]})
            for pid in [proc.pid, *proc.descendants()]:  # in a sandbox the bot is a descendant
                os.sched_setaffinity(pid, {cpus[1]})
        raw_line = encode_act(1, obs, legal, 1000, 10000)
        raw: list[float] = []
        arena: list[float] = []
        cpu_raw = cpu_arena = 0.0
        cpu = time.thread_time
        wfd = proc.stdin_fd
        # a second open file description of the same pipe, blocking, for the raw phase
        rfd = os.open(f"/proc/self/fd/{proc.stdout_fd}", os.O_RDONLY)
        try:
            # alternate the two phases round trip by round trip, so load from other
            # processes hits both alike
            for rid in range(2, n + 2):
                c0 = cpu()
                t0 = time.perf_counter()
                os.write(wfd, raw_line)
                buf = os.read(rfd, 65536)
                while not buf.endswith(b"\n"):
                    buf += os.read(rfd, 65536)
                raw.append(time.perf_counter() - t0)
                c1 = cpu()
                t0 = time.perf_counter()
                proc.send(encode_act(rid, obs, legal, 1000, 10000))
                line, _t = hub.wait_line(proc, t0 + 1.02, None)
                reply = parse_action(line, rid)
                legal.index(reply.action)
                arena.append(time.perf_counter() - t0)
                c2 = cpu()
                cpu_raw += c1 - c0
                cpu_arena += c2 - c1
        finally:
            os.close(rfd)
    finally:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
        proc.close(1)
        hub.close()
        remove_workdir(proc.workdir)
    raw_us = statistics.median(raw) * 1e6
    arena_us = statistics.median(arena) * 1e6
    return {"bytes": len(raw_line), "raw_us": raw_us, "arena_us": arena_us, "ratio": arena_us / raw_us,
            "raw_mean_us": statistics.fmean(raw) * 1e6, "arena_mean_us": statistics.fmean(arena) * 1e6,
            "raw_cpu_us": cpu_raw / n * 1e6, "arena_cpu_us": cpu_arena / n * 1e6}


def main() -> None:
    """Measure the round trip on one core and (if available) on two; print one row per setup."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="round trips per phase")
    ap.add_argument("--game", default="agram")
    args = ap.parse_args()
    ncpu = len(os.sched_getaffinity(0))
    setups = [("1 core", (0, 0))] + ([("2 cores", (0, 1))] if ncpu >= 2 else [])
    print(f"act -> action round trip, {args.game} observation, {args.n} round trips per phase (median)")
    print(f"{'setup':8} {'bytes':>6} {'raw µs':>8} {'arena µs':>9} {'ratio':>6}  "
          "(means: raw / arena µs; arena-side CPU per round trip: raw / arena µs)")
    for label, cpus in setups:
        r = run(args.n, args.game, cpus)
        print(f"{label:8} {r['bytes']:6d} {r['raw_us']:8.1f} {r['arena_us']:9.1f} {r['ratio']:6.2f}  "
              f"({r['raw_mean_us']:.1f} / {r['arena_mean_us']:.1f}; cpu {r['raw_cpu_us']:.1f} / "
              f"{r['arena_cpu_us']:.1f})")


if __name__ == "__main__":
    main()
