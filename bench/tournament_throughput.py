"""Tournament throughput (issue 9): the same tournament inline, on Ray with 1 worker and with 2.

Scenarios (Agram, 3 players, real bot processes, the whole driver path of ``arena run``:
schedule, adaptive batches, journal, records):

* ``random``: three random bots — short matches (18 actions), where task and start-up
  overheads show.
* ``ismcts``: two ISMCTS bots with a fixed iteration budget (``bots/ismcts_bot.py
  --iterations N``) and a random bot — CPU-bound matches (skipped if the bot is missing).

Ray is started once (``num_cpus`` = CPUs, loopback) before the timed runs; its start-up
is reported separately. Each run writes into a fresh results folder. Matches per second
are wall-clock over the run; the speedup is Ray 2 workers over Ray 1 worker.

Usage: ``python bench/tournament_throughput.py [--deals 300] [--ismcts-deals 12]
[--iterations 300] [--repeat 1] [--only random|ismcts]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena import config as cfg  # noqa: E402
from arena.driver import run_tournament  # noqa: E402
from arena.executors import cpu_count  # noqa: E402
from arena.ray_setup import init_ray  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

RANDOM = """
bots:
  random-a: {{cmd: [python, bots/random_bot.py]}}
  random-b: {{cmd: [python, bots/random_bot.py]}}
  random-c: {{cmd: [python, bots/random_bot.py]}}
tournaments:
  - name: random
    game: agram
    players: 3
    bots: [random-a, random-b, random-c]
    deals: {deals}
    salt: throughput
"""

ISMCTS = """
defaults:
  clock: {{move_ms: 5000, bank_ms: 30000, startup_ms: 10000}}
bots:
  ismcts-a: {{cmd: [python, bots/ismcts_bot.py, --iterations, "{it}"]}}
  ismcts-b: {{cmd: [python, bots/ismcts_bot.py, --iterations, "{it}", --c, "1.0"]}}
  random: {{cmd: [python, bots/random_bot.py]}}
tournaments:
  - name: ismcts
    game: agram
    players: 3
    bots: [ismcts-a, ismcts-b, random]
    deals: {deals}
    salt: throughput
"""


def tournament(text: str, folder: Path):
    """Load the one tournament of ``text`` with bots resolved against the project root."""
    path = folder / "t.yaml"
    path.write_text(textwrap.dedent(text))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": str(ROOT)}) for k, v in t.bots.items()}
    return t


def timed(t, results: Path, **kw) -> tuple[float, int, list[int]]:
    """Run ``t`` into a fresh ``results`` folder: (seconds, matches, batch sizes)."""
    shutil.rmtree(results, ignore_errors=True)
    t0 = time.perf_counter()
    s = run_tournament(t, results, **kw)
    dt = time.perf_counter() - t0
    return dt, s.played, (s.batcher.sizes if s.batcher else [])


def scenario(name: str, t, tmp: Path, repeat: int) -> dict:
    """Inline, Ray 1 worker, Ray 2 workers; the median of ``repeat`` runs each."""
    out = {}
    for mode, kw in (("inline", {"inline": True}), ("ray-1", {"workers": 1}), ("ray-2", {"workers": 2})):
        runs = [timed(t, tmp / f"{name}-{mode}-{i}", **kw) for i in range(repeat)]
        secs = statistics.median(r[0] for r in runs)
        n = runs[0][1]
        out[mode] = (n, secs, n / secs)
        print(f"  {name:7s} {mode:7s} {n:5d} matches {secs:7.2f} s {n / secs:8.1f} matches/s  "
              f"load {os.getloadavg()[0]:.1f}  "
              f"batches {len(runs[0][2])} (sizes {runs[0][2][:6]}{'…' if len(runs[0][2]) > 6 else ''})",
              file=sys.stderr, flush=True)
    return out


def _spin(seconds: float) -> int:
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(1000):
            n += 1
    return n


def cpu_ceiling(seconds: float = 3.0) -> float:
    """The machine's 2-process speedup right now: pure-Python loops in 2 processes vs 1
    (other jobs on a shared machine lower it; the tournament speedup cannot exceed it)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as ex:
        one = ex.submit(_spin, seconds).result()
        two = sum(f.result() for f in [ex.submit(_spin, seconds) for _ in range(2)])
    return two / one


def main() -> None:
    """Run the scenarios and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=300, help="deals of the random-bot tournament (x3 matches)")
    ap.add_argument("--ismcts-deals", type=int, default=12, help="deals of the ISMCTS tournament (x3 matches)")
    ap.add_argument("--iterations", type=int, default=300, help="ISMCTS iterations per decision")
    ap.add_argument("--repeat", type=int, default=1, help="runs per setting (median)")
    ap.add_argument("--only", choices=("random", "ismcts"), default=None)
    a = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="throughput-"))
    try:
        t0 = time.perf_counter()
        init_ray(cpu_count())
        ray_start = time.perf_counter() - t0
        print(f"Ray start-up: {ray_start:.1f} s ({cpu_count()} CPUs)", file=sys.stderr)
        print(f"load average {os.getloadavg()[0]:.1f}; 2-process CPU speedup now: {cpu_ceiling():.2f}×",
              file=sys.stderr, flush=True)
        results = {}
        if a.only in (None, "random"):
            results["random bots, agram 3p"] = scenario("random", tournament(RANDOM.format(deals=a.deals), tmp),
                                                        tmp, a.repeat)
        if a.only in (None, "ismcts") and (ROOT / "bots" / "ismcts_bot.py").exists():
            results[f"ISMCTS {a.iterations} it. ×2 + random, agram 3p"] = scenario(
                "ismcts", tournament(ISMCTS.format(deals=a.ismcts_deals, it=a.iterations), tmp), tmp, a.repeat)
        print(f"\nload average {os.getloadavg()[0]:.1f}")
        print("\n| tournament | matches | inline m/s | Ray 1 worker m/s | Ray 2 workers m/s | 2-worker speedup |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, r in results.items():
            n = r["inline"][0]
            print(f"| {name} | {n} | {r['inline'][2]:.1f} | {r['ray-1'][2]:.1f} | {r['ray-2'][2]:.1f} | "
                  f"{r['ray-2'][2] / r['ray-1'][2]:.2f}× |")
        print(f"\nRay start-up (not in the figures): {ray_start:.1f} s; machine's 2-process CPU speedup "
              f"measured just after: {cpu_ceiling():.2f}×; load average {os.getloadavg()[0]:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
