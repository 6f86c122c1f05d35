"""Scale bench (issue 18): synthetic journals in the product's own record format over 1,000 bots.

For each size it writes ``results/<name>/matches.jsonl`` + ``tournament.json`` (records made by
:func:`arena.journal.record_of`'s layout: seats, outcome, move_ms, actions, ...), then measures
``arena leaderboard --format csv`` (``--format``) in a fresh process: wall time, CPU (user+sys,
``wait4`` rusage) and peak RSS (the process's own ``VmHWM``: :data:`PEAK`). Rows:

* ``full``: a full rebuild (no checkpoint or cache in the folder);
* ``+1% incr.``: 1% more records appended, the full rebuild's checkpoints and caches present
  (what a resumed run or the next ``arena leaderboard`` pays); ``tournament.json`` scheduled
  them from the start, as a run writes its whole schedule before its first match;
* ``+1% new sched``: the same update after ``tournament.json`` changed (one more match
  scheduled: every cached row is classified against the new schedule again);
* ``+1% no jcache``: the same update without the journal cache (every line parsed again, the
  other checkpoints present);
* ``driver journal``: RSS of a process that opens the journal as a run's driver does and appends
  10% more records (cut off again afterwards: the kept journal is unchanged).

Usage::

    python bench/scale.py --sizes 10000 100000 [--bots 1000] [--players 2] [--out DIR]

Figures taken on a shared machine are noisy: compare them as ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from arena.schedule_file import encode, schedule_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GAME = {2: "agram", 4: "sedma"}


def synthetic_record(name: str, i: int, bots: list[str], strength: list[float], players: int,
                     rng: random.Random) -> dict:
    """One journal line (the layout :func:`arena.journal.record_of` writes) for match number ``i``."""
    idx = rng.sample(range(len(bots)), players)
    seats = [bots[j] for j in idx]
    lineup = "+".join(sorted(seats))
    deal, rot = divmod(i, 2)
    perf = [strength[j] + rng.gauss(0, 1) for j in idx]
    if players == 4:  # partnership: seats 0+2 vs 1+3
        a = perf[0] + perf[2] > perf[1] + perf[3]
        ranks = [0, 1, 0, 1] if a else [1, 0, 1, 0]
    else:
        order = sorted(range(players), key=lambda s: -perf[s])
        ranks = [0] * players
        for r, s in enumerate(order):
            ranks[s] = r
    return {"format": 1, "match_id": f"{name}/{lineup}/d{deal:05d}/r{rot:02d}", "tournament": name,
            "fingerprint": f"{i:016x}", "game": GAME[players], "game_version": 1, "engine_version": "1",
            "options": {}, "deal_index": deal, "deal_seed": rng.getrandbits(63), "rotation": rot,
            "lineup": sorted(seats), "seats": seats,
            "bot_commands": [{"cmd": ["python", f"bots/{b}.py"], "version": ""} for b in seats],
            "clock": {"move_ms": 1000, "bank_ms": 10000, "startup_ms": 5000, "grace_ms": 20},
            "bot_versions": [f"{b}/1" for b in seats], "status": "ok",
            "outcome": {"ranks": ranks, "scores": [float(players - 1 - r) for r in ranks]},
            "faults": [], "time_ms": round(rng.uniform(5, 50), 3),
            "move_ms": [[round(rng.uniform(0.1, 3), 3) for _ in range(8)] for _ in seats],
            "actions": [[s % players, f"a{rng.randrange(40)}"] for s in range(24)]}


def make_journal(folder: Path, n: int, n_bots: int, players: int, start: int = 0, seed: int = 1,
                 ahead: int = 0) -> None:
    """Write (or extend from record ``start``) a synthetic journal of ``n`` records in ``folder``.

    ``ahead``: ``tournament.json`` also schedules the next ``ahead`` records (the ones a later
    ``make_journal(folder, n + ahead, start=n)`` appends), as a run writes its whole schedule
    before its first match; 0: it schedules exactly the records written."""
    name = folder.name
    bots = [f"bot{j:04d}" for j in range(n_bots)]
    srng = random.Random(seed)
    strength = [srng.gauss(0, 1) for _ in bots]
    folder.mkdir(parents=True, exist_ok=True)
    schedule: dict[str, str] = {}
    meta_path = folder / "tournament.json"
    if start and meta_path.exists():
        schedule = dict(schedule_of(json.loads(meta_path.read_text())) or {})

    def records(lo: int, hi: int):
        """The synthetic records ``lo .. hi − 1`` (each range seeded on its own, so a later extension
        draws the same ones), scheduling each; a match id already scheduled for another record is skipped."""
        rng = random.Random(seed * 1_000_003 + lo)
        for i in range(lo, hi):
            rec = synthetic_record(name, i, bots, strength, players, rng)
            if schedule.setdefault(rec["match_id"], rec["fingerprint"]) == rec["fingerprint"]:
                yield rec

    with open(folder / "matches.jsonl", "ab" if start else "wb") as f:
        for rec in records(start, n):
            f.write(orjson.dumps(rec) + b"\n")
    for _ in records(n, n + ahead):
        pass
    meta = {"name": name, "game": GAME[players], "players": players, "options": {}, "bots": bots,
            "deals": n + ahead,
            "partners": "self", "rotations": "cyclic", "lineups": "sample",
            "ratings": {"draw_probability": 0.1, "tau": "default", "fixed": [], "mu": 25.0, "sigma": 25 / 3},
            "rate_forfeits": False, "settings": {"game": GAME[players], "players": players},
            **encode(schedule)}
    meta_path.write_text(json.dumps(meta))


#: runs ``python -m MOD ARGS`` or ``python -c CODE ARGS`` and writes its own peak RSS (``VmHWM`` of
#: its address space) to stderr at exit. ``wait4``'s ``ru_maxrss`` is not the child's own: a child
#: started by ``vfork`` + ``exec`` from this (large) process inherits this process's peak.
PEAK = """import atexit, runpy, sys
def _peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("\\nVmHWM-kB " + line.split()[1] + "\\n")
atexit.register(_peak)
how, what = sys.argv[1], sys.argv[2]
sys.argv = [what, *sys.argv[3:]]
if how == "-m":
    runpy.run_module(what, run_name="__main__", alter_sys=True)
