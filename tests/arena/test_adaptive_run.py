"""Adaptive lineups in real runs: real `arena run` processes, real bots, real Ray.

The final table is reproducible from the journal and independent of the order matches
finished in: a rerun plans the same schedule from the journal, a journal with its lines
shuffled gives the same table, a run killed mid-round and resumed ends with the same
records and table as an uninterrupted one, and a Ray run with two workers (matches finishing
in any order) plays the same rounds as an inline one.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena import config as cfg
from arena.driver import prepare, run_tournament
from arena.journal import read_records
from arena.results import standings

ROOT = Path(__file__).resolve().parent.parent.parent
BUDGET = 36  # 6 rounds of 3 lineups x 2 rotations (agram, 2 players, 1 deal)


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "t.yaml"
    bots = "".join(f"  r{i}: {{cmd: [python, {ROOT}/bots/random_bot.py]}}\n"
                   f"  g{i}: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}\n" for i in range(3))
    path.write_text("bots:\n" + bots + textwrap.dedent(f"""\
        tournaments:
          - name: ad
            game: agram
            players: 2
            bots: [r0, r1, r2, g0, g1, g2]
            deals: 1
            salt: adaptive-run-salt
            lineups: {{adaptive: {{max_matches: {BUDGET}, per_round: 1, first: 1, explore: 0.34}}}}
        """))
    return path


def _records(folder: Path) -> list[tuple]:
    return sorted((r.match_id, r.fingerprint, r.status, r.ranks) for r in read_records(folder))


def _table(folder: Path) -> list[tuple]:
    st = standings(folder)
    return [(r["bot"], round(r["mu"], 9), r["matches"], r["wins"], r.get("strength"), r.get("rank_low"),
             r.get("rank_high")) for r in st.rows]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """An uninterrupted inline run (in this process, real bot processes)."""
    tmp = tmp_path_factory.mktemp("clean")
    (t,) = cfg.load(_config(tmp))
    summary = run_tournament(t, tmp / "res", inline=True)
    assert summary.played == BUDGET and not summary.unplayed
    return t, tmp / "res" / "ad"


@pytest.mark.slow
def test_rerun_plans_the_same_schedule_and_table_from_the_journal(clean, tmp_path):
    t, folder = clean
    meta = json.loads((folder / "tournament.json").read_text())
    assert len(meta["schedule"]) == BUDGET and sorted(meta["schedule"]) == [r[0] for r in _records(folder)]
    rounds = {int(mid.split("/")[2][1:]) for mid in meta["schedule"]}
    assert rounds == set(range(BUDGET // 6))  # round r plays deal r
    copy = tmp_path / "ad"
    shutil.copytree(folder, copy)
    (copy / "checkpoint.json").unlink(missing_ok=True)
    lines = (copy / "matches.jsonl").read_text().splitlines(keepends=True)
    random.Random(5).shuffle(lines)
    (copy / "matches.jsonl").write_text("".join(lines))
    journal, specs = prepare(t, tmp_path)  # the rerun's planning, from the shuffled journal
    journal.close()
    assert {s.match_id: s.fingerprint for s in specs} == meta["schedule"]
    assert run_tournament(t, tmp_path, inline=True).played == 0
    assert _table(copy) == _table(folder)


@pytest.mark.slow
def test_killed_mid_round_then_resumed_equals_uninterrupted(clean, tmp_path):
    _, folder = clean
    path = _config(tmp_path)
    res = tmp_path / "res"
    cmd = [sys.executable, "-m", "arena.cli", "run", str(path), "-t", "ad", "--inline", "--quiet",
           "--results", str(res)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = res / "ad" / "matches.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 9:  # inside round 1 (matches 7-12)
            break
        if proc.poll() is not None:
            pytest.fail(f"arena run ended early: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = journal.read_bytes().count(b"\n")
    assert 9 <= killed_at < BUDGET
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _records(res / "ad") == _records(folder)
    assert _table(res / "ad") == _table(folder)


@pytest.mark.slow
@pytest.mark.ray
def test_ray_two_workers_plays_the_same_rounds_as_inline(clean, ray_session, tmp_path):
    t, folder = clean
    summary = run_tournament(t, tmp_path, workers=2)
    assert summary.played == BUDGET
    assert _records(tmp_path / "ad") == _records(folder)
    assert _table(tmp_path / "ad") == _table(folder)


@pytest.mark.slow
def test_the_tables_say_how_far_the_design_went_and_why_it_stopped(clean):
    t, folder = clean
    design = json.loads((folder / "tournament.json").read_text())["design"]
    assert design == {"design": "adaptive", "rounds": BUDGET // 6, "planned": BUDGET, "max_matches": BUDGET,
                      "target_width": None, "finished": True, "stop": "budget", "width": design["width"]}
    assert design["width"] is not None and 0 < design["width"] <= 6
    from arena.results import export

    export(folder, standings(folder))
    line = "Design: adaptive, 6 rounds, 36 matches planned (max_matches 36)"
    md = (folder / "leaderboard.md").read_text()
    assert line in md and "stopped: max_matches is spent" in md and "the table's mean rank-interval width" in md
    assert json.loads((folder / "leaderboard.json").read_text())["design"] == design
    assert 'id="design"' in (folder / "report.html").read_text()


def test_a_design_stopped_by_its_width_closes_the_progress_bar_at_what_it_played(tmp_path):
    # new-user finding: a width stop left the bar at 2520/4000 with minutes "to go"
    path = tmp_path / "w.yaml"
    path.write_text(textwrap.dedent(f"""\
        bots:
          r0: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          r1: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          g0: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: w, game: agram, players: 2, bots: [r0, r1, g0], deals: 1, salt: s,
              lineups: {{adaptive: {{max_matches: 60, per_round: 1, first: 1, width: 100}}}}}}
        """))
    p = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(path), "--all", "--inline", "--results",
                        str(tmp_path / "res")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    bars = [line for line in p.stderr.splitlines() if "w (agram)" in line]
    assert bars and " 4/4 " in bars[-1], bars
    assert "stopped: the planner's mean rank-interval width" in p.stdout
