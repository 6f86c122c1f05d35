"""The journal cache's columns read when first used (arena/deferred_columns.py): an update's tables
never load the cached prefix, yet the records read back equal a full read's, also once loaded
after views of the new rows were taken; a cache cut after it was checked is a clear error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena import journal_cache, render, results
from arena.deferred_columns import DeferredColumns
from arena.errors import JournalError
from arena.results import in_schedule, load_meta
from tests.scale.test_journal_cache import journal, reference


def _folder(tmp_path: Path, n: int = 500, first: int = 400) -> tuple[Path, list[bytes]]:
    folder, lines = journal(tmp_path, n)
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:first]))
    return folder, lines


def test_an_update_reads_only_the_new_rows_and_equals_a_full_rebuild(tmp_path):
    folder, lines = _folder(tmp_path)
    results.standings(folder, history=False)  # the cache and the checkpoints of the first 400
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[400:]))
    st = results.standings(folder, history=False)
    cols = st.records.cols
    assert isinstance(cols, DeferredColumns) and not cols.loaded  # the tables never read the prefix
    again = results.standings(folder, history=False).records.cols  # nothing new: an empty update
    assert isinstance(again, DeferredColumns) and not again.loaded
    full = tmp_path / "full"
    shutil.copytree(folder, full)
    for p in full.glob("checkpoint*"):
        p.unlink()
    st_full = results.standings(full, history=False)
    assert render.to_csv(st.rows) == render.to_csv(st_full.rows)
    ref_in, ref_out, _ = reference(folder, load_meta(folder))
    assert list(st.records) == ref_in and st.outside == ref_out  # read in full when asked: loaded once
    assert cols.loaded and len(cols) == len(ref_in) + ref_out


def test_views_of_the_new_rows_stay_whole_once_the_prefix_is_loaded(tmp_path):
    folder, lines = _folder(tmp_path)
    meta = load_meta(folder)
    journal_cache.read(folder, in_schedule(meta), meta["bots"])
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[400:]))
    recs = journal_cache.read(folder, in_schedule(meta), meta["bots"])[0]
    cached = len(recs.cols) - 100
    k = next(i for i, r in enumerate(recs.rows.tolist()) if r >= cached)
    tail = recs[k:]
    assert tail.cols is not recs.cols and len(tail.cols) == 100  # a view of the new rows alone
    before = list(tail)
    assert not recs.cols.loaded
    everything = list(recs)  # loads the prefix and appends the new rows to it
    assert recs.cols.loaded and list(tail) == before == everything[k:]
    assert recs[k:].cols is recs.cols  # loaded: one set of columns again
    assert recs.id_hashes().tolist()[k:] == tail.id_hashes().tolist()
    assert everything == reference(folder, meta)[0]


@pytest.mark.parametrize("how", ["cut", "replaced"])
def test_a_cache_changed_after_its_check(tmp_path, how):
    folder, _lines = _folder(tmp_path)
    meta = load_meta(folder)
    journal_cache.read(folder, in_schedule(meta), meta["bots"])
    recs = journal_cache.read(folder, in_schedule(meta), meta["bots"])[0]  # all cached, none loaded
    path = folder / journal_cache.NAME
    assert not recs.cols.loaded
    if how == "cut":  # another process cut the file this one checked: a clear error when used
        os.truncate(path, path.stat().st_size // 2)
        with pytest.raises(JournalError, match="checkpoint-journal.bin: a chunk no longer reads back"):
            recs[0]
    else:  # replaced by a new file (as a fresh cache is written): the file checked is still read
        tmp = path.with_suffix(".x")
        tmp.write_bytes(b"not a cache")
        os.replace(tmp, path)
        assert list(recs) == reference(folder, meta)[0]


@pytest.mark.parametrize("cached", [True, False])
def test_a_reader_that_finds_the_cache_locked_reads_it_and_writes_nothing(tmp_path, cached):
    import fcntl

    folder, lines = _folder(tmp_path)
    meta = load_meta(folder)
    if cached:
        journal_cache.read(folder, in_schedule(meta), meta["bots"])
    else:
        (folder / "matches.jsonl").write_bytes(b"")
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[400 if cached else 0:]))
    before = {p.name: p.read_bytes() for p in folder.glob("checkpoint*")}
    with open(folder / "matches.jsonl", "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another reader is writing the cache (or stopped with ^Z)
        got = journal_cache.read(folder, in_schedule(meta), meta["bots"])  # no wait
        assert got[3] == ({"cached": 400, "parsed": 100} if cached else {"cached": 0, "parsed": 500})
        assert list(got[0]) == reference(folder, meta)[0]
        assert {p.name: p.read_bytes() for p in folder.glob("checkpoint*")} == before  # nothing written
    assert journal_cache.read(folder, in_schedule(meta), meta["bots"])[3]["parsed"] == (100 if cached else 500)


def test_repeated_ids_and_hash_clashes_across_dropped_blocks(tmp_path, monkeypatch):
    """Blocks of 16 rows (dropped once written), an id hash of 3 values (every new id clashes with
    others): each repeated id is still found by its exact id, cached or new, read back from the journal."""
    monkeypatch.setattr(journal_cache, "_ROWS", 16)
    monkeypatch.setattr(journal_cache, "id_hash", lambda mid: len(mid) % 3)
    folder, lines = journal(tmp_path, 300)
    lines = lines[:200] + lines[::7] + lines[200:] + lines[150::5]  # repeats of cached and of new ids
    meta = load_meta(folder)
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:200]))
    journal_cache.read(folder, in_schedule(meta), meta["bots"])
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(b"".join(lines[200:]))
    got, out, _t, info = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    ref_in, ref_out, _ = reference(folder, meta)
    assert info == {"cached": 200, "parsed": 100} and list(got) == ref_in and out == ref_out


def test_a_locked_out_reader_still_reads_its_chunks_after_the_owner_parses_them_again(tmp_path, monkeypatch):
    """Reader B finds the lock taken and defers the cache's chunks (16 small ones after big ones);
    then owner A parses those small chunks again as one. B reads back the bytes it checked: A wrote
    the new cache as a copy instead of rewriting the file B holds (rewritten in place, B's read-back
    failed its CRC: "delete the file and run again" on a healthy cache)."""
    import fcntl

    monkeypatch.setattr(journal_cache, "_ROWS", 64)  # big chunks of 64 rows, small ones of fewer than 4
    folder, lines = _folder(tmp_path, 500, 300)
    meta = load_meta(folder)
    ok, bots = in_schedule(meta), meta["bots"]
    journal_cache.read(folder, ok, bots)
    for k in range(300, 300 + journal_cache.COALESCE):  # 16 small chunks of one record each
        with open(folder / "matches.jsonl", "ab") as f:
            f.write(lines[k])
        journal_cache.read(folder, ok, bots)
    at = 300 + journal_cache.COALESCE
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(lines[at])
    with open(folder / "matches.jsonl", "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        b_view, b_out, _t, b_info = journal_cache.read(folder, ok, bots)  # B: reads, writes nothing
    ref_in, ref_out, _ = reference(folder, meta)
    assert isinstance(b_view.cols, DeferredColumns) and not b_view.cols.loaded
    assert b_info == {"cached": at, "parsed": 1}
    with open(folder / "matches.jsonl", "ab") as f:
        f.write(lines[at + 1])
    a_view, _o, _t, a_info = journal_cache.read(folder, ok, bots)  # A: the 16 small chunks again, as one
    assert a_info == {"cached": 300, "parsed": journal_cache.COALESCE + 2}
    assert list(b_view) == ref_in and b_out == ref_out  # B's chunks read back now
    assert list(a_view) == reference(folder, meta)[0]
    assert journal_cache.read(folder, ok, bots)[3] == {"cached": at + 2, "parsed": 0}


def test_many_small_chunks_are_parsed_again_as_one(tmp_path):
    folder, lines = _folder(tmp_path, 500, 300)
    meta = load_meta(folder)
    journal_cache.read(folder, in_schedule(meta), meta["bots"])
    counts = []
    for k in range(300, 300 + 3 * journal_cache.COALESCE, 3):  # a leaderboard every 3 new records
        with open(folder / "matches.jsonl", "ab") as f:
            f.write(b"".join(lines[k:k + 3]))
        journal_cache.read(folder, in_schedule(meta), meta["bots"])
        with open(folder / journal_cache.NAME, "rb") as f:
            counts.append(f.read().count(b"CHNK"))
    n = journal_cache.COALESCE  # the first chunk (300 records) is small too: the 16th read parses all again
    assert counts == [*range(2, n + 1), 1], counts
    got, out, _t, info = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    ref_in, ref_out, _ = reference(folder, meta)
    assert info["parsed"] == 0 and list(got) == ref_in and out == ref_out
