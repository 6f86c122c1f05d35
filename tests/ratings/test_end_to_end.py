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


def test_order_notes_only_for_gaps_outside_the_noise():
    # new-user finding: 4 notes for 10 bots over score gaps of 0.001-0.003 inside the intervals
    from arena.tables import order_notes

    def row(bot, score, lo, hi, wins=50, matches=100):
        return {"bot": bot, "strength": 0.0, "score": score, "score_low": lo, "score_high": hi,
                "wins": wins, "matches": matches}

    noise = [row("a", 0.508, 0.47, 0.55), row("b", 0.509, 0.47, 0.55, wins=52)]
    assert order_notes(noise) == []
    clear = [row("a", 0.50, 0.47, 0.53), row("b", 0.60, 0.56, 0.64)]
    assert order_notes(clear) == ["a stands above b with a lower score (0.500 vs 0.600): they met different "
                                  "opponents, and the rating counts each result by the strength of the bots "
                                  "it was against."]
    wins = [row("a", 0.50, 0.40, 0.60, wins=40), row("b", 0.49, 0.40, 0.60, wins=47)]
    assert order_notes(wins) == [order_notes(wins)[0]] and "fewer wins (40 vs 47)" in order_notes(wins)[0]
