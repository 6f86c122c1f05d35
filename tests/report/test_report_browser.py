"""report.html at 3, 60 and 1,000 bots in headless Chromium (issue 22).

Each size is rendered from a results folder (a real tournament shape for 3 bots, synthetic
journals written through the arena's journal for 60 and 1,000), opened from disk, and checked:
no script error and no request beyond the file itself, the leaderboard shows the top rows,
searching finds a bot (its rows appear, its rating line is drawn, its crosstable row is shown),
sorting reorders by the column, no two axis labels overlap, and the file stays within its bound.
"""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from arena.results import export, standings
from tests.arena.test_report import demo_records, make_folder
from tests.report.browser import Page
from tests.report.checks import TICK_RECTS, line_points, overlaps, plotted, visible_rows
from tests.report.synth import synth_folder

SIZES = {3: None, 60: 1440, 1000: 4000}  # bots -> synthetic matches (3: the demo tournament)
MB = 1 << 20


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    out = {}

    def build(n):
        if n not in out:
            path = tmp_path_factory.mktemp(f"report{n}")
            folder = make_folder(path / "demo", demo_records()) if SIZES[n] is None else synth_folder(
                path / "synth", n, SIZES[n])[0]
            st = standings(folder)
            export(folder, st)
            out[n] = (folder, st)
        return out[n]
    return build


def _page(tmp_path, folder) -> Page:
    page = Page(str(tmp_path / "profile"), width=1200, height=900)
    page.open((folder / "report.html").resolve().as_uri())
    return page


@pytest.mark.parametrize("n", [3, 60, pytest.param(1000, marks=pytest.mark.slow)])
def test_report_in_chromium(n, folders, tmp_path):
    folder, st = folders(n)
    order = [r["bot"] for r in st.rows]
    size = (folder / "report.html").stat().st_size
    assert size <= 5 * MB, f"{size / MB:.2f} MB at {n} bots"
    page = _page(tmp_path, folder)
    try:
        assert page.errors == []
        assert page.requests == [(folder / "report.html").resolve().as_uri()]  # nothing else fetched
        # the leaderboard: every row for a handful, the top 25 for a field; the plot: the top 5
        assert visible_rows(page, "leaderboard") == order[:25 if n > 40 else n]
        assert plotted(page) == order[:5]
        shot = page.screenshot()
        (tmp_path / f"report-{n}.png").write_bytes(shot)
        w, h = Image.open(io.BytesIO(shot)).size
        assert w == 1200 and h > 900
        # axis labels: none overlaps another, before and after picking a bot
        ticks = page.js(TICK_RECTS)
        assert len(ticks["rating-xtick"]) >= 3 and len(ticks["rating-ytick"]) >= 3
        if n > 30:
            assert len(ticks["heat-xaxis"]) >= 3 and len(ticks["heat-yaxis"]) >= 3
        for box, rects in ticks.items():
            assert overlaps(rects) == [], f"{box}: overlapping labels"

        # search for a bot low in the table: its rows show, its line is drawn, its crosstable row
        target = order[-1]
        page.type("#search", target)
        assert target in visible_rows(page, "leaderboard") and target in visible_rows(page, "reliability")
        assert all(target.lower() in b.lower() for b in visible_rows(page, "leaderboard"))
        assert plotted(page) == [*order[:5], target] if n > 5 else plotted(page) == order
        assert line_points(page, target) >= 2 * min(len(st.ratings.history) + 1, 200)
        legend = page.js("[...document.querySelectorAll('#rating-legend li')].map(li => li.dataset.bot)")
        assert target in legend
        grid = page.js("[...document.querySelectorAll('#cross-grid tbody tr')].map(r => r.dataset.bot)")
        assert target in grid
        if n > 30:
            head = page.js("document.querySelector('#cross-row h3').textContent")
            assert head == f"#{n} {target} against each opponent"
            listed = page.js("[...document.querySelectorAll('#cross-row tbody tr')].map(r => "
                             "[r.dataset.bot, +r.cells[1].textContent])")
            met = st.cross.get(target, {})
            assert listed and len({b for b, _ in listed}) == min(len(listed), len(met))
            for b, s in listed:  # each listed score is the crosstable's (bytes of 1/250, shown to 0.01)
                assert abs(s - met[b]["score"]) <= 0.0071, (target, b)
        else:  # every cell of the grid shows its crosstable score
            cells = page.js("[...document.querySelectorAll('#cross-grid tbody tr')].map(r => "
                            "[...r.querySelectorAll('td')].map(c => c.firstChild ? c.firstChild.textContent : ''))")
            for a, row in zip(order, cells):
                for b, text in zip(order, row):
                    c = st.cross.get(a, {}).get(b)
                    assert (text == "") == (c is None or a == b), (a, b)
                    if text:
                        assert abs(float(text) - c["score"]) <= 0.0071, (a, b)
        for box, rects in page.js(TICK_RECTS).items():
            assert overlaps(rects) == [], f"{box}: overlapping labels with {target} picked"
        assert page.errors == []
    finally:
        page.close()


def test_sorting_and_clicking_rows(folders, tmp_path):
    folder, st = folders(60)
    page = _page(tmp_path, folder)
    try:
        page.click('#leaderboard th[data-key="wins"]')  # ascending first
        page.click('#leaderboard th[data-key="wins"]')  # then descending
        shown = visible_rows(page, "leaderboard")
        wins = {r["bot"]: r["wins"] for r in st.rows}
        every = page.js("[...document.querySelectorAll('#leaderboard tbody tr')].map(r => r.dataset.bot)")
        assert [wins[b] for b in every] == sorted(wins.values(), reverse=True)
        assert len(shown) == 25
        # "show all" shows every row; a click on a row picks its bot for the plot
        page.click("#show-all")
        assert len(visible_rows(page, "leaderboard")) == 60
        b = st.rows[40]["bot"]
        page.click(f'#leaderboard tr[data-bot={json.dumps(b)}] td:first-child')
        assert b in plotted(page)
        assert page.js(f"document.querySelector('#leaderboard tr[data-bot={json.dumps(b)}]').classList.contains('picked')")
        page.click(f'#rating-legend li[data-bot={json.dumps(b)}] button')  # × drops it again
        assert b not in plotted(page)
        assert page.errors == []
    finally:
        page.close()


def test_a_tournament_without_matches_yet_loads_cleanly(tmp_path):
    folder = make_folder(tmp_path / "empty", [])
    export(folder, standings(folder))
    page = _page(tmp_path, folder)
    try:
        assert page.errors == []
        assert visible_rows(page, "leaderboard") == ["alpha", "beta", "gamma"]  # every bot at the prior
        assert plotted(page) == ["alpha", "beta", "gamma"]
        assert page.js("document.querySelectorAll('#cross-grid td.cell:not(.empty)').length") == 0
    finally:
        page.close()
