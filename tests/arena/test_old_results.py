"""Results folders written by the previous version still load and give the same tables.

``tests/arena/data/<name>/`` holds the journal (``matches.jsonl``), ``tournament.json`` and
``secret.json`` of three small tournaments played with the code before issue 14's
restructuring (``data/old-results.yaml``, ``arena run --all --inline``): a free-for-all
Agram tournament with a bot that never starts (start-up crashes, then ``disabled``
forfeits), Sedma 4p with ``partners: self`` and Sedma 4p with ``partners: mixed``. Next to
them: that version's ``arena leaderboard --format json`` output and its
``crosstable.json`` / ``reliability.json`` exports.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app

DATA = Path(__file__).parent / "data"
FOLDERS = ("agram-old", "sedma4p-old", "sedma-mixed-old")


def _same(a, b, where: str) -> None:
    """Equal JSON values, floats to 1e-9 relative."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), where
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {a} != {b}"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: {a} != {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize("name", FOLDERS)
def test_a_results_folder_of_the_previous_version_gives_the_same_tables(tmp_path, name):
    folder = tmp_path / name
    shutil.copytree(DATA / name, folder)
    runner = CliRunner()
    out = runner.invoke(app, ["leaderboard", str(folder), "--format", "json", "--write"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    want = json.loads((DATA / name / "leaderboard.expected.json").read_text())
    # issue 21 changed the table on purpose: rows are ordered by the batch fit (with rank
    # intervals, strength and P(>next) from it) and the mean rank is 1-based; every number
    # of the previous table — TrueSkill with the recorded tau, counts, scores — is unchanged
    new_keys = {"rank", "strength", "strength_low", "strength_high", "rank_low", "rank_high", "p_above_next"}
    got_rows = {r["bot"]: {k: v for k, v in r.items() if k not in new_keys} for r in got["rows"]}
    want_rows = {r["bot"]: {k: v for k, v in r.items() if k not in new_keys} for r in want["rows"]}
    for r in want_rows.values():
        r["mean_rank"] = r["mean_rank"] + 1 if r["mean_rank"] is not None else None
    _same(got_rows, want_rows, name)
    # every key of the previous document is unchanged (it now is leaderboard.json's, with more keys)
    _same({k: got.get(k) for k in want if k != "rows"}, {k: v for k, v in want.items() if k != "rows"}, name)
    assert got == json.loads((folder / "leaderboard.json").read_text())  # --format json is leaderboard.json
    md = runner.invoke(app, ["leaderboard", str(folder), "--format", "md"])
    assert md.output == (folder / "leaderboard.md").read_text() and "Ordered by strength" in md.output
    assert [r["rank"] for r in got["rows"]] == list(range(1, len(got["rows"]) + 1))
    for export in ("crosstable", "reliability"):
        _same(json.loads((folder / f"{export}.json").read_text()),
              json.loads((DATA / name / f"{export}.expected.json").read_text()), f"{name}/{export}")
    assert (folder / "report.html").stat().st_size > 10_000


def test_the_old_folders_cover_faults_disabled_bots_and_both_partnership_kinds():
    """The fixtures hold what the tables must handle: start-up crashes, disabled forfeits,
    partners: self (one bot per side) and partners: mixed (two bots per side)."""
    agram = [json.loads(x) for x in (DATA / "agram-old" / "matches.jsonl").read_text().splitlines()]
    classes = {f["class"] for r in agram for f in r["faults"]}
    assert classes == {"crash", "disabled"}
    assert sum(r["status"] == "forfeit" for r in agram) == 18
    mixed = json.loads((DATA / "sedma-mixed-old" / "tournament.json").read_text())
    assert mixed["partners"] == "mixed"
    own = json.loads((DATA / "sedma4p-old" / "tournament.json").read_text())
    assert own["partners"] == "self"
