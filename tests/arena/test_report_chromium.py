"""report.html opens in headless Chromium: a screenshot shows the table and the plots.

Needs Debian's ``chromium`` (installed by ``.ci/run``). Skipped only when it is absent and
the ``CI`` environment variable is not set; in CI a missing browser fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import to_rgb
from PIL import Image

from arena import report_html
from arena.results import export, standings
from tests.arena.test_report import demo_records, make_folder
from tests.conftest import require

WIDTH, HEIGHT = 1200, 1600


def _chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    require(exe is not None, "chromium is not installed (Debian: apt-get install chromium)")
    return exe


def _run(exe: str, tmp_path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-quic", f"--user-data-dir={profile}",
           "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def _near(img: np.ndarray, colour, tol: int) -> np.ndarray:
    rgb = np.array([round(c * 255) for c in to_rgb(colour)])
    return (np.abs(img.astype(int) - rgb) <= tol).all(axis=-1)


def test_report_renders_in_headless_chromium(tmp_path):
    exe = _chromium()
    folder = make_folder(tmp_path / "demo", demo_records())
    st = standings(folder)
    export(folder, st)
    page = (folder / "report.html").resolve()
    shot = tmp_path / "shot.png"
    done = _run(exe, tmp_path, f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}", page.as_uri())
    assert shot.exists(), f"no screenshot; chromium said: {done.stderr[-2000:]}"
    im = Image.open(shot).convert("RGB")
    assert im.size == (WIDTH, HEIGHT)
    px = np.asarray(im)

    # not blank: many colours, and not one colour over most of the page
    colours, counts = np.unique(px.reshape(-1, 3), axis=0, return_counts=True)
    assert len(colours) > 500
    assert counts.max() < 0.8 * WIDTH * HEIGHT

    # the leaderboard table: its header row has the header background across most of the width
    header = _near(px, report_html.HEADER_BG, 2)
    header_rows = np.flatnonzero(header.sum(axis=1) > 0.7 * WIDTH * 0.85)
    assert len(header_rows) >= 20, "no leaderboard header row rendered"
    table_top = header_rows.min()

    # the rating plot, below the table: each bot's line in its colour
    order = [r["bot"] for r in st.rows]
    cols = report_html.bot_colours(order)
    below = px[table_top + 200:]
    for b in order:
        n = int(_near(below, cols[b], 12).sum())
        assert n > 500, f"{b}'s rating line ({cols[b]}) hardly visible: {n} pixels"

    # the crosstable heatmap: the cell of the first two bots in the colour of its score
    cmap = colormaps[report_html.HEATMAP_CMAP]
    for a, b in ((order[0], order[1]), (order[1], order[0])):
        s = st.cross[a][b]["score"]
        n = int(_near(below, cmap(s)[:3], 6).sum())
        assert n > 1500, f"heatmap cell {a} vs {b} (score {s:.2f}) not found: {n} pixels"

    # and the DOM Chromium built holds the table rows and the three plots
    dom = _run(exe, tmp_path, "--dump-dom", page.as_uri()).stdout
    for b in order:
        assert f'<tr data-bot="{b}">' in dom
    assert dom.count('src="data:image/png;base64,') == 3
    assert "Duplicate efficiency:" in dom
