"""The driver's journal index (arena/journal.py OnDisk): ids in one blob with their hashes in an
IntIndex answer as the dict of ids did — also when ids share a hash — and stay small."""

from __future__ import annotations

import random

import pytest

from arena import journal
from arena.journal import Journal


@pytest.mark.parametrize("collide", [False, True])
def test_index_answers_as_a_dict(tmp_path, monkeypatch, collide):
    if collide:  # every id shares one of three hashes: resolved by comparing the ids
        monkeypatch.setattr(journal, "hash", lambda s: len(s) % 3, raising=False)
    rng = random.Random(1)
    j = Journal(tmp_path / "t")
    ids = [f"t/b{rng.randrange(50)}+é{rng.randrange(50)}/d{rng.randrange(9):05d}/r0{rng.randrange(2)}" for _ in range(400)]
    want: dict[str, dict] = {}
    for k, mid in enumerate(ids):
        rec = {"match_id": mid, "k": k}
        assert j.append(rec) == (mid not in want)
        want.setdefault(mid, rec)
    for mid in ids + ["t/none/d00000/r00", "", "t/b1+é1/d00000/r0"]:
        assert (mid in j) == (mid in want) and (mid in j.records) == (mid in want)
    assert list(j.records) == list(want) and len(j.records) == len(want)
    for mid in rng.sample(list(want), 30):
        assert j.records[mid] == want[mid]
    assert dict(j.records.items()) == want and j.records.get("absent") is None
    j.close()
    again = Journal(tmp_path / "t")  # reopened: indexed from the file
    assert list(again.records) == list(want) and all(m in again for m in want)
    again.close()


def test_bytes_per_record(tmp_path):
    j = Journal(tmp_path / "t")
    for i in range(50_000):
        j.records.add(f"cheap/b{i % 100:03d}+b{i // 100 % 100:03d}/d{i // 10_000:05d}/r00", i * 700)
    r = j.records
    held = len(r._ids) + 8 * len(r._id_end) + 8 * len(r._offsets) + r._by_hash.nbytes() + 64 * len(r._by_hash.tail)
    assert held < 50_000 * 80  # ~26 bytes of id + 8 + 8 + 16 (+ the recent hashes' dict)
    j.close()
