"""The journal cache's format 6 and the block parse (arena/journal_cache.py, arena/columns.py, issue 18
ninth pass): records parsed straight into narrow columns in blocks equal the old reader's (types
included) for odd records, any block size, a plain, compact or no schedule; the cache holds no
pickle and a damaged, cut, foreign or inconsistent cache is rejected and rebuilt; the column
accessors agree with the records."""

from __future__ import annotations

import json
import pickle
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import orjson
import pytest

from arena import journal_cache, journal_chunks, replay_columns
from arena.checkpoint import _Chain, _feed
from arena.errors import JournalError
from arena.journal import iter_raw_records
from arena.record import MatchRecord, id_hash
from arena.record_view import RecordView, view_of
from arena.results import in_schedule
from arena.schedule_file import CompactSchedule
from tests.scale.test_columns import BOTS, raw_record, same
from tests.scale.test_read_update import _blobs


def odd_raws(seed: int, n: int) -> list[dict]:
    """Random records (tests.scale.test_columns.raw_record) plus odd values: -0.0 and huge scores,
    bools, integer and NaN-free float times, big deals, missing fingerprints, repeated ids."""
    rng = random.Random(seed)
    raws = [raw_record(rng, i) for i in range(n)]
    for r in raws[3::11]:
        if r.get("outcome") and r["outcome"].get("scores"):
            r["outcome"]["scores"] = [-0.0 if isinstance(x, float) else x for x in r["outcome"]["scores"]]
    for r in raws[5::13]:
        if r.get("outcome") and r["outcome"].get("scores"):
            r["outcome"]["scores"] = [1e300, 0.5][: len(r["seats"])] + [2.5] * (len(r["seats"]) - 2)
    for r in raws[7::17]:
        r["time_ms"] = 2**60  # an int beyond a double's exact range: kept whole
    for r in raws[9::19]:
        r.pop("fingerprint")
    for r in raws[2::23]:
        r["deal_index"] = 2**40 + r["deal_index"]  # wide deals: the column widens
    raws += [dict(raws[k]) for k in range(0, n, 37)]  # repeated ids: the first record is kept
    return raws


def old_read(folder: Path, ok) -> tuple[list[MatchRecord], int, dict[str, np.ndarray]]:
    """The reader before the cache: every record built, the split and the times per record."""
    inside, outside, times = [], 0, {b: [] for b in BOTS}
    for raw, rec in iter_raw_records(folder, moves=False):
        if ok(rec):
            inside.append(rec)
            for seat, ts in enumerate(raw.get("move_ms") or ()):
                if seat < len(rec.seats) and ts:
                    times[rec.seats[seat]].extend(ts)
        else:
            outside += 1
    return inside, outside, {b: np.sort(np.array(t, dtype=np.float64)) for b, t in times.items() if t}


def agree(folder: Path, ok) -> dict:
    got, outside, times, info = journal_cache.read(folder, ok, BOTS)
    want, want_out, want_t = old_read(folder, ok)
    assert isinstance(got, RecordView) and len(got) == len(want)
    assert all(same(a, b) for a, b in zip(got, want))
    assert outside == want_out
    assert {b: t.values().tobytes() for b, t in times.items() if len(t)} == {b: t.tobytes() for b, t in want_t.items()}
    assert got.id_hashes().tolist() == [id_hash(r.match_id) for r in want]  # kept per row
    return info


def meta_of(raws: list[dict], kind: str, rng: random.Random) -> dict:
    schedule = {r["match_id"]: str(r.get("fingerprint", "")) for r in raws if rng.random() < 0.85}
    if kind == "plain":
        return {"bots": BOTS, "schedule": schedule}
    if kind == "compact":
        return {"bots": BOTS, "schedule_compact": _compact(schedule)}
    return {"bots": BOTS, "game": "agram", "players": 2}  # an old folder: no schedule


