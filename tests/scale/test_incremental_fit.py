"""The incremental update without O(N) Python work (issue 18, sixth pass): a large field's batch
fit warm-started from the checkpoint (chord steps with the checkpointed information) gives the
full rebuild's table bit for bit; the journal cache's inside/outside split is not classified
again under the same schedule and is checked from the ids under another; the tables' counters
survive their array checkpoint (and lineups whose hashes collide)."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest

from arena import batchfit, journal_cache, results, tallies
from arena.columns import Columns
from arena.journal import read_records
from arena.results import standings
from arena.schedule_file import encode, schedule_of
from tests.scale.test_tallies import assert_same_tables, fresh, journal_lines


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4])
def test_a_large_fields_checkpointed_table_equals_the_full_rebuild(tmp_path, seed, monkeypatch):
    """120 bots (> ANALYTIC_BOTS: the sandwich, the warm start and the grid): the journal grows by
    random chunks, the checkpoints are sometimes cut or deleted; every incremental table equals a
    fresh full rebuild's bit for bit, and the warm start took the chord steps."""
    chords: list[bool] = []
    real = batchfit.chord

    def observed(*a, **kw):
        got = real(*a, **kw)
        chords.append(got is not None)
        return got

    monkeypatch.setattr(batchfit, "chord", observed)  # the real function, its result observed
    if seed == 4:
        monkeypatch.setattr(tallies, "HASH_ORDER_FROM", 0)  # the blocks by lineup hashes
    lines, meta = journal_lines(tmp_path, 3000, 120, seed)
    meta["ratings"]["draw_probability"] = 0.1
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    rng = random.Random(seed)
    done = 0
    while done < len(lines):
        done = min(len(lines), done + (2400 if not done else rng.randint(60, 300)))
        (folder / "matches.jsonl").write_bytes(b"".join(lines[:done]))
        if rng.random() < 0.2:
            (folder / "checkpoint-fit-info.npy").unlink(missing_ok=True)  # Newton from the warm start
        got = standings(folder, history=False)
        assert got.strength is not None and got.strength.fit.cov is not None  # the sandwich path
        assert_same_tables(got, fresh(folder, tmp_path))
    assert any(chords), chords


def _design(seed: int, n_bots: int = 30, n: int = 3000):
    rng = np.random.default_rng(seed)
    theta = rng.normal(0, 1, n_bots)
    pairs = np.array([rng.choice(n_bots, 2, replace=False) for _ in range(n)])
    win = rng.random(n) < 1 / (1 + np.exp(theta[pairs[:, 1]] - theta[pairs[:, 0]]))
    tie = rng.random(n) < 0.1
    ranks = [(0, 0) if t else ((0, 1) if w else (1, 0)) for w, t in zip(win, tie)]
    sides = pairs.reshape(n, 2, 1).astype(np.int32)
    return batchfit.build_design(sides, ranks, np.arange(n) // 2, n_bots)


def test_the_chord_steps_land_on_newtons_grid_point():
    d = _design(1)
    cold = batchfit.fit(d, method="sandwich")
    more = _design(1, n=3100)  # 100 more results: the checkpoint's fit and information are a bit off
    ref = batchfit.fit(more, method="sandwich")
    warm = batchfit.fit(more, method="sandwich", beta0=cold.beta, info0=cold.info)
    assert cold.info is not None and cold.info.shape == (more.n_params, more.n_params)
    assert batchfit.chord(more, cold.beta, cold.info) is not None  # it converged, no fallback
    assert ref.beta.tobytes() == warm.beta.tobytes() and ref.cov.tobytes() == warm.cov.tobytes()
    assert np.all(ref.beta * batchfit.GRID == np.round(ref.beta * batchfit.GRID))  # on the grid
    # a wrong information matrix only costs steps (or falls back to Newton): the same bits
    bad = np.eye(more.n_params)
    assert batchfit.fit(more, method="sandwich", beta0=cold.beta, info0=bad).beta.tobytes() == ref.beta.tobytes()
    assert batchfit.chord(more, cold.beta, np.eye(3)) is None  # another size: not used
    # and the optimum itself: the gradient vanishes at the unrounded fit, to the grid's size
    beta = batchfit.newton(more, tol=0.0, info=False)[0]
    assert np.max(np.abs(beta - ref.beta)) <= 0.5 / batchfit.GRID


def _folder(tmp_path, n: int, seed: int):
    lines, meta = journal_lines(tmp_path, n, 10, seed)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    return folder, lines, meta


def _read(folder, meta):
    return journal_cache.read(folder, results.in_schedule(meta), meta["bots"])


def test_the_cached_split_is_kept_under_the_same_schedule_and_checked_from_the_ids_under_another(
        tmp_path, monkeypatch):
    folder, lines, meta = _folder(tmp_path, 400, 7)
    built = []
    real = Columns.record

    def counted(self, i):
        built.append(i)
        return real(self, i)

    monkeypatch.setattr(Columns, "record", counted)  # the real method, its calls counted
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:300]))
    _read(folder, meta)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    built.clear()
    recs, out, _times, info = _read(folder, meta)
    assert info == {"cached": 300, "parsed": 100} and built == []  # no cached record built to classify it
    # the schedule extended (a match added): the split is checked at once from ids and fingerprints
    sched = dict(schedule_of(meta))
    sched["x/extra/d1/r0"] = "f" * 16
    meta2 = {**{k: v for k, v in meta.items() if k not in ("schedule", "schedule_compact")}, **encode(sched)}
    (folder / "tournament.json").write_text(json.dumps(meta2))
    got = _read(folder, meta2)
    assert got[3]["cached"] == 400 and built == [] and list(got[0]) == list(recs) and got[1] == out
    # a cached record's fingerprint changed in the schedule: it moves outside, the journal is read again
    victim = json.loads(lines[5])
    sched[victim["match_id"]] = "0" * 16
    meta3 = {**meta2, **encode(sched)}
    (folder / "tournament.json").write_text(json.dumps(meta3))
    got = _read(folder, meta3)
    ok = results.in_schedule(meta3)
    whole = read_records(folder)
    assert [r.match_id for r in got[0]] == [r.match_id for r in whole if ok(r)]
    assert got[1] == sum(1 for r in whole if not ok(r)) >= 1


