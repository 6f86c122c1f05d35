"""Infrastructure failures get one paragraph with the remedy and exit code 2, never a
traceback, and nothing finished is lost (issue 15).

* A full disk: the results folder on a real 20 KiB tmpfs (a private mount namespace through
  util-linux's ``unshare``) fills up mid-run; the run stops, every recorded line is whole,
  and after the file system grows the same command plays exactly the rest.
* A read-only results folder.
* Ray failing to start (a real ``ray.init`` error: an object store cap below Ray's minimum).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from tests.conftest import require

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIG = """
bots:
  random: {cmd: [python, bots/random_bot.py]}
  greedy: {cmd: [python, bots/greedy_bot.py]}
tournaments:
  - name: disk
    game: agram
    players: 2
    bots: [random, greedy]
    deals: 10
    salt: fixed-disk-salt
    # the bots live under pytest's /tmp, which a sandbox hides; these tests are about the disk and Ray
    limits: {sandbox: none}
"""

SCRIPT = """
set -u
mount -t tmpfs -o "$MOUNT_OPTS" tmpfs "$MNT" || exit 99
cd "$ROOT"
python -m arena.cli run "$CFG" --all --inline --results "$MNT" > "$OUT/out1" 2> "$OUT/err1"; echo $? > "$OUT/rc1"
mkdir -p "$OUT/snap1" && cp -r "$MNT/." "$OUT/snap1/"
[ -n "${GROW:-}" ] || exit 0
mount -o remount,size=8m "$MNT"
python -m arena.cli run "$CFG" --all --inline --results "$MNT" > "$OUT/out2" 2> "$OUT/err2"; echo $? > "$OUT/rc2"
mkdir -p "$OUT/snap2" && cp -r "$MNT/." "$OUT/snap2/"
"""


def unshare_mount() -> list[str]:
    """The ``unshare`` prefix giving a private mount namespace (skips where none can be had)."""
    tool = shutil.which("unshare")
    require(tool is not None, "util-linux unshare not installed")
    for args in (["-m"], ["-r", "-m"]):
        if subprocess.run([tool, *args, "true"], capture_output=True).returncode == 0:
            return [tool, *args]
    require(False, "no mount namespace available (neither root nor user namespaces)")
    return []


def run_in_tmpfs(tmp_path, mount_opts: str, grow: bool) -> dict:
    (tmp_path / "t.yaml").write_text(textwrap.dedent(CONFIG))
    os.symlink(os.path.join(ROOT, "bots"), tmp_path / "bots")
    (tmp_path / "mnt").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "s.sh").write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "200", "MOUNT_OPTS": mount_opts, "MNT": str(tmp_path / "mnt"),
           "ROOT": ROOT, "CFG": str(tmp_path / "t.yaml"), "OUT": str(out), "GROW": "1" if grow else ""}
    done = subprocess.run([*unshare_mount(), "bash", str(tmp_path / "s.sh")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return {f.name: f.read_text() for f in out.iterdir() if f.is_file()}


def journal(folder):
    lines = (folder / "disk" / "matches.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a whole line
    return [json.loads(x) for x in lines[:-1]]


@pytest.mark.slow
def test_a_full_disk_stops_the_run_with_the_remedy_and_loses_nothing(tmp_path):
    out = run_in_tmpfs(tmp_path, "size=20k", grow=True)
    err = " ".join(out["err1"].split())
    assert out["rc1"].strip() == "2", err
    assert "Traceback" not in out["err1"]
    assert "No space left on device" in err and "run the same command again" in err
    first = journal(tmp_path / "out" / "snap1")
    assert 1 <= len(first) < 20 and f"The {len(first)} matches recorded so far are kept" in err
    assert len({r["match_id"] for r in first}) == len(first)
    # the file system grew: the same command plays exactly the rest
    assert out["rc2"].strip() == "0", out["err2"]
    assert f"{20 - len(first)} matches played now, {len(first)} already recorded" in " ".join(out["out2"].split())
    final = journal(tmp_path / "out" / "snap2")
    assert final[: len(first)] == first
    ids = Counter(r["match_id"] for r in final)
    assert len(ids) == 20 and max(ids.values()) == 1 and all(r["status"] == "ok" for r in final)


@pytest.mark.slow
def test_a_read_only_results_folder_is_one_message_and_exit_2(tmp_path):
    out = run_in_tmpfs(tmp_path, "ro,size=1m", grow=False)
    err = " ".join(out["err1"].split())
    assert out["rc1"].strip() == "2", err
    assert "Traceback" not in out["err1"]
    assert "Read-only file system" in err and "Remedy:" in err and "--results" in err


@pytest.mark.ray
@pytest.mark.slow
def test_ray_failing_to_start_is_one_message_and_exit_2(tmp_path):
    (tmp_path / "t.yaml").write_text(textwrap.dedent(CONFIG))
    os.symlink(os.path.join(ROOT, "bots"), tmp_path / "bots")
    env = {**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "200",
           "RAY_DEFAULT_OBJECT_STORE_MAX_MEMORY_BYTES": "1000"}  # below Ray's minimum: ray.init raises
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--all", "-q",
                           "--workers", "1", "--results", str(tmp_path / "res")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    err = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "Ray could not start on this machine" in err and "--inline" in err and "Nothing recorded was lost" in err
    assert not (tmp_path / "res" / "disk" / "matches.jsonl").read_text()