def _compact(schedule: dict) -> dict:
    ids = sorted(schedule, key=lambda s: s.encode("utf-8", "surrogatepass"))
    return {"format": 1, "count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(schedule[i] for i in ids)}


@pytest.mark.parametrize("rows", [1, 7, 64, 1 << 16])
@pytest.mark.parametrize("kind", ["plain", "compact", "none"])
def test_block_parse_equals_the_old_reader(tmp_path, monkeypatch, rows, kind):
    from arena import columns

    monkeypatch.setattr(journal_cache, "_ROWS", rows)
    if rows == 7:  # every integer column narrow too (what columns.NARROW may become)
        monkeypatch.setattr(columns, "NARROW", frozenset(columns._INTS))
    rng = random.Random(rows * 7 + len(kind))
    raws = odd_raws(rows, 300)
    meta = meta_of(raws, kind, rng)
    ok = in_schedule(meta)
    if kind == "compact":
        assert isinstance(ok.schedule, CompactSchedule)
    folder = tmp_path / "t"
    folder.mkdir()
    lines = [orjson.dumps(r) + b"\n" for r in raws]
    cut = rng.randrange(1, len(lines))
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:cut]))
    assert agree(folder, ok)["parsed"] > 0
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[cut:]))
    info = agree(folder, ok)  # the cached prefix + the new lines
    assert info["cached"] > 0
    assert agree(folder, ok)["parsed"] == 0  # all from the cache


