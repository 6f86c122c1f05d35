"""The driver's schedule built on demand (arena/lazy_schedule.py, issue 18): equal spec for spec
and in the same replay order to build_schedule's list for every plain design; its lookups, its
compact tournament.json entry and its batches equal the list's; a run resumed over it records
every match exactly once."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena import config as cfg
from arena import schedule_file
from arena.driver import (
    LazyBatcher,
    Run,
    _schedule_entry,
    lazy_schedule,
    prepare,
    run_tournament,
    write_meta,
)
from arena.executors import Batcher
from arena.journal import iter_raw_records
from arena.lazy_schedule import LazySchedule
from arena.schedule import build_schedule

ROOT = Path(__file__).resolve().parents[2]


def tournament(tmp_path: Path, n_bots: int, deals: int, **kw):
    bots = [f"b{j:02d}" for j in range(n_bots)]
    raw = {"bots": {b: {"cmd": ["python", str(ROOT / "bots/random_bot.py")]} for b in bots},
           "tournaments": [{"name": "lazy", "game": "agram", "players": 2, "bots": bots, "deals": deals,
                            "salt": "lazy-test", **kw}]}
    return cfg.load_data(raw, tmp_path / "t.yaml", tmp_path)[0]


DESIGNS = [
    dict(),
    dict(players=3),
    dict(players=3, rotations="permutations"),
    dict(lineups={"sample": {"per_bot": 3}}),
    dict(lineups="gauntlet", panel=["b00", "b01"]),
    dict(game="sedma", players=4),
    dict(game="sedma", players=4, partners="mixed"),
]


@pytest.mark.parametrize("design", DESIGNS, ids=lambda d: ",".join(f"{k}={v}" for k, v in d.items()) or "all")
def test_lazy_equals_the_list_spec_for_spec(tmp_path, design):
    t = tournament(tmp_path, 7, 3, **design)
    want = build_schedule(t, "salt-1")
    got = lazy_schedule(t, "salt-1")
    assert isinstance(got, LazySchedule) and len(got) == len(want)
    assert list(got) == want  # every field of every MatchSpec, in replay order
    rng = random.Random(1)
    for i in rng.sample(range(len(want)), min(25, len(want))):
        s = want[i]
        assert got[i] == s and got[i - len(want)] == s and got.get(s.match_id) == s and s.match_id in got
        assert got.position(s.match_id) == i and got.fingerprint(*got.locate(s.match_id)) == s.fingerprint
    assert got[2:9] == want[2:9]
    for absent in ["lazy/b00+b01/d00099/r00", "lazy/b00+b01/d0/r00", "other/b00+b01/d00000/r00", "lazy/zz/d00000/r00",
                   "lazy/b00+b01/d00000/r07", "", None]:
        assert absent not in got and got.get(absent) is None
    pairs = list(got.sorted_pairs())
    assert pairs == sorted(((s.match_id, s.fingerprint) for s in want), key=lambda p: p[0].encode())


def test_compact_entry_equals_the_dicts(tmp_path, monkeypatch):
    t = tournament(tmp_path, 9, 5, players=3)
    specs = lazy_schedule(t, "s")
    monkeypatch.setattr(schedule_file, "COMPACT_FROM", 50)
    got = _schedule_entry(specs)
    assert got == schedule_file.encode({s.match_id: s.fingerprint for s in build_schedule(t, "s")})
    assert schedule_file.KEY in got
    shuffled = list(specs.sorted_pairs())
    random.Random(2).shuffle(shuffled)  # out of order: sorted by encode instead
    assert schedule_file.encode_sorted(shuffled, len(shuffled)) == got


@pytest.mark.parametrize("fixed", [None, 3])
def test_lazy_batches_equal_the_lists(tmp_path, fixed):
    t = tournament(tmp_path, 8, 6, players=3)
    specs = build_schedule(t, "s")
    lazy = lazy_schedule(t, "s")
    recorded = {s.match_id for s in random.Random(4).sample(specs, 40)}
    pending = [s for s in specs if s.match_id not in recorded]
    a = Batcher(pending, 2, fixed)
    b = LazyBatcher(lazy, recorded.__contains__, len(pending), 2, fixed)
    rng = random.Random(5)
    while True:
        x, y = a.next(), b.next()
        assert x == y and a.remaining == b.remaining
        if x is None:
            break
        if rng.random() < 0.2:  # a retry in between
            a.push_retry(x[:1])
            b.push_retry(x[:1])
        t_s = rng.uniform(0.01, 2.0)
        a.observe(x[-1].match_id, t_s)
        b.observe(x[-1].match_id, t_s)
    assert a.sizes == b.sizes


def test_run_over_a_lazy_schedule_records_each_match_once(tmp_path):
    t = tournament(tmp_path, 4, 3)
    journal, specs = prepare(t, tmp_path / "res")
    assert isinstance(specs, LazySchedule)
    write_meta(t, journal.folder, specs)
    run = Run(t, journal, specs, 1, None, lambda m: None)
    assert run.pending_count == len(specs) and run.by_id.get(specs[0].match_id) == specs[0]
    journal.close()
    summary = run_tournament(t, tmp_path / "res", inline=True)
    assert summary.played == len(specs)
    ids = [raw["match_id"] for raw, _rec in iter_raw_records(tmp_path / "res" / "lazy")]
    assert sorted(ids) == sorted(s.match_id for s in specs)
    meta = json.loads((tmp_path / "res" / "lazy" / "tournament.json").read_text())
    assert meta["schedule"] == {s.match_id: s.fingerprint for s in specs}
    assert run_tournament(t, tmp_path / "res", inline=True).played == 0  # resumed: nothing played twice
