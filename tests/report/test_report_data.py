"""The data report.html embeds: exact after decoding, and bounded by the bots, not the matches."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from arena.report_html import data, render
from arena.results import standings
from tests.arena.test_report import demo_records, make_folder
from tests.report.synth import synth_standings

MB = 1 << 20


def _embedded(page: str) -> dict:
    start = page.index('id="report-data">') + len('id="report-data">')
    return json.loads(page[start:page.index("</script>", start)])


def test_the_embedded_history_and_crosstable_decode_to_the_standings(tmp_path):
    st = standings(make_folder(tmp_path / "demo", demo_records()))
    d = _embedded(render(st))
    order = [r["bot"] for r in st.rows]
    assert d["bots"] == order and d["history"]["x"] == list(range(61))  # 60 rated matches: all kept
    mu = np.frombuffer(base64.b64decode(d["history"]["mu"]), "<i2").reshape(3, -1) / 100
    sg = np.frombuffer(base64.b64decode(d["history"]["sigma"]), "<i2").reshape(3, -1) / 100
    series = data.rating_series(st.ratings.history, order)
    for i, b in enumerate(order):
        assert np.abs(mu[i] - series[b][0]).max() <= 0.005 and np.abs(sg[i] - series[b][1]).max() <= 0.005
        assert mu[i][-1] == pytest.approx(st.ratings.ratings[b][0], abs=0.005)
    cells = np.frombuffer(base64.b64decode(d["cross"]["score"]), np.uint8).reshape(3, 3)
    counts = np.frombuffer(base64.b64decode(d["cross"]["count"]), "<u2").reshape(3, 3)
    for i, a in enumerate(order):
        assert cells[i, i] == data.NO_MATCH
        for j, b in enumerate(order):
            if i != j:
                assert abs(cells[i, j] / data.SCORE_SCALE - st.cross[a][b]["score"]) <= 0.5 / data.SCORE_SCALE
                assert counts[i, j] == st.cross[a][b]["matches"] == 60


def test_sampled_history_keeps_both_ends_and_the_value_at_each_point():
    hist = [{"a": (25.0 + i, 8.0 - i / 1000)} for i in range(1000)]
    at = data.sample_points(len(hist), points=11)
    assert list(at) == [0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]
    mu, sg = data.sampled_history(hist, ["a", "b"], (25.0, 8.0), at)
    assert list(mu[0]) == [25.0, *(25.0 + k - 1 for k in at[1:])]  # after match k: the (k-1)th update
    assert list(mu[1]) == [25.0] * 11 and sg[0][-1] == pytest.approx(8.0 - 999 / 1000)


@pytest.mark.slow
def test_the_page_is_bounded_at_1000_bots_and_does_not_grow_with_the_matches():
    small = len(render(synth_standings(1000, 20_000), generated="t").encode())
    large = len(render(synth_standings(1000, 200_000), generated="t").encode())
    assert large <= 5 * MB
    assert abs(large - small) <= 0.001 * small  # ten times the matches: the same page size (±0.1%)


def test_how_to_read_example_names_each_bots_own_rank_range():
    # new-user finding: "both show the rank range 1–4" when the second bot's range was 1–5
    from arena.report_html.tables_html import how_to_read_html

    a = {"bot": "mix1", "rank": 1, "rank_low": 1, "rank_high": 4, "strength": 60.0, "p_above_next": 0.56}
    b = {"bot": "mix0.9", "rank": 2, "rank_low": 1, "rank_high": 5, "strength": 57.0, "p_above_next": 0.6}
    text = how_to_read_html([a, b], 3)
    assert "their rank ranges overlap: 1–4 and 1–5" in text and "both show" not in text
    assert "both show the rank range 1–4" in how_to_read_html([a, {**b, "rank_high": 4}], 3)


def test_strengths_never_print_minus_or_plus_zero():
    # new-user finding: "-8 [-36, -0]" and "+95 [+0, +213]"
    from arena.render import _strength
    from arena.tables import elo_text

    assert [elo_text(x) for x in (-0.4, 0.3, 0.0, -8.2, 94.6, -0.5, 0.5)] == ["0", "0", "0", "-8", "+95", "0", "0"]
    assert _strength({"strength": -8.2, "strength_low": -36.0, "strength_high": -0.3}) == "-8 [-36, 0]"
