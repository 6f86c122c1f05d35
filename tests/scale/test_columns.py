"""The journal's columnar in-memory form (arena/columns.py, issue 18): every record read back from
the columns equals — field by field, types included — the record the old reader built, for
random journals with forfeits, faults, disabled and aborted matches, partnerships, odd value
types, blank, repeated and partial lines; the replay order equals the sorted list's; the cache's
chunks round-trip through pickle; and the columns stay compact."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import orjson
import pytest

from arena import journal_cache
from arena.checkpoint import replay
from arena.columns import concat
from arena.journal import iter_raw_records
from arena.record import MatchRecord
from arena.record_view import RecordView, view_of
from arena.results import in_schedule

BOTS = ["alpha", "beta", "gamma", "délta", "ε-bot", "zeta"]


def raw_record(rng: random.Random, i: int) -> dict:
    """One journal line of a random kind (2-player agram or 4-player sedma partnerships)."""
    four = rng.random() < 0.4
    players = 4 if four else 2
    if four:
        a, b = rng.sample(BOTS, 2)
        seats = [a, b, a, b] if rng.random() < 0.5 else [b, a, b, a]
    else:
        seats = rng.sample(BOTS, 2)
    lineup = "+".join(sorted(set(seats)))
    deal = rng.choice([rng.randrange(40), rng.randrange(40), 10**15 + rng.randrange(3)])
    rot = rng.randrange(players)
    kind = rng.random()
    rec = {"format": 1, "match_id": f"t/{lineup}/d{deal:05d}/r{rot:02d}", "fingerprint": f"{i:08x}",
           "game": "sedma" if four else "agram", "deal_index": deal, "rotation": rot, "seats": seats,
           "status": "ok", "faults": [], "move_ms": [[rng.uniform(0, 3)] * rng.randrange(3) for _ in seats]}
    if four:
        win = rng.random() < 0.5
        ranks = [0, 1, 0, 1] if win else [1, 0, 1, 0]
    else:
        ranks = rng.choice([[0, 1], [1, 0], [0, 0]])
    scores: list = [float(3 - r) for r in ranks] if rng.random() < 0.6 else [3 - r for r in ranks]
    rec["outcome"] = {"ranks": ranks, "scores": scores}
    if rng.random() < 0.2:
        del rec["outcome"]["scores"]
    rec["time_ms"] = rng.choice([None, rng.randrange(100), round(rng.uniform(1, 50), 3)])
    if rng.random() < 0.7:
        rec["bot_versions"] = [rng.choice(["", f"{b}/1", f"{b}/2"]) for b in seats]
    if kind < 0.12:  # a forfeit with a fault
        bad = rng.randrange(players)
        rec["status"] = "forfeit"
        rec["faults"] = [{"seat": bad, "bot": seats[bad], "class": rng.choice(["timeout", "crash", "illegal"]),
                          "move": rng.randrange(5), "detail": "x", "stderr_tail": "tail"}]
    elif kind < 0.17:  # disabled
        rec["status"] = "forfeit"
        rec["faults"] = [{"seat": 0, "bot": seats[0], "class": "disabled", "move": 0, "detail": "d"}]
    elif kind < 0.22:  # aborted: no outcome
        rec["status"] = "aborted"
        rec["outcome"] = None
    elif kind < 0.26:  # an ok match with a fault that did not forfeit it
        rec["faults"] = [{"seat": 1, "bot": seats[1], "class": "stall", "move": 2, "detail": "slow"}]
    elif kind < 0.30:  # a float deal of no interest: versions shorter than the seats
        rec["bot_versions"] = ["only-one"]
    return rec


def records(n: int, seed: int) -> list[MatchRecord]:
    rng = random.Random(seed)
    return [MatchRecord.from_json(raw_record(rng, i), moves=False) for i in range(n)]


def same(a: MatchRecord, b: MatchRecord) -> bool:
    """Equal values and equal types (``repr`` tells 1 from 1.0 and None from NaN)."""
    return a == b and repr(a) == repr(b)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_records_from_columns_equal_the_typed_records(seed):
    recs = records(1500, seed)
    view = view_of(recs)
    assert len(view) == len(recs)
    assert all(same(a, b) for a, b in zip(view, recs))
    assert all(same(view[i], recs[i]) for i in range(0, len(recs), 37))
    assert [r.sides for r in view] == [r.sides for r in recs]
    assert [(r.finished, r.played, r.disabled, r.rated(), r.rated(True)) for r in view] == \
        [(r.finished, r.played, r.disabled, r.rated(), r.rated(True)) for r in recs]
    kept_whole = len(view.cols.extra)
    assert 0.2 * len(recs) < kept_whole < 0.45 * len(recs)  # faults, short versions: whole; the rest plain
    assert list(view[10:20]) == recs[10:20]


@pytest.mark.parametrize("seed", [4, 5])
def test_split_columns_concatenate_and_pickle_to_the_same_records(seed):
    rng = random.Random(seed)
    recs = records(900, seed)
    cuts = sorted(rng.sample(range(1, len(recs)), 6))
    parts = [view_of(recs[a:b]).cols for a, b in zip([0, *cuts], [*cuts, len(recs)])]
    parts = [pickle.loads(pickle.dumps(p, protocol=5)) for p in parts]
    whole = RecordView(concat(parts))
    assert all(same(a, b) for a, b in zip(whole, recs)) and len(whole) == len(recs)


def test_columns_concatenate_in_place_while_a_view_of_them_is_alive():
    """A numpy view of a column (a frame kept by a profiler held one) forbids resizing it: the
    in-place concatenation copies that column instead of raising ``BufferError``."""
    import numpy as np

    recs = records(300, 6)
    first, second = view_of(recs[:100]).cols, view_of(recs[100:]).cols
    views = [np.frombuffer(getattr(first, name), dtype=np.uint8) for name in ("time", "shape", "ids", "deal")]
    whole = RecordView(concat([first, second], into_first=True))
    assert all(same(a, b) for a, b in zip(whole, recs)) and len(whole) == len(recs) and views


@pytest.mark.parametrize("rate_forfeits", [False, True])
def test_replay_order_equals_the_sorted_list(rate_forfeits):
    recs = records(2000, 6)
    view = view_of(recs)
    want = sorted((r for r in recs if r.rated(rate_forfeits)), key=MatchRecord.replay_key)
    got = view.replay_order(rate_forfeits)
    assert len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
    # the TrueSkill replay over the view equals the one over the list, bit for bit
    a = replay(None, view[:300], BOTS, draw_probability=0.1, rate_forfeits=rate_forfeits, history=False)
    b = replay(None, recs[:300], BOTS, draw_probability=0.1, rate_forfeits=rate_forfeits, history=False)
    assert a.ratings == b.ratings


def write_journal(folder: Path, lines: list[bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))


@pytest.mark.parametrize("seed", [7, 8])
def test_columnar_reader_equals_the_old_reader_after_random_interruptions(tmp_path, seed):
    rng = random.Random(seed)
    raws = [raw_record(rng, i) for i in range(400)]
    meta = {"bots": BOTS, "schedule": {r["match_id"]: r["fingerprint"] for r in raws if rng.random() < 0.85}}
    ok = in_schedule(meta)
    folder = tmp_path / "t"
    folder.mkdir()
    path = folder / "matches.jsonl"
    done = 0
    while done < len(raws):
        k = rng.randint(1, 60)
        chunk = [orjson.dumps(r) + b"\n" for r in raws[done:done + k]]
        done += k
        if rng.random() < 0.3:
            chunk.append(b"\n")  # a blank line
        if rng.random() < 0.3:
            chunk.append(orjson.dumps(raws[rng.randrange(done)]) + b"\n")  # a repeated id: first record kept
        partial = orjson.dumps(raws[done]) if done < len(raws) and rng.random() < 0.3 else b""
        with open(path, "ab") as f:
            f.write(b"".join(chunk) + partial[: len(partial) // 2])
        prefixes: list = []
        got, outside, _times, _info = journal_cache.read(folder, ok, BOTS, prefixes=prefixes)
        data = path.read_bytes()
        assert prefixes[-1][0] == data.rfind(b"\n") + 1 and prefixes[-1][2] == len(got)
        ref = [r for _raw, r in iter_raw_records(folder, moves=False)]
        want = [r for r in ref if ok(r)]
        assert isinstance(got, RecordView)
        assert len(got) == len(want) and all(same(a, b) for a, b in zip(got, want))
        assert outside == len(ref) - len(want)
        if partial:  # the line is finished by the next writer
            with open(path, "ab") as f:
                f.write(partial[len(partial) // 2:] + b"\n")
            done += 1


def test_columns_are_compact():
    rng = random.Random(9)
    recs = []
    for i in range(5000):
        r = raw_record(rng, i)
        r["faults"], r["status"] = [], "ok"
        r["outcome"] = {"ranks": [0, 1], "scores": [1.0, 0.0]}
        r["seats"], r["game"] = r["seats"][:2], "agram"
        r["bot_versions"] = [f"{b}/1" for b in r["seats"]]
        r["match_id"] = f"club/{'+'.join(sorted(r['seats']))}/d{i:05d}/r00"
        recs.append(MatchRecord.from_json(r, moves=False))
    view = view_of(recs)
    assert not view.cols.extra
    per = view.cols.nbytes() / len(recs)
    assert per < 160, per  # ~650 bytes as MatchRecord objects (docs/benchmarks.md)


def test_replay_order_falls_back_for_nul_lineups_and_huge_deals():
    rng = random.Random(10)
    raws = [raw_record(rng, i) for i in range(300)]
    for r in raws[::5]:
        r["seats"] = ["a\0b" if s == "alpha" else s for s in r["seats"]]
        r["match_id"] = r["match_id"].replace("alpha", "a\0b")
    raws[7]["deal_index"] = 2**70
    recs = [MatchRecord.from_json(r, moves=False) for r in raws]
    for rf in (False, True):
        want = sorted((r for r in recs if r.rated(rf)), key=MatchRecord.replay_key)
        assert list(view_of(recs).replay_order(rf)) == want
        assert list(view_of(recs[8:]).replay_order(rf)) == [r for r in want if r in recs[8:]]
