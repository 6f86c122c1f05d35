"""End to end: a real tournament (``arena run --inline``, real bot processes) with two renamed
copies of the random bot — they share a rank interval, and the table's parts agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIG = """
bots:
  random: {{cmd: [python, {root}/bots/random_bot.py]}}
  random-copy: {{cmd: [python, {root}/bots/random_bot.py]}}
  greedy: {{cmd: [python, {root}/bots/greedy_bot.py]}}
tournaments:
  - name: copies
    default: true
    game: agram
    players: 2
    bots: [random, random-copy, greedy]
    deals: 12
    salt: copies-test-salt
"""


@pytest.mark.slow
def test_renamed_copies_of_random_share_a_rank_interval(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(CONFIG.format(root=ROOT))
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(cfg), "--inline", "--results",
                           str(tmp_path / "res")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads((tmp_path / "res" / "copies" / "leaderboard.json").read_text())
    rows = {r["bot"]: r for r in doc["rows"]}
    a, b = rows["random"], rows["random-copy"]
    assert a["rank_low"] <= b["rank_high"] and b["rank_low"] <= a["rank_high"]  # the intervals overlap
    assert max(a["rank_low"], b["rank_low"]) <= min(a["rank_high"], b["rank_high"])
    upper, lower = sorted((a, b), key=lambda r: r["rank"])
    assert doc["pairs"][upper["bot"]][lower["bot"]]["p_stronger"] < 0.975
    # one estimate: the order follows the strength, P(>next) ≥ 0.5 on every row
    ordered = sorted(doc["rows"], key=lambda r: r["rank"])
    assert [r["strength"] for r in ordered] == sorted((r["strength"] for r in ordered), reverse=True)
    assert all(r["p_above_next"] >= 0.5 for r in ordered[:-1])
    # each table once on the console: the final leaderboard title appears one time
    assert done.stdout.count("copies — agram") == 1
    assert "provisional" not in done.stdout
