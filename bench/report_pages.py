"""report.html at field size (issue 22): page size and render time at 1,000 bots and 1M matches,
and the screenshots of docs/report.md.

A 1M-match journal takes hours to rate, so the 1M case synthesises what the page reads —
the per-bot rows, a dense 1,000 × 1,000 crosstable (every pair met: the worst case for the
page) and a TrueSkill history of 1M rated matches of 3 bots each — and renders it; the page
must not grow with the number of matches, so the same field is also rendered with 10k matches
and the sizes compared.

Run::

    python bench/report_pages.py                 # the size/time table (docs/benchmarks.md)
    python bench/report_pages.py --shots docs/img   # also the three screenshots
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena import tables  # noqa: E402
from arena.ratings import RatingResult  # noqa: E402
from arena.report_html import render  # noqa: E402
from arena.tables import Standings  # noqa: E402
from tests.report.synth import bot_names  # noqa: E402


def field(n_bots: int, n_matches: int, seed: int = 3) -> Standings:
    """Standings of a synthetic field: rows, a dense crosstable, a history of ``n_matches``."""
    rng = random.Random(seed)
    bots = bot_names(n_bots, seed)
    mu = {b: rng.gauss(25, 3) for b in bots}
    sigma = {b: rng.uniform(0.8, 2.5) for b in bots}
    steps = [(round(rng.gauss(25, 4), 2), round(rng.uniform(0.8, 8.3), 2)) for _ in range(4096)]
    history = [{b: steps[(i * 7 + k) % 4096] for k, b in enumerate(rng.sample(bots, 3))} for i in range(n_matches)]
    rows = []
    for b in sorted(bots, key=lambda b: -(mu[b] - 3 * sigma[b])):
        m = rng.randint(2000, 4000)
        w = rng.randint(0, m)
        s = w / m
        rows.append({"bot": b, "mu": mu[b], "sigma": sigma[b], "conservative": mu[b] - 3 * sigma[b], "matches": m,
                     "wins": w, "win_rate": s, "mean_rank": 1 - s, "score": s, "score_low": max(0, s - .02),
                     "score_high": min(1, s + .02), "faults": 0, "forfeits": 0})
    for i, r in enumerate(rows):
        r["rank"] = i + 1
        r["p_above_next"] = tables.skill_above(r, rows[i + 1]) if i + 1 < len(rows) else None
    cross = {a: {b: {"score": rng.random(), "matches": rng.randint(1, 20)} for b in bots if b != a} for a in bots}
    rel = {b: {"faults": dict.fromkeys(tables.FAULT_CLASSES, 0), "moves": 10_000, "p50_ms": 1.2, "p99_ms": 7.5,
               "first_fault": None} for b in bots}
    meta = {"name": f"field-{n_bots}", "game": "agram", "players": 3, "bots": bots, "ratings": {}}
    return Standings(meta["name"], meta, [], RatingResult({b: (mu[b], sigma[b]) for b in bots}, history), rows,
                     cross, rel, {"factor": float("nan"), "blocks": 0})


def measure(n_bots: int, n_matches: int) -> tuple[int, float]:
    st = field(n_bots, n_matches)
    t = time.perf_counter()
    page = render(st, generated="bench")
    return len(page.encode()), time.perf_counter() - t


def shots(out: Path) -> None:
    """The docs screenshots: 3 (the demo), 60 and 1,000 bots from synthetic journals, in Chromium."""
    from arena.results import export, standings
    from tests.arena.test_report import demo_records, make_folder
    from tests.report.browser import Page
    from tests.report.synth import synth_folder

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for n, matches in ((3, None), (60, 1440), (1000, 4000)):
            folder = (make_folder(Path(tmp) / "demo", demo_records()) if matches is None
                      else synth_folder(Path(tmp) / f"s{n}", n, matches)[0])
            st = standings(folder)
            export(folder, st)
            page = Page(str(Path(tmp) / f"profile{n}"), width=1200, height=900)
            try:
                page.open((folder / "report.html").resolve().as_uri())
                if n > 3:  # show a pick: the search finds a bot low in the table
                    page.type("#search", st.rows[-1]["bot"])
                    page.js("document.getElementById('search').blur(); window.scrollTo(0, 0)")
                (out / f"report-{n}.png").write_bytes(page.screenshot())
            finally:
                page.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=Path, help="write report-3/60/1000.png into this folder")
    a = ap.parse_args()
    print("| bots | rated matches | page size | render time |\n|---:|---:|---:|---:|")
    for n, m in ((60, 1_440), (1000, 10_000), (1000, 1_000_000)):
        size, dt = measure(n, m)
        print(f"| {n:,} | {m:,} | {size / 2**20:.2f} MB | {dt:.1f} s |", flush=True)
    if a.shots:
        shots(a.shots)


if __name__ == "__main__":
    main()
