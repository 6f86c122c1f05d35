"""Adaptive lineups against ``sample`` (issue 18): matches saved for the same rank-interval width.

A synthetic field (``--bots`` bots, log-strengths evenly spread over ``[-spread/2, spread/2]``,
free-for-all lineups of ``--players``; the model of :mod:`arena.adaptive_sim`) plays

* ``lineups: {sample: {per_bot: M}}`` for every ``M`` of ``--per-bot`` (the width-versus-matches curve);
* ``lineups: {adaptive: {max_matches: B}}`` for the budget ``B`` of ``sample`` at ``--budget-per-bot``.

Each with the same seeds (``--seeds``). Printed: mean rank-interval width of the final table
(the table's 200-replicate bootstrap), coverage of the true ranks, and the matches ``sample``
needs for the adaptive design's width (linear interpolation of its curve), i.e. matches saved.

Run::

    python bench/adaptive.py --bots 60 --players 3 --per-bot 12 18 24 30 36 42 --budget-per-bot 24
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena import adaptive  # noqa: E402
from arena import adaptive_sim as sim  # noqa: E402


def main() -> None:
    """Parse the options, run both designs, print one table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, default=60)
    ap.add_argument("--players", type=int, default=3)
    ap.add_argument("--spread", type=float, default=3.0, help="range of log-strengths (3.0: ±260 Elo)")
    ap.add_argument("--per-bot", type=int, nargs="+", default=[12, 18, 24, 30, 36, 42])
    ap.add_argument("--budget-per-bot", type=int, nargs="+", default=[24])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--per-round", type=int, default=2)
    ap.add_argument("--first", type=int, default=4)
    ap.add_argument("--explore", type=float, default=0.2)
    a = ap.parse_args()
    theta = np.linspace(-a.spread / 2, a.spread / 2, a.bots)
    print(f"field: {a.bots} bots, {a.players} players, θ spread {a.spread}, seeds {a.seeds}", flush=True)
    curve = []
    for m in a.per_bot:
        t0 = time.process_time()
        rows = [sim.table(theta, sim.run_sample(theta, a.players, m, 1, s)) for s in range(a.seeds)]
        w = [r["width"] for r in rows]
        curve.append((np.mean([r["matches"] for r in rows]), float(np.mean(w))))
        print(f"sample per_bot {m:3d}: {curve[-1][0]:7.0f} matches  width {np.mean(w):6.2f} "
              f"(sd {np.std(w, ddof=1) if len(w) > 1 else 0:4.2f})  coverage {np.mean([r['coverage'] for r in rows]):.3f}"
              f"  cpu {time.process_time() - t0:.0f} s", flush=True)
    xs, ys = np.array([c[0] for c in curve]), np.array([c[1] for c in curve])
    for b in a.budget_per_bot:
        budget = -(-b * a.bots // a.players) * a.players
        cfg = adaptive.AdaptiveLineups(max_matches=budget, per_round=a.per_round, first=a.first, explore=a.explore)
        t0 = time.process_time()
        rows = [sim.table(theta, sim.run_adaptive(theta, a.players, cfg, 1, s)) for s in range(a.seeds)]
        w = float(np.mean([r["width"] for r in rows]))
        order = np.argsort(ys)  # width falls with matches: interpolate matches at width w
        need = float(np.interp(w, ys[order], xs[order], left=np.nan, right=np.nan))
        same = float(np.interp(budget, xs, ys))
        saved = f"{1 - budget / need:.0%}" if np.isfinite(need) else "beyond the curve"
        print(f"adaptive budget {budget:6d}: width {w:6.2f} (sd {np.std([r['width'] for r in rows], ddof=1):4.2f}; "
              f"sample at the same matches {same:6.2f})  coverage {np.mean([r['coverage'] for r in rows]):.3f}  "
              f"sample needs {need:7.0f} matches for it: saved {saved}  cpu {time.process_time() - t0:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
