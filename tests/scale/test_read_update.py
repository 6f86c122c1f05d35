"""Reading the journal for an update (issue 18, tenth pass): the schedule's hash join equals
``get`` pair for pair (ids of one length read in place, of many lengths, near the blob's end,
cut, with fallbacks), a schedule that only adds matches keeps the cached rows while one that
changes an old id's fingerprint reads the journal again, the CRC-32 prefix check catches the
edits the threat model names, and merging decision times equals the multiset union."""

from __future__ import annotations

import json
import random
import zlib

import numpy as np
import pytest

from arena import journal_cache, schedule_file
from arena.latency import DecisionTimes
from arena.schedule_file import CompactSchedule, encode
from tests.scale.test_journal_cache import check, journal


def _compact(schedule: dict[str, str]) -> CompactSchedule:
    """The compact form of ``schedule`` whatever its size (encode writes small ones plain)."""
    ids = sorted(schedule, key=lambda s: s.encode())
    return CompactSchedule({"count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(schedule[i] for i in ids)})


def _blobs(pairs: list[tuple[str, str]]) -> tuple[bytearray, list[int], bytearray, list[int]]:
    ids, ie, fps, fe = bytearray(), [], bytearray(), []
    for a, b in pairs:
        ids += a.encode()
        ie.append(len(ids))
        fps += b.encode()
        fe.append(len(fps))
    return ids, ie, fps, fe


def _queries(rng: random.Random, schedule: dict[str, str], n: int) -> list[tuple[str, str]]:
    """Pairs in, out, with another fingerprint, an id one character short or long, cut, new."""
    keys = list(schedule)
    out = []
    for _ in range(n):
        k = rng.choice(keys)
        r = rng.random()
        if r < 0.5:
            out.append((k, schedule[k]))
        elif r < 0.6:
            out.append((k, schedule[k][:-1] + ("x" if schedule[k][-1:] != "x" else "y")))
        elif r < 0.7:
            out.append((k[:-1], schedule[k]))
        elif r < 0.8:
            out.append((k + "0", schedule[k]))
        elif r < 0.9:
            out.append((k, schedule[k] + "0"))
        else:
            out.append((f"t/new{rng.randrange(10**6)}", schedule[k]))
    return out


@pytest.mark.parametrize("widths", ["one", "many"])
@pytest.mark.parametrize("size", [1, 3, 70_000])
def test_holds_equals_get(widths, size):
    rng = random.Random(size)
    if widths == "one":  # every id of one length: the strings are read in place
        schedule = {f"t/b{i:06d}+b{rng.randrange(10**6):06d}/d{rng.randrange(10**5):05d}": f"{i:016x}" for i in range(size)}
    else:  # deals past five digits, names of other lengths, non-ASCII
        schedule = {f"t/b{'é' * rng.randrange(3)}{i}/d{rng.randrange(10**rng.randrange(1, 8))}": f"{rng.getrandbits(40):x}"
                    for i in range(size)}
    cs = _compact(schedule)
    pairs = _queries(rng, schedule, min(3 * size, 5000)) + [(k, schedule[k]) for k in list(schedule)[-3:]]
    got = cs.holds(*_blobs(pairs))
    assert cs._index() is not None  # the hash join, not the fallback
    want = [int(cs.get(a) == b) for a, b in pairs]
    assert got.tolist() == want and sum(want) >= min(size, 3) and 0 in want


@pytest.mark.parametrize("widths", ["one", "many", "unsorted"])
def test_a_few_new_lines_are_looked_up_as_get_does(widths):
    """A few pairs against a large schedule (an update's new lines) skip the hash index: the ids
    are searched over the blob as :meth:`_find` searches, sorted or not — what get says."""
    rng = random.Random(7)
    if widths == "many":
        schedule = {f"t/b{'é' * rng.randrange(3)}{i}/d{rng.randrange(10**5)}": f"{i:x}" for i in range(70_000)}
    else:
        schedule = {f"t/b{i:06d}+b{rng.randrange(10**6):06d}/d{rng.randrange(10**5):05d}": f"{i:016x}"
                    for i in range(70_000)}
    cs = _compact(schedule)
    if widths == "unsorted":
        ids = list(schedule)
        rng.shuffle(ids)
        cs = CompactSchedule({"count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(schedule[i] for i in ids)})
    pairs = _queries(rng, schedule, 900) + [(k, schedule[k]) for k in (min(schedule), max(schedule))]
    cut = [0, *_blobs(pairs)[1]]
    searched = cs._search(_blobs(pairs)[0], cut)
    got = cs.holds(*_blobs(pairs))
    assert not hasattr(cs, "_index_cache")  # no index built for a few pairs
    want = [int(cs.get(a) == b) for a, b in pairs]
    assert got.tolist() == want and (widths == "unsorted" or 300 < sum(want) < len(want))
    assert searched.tolist() == [cs._find(a) for a, _ in pairs]


def test_holds_falls_back_to_get_when_the_join_cannot_decide(monkeypatch):
    rng = random.Random(5)
    schedule = {f"t/{i}/d{rng.randrange(10**6)}": f"{i:x}" for i in range(2000)}
    pairs = _queries(rng, schedule, 3000)
    want = None
    for case in ("shared hash", "unsorted", "a NUL"):
        cs = _compact(schedule)
        qs = list(pairs)
        if case == "shared hash":  # two ids of one hash: the sorted hashes cannot tell them apart
            monkeypatch.setattr(schedule_file, "_hash", lambda w: np.zeros(len(w), np.uint64))
        elif case == "unsorted":  # get's binary search then misses ids: holds says what get says
            monkeypatch.undo()
            ids = list(schedule)
            rng.shuffle(ids)
            cs = CompactSchedule({"count": len(ids), "ids": "\n".join(ids), "fingerprints": "\n".join(schedule[i] for i in ids)})
        else:
            qs.append(("t/\0", "0"))
        got = cs.holds(*_blobs(qs))
        if case != "a NUL":
            assert cs._index() is None
        want = [int(cs.get(a) == b) for a, b in qs]
        assert got.tolist() == want and 0 < sum(want) < len(want)


def _schedule_with(folder, change) -> None:
    meta = json.loads((folder / "tournament.json").read_text())
    change(meta["schedule"])
    (folder / "tournament.json").write_text(json.dumps(meta))


def test_a_schedule_that_only_adds_matches_keeps_the_cached_rows(tmp_path):
    folder, lines = journal(tmp_path, 300)
    path = folder / "matches.jsonl"
    path.write_bytes(b"".join(lines[:200]))
    assert check(folder) == {"cached": 0, "parsed": 200}
    _schedule_with(folder, lambda s: s.update({f"later/{i}": "f" for i in range(50)}))  # only new ids
    path.write_bytes(b"".join(lines))
    assert check(folder) == {"cached": 200, "parsed": 100}  # equal to a full read, the cache kept
    outside = next(json.loads(x)["match_id"] for x in lines[:200]
                   if json.loads(x)["match_id"] not in json.loads((folder / "tournament.json").read_text())["schedule"])

    def add_back(s):  # a cached record outside the schedule is scheduled now (with its fingerprint)
        s[outside] = next(json.loads(x)["fingerprint"] for x in lines if json.loads(x)["match_id"] == outside)
    _schedule_with(folder, add_back)
    assert check(folder) == {"cached": 0, "parsed": 300}


def _big_journal(tmp_path, n: int = 400):
    """A journal whose tournament.json holds the compact schedule (COMPACT_FROM lowered)."""
    folder, lines = journal(tmp_path, n)
    meta = json.loads((folder / "tournament.json").read_text())
    sched = meta.pop("schedule")
    meta[schedule_file.KEY] = encode({**sched, **{f"zz/{i}": "f" for i in range(schedule_file.COMPACT_FROM)}})[schedule_file.KEY]
    (folder / "tournament.json").write_text(json.dumps(meta))
    return folder, lines


def _compact_with(folder, change) -> None:
    meta = json.loads((folder / "tournament.json").read_text())
    cs = CompactSchedule(meta[schedule_file.KEY])
    sched = dict(cs.items())
    change(sched)
    meta[schedule_file.KEY] = encode(sched)[schedule_file.KEY]
    (folder / "tournament.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("change", ["adds", "adds, a cached outside row scheduled", "adds, an old fingerprint changed",
                                    "pairs file damaged"])
def test_a_compact_schedule_that_only_adds_looks_at_the_outside_rows_only(tmp_path, monkeypatch, change):
    folder, lines = _big_journal(tmp_path)
    path = folder / "matches.jsonl"
    path.write_bytes(b"".join(lines[:300]))
    assert check(folder) == {"cached": 0, "parsed": 300}
    assert schedule_file.pairs_key(folder) is not None  # kept with the cache
    rows = [json.loads(x) for x in lines]
    cached = {r["match_id"]: r["fingerprint"] for r in rows[:300]}
    now = CompactSchedule(json.loads((folder / "tournament.json").read_text())[schedule_file.KEY])
    outside = [m for m in cached if m not in now]
    assert outside

    def edit(s):
        s.update({f"later/{i}": "f" for i in range(30)})
        if change == "adds, a cached outside row scheduled":
            s[outside[0]] = cached[outside[0]]
        elif change == "adds, an old fingerprint changed":
            inside = next(m for m in cached if m in s)
            s[inside] = s[inside] + "0"
    _compact_with(folder, edit)
    if change == "pairs file damaged":
        p = folder / schedule_file.PAIRS_NAME
        data = bytearray(p.read_bytes())
        data[-9] ^= 1
        p.write_bytes(bytes(data))
    classified = []
    monkeypatch.setattr(journal_cache, "classify", lambda *a: classified.append(1) or _classify(*a))
    path.write_bytes(b"".join(lines))
    info = check(folder)  # equal to a full read in every case
    if change == "adds":
        assert info == {"cached": 300, "parsed": 100} and not classified  # no look at the inside rows
    elif change == "pairs file damaged":
        assert info == {"cached": 300, "parsed": 100} and classified  # every cached row looked up again
    else:
        assert info == {"cached": 0, "parsed": 400}


_classify = journal_cache.classify


def test_a_changed_fingerprint_of_an_old_id_reclassifies(tmp_path):
    folder, lines = journal(tmp_path, 200)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    assert check(folder) == {"cached": 0, "parsed": 200}
    first = json.loads(lines[1])["match_id"]

    def refingerprint(s):
        s[first] = s[first] + "0"  # the same id, another fingerprint: the cached row is outside now
        s.update({f"later/{i}": "f" for i in range(20)})
    _schedule_with(folder, refingerprint)
    assert check(folder) == {"cached": 0, "parsed": 200}
    assert check(folder) == {"cached": 200, "parsed": 0}


@pytest.mark.parametrize("how", ["one byte", "two lines swapped", "truncated and appended", "foreign cache"])
def test_the_prefix_check_catches_accidents(tmp_path, how):
    folder, lines = journal(tmp_path, 120)
    path = folder / "matches.jsonl"
    path.write_bytes(b"".join(lines[:60]))
    check(folder)
    path.write_bytes(b"".join(lines))
    check(folder)  # two chunks: [0, 60) and [60, 120)
    data = bytearray(path.read_bytes())
    if how == "one byte":  # a digit of a time, same size
        k = data.index(b'"time_ms":') + 11
        data[k] = ord("7") if data[k] != ord("7") else ord("3")
    elif how == "two lines swapped":  # same bytes, another order
        a, b = len(b"".join(lines[:10])), len(b"".join(lines[:12]))
        data[a:b] = lines[11] + lines[10]
    elif how == "truncated and appended":  # as long as before, other lines at the end of the first chunk
        data = bytearray(b"".join(lines[:55] + lines[100:105] + lines[60:]))
    else:  # the cache of another journal of the same records in another order
        other = tmp_path / "other"
        other.mkdir()
        (other / "tournament.json").write_bytes((folder / "tournament.json").read_bytes())
        (other / "matches.jsonl").write_bytes(b"".join(lines[60:] + lines[:60]))
        check(other)
        (folder / journal_cache.NAME).write_bytes((other / journal_cache.NAME).read_bytes())
        data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data))
    info = check(folder)  # equal to a full read of the file as it is now
    assert info["cached"] < 120 and info["cached"] in (0, 60)
    if how == "one byte":
        assert zlib.crc32(bytes(data)) != zlib.crc32(b"".join(lines))


def test_merging_decision_times_equals_the_union():
    rng = np.random.default_rng(3)
    for _ in range(60):
        parts = [np.round(rng.uniform(0, rng.choice([0.05, 3.0]), rng.integers(0, 400)), 3) for _ in range(4)]
        if rng.random() < 0.3:
            parts[1] = parts[0][: len(parts[0]) // 2].copy()  # every value already there: counts added
        got = DecisionTimes()
        for p in parts:
            t = DecisionTimes()
            t.add_values(p)
            got.extend(t)
        want = np.sort(np.concatenate(parts))
        assert got.values().tobytes() == want.tobytes() and len(got) == len(want)
        us, counts, _odd = got.arrays()
        assert bool((np.diff(us.astype(np.int64)) > 0).all()) and int(counts.min(initial=1)) >= 1
        pieces = []
        for p in parts:  # the same parts merged in one step (how a cache's chunks are read), odd times too
            t = DecisionTimes()
            t.add_values(np.concatenate([p, [0.0001234, -1.0]]))
            pieces.append(t.arrays())
        one = DecisionTimes.merged(pieces[::-1])
        want = np.sort(np.concatenate([*parts, [0.0001234, -1.0] * len(parts)]))
        assert one.values().tobytes() == want.tobytes() and len(one) == len(want)
        assert one.percentile(50) == np.percentile(want, 50) and one.percentile(99) == np.percentile(want, 99)
    with pytest.raises(ValueError, match="a count below 1"):
        DecisionTimes.merged([(np.array([5], np.uint32), np.array([0]), np.zeros(0))])


def test_encode_writes_what_compact_reads():
    schedule = {f"t/{i}/d{i * 7919 % 100_003}": f"{i:x}" for i in range(schedule_file.COMPACT_FROM)}
    cs = CompactSchedule(encode(schedule)[schedule_file.KEY])
    assert cs._index() is not None and dict(cs.items()) == schedule
