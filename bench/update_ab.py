"""The incremental update of a kept scale journal, two versions of the code interleaved (issue 18).

``bench/scale.py --keep DIR`` leaves ``DIR/s<n>-p<players>/`` with the full rebuild's checkpoints in
``base/`` and the journal 1% longer. Each run here puts those checkpoints back, then times ``arena
leaderboard --format csv`` in a fresh process of one tree (wall, user+sys CPU, peak RSS in MiB from
``wait4``), alternating the trees pair by pair, and says whether both printed the same table::

    git worktree add /tmp/old <rev>      # (copy the compiled *.so files in for a like-for-like run)
    python bench/update_ab.py DIR/s1000000-p4 --old /tmp/old [--pairs 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def restore(folder: Path) -> None:
    """The folder as the full rebuild left its checkpoints (``base/``, from ``bench/scale.py --keep``)."""
    for f in folder.glob("checkpoint*"):
        f.unlink()
    for f in (folder / "base").iterdir():
        if f.name != "figures.json":
            shutil.copy(f, folder / f.name)


def run(tree: Path, folder: Path) -> tuple[float, float, float, bytes]:
    """``(wall s, CPU s, peak RSS MiB, stdout)`` of one update with the code of ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "leaderboard", str(folder), "--format", "csv"],
                            cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status:
        raise SystemExit(f"{tree}: arena leaderboard failed (status {status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, out  # ru_maxrss: KiB on Linux


def main() -> None:
    """Command line: ``FOLDER --old TREE [--new TREE] [--pairs N]``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--old", type=Path, required=True, help="the other version's source tree")
    ap.add_argument("--new", type=Path, default=ROOT, help="this version's tree (default: this checkout)")
    ap.add_argument("--pairs", type=int, default=4)
    args = ap.parse_args()
    print(f"{'pair':>4} {'tree':>4} {'wall s':>7} {'CPU s':>6} {'peak MiB':>9}")
    for i in range(1, args.pairs + 1):
        tables = []
        for name, tree in (("old", args.old), ("new", args.new)):
            restore(args.folder)
            wall, cpu, mib, out = run(tree, args.folder)
            tables.append(out)
            print(f"{i:>4} {name:>4} {wall:7.2f} {cpu:6.2f} {mib:9.0f}", flush=True)
        print("     same table" if tables[0] == tables[1] else "     TABLES DIFFER", flush=True)


if __name__ == "__main__":
    main()
