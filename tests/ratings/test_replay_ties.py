"""The tie counts the TrueSkill checkpoint keeps for a later ``draw_probability: auto``
(arena/checkpoint.py) are taken during the replay itself when the draw probability is a number
(one pass over the records): equal to a separate count, after a full replay and after a resume
from an earlier snapshot (the records before it counted apart)."""

from __future__ import annotations

import random

from arena import checkpoint
from arena.record import MatchRecord
from tests.scale.test_checkpoint import BOTS, full, records


def _counted(recs: list[MatchRecord]) -> tuple[int, int]:
    tied = pairs = 0
    for rec in recs:
        if rec.status == "ok" and rec.ranks is not None:
            r = sorted(rec.side_ranks)
            pairs += len(r) - 1
            tied += sum(a == b for a, b in zip(r, r[1:]))
    return tied, pairs


def _journal(recs: list[MatchRecord]) -> list[tuple[int, str, int]]:
    return [(1000 + len(recs), f"{len(recs):032x}", len(recs))]  # one vouched-for prefix: all records


def test_tie_counts_of_one_pass_equal_a_separate_count(tmp_path):
    recs = records(700, seed=4, ties=True) + records(300, players=4, seed=8, ties=True)
    rng = random.Random(2)
    rng.shuffle(recs)
    first = recs[:600]
    got = checkpoint.replay(tmp_path, first, BOTS, draw_probability=0.1, history=False, journal=_journal(first))
    assert got.ratings == full(first, draw_probability=0.1)
    jr = checkpoint.load(tmp_path)["journal"]
    tied, pairs = _counted(first)
    assert (jr["tied"], jr["pairs"]) == (tied, pairs) and 100 < tied < pairs
    # new records inside the replayed order: the general path (with the snapshots that still match)
    got = checkpoint.replay(tmp_path, recs, BOTS, draw_probability=0.1, history=False, journal=_journal(recs))
    data = checkpoint.load(tmp_path)
    assert got.ratings == full(recs, draw_probability=0.1)
    assert (data["journal"]["tied"], data["journal"]["pairs"]) == _counted(recs)
    # then ``auto`` (another key: a full replay) gives a rebuild's table and the counted share
    auto = checkpoint.replay(tmp_path, recs, BOTS, draw_probability="auto", history=False, journal=_journal(recs))
    assert auto.ratings == full(recs, draw_probability="auto")
    t, p = _counted(recs)
    assert auto.draw_probability == min(0.9, max(0.01, t / p))


def test_resume_counts_the_records_before_the_snapshot(tmp_path):
    recs = sorted(records(800, seed=9, ties=True), key=MatchRecord.replay_key)
    checkpoint.replay(tmp_path, recs[:500], BOTS, draw_probability=0.25, history=False)
    # a record inserted before the end: resumed from an earlier snapshot (start > 0)
    more = recs[:500] + recs[700:] + recs[500:700]
    got = checkpoint.replay(tmp_path, more, BOTS, draw_probability=0.25, history=False, journal=_journal(more))
    data = checkpoint.load(tmp_path)
    assert 0 < data["resumed_from"] <= 500
    assert got.ratings == full(more, draw_probability=0.25)
    assert (data["journal"]["tied"], data["journal"]["pairs"]) == _counted(more)
