"""What the paired SPRT design saves, and what separating two ISMCTS budgets costs (issue 16).

1. **Variance saved by pairing**, on three games: candidate greedy, baseline random, the
   other seats the baseline (``arena sprt``'s default duplicate replacement). The matches are
   played through the real pipeline (an ``mode: sprt`` schedule, :func:`arena.driver.
   run_tournament` inline). From the same matches, per block of ``2·players`` matches:

   * paired: ``Var(D)``, ``D`` = mean candidate reward − mean baseline reward of the block;
   * unpaired: ``(Var(c) + Var(b)) / players`` — the variance of the same difference when the
     ``players`` candidate and ``players`` baseline matches are independent matches (other
     deals, random seats), from the per-match variances ``Var(c)``, ``Var(b)``.

   ``saved = unpaired / paired`` is the factor of matches the design saves at equal precision.

2. **ISMCTS 400 vs 200 iterations** (``bots/ismcts_bot.py --iterations``), head-to-head game
   pairs (``--design pairs``) in a two-player game: the measured block scores give the
   normalized Elo (± 95 %) and, resampling them, the GSPRT's average number of pairs at the
   default bounds (nElo [0, 40], α = β = 0.05) and its probability of accepting H1.

Run: ``python bench/sprt_design.py --quick`` (a few minutes) or without ``--quick``.
The CPU is shared while measuring: figures are noisy in time, not in what they count.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from arena.driver import run_tournament  # noqa: E402
from arena.gsprt import estimate, grid  # noqa: E402
from arena.journal import read_records  # noqa: E402
from arena.record import MatchRecord  # noqa: E402
from arena.sprt.setup import build  # noqa: E402
from arena.sprt.simulate import simulate  # noqa: E402

GAMES = [("agram", 3, {}), ("sedma", 2, {}), ("cuckoo", 3, {"lives": 1})]
GREEDY, RANDOM = "python bots/greedy_bot.py", "python bots/random_bot.py"


def play(game: str, players: int, options: dict, cand: str, base: str, blocks: int, design: str,
         folder: Path) -> list[MatchRecord]:
    """Play ``blocks`` blocks of the design inline; the journal's records."""
    t = build(game, cand, base, opponents=[], players=players, options=options,
              sprt={"design": design, "max_matches": blocks * (2 if design == "pairs" else 2 * players)},
              clock={"move_ms": 5000, "bank_ms": 60000}, name="bench", salt="sprt-design", config=None,
              workers=1)
    run_tournament(t, folder, inline=True)
    return read_records(folder / "bench")


def variance_saved(game: str, players: int, options: dict, blocks: int) -> dict:
    """Paired against unpaired variance of the candidate-minus-baseline difference (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        recs = play(game, players, options, GREEDY, RANDOM, blocks, "replace", Path(tmp))
    c: dict[int, list[float]] = {}
    b: dict[int, list[float]] = {}
    for r in recs:
        if not r.finished:
            continue
        (c if r.lineup == "candidate" else b).setdefault(r.deal_index, []).append(r.rewards[r.rotation])
    ds = sorted(d for d in c if len(c[d]) == players and len(b.get(d, [])) == players)
    diff = np.array([np.mean(c[d]) - np.mean(b[d]) for d in ds])
    vc = float(np.var([x for d in ds for x in c[d]], ddof=1))
    vb = float(np.var([x for d in ds for x in b[d]], ddof=1))
    paired = float(np.var(diff, ddof=1))
    unpaired = (vc + vb) / players
    return {"game": game, "players": players, "blocks": len(ds), "matches": 2 * players * len(ds),
            "mean_diff": float(diff.mean()), "var_paired": paired, "var_unpaired": unpaired,
            "saved": unpaired / paired if paired > 0 else float("inf")}


def ismcts_pairs(game: str, blocks: int, runs: int, design: str = "pairs", players: int = 2) -> dict:
    """ISMCTS 400 against 200 iterations (game pairs, or duplicate replacement with the 200-iteration
    bot in the other seats): nElo and the GSPRT's cost by resampling the measured block scores."""
    c = "python bots/ismcts_bot.py --iterations 400 --hand-rollouts"
    b = "python bots/ismcts_bot.py --iterations 200 --hand-rollouts"
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        recs = play(game, players, {}, c, b, blocks, design, Path(tmp))
    by: dict[int, list[float]] = {}
    base: dict[int, list[float]] = {}
    for r in recs:
        if not r.finished:
            continue
        if design == "pairs":
            by.setdefault(r.deal_index, []).append(r.rewards[r.seats.index("candidate")])
        else:
            (by if r.lineup == "candidate" else base).setdefault(r.deal_index, []).append(r.rewards[r.rotation])
    if design == "pairs":
        xs = [sum(v) / 2 for v in by.values() if len(v) == 2]
    else:
        xs = [0.5 + (np.mean(by[d]) - np.mean(base[d])) / 2 for d in by
              if len(by[d]) == players and len(base.get(d, [])) == players]
    e = estimate(xs)
    values, counts = grid(xs)
    oc = simulate(values, counts / counts.sum(), 0.0, 40.0, runs=runs, max_blocks=3000, seed=1)
    return {"game": game, "players": players, "design": design, "blocks": len(xs), "seconds": time.monotonic() - t0, "score": e.score,
            "score_ci": e.score_ci, "nelo": e.nelo, "nelo_ci": e.nelo_ci, "sprt_h1": oc.rate("H1"),
            "sprt_h0": oc.rate("H0"), "sprt_asn_pairs": oc.asn,
            "sprt_pairs_90pct": float(np.quantile(oc.blocks, 0.9))}


