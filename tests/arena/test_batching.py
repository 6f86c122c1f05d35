"""Adaptive batching (issue 9) and the provisional leaderboard, without Ray."""

from __future__ import annotations

import textwrap

from arena import config as cfg
from arena.executors import MAX_BATCH, PROBE_BATCH, Batcher, auto_batch_size
from arena.progress import ProvisionalBoard
from arena.record import MatchRecord
from arena.schedule import build_schedule

CONFIG = """
bots:
  a: {cmd: [python, bots/random_bot.py]}
  b: {cmd: [python, bots/random_bot.py]}
  c: {cmd: [python, bots/random_bot.py]}
  d: {cmd: [python, bots/random_bot.py]}
tournaments:
  - name: t
    game: agram
    players: 3
    bots: [a, b, c, d]
    deals: 500
"""


def schedule(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    (t,) = cfg.load(path)
    return build_schedule(t, "salt")  # 4 lineups x 3 rotations x 500 deals


def drain(b: Batcher, match_s: float | None, head_s: float | None = None):
    out = []
    while (batch := b.next()) is not None:
        out.append(batch)
        for i, s in enumerate(batch):
            if match_s is not None:
                b.observe(s.match_id, (head_s if i == 0 and head_s else match_s))
    return out


def test_batches_cover_the_schedule_once_one_lineup_and_rotation_each(tmp_path):
    specs = schedule(tmp_path)
    bs = drain(Batcher(specs, workers=2), match_s=0.002, head_s=0.3)
    assert sorted(s.match_id for b in bs for s in b) == sorted(s.match_id for s in specs)
    for b in bs:
        assert len({(s.match_id.split("/")[1], s.rotation) for s in b}) == 1
        assert [s.deal_index for s in b] == sorted({s.deal_index for s in b})


def test_tiny_matches_share_a_task_and_the_end_still_balances(tmp_path):
    specs = schedule(tmp_path)
    b = Batcher(specs, workers=2)
    sizes = [len(x) for x in drain(b, match_s=0.002, head_s=0.3)]
    assert sizes[0] == PROBE_BATCH  # nothing measured yet
    assert max(sizes) == MAX_BATCH  # 2 ms matches: as large as allowed
    assert len(sizes) < 40  # vs 1,500 single-match tasks (6,000 matches)
    # slow matches (2 s each): one match per batch is enough to amortise the task
    slow = [len(x) for x in drain(Batcher(specs[:60], workers=2), match_s=2.0, head_s=2.3)]
    assert slow[0] == PROBE_BATCH and max(slow[1:]) <= 2
    # with no start-up cost to amortise, the balance bound shrinks batches towards the end
    sizes = [len(x) for x in drain(Batcher(specs, workers=2), match_s=0.002, head_s=0.002)]
    assert sizes[-1] <= auto_batch_size(8, 2) + 1 and max(sizes) > 50


def test_fixed_size_and_retries_first(tmp_path):
    specs = schedule(tmp_path)
    b = Batcher(specs, workers=2, fixed=4)
    first = b.next()
    assert len(first) == 4
    b.push_retry(first[2:], front=True)
    assert b.next() == first[2:]


def test_provisional_board_rates_in_arrival_order():
    recs = [MatchRecord.from_json({
        "match_id": f"t/a+b+c/d{i:05d}/r00", "game": "agram", "seats": ["a", "b", "c"], "status": "ok",
        "deal_index": i, "rotation": 0, "outcome": {"ranks": [0, 1, 2], "scores": [3, 2, 1]}}) for i in range(10)]
    board = ProvisionalBoard(["a", "b", "c"])
    for r in recs:
        board.add(r)
    assert board.rated == 0  # queued; rated when drawn
    rows = board.rows()
    assert board.rated == 10 and [r[0] for r in rows] == ["a", "b", "c"]
    assert rows[0][3] == 10 and rows[0][4] == 10 and rows[2][4] == 0
    # a resumed run starts from the records already there
    again = ProvisionalBoard(["a", "b", "c"], seed_records=recs)
    assert again.rated == 10 and [r[0] for r in again.rows()] == ["a", "b", "c"]


def test_quiet_prints_nothing_but_the_final_table(tmp_path):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (tmp_path / "t.yaml").write_text(textwrap.dedent(CONFIG).replace("deals: 500", "deals: 2"))
    os.symlink(os.path.join(root, "bots"), tmp_path / "bots")
    out = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(tmp_path / "t.yaml"), "--all", "--inline",
                          "--quiet", "--results", str(tmp_path / "res")], cwd=root, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": root})
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""  # no progress, no provisional table
    lines = out.stdout.strip().splitlines()
    assert lines[0].strip().startswith("t — agram, 3 players, 24 matches")
    assert "provisional" not in out.stdout and "matches played now" not in out.stdout
