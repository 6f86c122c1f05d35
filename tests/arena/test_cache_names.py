"""Findings of the session 9 trials (harden9): a folder named like a cache's temporary file,
`--rebuild` on a folder the user cannot write, a results folder that does not exist. Real
`arena run` / `arena leaderboard` processes on a small tournament's folder."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from arena import checkpoint, strength, times_checkpoint
from arena.latency import DecisionTimes
from arena.results_folder import discard
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
#: a run of this tournament takes ~2.5 s, a leaderboard ~1.5 s: 20x
BOUND_S = 60
#: the temporary names of the caches' saves (tmp + rename)
TMP_NAMES = ("checkpoint.tmp", "checkpoint-fit.tmp", "checkpoint-tables.npz.tmp", "checkpoint-fit-result.npz.tmp",
             "checkpoint-schedule.tmp", "checkpoint-fit-info.tmp.npy", "checkpoint-times.tmp")


def arena(*args: str, pre: tuple[str, ...] = (), env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*pre, sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=BOUND_S, env={**os.environ, "COLUMNS": "2000", **(env or {})})


@pytest.fixture
def run(tmp_path: Path) -> tuple[Path, list[str]]:
    """A two-bot agram tournament run into ``tmp_path/res/c``; returns the folder and the run's arguments."""
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"bots:\n  random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}\n"
                   f"  greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}\n"
                   "tournaments:\n  - {name: c, game: agram, players: 2, bots: [random, greedy], deals: 1}\n")
    args = ["run", str(cfg), "--all", "--inline", "--quiet", "--results", str(tmp_path / "res")]
    out = arena(*args)
    assert out.returncode == 0, out.stderr
    return tmp_path / "res" / "c", args


def _rows(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    return [line for line in out.stdout.splitlines() if re.match(r"│ \d │ (random|greedy) ", line)]


@pytest.mark.slow
def test_folders_with_the_caches_temporary_names_are_removed(run: tuple[Path, list[str]]) -> None:
    folder, args = run
    clean = _rows(arena("leaderboard", str(folder)))
    assert len(clean) == 2
    for name in TMP_NAMES:
        (folder / name).mkdir()
    assert _rows(arena("leaderboard", str(folder))) == clean  # was: IsADirectoryError traceback
    assert not any((folder / n).exists() for n in TMP_NAMES)
    for name in TMP_NAMES:
        (folder / name).mkdir()
    out = arena(*args)  # was: rc 1 after the matches were recorded
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert not any((folder / n).exists() for n in TMP_NAMES)
    assert (folder / "checkpoint.json").is_file() and (folder / "checkpoint-tables.npz").is_file()


def test_a_checkpoint_folder_holding_files_is_refused_in_one_paragraph(run: tuple[Path, list[str]]) -> None:
    folder, _args = run
    (folder / "checkpoint-fit.tmp").mkdir()
    (folder / "checkpoint-fit.tmp" / "mine.txt").write_text("kept")
    out = arena("leaderboard", str(folder))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    text = " ".join(out.stderr.split())
    assert f"{folder / 'checkpoint-fit.tmp'} is a folder" in text and "Move it out of the results folder" in text
    assert (folder / "checkpoint-fit.tmp" / "mine.txt").read_text() == "kept"  # nothing of the user's deleted


def test_every_cache_save_survives_a_folder_at_its_temporary_name(tmp_path: Path) -> None:
    for name in TMP_NAMES:
        (tmp_path / name).mkdir()
    discard(tmp_path / "checkpoint.tmp")  # a folder: left, no error
    discard(tmp_path / "absent")
    checkpoint.save(tmp_path, {"x": 1})
    checkpoint.save_fit(tmp_path, ["a", "b"], False, [0.5, -0.5])
    strength.save_fit_info(tmp_path, np.eye(2))
    t = DecisionTimes()
    t.add_values(np.array([1.0]))
    times_checkpoint.save(tmp_path, "k", ["a"], {"a": t})
    assert all((tmp_path / n).is_dir() for n in TMP_NAMES)  # nothing written, nothing raised
    assert not (tmp_path / checkpoint.NAME).exists()


def _unwritable(folder: Path) -> tuple[str, ...]:
    """Make ``folder`` unwritable for the CLI: mode 0555, and as root the CLI runs without the
    capabilities that override file modes (setpriv, util-linux)."""
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    if os.geteuid() != 0:
        return ()
    require(shutil.which("setpriv") is not None, "setpriv (util-linux) to run the CLI as root without CAP_DAC_OVERRIDE")
    return ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--")


@pytest.mark.slow
def test_rebuild_of_an_unwritable_folder_prints_the_command_that_works(run: tuple[Path, list[str]],
                                                                        tmp_path: Path) -> None:
    folder, _args = run
    home = tmp_path / "home"
    home.mkdir()
    pre = _unwritable(folder)
    try:
        assert _rows(arena("leaderboard", str(folder), pre=pre))  # reading it needs no write
        out = arena("leaderboard", "--rebuild", str(folder), pre=pre, env={"HOME": str(home)})
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        text = " ".join(out.stderr.split())
        assert "Permission denied" in text and "you cannot write this results folder" in text, text
        command = re.search(r"`(cp -r .*?)`", text)
        assert command is not None, text
        copy = home / "c-copy"
        assert command.group(1) == (f"cp -r {folder} {copy} && chmod -R u+w {copy} && arena leaderboard --rebuild "
                                    f"{copy}")
        cp = command.group(1).rsplit(" && ", 1)[0]  # the copy, as the user would run it (same rights)
        done = subprocess.run([*pre, "sh", "-c", cp], capture_output=True, text=True, timeout=BOUND_S)
        assert done.returncode == 0, done.stderr
        rebuilt = arena("leaderboard", "--rebuild", str(copy), pre=pre, env={"HOME": str(home)})
        assert _rows(rebuilt) == _rows(arena("leaderboard", str(folder), pre=pre))
        assert (copy / "checkpoint-tables.npz").is_file()  # the copy's caches rebuilt
    finally:
        folder.chmod(0o755)


def test_a_results_folder_that_does_not_exist_is_named_so(tmp_path: Path) -> None:
    out = arena("leaderboard", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    text = " ".join(out.stderr.split())
    assert f"{tmp_path / 'nowhere'}: no such folder" in text and "no tournament.json" not in text, text
    (tmp_path / "file").write_text("x")
    out = arena("leaderboard", str(tmp_path / "file"))
    assert out.returncode == 2 and "not a folder" in " ".join(out.stderr.split()), out.stderr