def journal_with_cache(tmp_path: Path, n: int = 200) -> tuple[Path, object]:
    rng = random.Random(5)
    raws = odd_raws(5, n)
    meta = {"bots": BOTS, "schedule": {r["match_id"]: str(r.get("fingerprint", "")) for r in raws}}
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "matches.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in raws[:n // 2]))
    ok = in_schedule(meta)
    journal_cache.read(folder, ok, BOTS)
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(orjson.dumps(r) + b"\n" for r in raws[n // 2:]))
    journal_cache.read(folder, ok, BOTS)  # two chunks
    del rng
    return folder, ok


def test_the_cache_holds_no_pickle_and_loads_without_unpickling(tmp_path, monkeypatch):
    folder, ok = journal_with_cache(tmp_path)
    data = (folder / journal_cache.NAME).read_bytes()
    assert data.startswith(b"cardarena-jcache\n") and data.count(b"CHNK") >= 2
    assert b"\x80\x05" not in data[:64]  # no pickle protocol header

    def no(*_a, **_k):
        raise AssertionError("the journal cache unpickled something")
    monkeypatch.setattr(pickle, "load", no)
    monkeypatch.setattr(pickle, "loads", no)
    assert agree(folder, ok)["parsed"] == 0


def test_an_old_pickled_cache_is_ignored_and_removed(tmp_path):
    folder, ok = journal_with_cache(tmp_path)
    (folder / journal_cache.NAME).unlink()
    (folder / journal_cache.OLD_NAME).write_bytes(pickle.dumps(("cardarena-journal-cache", 5, ())))
    assert agree(folder, ok)["cached"] == 0
    assert not (folder / journal_cache.OLD_NAME).exists() and (folder / journal_cache.NAME).exists()


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    second = data.rfind(b"CHNK")
    if how == "flip":  # one byte of the second chunk's arrays: its SHA-256 fails
        data[second + 4 + 8 + 40] ^= 0x55
    elif how == "cut":
        del data[second + 20:]
    elif how == "pickle":
        data = bytearray(pickle.dumps({"start": 0}))
    elif how == "foreign":
        data = bytearray(b"cardarena-jcache\n" + struct.pack("<Q", 5) + b"{\"a\":1}")
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["flip", "cut", "pickle", "foreign"])
def test_a_damaged_cut_or_foreign_cache_is_rejected_and_rebuilt(tmp_path, how):
    folder, ok = journal_with_cache(tmp_path)
    damage(folder / journal_cache.NAME, how)
    info = agree(folder, ok)
    first = len({r["match_id"] for r in odd_raws(5, 200)[:100]})
    assert info["cached"] == (first if how in ("flip", "cut") else 0)  # the valid first chunk stays
    assert agree(folder, ok)["parsed"] == 0  # and the rewritten cache holds it all again


def rewrite_first_chunk(path: Path, change) -> None:
    """Apply ``change`` to the first chunk's meta and re-sign it (a checksum-valid but crafted chunk)."""
    data = path.read_bytes()
    head = data.index(b"CHNK")
    n = struct.unpack("<Q", data[head + 4:head + 12])[0]
    meta = json.loads(data[head + 12:head + 12 + n])
    spec = {a[0]: a for a in meta["arrays"]}
    at = head + 12 + n
    arrays = {}
    for name, tc, count in meta["arrays"]:
        size = count * np.dtype(tc).itemsize
        arrays.setdefault(name, []).append(bytearray(data[at:at + size]))
        at += size
    meta = change(meta, arrays, spec) or meta
    mb = json.dumps(meta).encode()
    body = struct.pack("<Q", len(mb)) + mb + b"".join(bytes(arrays[a[0]].pop(0)) for a in meta["arrays"])
    path.write_bytes(data[:head] + b"CHNK" + body + struct.pack("<I", zlib.crc32(body)))


def test_a_consistently_signed_but_inconsistent_chunk_is_rejected(tmp_path):
    folder, ok = journal_with_cache(tmp_path)

    def code_out_of_range(meta, arrays, spec):
        tc = spec["seats"][1]
        seats = np.frombuffer(bytes(arrays["seats"][0]), dtype=tc).copy()
        seats[3] = len(meta["names"]) + 5
        arrays["seats"][0] = bytearray(seats.tobytes())
    def ends_backwards(meta, arrays, spec):
        end = np.frombuffer(bytes(arrays["id_end"][0]), dtype=spec["id_end"][1]).copy()
        end[2], end[3] = end[3], end[2]
        arrays["id_end"][0] = bytearray(end.tobytes())

    for edit in (code_out_of_range, ends_backwards):  # columns are checked when first used (read lazily)
        rewrite_first_chunk(folder / journal_cache.NAME, edit)
        with pytest.raises(JournalError, match="checkpoint-journal.bin: a chunk no longer reads back"):
            journal_cache.read(folder, ok, BOTS)[0][0]  # (a repeated id in the new lines reads them too)
        (folder / journal_cache.NAME).unlink()  # the remedy the error names
        assert agree(folder, ok)["cached"] == 0

    def huge_count(meta, arrays, spec):  # 80 GB declared: refused before anything is allocated
        for a in meta["arrays"]:
            if a[0] == "time":
                a[2] = 10**10
    rewrite_first_chunk(folder / journal_cache.NAME, huge_count)
    assert agree(folder, ok)["cached"] == 0

    def unpicklable_type(meta, arrays, spec):
        for a in meta["arrays"]:
            if a[0] == "deal":
                a[1] = "O"
    rewrite_first_chunk(folder / journal_cache.NAME, unpicklable_type)
    assert agree(folder, ok)["cached"] == 0


def test_an_edit_in_place_of_the_cached_prefix_is_detected(tmp_path):
    folder, ok = journal_with_cache(tmp_path)
    path = folder / "matches.jsonl"
    data = bytearray(path.read_bytes())
    k = data.index(b'"ranks":[1,0]')
    data[k:k + 13] = b'"ranks":[0,1]'  # same size, same id: only the prefix digest tells
    path.write_bytes(bytes(data))
    assert agree(folder, ok)["cached"] == 0


@pytest.mark.parametrize("narrow", ["default", "all"])
def test_narrow_columns_round_trip_and_are_small(monkeypatch, narrow):
    from arena import columns

    if narrow == "all":
        monkeypatch.setattr(columns, "NARROW", frozenset(columns._INTS))
    rng = random.Random(3)
    recs = []
    for i in range(3000):
        r = raw_record(rng, i)
        r["faults"], r["status"], r["seats"], r["game"] = [], "ok", r["seats"][:2], "agram"
        r["outcome"] = {"ranks": [0, 1], "scores": [1.0, 0.0]}
        r["time_ms"], r["deal_index"] = round(rng.uniform(1, 50), 3), i
        r["match_id"] = f"club/{'+'.join(sorted(r['seats']))}/d{i:05d}/r00"
        recs.append(MatchRecord.from_json(r, moves=False))
    cols = view_of(recs).cols
    assert cols.scores.typecode == "b" and cols.rot.typecode == "b" and cols.versions.typecode == "b"
    if narrow == "all":
        assert cols.ranks.typecode == "b" and cols.seats.typecode == "b" and cols.deal.typecode == "h"
        assert cols.nbytes() / len(recs) < 75, cols.nbytes() / len(recs)
    else:  # the item types the replay's and the counters' column paths read (np.frombuffer with a dtype)
        assert (cols.ranks.typecode, cols.seats.typecode, cols.deal.typecode, cols.game.typecode,
                cols.seat_end.typecode, cols.id_end.typecode) == ("q", "i", "q", "i", "q", "q")
        assert cols.nbytes() / len(recs) < 115, cols.nbytes() / len(recs)
    assert all(same(a, b) for a, b in zip(RecordView(cols), recs))
    wide = columns.concat([cols, view_of(recs[:5]).cols])  # concat keeps or widens, never breaks
    assert all(same(a, b) for a, b in zip(RecordView(wide), recs + recs[:5]))


def test_column_accessors_agree_with_the_records():
    rng = random.Random(11)
    raws = odd_raws(11, 400)
    recs = [MatchRecord.from_json(r, moves=False) for r in raws]
    view = view_of(recs)
    a, b = _Chain(), _Chain()
    for r in recs:
        _feed(a, r)
    assert replay_columns.chain(view, b, len(recs), [len(recs)]) == {len(recs): a.hexdigest()}
    two = np.flatnonzero(view.players() == 2)
    sub = RecordView(view.cols, view.rows[two])
    seats, ranks, has = sub.seat_matrix(2), sub.rank_matrix(2), sub.has_ranks()
    plain = sub.plain()
    for j, k in enumerate(two.tolist()):
        r = recs[k]
        assert [sub.names[c] for c in seats[j]] == list(r.seats)
        assert sub.names[sub.status_codes()[j]] == r.status
        assert sub.match_id(j) == r.match_id and sub.fingerprint(j) == r.fingerprint
        if has[j]:
            assert plain[j] and tuple(ranks[j].tolist()) == r.ranks
    assert not has.all() and has.any() and not plain.all()
    with pytest.raises(ValueError, match="another player count"):
        view.seat_matrix(2)
    del rng


def test_compact_schedule_holds_equals_get():
    rng = random.Random(2)
    schedule = {f"t/b{rng.randrange(10**6)}+é/d{i:05d}": f"{rng.getrandbits(40):x}" for i in range(3000)}
    cs = CompactSchedule(_compact(schedule))
    keys = list(schedule)
    pairs = [(k, schedule[k] if rng.random() < 0.7 else "x") for k in keys[:500]]
    pairs += [(f"t/zz{i}", "1") for i in range(50)] + [(keys[3] + "-longer-than-any-id" * 3, schedule[keys[3]])]
    pairs += [(keys[4][:-1], schedule[keys[4]]), (keys[5], schedule[keys[5]] + "0")]
    ids, ie, fps, fe = _blobs(pairs)
    got = cs.holds(ids, ie, fps, fe)
    assert got.tolist() == [int(cs.get(a) == b) for a, b in pairs] and 0 < got.sum() < len(pairs)


def test_decision_times_with_huge_counts_round_trip_through_a_chunk(tmp_path):
    from arena.columns import Columns
    from arena.latency import DecisionTimes

    cols, rng = Columns(), random.Random(1)
    for i in range(40):  # plain and kept-whole records (the latter as their journal lines)
        raw = raw_record(rng, i)
        line = orjson.dumps(raw)
        if cols.append_raw(raw, line) is None:
            cols.append_whole(MatchRecord.from_json(raw, moves=False), line)
    cols.freeze()
    assert 0 < len(cols.extra) < len(cols)
    big = DecisionTimes.of_arrays(np.array([5, 9], np.uint32), np.array([2**33, 3], np.int64), np.array([0.0005]))
    small = DecisionTimes()
    small.extend([0.1, 0.2, 0.2, 0.0001, float("nan")])
    assert big.counts.dtype == np.int64 and small.arrays()[1].dtype == np.uint32
    ch = {"start": 0, "end": 10, "digest": "0" * 32, "lines": 1, "schedule_key": None, "cols": cols,
          "inside": b"\x01" * 40, "id_hash": np.arange(40, dtype=np.int64).tobytes(), "times": {"alpha": big, "beta": small}}
    with open(tmp_path / "chunk", "wb") as f:
        journal_chunks.encode(ch, f)
    with open(tmp_path / "chunk", "rb") as f:
        back = journal_chunks.read_chunk(f)
    assert back is not None
    alpha, beta = (DecisionTimes.merged([back["times"][b]]) for b in ("alpha", "beta"))  # as journal_cache reads them
    assert beta == small
    assert [a.tolist() for a in alpha.arrays()] == [a.tolist() for a in big.arrays()]
    assert len(alpha) == 2**33 + 4 and alpha.counts.dtype == np.int64
    assert all(same(a, b) for a, b in zip(RecordView(back["cols"]), RecordView(cols))) and len(back["cols"]) == 40


def test_a_cache_written_narrow_loads_in_the_item_types_the_other_modules_read(tmp_path, monkeypatch):
    from arena import columns

    monkeypatch.setattr(columns, "NARROW", frozenset(columns._INTS))
    folder, ok = journal_with_cache(tmp_path)
    monkeypatch.setattr(columns, "NARROW", frozenset({"rot", "versions"}))
    got, _out, _t, info = journal_cache.read(folder, ok, BOTS)
    assert info["parsed"] == 0
    cols = got.cols
    assert (cols.ranks.typecode, cols.seats.typecode, cols.status.typecode, cols.seat_end.typecode) == \
        ("q", "i", "i", "q")
    agree(folder, ok)