else:
    exec(compile(what, "<bench>", "exec"), {"__name__": "__main__"})
"""


def measure(cmd: list[str]) -> dict:
    """Wall s, CPU s (``wait4`` rusage) and peak RSS MB (the child's own ``VmHWM``, :data:`PEAK`) of
    one child process ``[python, -m|-c, MOD|CODE, *args]``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    p = subprocess.Popen([cmd[0], "-c", PEAK, *cmd[1:]], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err_b = p.stderr.read() if p.stderr else b""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = err_b.decode(errors="replace")
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err[-2000:]}")
    peak = [ln.split()[1] for ln in err.splitlines() if ln.startswith("VmHWM-kB ")]
    if not peak:  # left by os._exit or a signal: no figure rather than the bench's own
        raise SystemExit(f"{' '.join(cmd)} ended without reporting its peak RSS: {err[-2000:]}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": int(peak[-1]) / 1024}


FORMAT = "csv"


def leaderboard(folder: Path) -> dict:
    """CPU seconds and peak RSS of `arena leaderboard FOLDER --format FORMAT` in a subprocess (csv:
    the table's rows; json adds every pair's P(stronger), a million entries at 1,000 bots)."""
    return measure([sys.executable, "-m", "arena.cli", "leaderboard", str(folder), "--format", FORMAT])


def driver_memory(folder: Path, extra: int, n_bots: int, players: int) -> list[tuple[int, float]]:
    """RSS (MB) of this process after opening ``folder``'s journal as the driver does, then every
    ``extra // 10`` records while appending ``extra`` more (a long cheap run's journal side)."""
    import psutil

    from arena.journal import Journal

    proc = psutil.Process()
    bots = [f"bot{j:04d}" for j in range(n_bots)]
    rng = random.Random(7)
    strength = [0.0] * n_bots
    j = Journal(folder)
    base = len(j.records)
    out = [(base, proc.memory_info().rss / 2**20)]
    for i in range(extra):
        rec = synthetic_record(folder.name, 10**8 + i, bots, strength, players, rng)
        j.append(rec)
        if (i + 1) % max(1, extra // 10) == 0:
            out.append((base + i + 1, proc.memory_info().rss / 2**20))
    j.close()
    return out


def run_memory(deals: int, n_bots: int = 100) -> list[tuple[int, float]]:
    """RSS (MB) of this process during a long cheap run: the real driver (:func:`arena.driver.prepare`,
    :class:`arena.driver.Run`, its batcher, fault ledger and journal) over ``lineups: all`` of
    ``n_bots`` bots on ``deals`` deals (2 players: ``n_bots·(n_bots−1)`` matches a deal), each
    match's result made up at once instead of played (no executor, no bot process): after the
    schedule is built and ``tournament.json`` written, then every tenth of the run; the last entry
    is ``(-1, peak RSS)`` (``ru_maxrss``: the schedule's build and the compact entry included)."""
    import resource

    import psutil

    from arena import config as cfg
    from arena.driver import Run, prepare, write_meta
    from arena.executors import Outcome

    proc = psutil.Process()
    root = Path(tempfile.mkdtemp(prefix="scale-run"))
    raw = {"bots": {f"b{j:03d}": {"cmd": ["python", str(ROOT / "bots/random_bot.py")]} for j in range(n_bots)},
           "tournaments": [{"name": "cheap", "game": "agram", "players": 2, "bots": [f"b{j:03d}" for j in range(n_bots)],
                            "deals": deals, "salt": "scale-bench"}]}
    t = cfg.load_data(raw, root / "tournaments.yaml", root)[0]
    rng = random.Random(3)
    try:
        journal, specs = prepare(t, root / "results")
        write_meta(t, journal.folder, specs)
        run = Run(t, journal, specs, 2, None, lambda m: None)
        total, done = len(specs), 0
        del specs
        out = [(0, proc.memory_info().rss / 2**20)]
        while (batch := run.next_batch()) is not None:
            for spec in batch:
                a = rng.random() < 0.5
                run.take(Outcome(result={
                    "match_id": spec.match_id, "status": "ok", "outcome": {"ranks": [0, 1] if a else [1, 0],
                                                                           "scores": [1.0, 0.0] if a else [0.0, 1.0]},
                    "faults": [], "time_ms": 12.5, "bot_versions": ["", ""],
                    "move_ms": [[round(rng.uniform(0.1, 3), 3) for _ in range(8)] for _ in range(2)],
                    "actions": [[s % 2, f"a{rng.randrange(40)}"] for s in range(24)]}))
                done += 1
                if done % max(1, total // 10) == 0:
                    out.append((done, proc.memory_info().rss / 2**20))
        journal.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [*out, (-1, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)]


RATINGS_ONLY = """
import json, sys
from arena.checkpoint import replay
from arena.journal import read_records
from arena.results import load_meta, rated_records
meta = load_meta(sys.argv[1])
recs, _ = rated_records(read_records(sys.argv[1]), meta)
r = replay(sys.argv[1], recs, meta["bots"], draw_probability=meta["ratings"]["draw_probability"], history=False)
"""


def ratings_only(folder: Path) -> dict:
    """:func:`measure` of reading the journal + the checkpointed TrueSkill replay (no batch fit, no tables)."""
    return measure([sys.executable, "-c", RATINGS_ONLY, str(folder)])


def main() -> None:
    """Command line: build synthetic journals and print the scale figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--bots", type=int, default=1000)
    ap.add_argument("--players", type=int, default=2, choices=(2, 4))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="keep the journals in DIR (never deleted) and reuse them: a size already built there "
                         "skips writing its journal and the full rebuild (its figures are printed from "
                         "DIR/s<n>-p<players>/base/figures.json) and measures the +1%% update again from the "
                         "full rebuild's checkpoints (a 1M full rebuild is ~6 CPU-minutes)")
    ap.add_argument("--no-incremental", action="store_true")
    ap.add_argument("--no-driver", action="store_true", help="skip the driver's journal RSS")
    ap.add_argument("--format", default="csv", choices=("csv", "json", "table"),
                    help="the `arena leaderboard --format` measured (json adds every pair: O(bots²))")
    ap.add_argument("--ratings-only", action="store_true",
                    help="measure reading + TrueSkill replay only (not the batch fit and tables)")
    ap.add_argument("--driver", type=Path, default=None, help="only: the driver's journal RSS on this folder")
    ap.add_argument("--run", type=int, nargs="+", default=None, metavar="DEALS",
                    help="only: the driver's RSS during a cheap run of 100 bots (9,900 matches a deal)")
    args = ap.parse_args()
    if args.run:
        for deals in args.run:  # one process each: RSS is a high-water mark
            got = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); "
                                  f"import json, scale; print(json.dumps(scale.run_memory({deals})))"], capture_output=True, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
            if got.returncode:
                raise SystemExit(got.stderr[-2000:])
            for n, mb in json.loads(got.stdout.strip().splitlines()[-1]):
                what = "peak" if n < 0 else f"{n:>8} matches recorded  RSS"
                print(f"cheap run, {deals} deals: {what} {mb:7.0f} MB", flush=True)
        return
    if args.driver:
        for n, mb in driver_memory(args.driver, 10 * max(1, len(schedule_of(json.loads(
                (args.driver / "tournament.json").read_text())) or {}) // 100), args.bots, args.players):
            print(f"driver journal: {n:>9} records  RSS {mb:7.0f} MB", flush=True)
        return
    global FORMAT
    FORMAT = args.format
    root = args.keep or args.out or Path(tempfile.mkdtemp(prefix="scale-bench"))
    print(f"{'records':>9} {'case':>12} {'wall s':>8} {'CPU s':>8} {'CPU µs/rec':>11} {'peak RSS MB':>12}")
    for n in args.sizes:
        folder = root / f"s{n}-p{args.players}"
        extra = max(1, n // 100)  # the update's new records: scheduled from the start, as a run does
        run = ratings_only if args.ratings_only else leaderboard
        full = _reused(folder) if args.keep else None
        if full is None:
            shutil.rmtree(folder, ignore_errors=True)
            make_journal(folder, n, args.bots, args.players, ahead=0 if args.no_incremental else extra)
            for f in folder.glob("checkpoint*"):
                f.unlink()
            full = run(folder)
            if args.keep:
                _keep_base(folder, full)
        mb = (folder / "matches.jsonl").stat().st_size / 2**20
        print(f"{n:>9} {'full':>12} {full['wall_s']:8.2f} {full['cpu_s']:8.2f} {1e6 * full['cpu_s'] / n:11.0f} "
              f"{full['rss_mb']:12.0f}   (journal {mb:.0f} MB)", flush=True)
        if args.no_incremental:
            continue
        saved = {f.name: f.read_bytes() for f in folder.glob("checkpoint*")}
        make_journal(folder, n + extra, args.bots, args.players, start=n)  # tournament.json as it was
        inc = run(folder)
        print(f"{n + extra:>9} {'+1% incr.':>12} {inc['wall_s']:8.2f} {inc['cpu_s']:8.2f} "
              f"{1e6 * inc['cpu_s'] / (n + extra):11.0f} {inc['rss_mb']:12.0f}", flush=True)
        # the same update after the schedule changed (one match more scheduled: every cached row
        # is classified against the new schedule again)
        for name, data in saved.items():
            (folder / name).write_bytes(data)
        meta_path = folder / "tournament.json"
        plain = meta_path.read_bytes()
        meta = json.loads(plain)
        meta.update(encode({**(schedule_of(meta) or {}), f"{folder.name}/extra/d99999/r00": "f" * 16}))
        meta_path.write_text(json.dumps(meta))
        moved = run(folder)
        meta_path.write_bytes(plain)
        print(f"{n + extra:>9} {'+1% new sched':>12} {moved['wall_s']:8.2f} {moved['cpu_s']:8.2f} "
              f"{1e6 * moved['cpu_s'] / (n + extra):11.0f} {moved['rss_mb']:12.0f}", flush=True)
        # the same update without the journal's cached prefix (every line parsed again, as before it)
        for name, data in saved.items():
            (folder / name).write_bytes(data)
        for name in ("checkpoint-journal.pkl", "checkpoint-journal.bin"):  # the journal cache, format <= 5 / 6
            (folder / name).unlink(missing_ok=True)
        old = run(folder)
        print(f"{n + extra:>9} {'+1% no jcache':>12} {old['wall_s']:8.2f} {old['cpu_s']:8.2f} "
              f"{1e6 * old['cpu_s'] / (n + extra):11.0f} {old['rss_mb']:12.0f}", flush=True)
        if args.no_driver:
            continue
        size = (folder / "matches.jsonl").stat().st_size
        drv = subprocess.run([sys.executable, __file__, "--driver", str(folder), "--bots", str(args.bots),
                              "--players", str(args.players)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        with open(folder / "matches.jsonl", "r+b") as f:  # the driver's records are not the bench's: cut them
            f.truncate(size)
        print(drv.stdout.rstrip() or drv.stderr[-2000:], flush=True)
    if args.out is None and args.keep is None:
        shutil.rmtree(root, ignore_errors=True)


def _keep_base(folder: Path, full: dict) -> None:
    """Save what :func:`_reused` restores: the full rebuild's checkpoints, ``tournament.json``,
    the journal's size and the rebuild's figures, in ``folder/base``."""
    base = folder / "base"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir()
    for f in [*folder.glob("checkpoint*"), folder / "tournament.json"]:
        shutil.copy(f, base / f.name)
    (base / "figures.json").write_text(json.dumps({**full, "journal_bytes": (folder / "matches.jsonl").stat().st_size}))


def _reused(folder: Path) -> dict | None:
    """The full rebuild's figures of a kept ``folder`` with the folder put back as the rebuild
    left it (journal cut to its size then, its checkpoints and ``tournament.json``); None if
    there is none to reuse."""
    try:
        full = json.loads((folder / "base" / "figures.json").read_text())
    except (OSError, ValueError):
        return None
    with open(folder / "matches.jsonl", "r+b") as f:
        f.truncate(int(full.pop("journal_bytes")))
    for f in folder.glob("checkpoint*"):
        f.unlink()
    for f in (folder / "base").iterdir():
        if f.name != "figures.json":
            shutil.copy(f, folder / f.name)
    print(f"(reused {folder}: the full rebuild's figures as measured then)", flush=True)
    return full


if __name__ == "__main__":
    main()
