"""The arena never writes through a link, nor waits on a FIFO, inside a results folder (docs/security.md)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from arena import batch, results_folder
from arena.errors import ArenaError

MID = "s3/evil+random/d00000/r00"


def _spec() -> SimpleNamespace:
    return SimpleNamespace(match_id=MID, seats=("evil", "random"))


def test_stderr_log_not_written_through_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("ORIGINAL\n")
    folder = tmp_path / "res"
    (folder / "logs" / "evil").mkdir(parents=True)
    (folder / "logs" / "evil" / (batch.match_file_name(MID) + ".stderr")).symlink_to(victim)
    with pytest.raises(ArenaError, match="symbolic link"):
        batch._write_logs(str(folder), _spec(), ["echo PWNED\n", ""], [])
    assert victim.read_text() == "ORIGINAL\n"


def test_stderr_log_not_written_into_a_linked_bot_folder(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "res"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / "evil").symlink_to(elsewhere)
    with pytest.raises(ArenaError, match="symbolic link"):
        batch._write_logs(str(folder), _spec(), ["echo PWNED\n", ""], [])
    assert list(elsewhere.iterdir()) == []


def test_info_log_not_written_through_a_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("ORIGINAL\n")
    folder = tmp_path / "res"
    (folder / "logs").mkdir(parents=True)
    (folder / "logs" / (batch.match_file_name(MID) + ".jsonl")).symlink_to(victim)
    with pytest.raises(ArenaError):
        batch._write_logs(str(folder), _spec(), ["", ""], [b'{"seat": 0}\n'])
    assert victim.read_text() == "ORIGINAL\n"


def test_logs_written_when_the_folder_is_clean(tmp_path: Path) -> None:
    folder = tmp_path / "res"
    batch._write_logs(str(folder), _spec(), ["a\n", "b\n"], [b'{"seat": 0}\n'])
    name = batch.match_file_name(MID)
    assert (folder / "logs" / "evil" / f"{name}.stderr").read_text() == "a\n"
    assert (folder / "logs" / "random" / f"{name}.stderr").read_text() == "b\n"
    assert (folder / "logs" / f"{name}.jsonl").read_bytes() == b'{"seat": 0}\n'
    # rewriting truncates (a shorter text leaves nothing of the longer one)
    batch._write_logs(str(folder), _spec(), ["", "c"], [])
    assert (folder / "logs" / "random" / f"{name}.stderr").read_text() == "c"


def test_write_file_refuses_a_fifo_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "report.html"
    os.mkfifo(fifo)
    done: list[BaseException | None] = []

    def go() -> None:
        try:
            results_folder.write_file(fifo, "x")
            done.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            done.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(10)
    assert done and isinstance(done[0], ArenaError)


def test_make_dir_refuses_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "bots").symlink_to(tmp_path / "real")
    with pytest.raises(ArenaError, match="symbolic link"):
        results_folder.make_dir(tmp_path / "bots")
    assert results_folder.make_dir(tmp_path / "new" / "sub").is_dir()
