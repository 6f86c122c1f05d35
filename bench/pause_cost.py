"""What pausing a bot costs (``preset: competition``): :func:`arena.process.tree.stop_tree` then
:func:`cont_tree` on a real idle bot of 1 or 1 + N processes, in µs per pause, for the current
code against another version of ``tree.py`` (``--old FILE``, e.g. from ``git show REV:arena/process/tree.py``),
interleaved in rounds (the ratio is the figure: absolute times depend on the machine's load).

    python bench/pause_cost.py --old /tmp/tree_old.py [--children 0 20] [--rounds 6] [--n 500]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena.process import tree as new  # noqa: E402

IDLE = """
import os, sys, time
for _ in range(int(sys.argv[1])):
    if os.fork() == 0:
        time.sleep(1000)
        os._exit(0)
print("up", flush=True)
time.sleep(1000)
"""


def _load(path: str):
    """The module in the file ``path`` (another version of ``tree.py``)."""
    spec = importlib.util.spec_from_file_location("tree_old", path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def per_pause_us(mod, pid: int, n: int) -> float:
    """µs per ``cont_tree(stop_tree(pid))`` of the tree module ``mod``, over ``n`` pauses."""
    t = time.perf_counter()
    for _ in range(n):
        mod.cont_tree(mod.stop_tree(pid))
    return 1e6 * (time.perf_counter() - t) / n


def main() -> None:
    """Command line: print the median µs a pause and the new/old ratio per round, per tree size."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--children", type=int, nargs="+", default=[0, 20])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--n", type=int, default=500)
    args = ap.parse_args()
    old = _load(args.old)
    for k in args.children:
        p = subprocess.Popen([sys.executable, "-c", IDLE, str(k)], stdout=subprocess.PIPE, start_new_session=True)
        assert p.stdout is not None and p.stdout.readline().strip() == b"up"
        got: dict[str, list[float]] = {"old": [], "new": []}
        try:
            for r in range(args.rounds):
                for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
                    got[name].append(per_pause_us(old if name == "old" else new, p.pid, args.n))
        finally:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        med = {n: sorted(v)[len(v) // 2] for n, v in got.items()}
        ratios = sorted(b / a for a, b in zip(got["old"], got["new"]))
        print(f"{1 + k:>3} processes: old {med['old']:7.0f} µs, new {med['new']:7.0f} µs a pause+continue; "
              f"new/old per round {', '.join(f'{x:.2f}' for x in ratios)}")


if __name__ == "__main__":
    main()
