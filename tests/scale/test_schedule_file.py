"""The compact schedule of tournament.json (arena/schedule_file.py, issue 18): equal to the
expanded ``match id -> fingerprint`` object entry for entry, written by the driver for large
schedules, read by the tables and the replay viewer; old files (plain object) still read."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena import config as cfg
from arena import schedule_file
from arena.driver import write_meta
from arena.record import MatchRecord
from arena.replay import complete_deals
from arena.results import in_schedule
from arena.schedule import build_schedule
from arena.schedule_file import COMPACT_FROM, KEY, CompactSchedule, encode, schedule_of

ROOT = Path(__file__).resolve().parents[2]


def random_schedule(rng: random.Random, n: int) -> dict[str, str]:
    names = ["a", "b", "zé", "ε", "Z", "b-2", "日本"]
    out = {}
    while len(out) < n:
        lu = "+".join(sorted(rng.sample(names, 2)))
        out[f"t/{lu}/d{rng.randrange(10**5):05d}/r{rng.randrange(3):02d}"] = f"{rng.getrandbits(64):016x}"
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_compact_form_equals_the_plain_one(seed):
    rng = random.Random(seed)
    plain = random_schedule(rng, COMPACT_FROM + rng.randrange(500))
    entry = json.loads(json.dumps(encode(plain)))
    assert set(entry) == {KEY}
    got = schedule_of(entry)
    assert isinstance(got, CompactSchedule)
    assert len(got) == len(plain) and dict(got) == plain
    assert list(got) == sorted(plain, key=lambda s: s.encode())
    for mid in rng.sample(sorted(plain), 200):
        assert got[mid] == plain[mid] and got.get(mid) == plain[mid] and mid in got
    for absent in ["t/a+b/d00000/r99", "", "zzz", "t/", "t/日本+ε/d99999/r02x"]:
        assert absent not in got and got.get(absent) is None
    small = dict(list(plain.items())[:50])
    assert encode(small) == {"schedule": small} and schedule_of(encode(small)) == small
    assert schedule_of({"name": "old"}) is None


def test_damaged_compact_entry_is_refused():
    entry = encode(random_schedule(random.Random(3), COMPACT_FROM))[KEY]
    entry["fingerprints"] = entry["fingerprints"].rsplit("\n", 1)[0]
    with pytest.raises(ValueError, match="fingerprints"):
        CompactSchedule(entry)


@pytest.mark.slow  # builds a 29,700-match schedule (~5-25 s)
def test_driver_writes_the_schedule_compact_and_the_tables_read_it(tmp_path):
    bots = [f"b{j:03d}" for j in range(100)]
    raw = {"bots": {b: {"cmd": ["python", str(ROOT / "bots/random_bot.py")]} for b in bots},
           "tournaments": [{"name": "big", "game": "agram", "players": 2, "bots": bots, "deals": 3,
                            "salt": "s"}]}
    t = cfg.load_data(raw, tmp_path / "t.yaml", tmp_path)[0]
    specs = build_schedule(t, "salt")
    assert len(specs) >= COMPACT_FROM
    write_meta(t, tmp_path, specs, sandbox="none")
    meta = json.loads((tmp_path / "tournament.json").read_text())
    assert "schedule" not in meta and KEY in meta
    expanded = {s.match_id: s.fingerprint for s in specs}
    assert dict(schedule_of(meta) or {}) == expanded
    ok = in_schedule(meta)
    rng = random.Random(4)
    for s in rng.sample(specs, 300):
        rec = MatchRecord.from_json({"match_id": s.match_id, "fingerprint": s.fingerprint, "game": "agram",
                                     "seats": list(s.seats), "deal_index": s.deal_index, "rotation": s.rotation,
                                     "status": "ok", "outcome": {"ranks": [0, 1]}})
        assert ok(rec)
        other = MatchRecord.from_json({"match_id": s.match_id, "fingerprint": "0" * 16, "game": "agram",
                                       "seats": list(s.seats), "deal_index": s.deal_index, "rotation": s.rotation,
                                       "status": "ok", "outcome": {"ranks": [0, 1]}})
        assert not ok(other)
    # the replay viewer's deal completeness reads the compact ids: deal 0 complete once all its matches are
    deal0 = [{"match_id": s.match_id} for s in specs if s.deal_index == 0]
    assert complete_deals(tmp_path, deal0) == {0}
    assert complete_deals(tmp_path, deal0[:-1]) == set()


def test_old_plain_schedule_still_read(tmp_path):
    plain = random_schedule(random.Random(5), 3 * COMPACT_FROM // 2)
    meta = {"name": "old", "bots": ["a", "b"], "schedule": plain}
    assert schedule_of(meta) == plain
    mid = next(iter(plain))
    rec = MatchRecord.from_json({"match_id": mid, "fingerprint": plain[mid], "game": "agram", "seats": ["a", "b"],
                                 "deal_index": 0, "rotation": 0, "status": "ok", "outcome": {"ranks": [0, 1]}})
    assert in_schedule(meta)(rec)
    assert schedule_file.schedule_of({"schedule": "not a dict"}) is None
