"""The cached chunks checked in a thread while the new lines are parsed (arena/journal_prefix.py):
the chunks trusted unchecked are the ones the check keeps when nothing changed; an edit of the
journal's prefix or a damaged chunk is found by the check, and the read done again gives what a
read with the check first gives; an error raised while trusting bad chunks is not the user's."""

from __future__ import annotations

import pytest

from arena import journal_cache, journal_prefix
from arena.results import in_schedule, load_meta
from tests.scale.test_journal_cache import _flip_ranks, check, journal


def _three_chunks(tmp_path):
    folder, lines = journal(tmp_path, 300)
    path = folder / "matches.jsonl"
    for cut in (100, 200, 300):
        path.write_bytes(b"".join(lines[:cut]))
        check(folder)
    return folder, lines


def _spied(monkeypatch):
    calls = []
    real = journal_cache.read

    def spy(*a, **k):
        calls.append(k.get("speculate", True))
        return real(*a, **k)

    monkeypatch.setattr(journal_cache, "read", spy)
    return calls


def test_unchecked_chunks_are_the_checked_ones_when_nothing_changed(tmp_path):
    folder, _ = _three_chunks(tmp_path)
    with open(folder / "matches.jsonl", "rb") as j:
        fast = journal_prefix.load_chunks(folder / journal_cache.NAME, j, check=False)
        slow = journal_prefix.load_chunks(folder / journal_cache.NAME, j, check=True)
        assert [c["digest"] for c in fast[0]] == [c["digest"] for c in slow[0]] and len(fast[0]) == 3
        assert (fast[1], fast[2].crc, fast[3]) == (slow[1], slow[2].crc, slow[3])
        assert journal_prefix.Check(fast[4], j, fast[0]).holds(fast[0])
        assert journal_prefix.Check(fast[4], j, fast[0][:1]).holds(fast[0][:1])  # reads no further
        for src in (fast[4], slow[4]):
            src.close()


def test_an_edit_of_the_prefix_is_found_by_the_thread_and_read_again(tmp_path, monkeypatch):
    folder, lines = _three_chunks(tmp_path)
    edited = list(lines)
    edited[150] = _flip_ranks(edited[150])  # same ids, same lengths' order: only the CRC sees it
    (folder / "matches.jsonl").write_bytes(b"".join(edited))
    with open(folder / "matches.jsonl", "rb") as j:
        trusted = journal_prefix.load_chunks(folder / journal_cache.NAME, j, check=False)
        assert len(trusted[0]) == 3  # unchecked, every chunk looks valid
        assert not journal_prefix.Check(trusted[4], j, trusted[0]).holds(trusted[0])
        trusted[4].close()
    calls = _spied(monkeypatch)
    assert check(folder) == {"cached": 100, "parsed": 200}  # equal to a full read of the edited file
    assert calls == [True, False]  # the speculative read, then the one with the check first
    calls.clear()
    assert check(folder) == {"cached": 300, "parsed": 0} and calls == [True]  # the cache is right again


def test_a_damaged_chunk_is_found_by_the_thread(tmp_path, monkeypatch):
    folder, _ = _three_chunks(tmp_path)
    cache = folder / journal_cache.NAME
    with open(folder / "matches.jsonl", "rb") as j:
        chunks = journal_prefix.load_chunks(cache, j)[0]
    data = bytearray(cache.read_bytes())
    last = chunks[-1]["at"]
    data[last + (len(data) - last) // 2] ^= 0x40  # inside the last chunk's columns: its checksum fails
    cache.write_bytes(bytes(data))
    calls = _spied(monkeypatch)
    assert check(folder) == {"cached": 200, "parsed": 100}
    assert calls == [True, False]


@pytest.mark.parametrize("holds", [True, False])
def test_an_error_while_trusting_bad_chunks_is_not_raised(tmp_path, monkeypatch, holds):
    folder, lines = _three_chunks(tmp_path)
    if not holds:
        edited = list(lines)
        edited[10] = _flip_ranks(edited[10])
        (folder / "matches.jsonl").write_bytes(b"".join(edited))
    real = journal_cache._cached_times

    def failing(folder_, bots, chunks, times):
        if chunks:
            raise RuntimeError("a crafted chunk")
        return real(folder_, bots, chunks, times)

    monkeypatch.setattr(journal_cache, "_cached_times", failing)
    meta = load_meta(folder)
    if holds:  # the chunks are good: the error is a real one
        with pytest.raises(RuntimeError, match="a crafted chunk"):
            journal_cache.read(folder, in_schedule(meta), meta["bots"])
    else:  # the first chunk fails its check: read again, no chunk trusted, no error
        assert journal_cache.read(folder, in_schedule(meta), meta["bots"])[3] == {"cached": 0, "parsed": 300}
