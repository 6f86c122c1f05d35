"""Sandbox cost (issue 15): spawn -> ``ready`` and the ``act`` -> ``action`` round trip of one
bot under each sandbox kind, as ratios to ``sandbox: none``, in one interleaved run.

Each round spawns one echo bot per kind (``none``, ``bwrap``, ``unshare``; kinds that cannot
start here are left out) in turn: the time from :class:`arena.process.BotProcess` construction
to the parsed ``ready`` (the wrapper chain, the namespaces, the mounts, the interpreter's own
start), then ``--n`` round trips with the arena's real path (``encode_act``, ``Hub.wait_line``,
``parse_action``). Rounds interleave the kinds, so load from other processes hits all alike.
Medians over rounds (spawn) and over every round trip (round trip).
Usage: ``python bench/sandbox_cost.py [--rounds 15] [--n 2000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena.process import BotProcess, Hub, check_sandbox, new_workdir, remove_workdir  # noqa: E402
from arena.protocol import encode_act, encode_start, parse_action, parse_ready  # noqa: E402
from arena.specs import BotSpec, Limits  # noqa: E402
from bench.protocol_overhead import BOT, sample_observation  # noqa: E402

KINDS = ("none", "bwrap", "unshare")


def one(kind: str, n: int, obs: dict, legal: list[str]) -> tuple[float, list[float]]:
    """Spawn an echo bot under ``kind``; ``(spawn -> ready seconds, round-trip seconds)``."""
    spec = BotSpec("echo", (sys.executable, "-c", BOT))
    hub = Hub()
    t0 = time.perf_counter()
    proc = BotProcess(spec, Limits(sandbox=kind), new_workdir("echo"), 0)
    hub.add(proc)
    try:
        proc.send(encode_start(game="agram", options={}, players=2, seat=0, teams=[[0], [1]],
                               match="m", seed=1, move_ms=1000, bank_ms=0))
        parse_ready(hub.wait_line(proc, time.perf_counter() + 30)[0])
        spawn = time.perf_counter() - t0
        rtt = []
        for rid in range(1, n + 1):
            t = time.perf_counter()
            proc.send(encode_act(rid, obs, legal, 1000, 10000))
            line, _ = hub.wait_line(proc, t + 1.0)
            legal.index(parse_action(line, rid).action)
            rtt.append(time.perf_counter() - t)
    finally:
        proc.close(1)
        hub.close()
        remove_workdir(proc.workdir)
    return spawn, rtt


def main() -> None:
    """Run the interleaved rounds and print one row per kind (absolute and ratio to none)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=2000, help="round trips per spawn")
    args = ap.parse_args()
    kinds = [k for k in KINDS if k == "none" or _starts(k)]
    obs, legal = sample_observation("agram")
    spawn: dict[str, list[float]] = {k: [] for k in kinds}
    rtt: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(args.rounds):
        order = kinds[r % len(kinds):] + kinds[:r % len(kinds)]  # rotate who goes first
        for k in order:
            s, t = one(k, args.n, obs, legal)
            spawn[k].append(s)
            rtt[k].extend(t)
    load = os.getloadavg()
    print(f"sandbox cost, {args.rounds} interleaved rounds, {args.n} round trips per spawn; "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'kind':8} {'spawn ms':>9} {'ratio':>6} {'rtt µs':>8} {'ratio':>6}")
    s0 = statistics.median(spawn["none"])
    t0 = statistics.median(rtt["none"])
    for k in kinds:
        s, t = statistics.median(spawn[k]), statistics.median(rtt[k])
        print(f"{k:8} {s * 1e3:9.1f} {s / s0:6.2f} {t * 1e6:8.1f} {t / t0:6.2f}")


def _starts(kind: str) -> bool:
    return check_sandbox(Limits(sandbox=kind)) is None


if __name__ == "__main__":
    main()