@pytest.mark.parametrize("compact", [False, True])
def test_classify_says_what_in_schedule_says(tmp_path, monkeypatch, compact):
    from arena import schedule_file

    if compact:
        monkeypatch.setattr(schedule_file, "COMPACT_FROM", 10)
    folder, lines, meta = _folder(tmp_path, 200, 8)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs = read_records(folder)
    sched = dict(schedule_of(meta))
    rng = random.Random(8)
    for r in rng.sample(recs, 30):  # some removed, some with another fingerprint
        if rng.random() < 0.5:
            del sched[r.match_id]
        else:
            sched[r.match_id] = "e" * 16
    meta = {**{k: v for k, v in meta.items() if k not in ("schedule", "schedule_compact")}, **encode(sched)}
    assert ("schedule_compact" in meta) == compact
    cols = Columns()
    for r in recs:
        cols.append(r)
    cols.freeze()
    ok = results.in_schedule(meta)
    want = [int(ok(r)) for r in recs]
    assert journal_cache.classify(ok.schedule, cols).tolist() == want and 0 < sum(want) < len(want)


def test_the_counters_survive_their_array_checkpoint_and_colliding_lineup_hashes(tmp_path, monkeypatch):
    folder, lines, meta = _folder(tmp_path, 500, 9)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs = read_records(folder)
    bots = meta["bots"]
    by_names = tallies.Tallies(bots).add_all(recs).contests()
    for collide in (False, True):
        if collide:  # every lineup has the same hash: found by name (lineup_other), blocks ordered by names
            monkeypatch.setattr(tallies, "lineup_hashes", lambda enc: np.full(len(enc), 7, np.int64))
            monkeypatch.setattr(tallies, "HASH_ORDER_FROM", 0)
        whole = tallies.Tallies(bots).add_all(recs)
        if collide:
            assert len(whole.lineup_other) == len(whole.lineup_hash) - 1
            assert all(np.array_equal(x, y) for x, y in zip(whole.contests()[::2], by_names[::2]))
        path = tmp_path / f"t{collide}.bin"
        t = tallies.Tallies(bots).add_all(recs[:320])
        with open(path, "wb") as f:
            t.dump(f)
        with open(path, "rb") as f:
            back = tallies.Tallies.load(f).add_all(recs[320:])
        for a, b in ((back, whole), (tallies.Tallies(bots).add_all(recs), whole)):
            assert json.dumps(a.bot_stats()) == json.dumps(b.bot_stats())
            assert json.dumps(a.efficiency()) == json.dumps(b.efficiency()) and a.mixing() == b.mixing()
            sa, ra, ba, na = a.contests()
            sb, rb, bb, nb = b.contests()
            assert np.array_equal(sa, sb) and np.array_equal(ra.codes, rb.codes) and ra.pats == rb.pats
            assert np.array_equal(ba, bb) and na == nb
    shutil.rmtree(folder)
