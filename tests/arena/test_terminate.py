"""SIGTERM stops `arena run` like Ctrl-C: finished matches stay recorded, the tables are written,
exit code 143, and a rerun resumes. With Ray too: Ray's core worker installs a crash-dump handler
for SIGTERM in the driver, which the arena replaces again by its own after ``ray.init``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.journal import read_records

ROOT = Path(__file__).resolve().parent.parent.parent

SLOW_BOT = """
import os, sys, time
sys.path.insert(0, {root!r})
from bots import sdk

def act(observation, legal, ctx):
    if os.path.exists({flag!r}):  # slow while the flag exists: the rerun is fast
        time.sleep(0.05)
    return legal[0]

sys.exit(sdk.run(act, name="slow", version="1"))
"""


def write_config(tmp: Path) -> Path:
    (tmp / "slow.flag").write_text("")
    (tmp / "slow_bot.py").write_text(SLOW_BOT.format(root=str(ROOT), flag=str(tmp / "slow.flag")))
    cfg = tmp / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          slow: {{cmd: [python, slow_bot.py]}}
        tournaments:
          - name: long
            game: sedma
            players: 2
            bots: [random, slow]
            deals: 100
    """))
    return cfg


def start(cfg: Path, results: Path, inline: bool) -> subprocess.Popen:
    args = [sys.executable, "-m", "arena.cli", "run", str(cfg), "-t", "long", "--results", str(results),
            "--workers", "1"] + (["--inline"] if inline else [])
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "ray"])
def test_sigterm_keeps_finished_matches_writes_tables_and_resumes(tmp_path, inline):
    cfg = write_config(tmp_path)
    results = tmp_path / "results"
    journal = results / "long"  # read_records reads <folder>/matches.jsonl
    proc = start(cfg, results, inline)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            if (journal / "matches.jsonl").exists() and len(read_records(journal)) >= 3:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    words = " ".join(err.split())
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM)" in words and "run the same command again" in words
    assert "SIGTERM received" not in err  # no crash dump from Ray's handler
    recorded = read_records(journal)
    assert 3 <= len(recorded) < 200
    board = json.loads((results / "long" / "leaderboard.json").read_text())
    assert sum(r["matches"] for r in board["rows"]) == 2 * len(recorded)
    # a rerun resumes: nothing recorded is played again
    (tmp_path / "slow.flag").unlink()
    again = start(cfg, results, inline=True)
    out2, err2 = again.communicate(timeout=600)
    assert again.returncode == 0, err2
    assert f"{len(recorded)} already recorded" in " ".join(out2.split())
    ids = [r.match_id for r in read_records(journal)]
    assert len(ids) == len(set(ids)) == 200


@pytest.mark.ray
def test_repeated_ctrl_c_under_ray_ends_without_a_traceback(tmp_path):
    """A new user's Ctrl-C, pressed again and again while the run stops: the run's own
    interruption, the tables, then Ray's shutdown (Ctrl-C ignored from there: an interrupted Ray
    exit handler printed a traceback). SIGINT every 0.2 s until the process ends."""
    cfg = write_config(tmp_path)
    results = tmp_path / "results"
    journal = results / "long"
    proc = start(cfg, results, inline=False)
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            if (journal / "matches.jsonl").exists() and len(read_records(journal)) >= 3:
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        end = time.time() + 120
        while proc.poll() is None and time.time() < end:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.2)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "Exception ignored" not in err, err[-3000:]
    assert "are recorded in" in " ".join(err.split()) and "run the same command again" in " ".join(err.split())
    assert 3 <= len(read_records(journal)) < 200
