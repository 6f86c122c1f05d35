"""A results folder someone else wrote: no writes through links, no file names from its data, no traceback.

Adversarial findings (session 7): `arena leaderboard DIR --write` wrote `leaderboard.csv` through a
planted symbolic link and `bots/<name>.html` for a bot named with a path in `tournament.json`; a
bot name holding `<!--<script>` stopped report.html's script; damaged fields ended in tracebacks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import checkpoint
from arena.report_html.page import _json_script
from arena.results_folder import check_meta

ROOT = Path(__file__).resolve().parents[2]
OLD = Path(__file__).parent / "data" / "agram-old"


def arena(*args: str) -> subprocess.CompletedProcess:
    """The command's result (a console wide enough not to wrap its message)."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "2000"})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dst = tmp_path / "agram-old"
    shutil.copytree(OLD, dst)
    return dst


def test_a_planted_link_is_refused_and_its_target_untouched(folder: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("ORIGINAL")
    (folder / "leaderboard.csv").symlink_to(victim)
    out = arena("leaderboard", str(folder), "--write")
    assert out.returncode == 2, out.stderr
    assert "leaderboard.csv is a symbolic link" in out.stderr and "Traceback" not in out.stderr
    assert victim.read_text() == "ORIGINAL"
    # the same folder without the link writes its tables (the check is what stopped it)
    (folder / "leaderboard.csv").unlink()
    assert arena("leaderboard", str(folder), "--write").returncode == 0
    assert not (folder / "leaderboard.csv").is_symlink() and (folder / "leaderboard.csv").stat().st_size > 100


def test_a_link_in_a_page_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (folder / "bots").symlink_to(tmp_path / "elsewhere")
    out = arena("leaderboard", str(folder), "--write")
    assert out.returncode == 2 and "bots is a symbolic link" in out.stderr
    assert not list((tmp_path / "elsewhere").iterdir())


def test_a_bot_name_with_a_path_is_refused(folder: Path, tmp_path: Path) -> None:
    bad = str(tmp_path / "ESCAPED")
    for name in ("tournament.json", "matches.jsonl"):
        p = folder / name
        p.write_text(p.read_text().replace('"broken"', json.dumps(bad)))
    out = arena("leaderboard", str(folder), "--write")
    assert out.returncode == 2, out.stderr
    assert "'bots' holds" in out.stderr and "not a bot name" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "ESCAPED.html").exists()


@pytest.mark.parametrize("edit, words", [
    ({"ratings": {"sigma": 0}}, "'ratings.sigma' is 0"),
    ({"ratings": {"tau": 1e308}}, "'ratings.tau' is 1e+308"),
    ({"ratings": {"mu": float("nan")}}, "'ratings.mu' is nan"),
    ({"bots": [1, 2, 3]}, "'bots' is not a list of bot names"),
    ({"bots": "evil"}, "'bots' is not a list of bot names"),
    ({"bots": ["a", "a"]}, "names a bot twice"),
    ({"players": 0}, "'players' is 0"),
    ({"name": "../x"}, "'name' is '../x'"),
])
def test_damaged_fields_are_named(edit: dict, words: str) -> None:
    meta = json.loads((OLD / "tournament.json").read_text())
    meta.update(edit)
    with pytest.raises(Exception) as e:
        check_meta(meta, "t.json")
    assert words in str(e.value) and str(e.value).startswith("t.json: ")
    check_meta(json.loads((OLD / "tournament.json").read_text()), "t.json")  # the real one passes


def test_damaged_tournament_json_is_one_paragraph(folder: Path) -> None:
    (folder / "tournament.json").write_text("{not json")
    out = arena("leaderboard", str(folder))
    assert out.returncode == 2 and "is not valid JSON" in out.stderr and "Traceback" not in out.stderr
    (folder / "tournament.json").write_text("{}")
    out = arena("leaderboard", str(folder))
    assert out.returncode == 2 and "'name' is None" in out.stderr and "Traceback" not in out.stderr


def test_every_lt_in_the_report_data_is_escaped() -> None:
    # `<!--` inside a script element puts the HTML parser in its escaped state: `</script>` no
    # longer ends it and the page's own script never runs
    text = _json_script({"bots": ["x<!--<script>", "</script>"]})
    body = text.removeprefix('<script type="application/json" id="report-data">').removesuffix("</script>")
    assert "<" not in body
    assert json.loads(body) == {"bots": ["x<!--<script>", "</script>"]}


def test_rebuild_drops_a_tampered_cache(folder: Path) -> None:
    # caches are trusted when their journal prefix matches (a folder from elsewhere: --rebuild)
    truth = arena("leaderboard", str(folder), "--format", "csv")
    assert truth.returncode == 0, truth.stderr
    ck = json.loads((folder / "checkpoint.json").read_text())
    for snap in [*ck["snapshots"], ck]:
        cur = snap.get("cur")
        if cur:  # swap the first two bots' rating states
            cur[0][1:], cur[1][1:] = cur[1][1:], cur[0][1:]
    ck.pop("crc")
    (folder / "checkpoint.json").write_text(json.dumps({**ck, "crc": checkpoint._crc(ck)}))  # a tamperer's own CRC
    trusted = arena("leaderboard", str(folder), "--format", "csv")
    assert trusted.returncode == 0 and trusted.stdout != truth.stdout  # the tampered state shows
    again = arena("leaderboard", str(folder), "--format", "csv", "--rebuild")
    assert again.returncode == 0 and again.stdout == truth.stdout