def main() -> None:
    """Command line: see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer blocks (a few minutes)")
    ap.add_argument("--blocks", type=int, default=None, help="blocks per game for the variance (default 40; quick 15)")
    ap.add_argument("--ismcts-game", default="agram", help="two-player game of the ISMCTS pairs")
    ap.add_argument("--ismcts-blocks", type=int, default=None, help="ISMCTS pairs played (default 100; quick 30)")
    ap.add_argument("--ismcts-design", default="pairs", help="pairs (two players) or replace")
    ap.add_argument("--ismcts-players", type=int, default=2, help="players of the ISMCTS game")
    ap.add_argument("--only-ismcts", action="store_true", help="skip the variance measurement")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the tables")
    args = ap.parse_args()
    os.chdir(ROOT)
    blocks = args.blocks or (15 if args.quick else 40)
    iblocks = args.ismcts_blocks or (30 if args.quick else 100)
    var = [] if args.only_ismcts else [variance_saved(g, n, o, blocks) for g, n, o in GAMES]
    ism = ismcts_pairs(args.ismcts_game, iblocks, 400 if args.quick else 2000, args.ismcts_design,
                       args.ismcts_players)
    if args.json:
        print(json.dumps({"variance": var, "ismcts": ism}, indent=2))
        return
    print("| game | players | blocks | matches | mean D | Var paired | Var unpaired | saved |")
    print("|---|---|---|---|---|---|---|---|")
    for r in var:
        print(f"| {r['game']} | {r['players']} | {r['blocks']} | {r['matches']} | {r['mean_diff']:+.3f} | "
              f"{r['var_paired']:.4f} | {r['var_unpaired']:.4f} | {r['saved']:.2f}x |")
    print()
    i = ism
    unit = "game pairs" if i["design"] == "pairs" else f"{i['players']}-player duplicate-replacement blocks"
    print(f"ISMCTS 400 vs 200 iterations, {i['game']} {unit}: {i['blocks']} blocks in {i['seconds']:.0f} s; "
          f"score {i['score']:.3f} ({i['score_ci'][0]:.3f}-{i['score_ci'][1]:.3f}), nElo {i['nelo']:.0f} "
          f"({i['nelo_ci'][0]:.0f}-{i['nelo_ci'][1]:.0f}); GSPRT nElo [0, 40] on these pairs resampled: "
          f"H1 {i['sprt_h1']:.2f}, H0 {i['sprt_h0']:.2f}, average {i['sprt_asn_pairs']:.0f} blocks "
          f"(90 % within {i['sprt_pairs_90pct']:.0f})")


if __name__ == "__main__":
    main()
