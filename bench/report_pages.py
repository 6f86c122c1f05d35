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
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.report_html import render  # noqa: E402
from tests.report.synth import synth_standings  # noqa: E402


def measure(n_bots: int, n_matches: int) -> tuple[int, float]:
    """Size (bytes) and render time (s) of report.html for one synthetic field."""
    st = synth_standings(n_bots, n_matches)
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
    """Command line: build the synthetic fields, print sizes and times, write screenshots."""
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