@pytest.mark.parametrize("actions", [5, [1, 2], "play 9d"])
def test_replay_of_a_damaged_record_is_one_paragraph(folder: Path, actions: object) -> None:
    lines = (folder / "matches.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["actions"] = actions
    lines[0] = json.dumps(rec)
    (folder / "matches.jsonl").write_text("\n".join(lines) + "\n")
    out = arena("replay", str(folder), rec["match_id"])
    assert out.returncode == 2, out.stderr
    assert f"match {rec['match_id']}: its" in out.stderr and "cannot be replayed" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("edit, words", [
    ({"outcome": {"ranks": ["0", 0, 1]}}, "are not whole numbers from 0 (first) to 2"),
    ({"outcome": {"ranks": [-1, 0, 1]}}, "are not whole numbers from 0 (first) to 2"),
    ({"outcome": {"ranks": [10**30, 0, 1]}}, "are not whole numbers from 0 (first) to 2"),
    ({"seats": [1, 2, 3]}, "a field is not of the type `arena run` writes"),
    ({"faults": "x"}, "a field is not of the type `arena run` writes"),
    ({"move_ms": "x"}, "a field is not of the type `arena run` writes"),
    ({"deal_index": -1}, "a negative 'deal_index' or 'rotation'"),
    ({"status": "won"}, "status 'won' is none of ok, forfeit, aborted, disabled"),
])
def test_a_hostile_record_is_one_paragraph_naming_its_line(folder: Path, edit: dict, words: str) -> None:
    lines = (folder / "matches.jsonl").read_text().splitlines()
    rec = json.loads(lines[2])
    rec.update(edit)
    lines[2] = json.dumps(rec)
    (folder / "matches.jsonl").write_text("\n".join(lines) + "\n")
    out = arena("leaderboard", str(folder))
    assert out.returncode == 2, out.stderr
    assert "matches.jsonl: line 3: " in out.stderr and words in out.stderr and "Traceback" not in out.stderr


def test_an_endless_line_and_a_fifo_are_refused(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena import journal_cache
    from arena.errors import JournalError
    from arena.results import load_meta, standings

    monkeypatch.setattr(journal_cache, "MAX_LINE", 4096)
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b'{"match_id": "' + b"x" * 10_000 + b'"}\n')
    n = len((folder / "matches.jsonl").read_bytes().splitlines())
    with pytest.raises(JournalError, match=rf"line {n} is longer than 4,096 bytes"):
        standings(folder)
    (folder / "matches.jsonl").unlink()
    os.mkfifo(folder / "matches.jsonl")
    load_meta(folder)
    out = arena("leaderboard", str(folder))  # would block for ever on open()
    assert out.returncode == 2 and "is not a regular file" in out.stderr


@pytest.mark.parametrize("damage", [
    lambda ck: ck.update(snapshots=5),
    lambda ck: ck["snapshots"][0]["cur"][0].__setitem__(1, "x"),
    lambda ck: ck["snapshots"][0]["cur"][0].pop(),
    lambda ck: ck["journal"].update(tied="many"),
])
def test_a_damaged_replay_checkpoint_is_rebuilt(folder: Path, damage) -> None:
    truth = arena("leaderboard", str(folder), "--format", "csv")
    ck = json.loads((folder / "checkpoint.json").read_text())
    damage(ck)
    (folder / "checkpoint.json").write_text(json.dumps(ck))
    again = arena("leaderboard", str(folder), "--format", "csv")
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr[-2000:]
    assert again.stdout == truth.stdout


def test_a_flipped_bit_in_the_replay_checkpoint_is_a_rebuild_not_another_rating(folder: Path) -> None:
    truth = arena("leaderboard", str(folder), "--format", "csv")
    raw = (folder / "checkpoint.json").read_text()
    at = raw.index('"cur": [["') + 12
    at = next(i for i in range(at, len(raw)) if raw[i].isdigit() and raw[i] != "9")  # a digit of a rating
    (folder / "checkpoint.json").write_text(raw[:at] + chr(ord(raw[at]) + 1) + raw[at + 1:])
    assert checkpoint.load(folder) is None  # the CRC no longer matches
    again = arena("leaderboard", str(folder), "--format", "csv")
    assert again.returncode == 0 and again.stdout == truth.stdout


def test_a_link_inside_a_page_folder_is_refused_before_the_pages_are_written(folder: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.html"
    victim.write_text("ORIGINAL")
    (folder / "replays").mkdir()
    (folder / "replays" / "index.html").symlink_to(victim)
    assert arena("leaderboard", str(folder)).returncode == 0  # the tables alone write no page
    out = arena("leaderboard", str(folder), "--write")
    assert out.returncode == 2 and "index.html is a symbolic link" in out.stderr
    assert victim.read_text() == "ORIGINAL"
