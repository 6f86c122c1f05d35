"""A crafted results folder (session 8 adversarial findings): no hang on a FIFO, no inflating of a
compressed cache, no javascript: link from a match id, no traceback from an odd fault or id."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from arena import bot_pages, checkpoint, strength
from arena.links import replay_name

ROOT = Path(__file__).resolve().parents[2]
OLD = Path(__file__).parent / "data" / "agram-old"
#: `arena leaderboard` of this folder takes ~2 s; a hang is cut at 15x that
BOUND_S = 30

CACHES = ("checkpoint-journal.bin", "checkpoint-tables.npz", "checkpoint.json", "checkpoint-fit.json",
          "checkpoint-fit-info.npy", "checkpoint-schedule.bin")


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=BOUND_S, env={**os.environ, "COLUMNS": "2000"})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dst = tmp_path / "agram-old"
    dst.mkdir()
    for f in OLD.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def _table(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return out.stdout


@pytest.mark.parametrize("name", CACHES)
def test_a_fifo_cache_is_ignored_not_waited_on(folder: Path, name: str) -> None:
    first = _table(arena("leaderboard", str(folder)))  # writes the caches
    (folder / name).unlink(missing_ok=True)
    os.mkfifo(folder / name)
    assert _table(arena("leaderboard", str(folder))) == first  # the same table, rebuilt
    assert not (folder / name).exists() or (folder / name).is_file()


def test_a_fifo_tournament_json_is_one_paragraph(folder: Path) -> None:
    (folder / "tournament.json").unlink()
    os.mkfifo(folder / "tournament.json")
    out = arena("leaderboard", str(folder))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "tournament.json" in out.stderr and "not a regular file" in " ".join(out.stderr.split())


def test_a_compressed_tables_cache_is_rebuilt_not_inflated(folder: Path) -> None:
    first = _table(arena("leaderboard", str(folder)))
    path = folder / "checkpoint-tables.npz"
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    with open(path, "wb") as f:  # the same arrays, deflated: np.load would inflate any size
        np.savez_compressed(f, **arrays)
    assert any(i.compress_type != zipfile.ZIP_STORED for i in zipfile.ZipFile(path).infolist())
    assert _table(arena("leaderboard", str(folder))) == first
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(path).infolist())


def test_replay_index_links_are_relative() -> None:
    mid = "javascript:alert(1)"
    rec = {"match_id": mid, "seats": ["a", "b"], "status": "ok", "outcome": {"ranks": [0, 1]}}
    page = bot_pages._index("t", [rec], {mid: replay_name(mid)}, "/r/t")
    hrefs = [h.split('"', 1)[0] for h in page.split('href="')[1:]]
    assert "./javascript:alert(1).html" in hrefs
    assert not [h for h in hrefs if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", h)]  # no scheme: no javascript: URL


def _journal(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "matches.jsonl").read_text().splitlines() if line.strip()]


def _rewrite(folder: Path, recs: list[dict]) -> None:
    (folder / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


@pytest.mark.parametrize("move", [None, "abc", 1.5])
def test_a_fault_without_a_whole_move_is_shown_as_a_dash(folder: Path, move: object) -> None:
    recs = _journal(folder)
    bot = recs[0]["seats"][1]
    recs[0].setdefault("faults", []).append({"bot": bot, "seat": 1, "class": "illegal", "move": move,
                                             "detail": "crafted"})
    _rewrite(folder, recs)
    _table(arena("leaderboard", str(folder), "--write"))
    page = (folder / "bots" / f"{bot}.html").read_text()
    assert "at move – (seat 1): crafted" in page


def test_a_match_id_with_a_nul_gets_no_replay_page(folder: Path) -> None:
    recs = _journal(folder)
    meta = json.loads((folder / "tournament.json").read_text())
    i = next(i for i, r in enumerate(recs) if r.get("actions"))  # a match the report gives a page
    old = recs[i]["match_id"]
    new = old + "\u0000"  # as the tester wrote it (the deal still parses: the page would be written)
    recs[i]["match_id"] = new
    meta["schedule"] = {(new if k == old else k): v for k, v in meta["schedule"].items()}
    _rewrite(folder, recs)
    (folder / "tournament.json").write_text(json.dumps(meta))
    _table(arena("leaderboard", str(folder), "--write"))
    pages = sorted(p.name for p in (folder / "replays").iterdir())
    assert "index.html" in pages and len(pages) > 1  # the other replays are written


def test_fit_info_that_is_an_npz_or_a_fifo_is_absent(tmp_path: Path) -> None:
    np.savez(tmp_path / "x.npz", a=np.zeros((3, 3)))
    os.replace(tmp_path / "x.npz", tmp_path / strength.INFO_NAME)
    assert strength.fit_info(tmp_path, 3) is None
    np.save(tmp_path / strength.INFO_NAME, np.eye(3))  # np.save keeps the name (it ends in .npy)
    assert np.array_equal(strength.fit_info(tmp_path, 3), np.eye(3))
    assert strength.fit_info(tmp_path, 4) is None
    (tmp_path / strength.INFO_NAME).unlink()
    os.mkfifo(tmp_path / strength.INFO_NAME)
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(strength.fit_info(tmp_path, 3)), daemon=True)
    t.start()
    t.join(10)
    assert got == [None]


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_fit_start_is_ignored(tmp_path: Path, bad: str) -> None:
    bots = ["a", "b", "c"]
    checkpoint.save_fit(tmp_path, bots, False, [0.5, -0.5, 0.0])
    assert checkpoint.fit_start(tmp_path, bots) == [0.5, -0.5, 0.0]
    path = tmp_path / checkpoint.FIT_NAME
    path.write_text(path.read_text().replace("-0.5", bad))
    assert checkpoint.fit_start(tmp_path, bots) is None
