"""The journal's checkpointed typed prefix (arena/journal_cache.py): after random interruptions
the records, the inside/outside split and the decision times equal a full read bit for bit,
only the new lines are parsed, and an edited, truncated or rescheduled journal is detected."""

from __future__ import annotations

import importlib.util
import json
import random
from array import array
from pathlib import Path

import numpy as np
import pytest

from arena import journal_cache
from arena.journal import iter_raw_records
from arena.latency import DecisionTimes
from arena.results import in_schedule, load_meta

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "scale.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def reference(folder: Path, meta: dict) -> tuple[list, int, dict]:
    """The full read the cache replaces (what arena.results read before it)."""
    ok = in_schedule(meta)
    times: dict[str, array] = {b: array("d") for b in meta["bots"]}  # every decision, as before arena.latency
    inside, outside = [], 0
    for raw, rec in iter_raw_records(folder, moves=False):
        if ok(rec):
            inside.append(rec)
            for seat, ts in enumerate(raw.get("move_ms") or ()):
                times[rec.seats[seat]].extend(ts)
        else:
            outside += 1
    return inside, outside, times


def check(folder: Path) -> dict:
    meta = load_meta(folder)
    got_in, got_out, got_t, info = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    ref_in, ref_out, ref_t = reference(folder, meta)
    assert got_in == ref_in and got_out == ref_out
    assert {b: t.values().tobytes() for b, t in got_t.items()} == {b: np.sort(t).tobytes() for b, t in ref_t.items()}
    return info


def journal(tmp_path: Path, n: int, bots: int = 12) -> tuple[Path, list[bytes]]:
    """A synthetic journal's lines and its tournament.json (the file itself left empty)."""
    folder = tmp_path / "t"
    bench.make_journal(folder, n, bots, 2)
    lines = (folder / "matches.jsonl").read_bytes().splitlines(keepends=True)
    meta = json.loads((folder / "tournament.json").read_text())
    for mid in list(meta["schedule"])[::7]:  # some records outside the schedule
        del meta["schedule"][mid]
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"")
    return folder, lines


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_reads_equal_a_full_read_after_random_interruptions(tmp_path, seed):
    rng = random.Random(seed)
    folder, lines = journal(tmp_path, 600)
    path, cache = folder / "matches.jsonl", folder / journal_cache.NAME
    done, parsed_total, steps = 0, 0, 0
    while done < len(lines):
        k = rng.randint(1, 80)
        new = lines[done:done + k]
        done += len(new)
        extra = b""
        fault = rng.random()
        if fault < 0.15:
            extra = b"\n"  # a blank line
        elif fault < 0.3 and done > 1:
            extra = lines[rng.randrange(done - 1)]  # a repeated match id: the first record is kept
        with open(path, "ab") as f:
            f.write(b"".join(new) + extra)
            if rng.random() < 0.3 and done < len(lines):  # a line being written: left for the next call
                f.write(lines[done][: rng.randrange(1, len(lines[done]))])
        if cache.exists() and rng.random() < 0.15:  # the cache's writer killed mid-write
            data = cache.read_bytes()
            cache.write_bytes(data[: rng.randrange(len(data))])
        info = check(folder)
        steps += 1
        parsed_total += info["parsed"]
        # drop a partial line so the next chunk appends whole lines
        data = path.read_bytes()
        path.write_bytes(data[: data.rfind(b"\n") + 1])
    # incremental: most records were parsed once (a cut cache re-parses what it lost)
    assert parsed_total < 2 * len(lines), (parsed_total, len(lines), steps)


def test_only_the_new_lines_are_parsed(tmp_path):
    folder, lines = journal(tmp_path, 300)
    path = folder / "matches.jsonl"
    path.write_bytes(b"".join(lines[:250]))
    assert check(folder) == {"cached": 0, "parsed": 250}
    path.write_bytes(b"".join(lines))
    assert check(folder) == {"cached": 250, "parsed": 50}
    assert check(folder) == {"cached": 300, "parsed": 0}


def _flip_ranks(line: bytes) -> bytes:
    rec = json.loads(line)
    rec["outcome"]["ranks"] = rec["outcome"]["ranks"][::-1]
    out = json.dumps(rec).encode() + b"\n"
    return out


def test_a_journal_edited_in_the_middle_or_truncated_is_read_again(tmp_path):
    folder, lines = journal(tmp_path, 300)
    path = folder / "matches.jsonl"
    for cut in (100, 200, 300):  # three chunks
        path.write_bytes(b"".join(lines[:cut]))
        check(folder)
    edited = list(lines)
    edited[150] = _flip_ranks(edited[150])  # inside the second chunk
    path.write_bytes(b"".join(edited))
    info = check(folder)  # equal to a full read of the edited file
    assert info == {"cached": 100, "parsed": 200}  # the first chunk still holds, the rest is parsed again
    path.write_bytes(b"".join(edited[:120]))  # truncated, then other lines appended
    assert check(folder) == {"cached": 100, "parsed": 20}
    path.write_bytes(b"".join(edited[:120] + lines[200:260]))
    assert check(folder) == {"cached": 120, "parsed": 60}


def test_a_changed_schedule_or_a_foreign_cache_reads_the_whole_journal(tmp_path):
    folder, lines = journal(tmp_path, 200)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    check(folder)
    meta = json.loads((folder / "tournament.json").read_text())
    first = json.loads(lines[1])["match_id"]  # lines[0] is outside already
    del meta["schedule"][first]  # a cached inside record is now outside
    (folder / "tournament.json").write_text(json.dumps(meta))
    assert check(folder) == {"cached": 0, "parsed": 200}
    assert check(folder) == {"cached": 200, "parsed": 0}
    (folder / journal_cache.NAME).write_bytes(b"not a pickle")
    assert check(folder) == {"cached": 0, "parsed": 200}


def test_no_journal_yet(tmp_path):
    folder, _lines = journal(tmp_path, 10)
    (folder / "matches.jsonl").unlink()
    meta = load_meta(folder)
    got = journal_cache.read(folder, in_schedule(meta), meta["bots"])
    assert got[:2] == ([], 0) and all(isinstance(t, DecisionTimes) and not len(t) for t in got[2].values())
