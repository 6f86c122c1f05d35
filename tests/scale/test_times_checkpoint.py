"""The decision times' checkpoint (arena/times_checkpoint.py): an update takes the cached prefix's
merged times from it instead of merging every chunk's, with the same times as a full read; a
foreign, stale or inconsistent one is ignored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from arena import journal_cache, times_checkpoint
from arena.latency import DecisionTimes
from arena.results import in_schedule, load_meta
from tests.scale.test_journal_cache import journal, reference


def _times_equal(folder, got) -> None:
    want = reference(folder, load_meta(folder))[2]
    assert {b: t.values().tobytes() for b, t in got.items()} == {b: np.sort(t).tobytes() for b, t in want.items()}


def _update(tmp_path, monkeypatch, rows: int = 64):
    monkeypatch.setattr(journal_cache, "_ROWS", rows)  # many chunks, each with its own times
    folder, lines = journal(tmp_path, 500)
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:400]))
    meta = load_meta(folder)
    journal_cache.read(folder, in_schedule(meta), meta["bots"])
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[400:]))
    return folder, meta


def test_an_update_takes_the_merged_times_and_equals_a_full_read(tmp_path, monkeypatch):
    folder, meta = _update(tmp_path, monkeypatch)
    assert (folder / times_checkpoint.NAME).is_file()

    def no_merge(parts):  # the cached chunks' times must not be merged again
        raise AssertionError("merged the chunks' times")
    monkeypatch.setattr(DecisionTimes, "merged", staticmethod(no_merge))
    got = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    assert got[3] == {"cached": 400, "parsed": 100}
    _times_equal(folder, got[2])
    _times_equal(folder, journal_cache.read(folder, in_schedule(meta), meta["bots"])[2])  # all cached now


@pytest.mark.parametrize("damage", ["other key", "other bots", "offsets", "missing"])
def test_a_foreign_or_damaged_checkpoint_is_ignored(tmp_path, monkeypatch, damage):
    folder, meta = _update(tmp_path, monkeypatch)
    path = folder / times_checkpoint.NAME
    if damage == "missing":
        path.unlink()
    else:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        head = json.loads(bytes(arrays["head"]).decode())
        if damage == "other key":
            head["key"] = head["key"].replace("crc32", "crc33")
        elif damage == "other bots":
            head["bots"] = head["bots"][::-1]
        else:
            arrays["off"] = arrays["off"][::-1].copy()
        arrays["head"] = np.frombuffer(json.dumps(head).encode(), np.uint8)
        np.savez(path, **arrays)
    got = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    assert got[3] == {"cached": 400, "parsed": 100}
    _times_equal(folder, got[2])  # the chunks' own times merged instead


def test_a_cache_whose_times_add_up_beyond_any_count_is_read_again(tmp_path, monkeypatch):
    """Each chunk's counts within bounds, their sum across chunks not: the journal is read whole."""
    from arena import journal_chunks, latency

    folder, meta = _update(tmp_path, monkeypatch)
    (folder / times_checkpoint.NAME).unlink()  # the chunks' own times are merged
    with open(folder / journal_cache.NAME, "rb") as f:
        f.read(len(journal_chunks.header()))
        per_chunk = []
        while (ch := journal_chunks.read_chunk(f, columns=False)) is not None:
            per_chunk.append(max(int(c.sum()) + len(o) for _u, c, o in ch["times"]().values()))
    assert len(per_chunk) > 2
    monkeypatch.setattr(latency, "MAX_TOTAL", max(per_chunk))  # every chunk passes, no bot's sum of them does
    got = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    assert got[3] == {"cached": 0, "parsed": 500}  # read again whole
    _times_equal(folder, got[2])
