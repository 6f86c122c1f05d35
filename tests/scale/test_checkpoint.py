"""The checkpointed TrueSkill replay (arena/checkpoint.py) equals a full rebuild bit for bit
after random interruptions: chunks of new records (some finishing out of replay order), a
checkpoint cut mid-write, a corrupt one, other rating settings, ``draw_probability: auto``
moving with the ties."""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path

import pytest

from arena import checkpoint, journal_cache
from arena.journal import read_records
from arena.ratings import rate
from arena.record import MatchRecord
from arena.results import standings

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench" / "scale.py")
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

BOTS = [f"bot{j:04d}" for j in range(24)]


def records(n: int, players: int = 2, seed: int = 3, ties: bool = False) -> list[MatchRecord]:
    rng = random.Random(seed)
    strength = [rng.gauss(0, 1) for _ in BOTS]
    out = []
    for i in range(n):
        d = bench.synthetic_record("t", i, BOTS, strength, players, rng)
        if ties and rng.random() < 0.3:
            d["outcome"]["ranks"] = [0] * players
        out.append(MatchRecord.from_json(d))
    return out


def arrival(recs: list[MatchRecord], rng: random.Random, window: int = 12) -> list[MatchRecord]:
    """Replay order with local disorder (a parallel run finishes neighbours out of order)."""
    keyed = sorted(recs, key=MatchRecord.replay_key)
    out = []
    for i in range(0, len(keyed), window):
        block = keyed[i:i + window]
        rng.shuffle(block)
        out.extend(block)
    return out


def full(recs, **kw):
    return rate(recs, BOTS, **kw).ratings


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_checkpointed_table_equals_full_rebuild_after_random_interruptions(tmp_path, seed):
    rng = random.Random(seed)
    recs = arrival(records(900, seed=seed), rng)
    kw = {"draw_probability": 0.1}
    done = 0
    resumed = []
    while done < len(recs):
        done = min(len(recs), done + rng.randint(1, 150))
        prefix = recs[:done]
        fault = rng.random()
        cp = tmp_path / checkpoint.NAME
        if fault < 0.15 and cp.exists():  # a writer killed mid-write: the file cut short
            data = cp.read_bytes()
            cp.write_bytes(data[: rng.randrange(len(data))])
        elif fault < 0.25 and cp.exists():  # a stray tmp file and a corrupt snapshot digest
            (tmp_path / "checkpoint.tmp").write_text("{")
            data = json.loads(cp.read_text())
            data["snapshots"][-1]["digest"] = "0" * 32
            cp.write_text(json.dumps(data))
        got = checkpoint.replay(tmp_path, prefix, BOTS, history=False, **kw)
        assert got.ratings == full(prefix, **kw)  # exact floats, not approx
        assert list(got.ratings) == list(full(prefix, **kw))
        resumed.append(json.loads(cp.read_text())["resumed_from"])
    # the checkpoint was really used, not rebuilt every time
    assert sum(1 for r in resumed if r > 0) >= len(resumed) // 2, resumed


def test_resume_replays_only_the_new_records(tmp_path):
    recs = sorted(records(2000), key=MatchRecord.replay_key)
    checkpoint.replay(tmp_path, recs[:1900], BOTS, draw_probability=0.1, history=False)
    got = checkpoint.replay(tmp_path, recs, BOTS, draw_probability=0.1, history=False)
    assert json.loads((tmp_path / checkpoint.NAME).read_text())["resumed_from"] == 1900
    assert got.ratings == full(recs, draw_probability=0.1)


def test_a_record_early_in_the_replay_order_falls_back_to_an_earlier_snapshot(tmp_path):
    recs = sorted(records(600), key=MatchRecord.replay_key)
    late = recs[:590] + recs[591:]  # record 590 arrives after its successors
    checkpoint.replay(tmp_path, late, BOTS, draw_probability=0.1, history=False)
    got = checkpoint.replay(tmp_path, recs, BOTS, draw_probability=0.1, history=False)
    start = json.loads((tmp_path / checkpoint.NAME).read_text())["resumed_from"]
    assert 0 < start <= 590  # the snapshot at the end no longer matches, one before 590 does
    assert got.ratings == full(recs, draw_probability=0.1)


def test_other_settings_or_a_moving_auto_draw_probability_rebuild(tmp_path):
    recs = sorted(records(500, ties=True, players=4), key=MatchRecord.replay_key)
    checkpoint.replay(tmp_path, recs[:300], BOTS, history=False)
    got = checkpoint.replay(tmp_path, recs, BOTS, history=False)
    ref = rate(recs, BOTS)
    assert got.draw_probability == ref.draw_probability and got.ratings == ref.ratings
    got = checkpoint.replay(tmp_path, recs, BOTS, tau=0.2, history=False)
    assert json.loads((tmp_path / checkpoint.NAME).read_text())["resumed_from"] == 0
    assert got.ratings == rate(recs, BOTS, tau=0.2).ratings


@pytest.mark.slow
def test_leaderboard_rows_from_the_checkpoint_equal_the_full_tables(tmp_path):
    folder = tmp_path / "big"
    bench.make_journal(folder, 3000, 40, 2)
    first = standings(folder, history=False)
    assert (folder / checkpoint.NAME).exists()
    bench.make_journal(folder, 3100, 40, 2, start=3000)
    inc = standings(folder, history=False)
    assert json.loads((folder / checkpoint.NAME).read_text())["resumed_from"] == 3000
    assert (folder / checkpoint.FIT_NAME).exists()
    assert (folder / journal_cache.NAME).exists()  # the journal's typed prefix: only 100 lines parsed
    (folder / checkpoint.NAME).unlink()
    (folder / checkpoint.FIT_NAME).unlink()
    (folder / journal_cache.NAME).unlink()
    ref = standings(folder, history=True)
    assert_same_rows(inc.rows, ref.rows)
    assert len(inc.records) == len(read_records(folder)) == 3100
    assert len(ref.ratings.history) == 3100 and first.rows != inc.rows
    assert inc.cross == ref.cross and inc.rel == ref.rel
    assert json.dumps(inc.efficiency) == json.dumps(ref.efficiency)  # nan where undefined


FIT_KEYS = ("strength", "strength_low", "strength_high", "p_above_next")


def assert_same_rows(got: list[dict], ref: list[dict]) -> None:
    """Rows equal bit for bit, except the batch fit's floats: a fit started from the checkpointed
    one stops within Newton's tolerance of the cold fit (1e-6 Elo here), so those are equal to
    1e-9 relative; the order, the rank intervals and every other column are exact."""
    assert [r["bot"] for r in got] == [r["bot"] for r in ref]
    for a, b in zip(got, ref):
        assert {k: v for k, v in a.items() if k not in FIT_KEYS} == {k: v for k, v in b.items() if k not in FIT_KEYS}
        for k in FIT_KEYS:
            if a.get(k) is None or b.get(k) is None:
                assert a.get(k) is b.get(k) is None, k
            else:
                assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-6), k


@pytest.mark.slow
def test_streamed_tables_equal_the_tables_of_whole_records(tmp_path):
    """:func:`standings` reads records without their decision times (streamed into per-bot
    arrays) and fills the crosstable on first use: the same reliability, crosstable and score
    columns as the tables of fully kept records, bit for bit — with faults, a forfeit, a
    disabled match and an aborted one in the journal."""
    folder = tmp_path / "t"
    bench.make_journal(folder, 400, 12, 2)
    lines = (folder / "matches.jsonl").read_bytes().splitlines()
    recs = [json.loads(x) for x in lines]
    bots = sorted({b for r in recs for b in r["seats"]})
    recs[5]["status"] = "forfeit"
    recs[5]["faults"] = [{"seat": 1, "bot": recs[5]["seats"][1], "class": "timeout", "move": 3, "detail": "late"}]
    recs[9]["status"] = "forfeit"
    recs[9]["faults"] = [{"seat": 0, "bot": recs[9]["seats"][0], "class": "disabled", "move": 0, "detail": "off"}]
    recs[11]["status"], recs[11]["outcome"] = "aborted", None
    (folder / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    st = standings(folder, history=False)
    whole = read_records(folder)  # with move_ms
    from arena import tables

    assert st.rel == tables.reliability(whole, bots)
    assert st.rel[recs[5]["seats"][1]]["faults"]["timeout"] == 1
    assert st.rel[bots[0]]["moves"] == sum(len(t) for r in recs for s, t in zip(r["seats"], r["move_ms"])
                                           if s == bots[0])
    assert dict(st.cross) == tables.crosstable(whole) and st.cross[recs[9]["seats"][0]]
    ref = tables.bot_stats(whole, bots)
    for row in st.rows:
        for k in ("matches", "wins", "score", "score_low", "score_high", "faults", "forfeits"):
            assert row[k] == ref[row["bot"]][k] or (row[k] != row[k] and ref[row["bot"]][k] != ref[row["bot"]][k])


def test_the_history_sampled_at_the_source_gives_the_reports_points_exactly():
    """Beyond report.html's sample points the replay keeps only the merged moves at those points
    (checkpoint.SampledHistory): the report's sampled μ/σ equal those of the full per-match
    history bit for bit, in ~HISTORY_POINTS dicts instead of one per match."""
    import numpy as np

    from arena.report_html import data

    recs = records(900, players=4)
    ref = rate(recs, BOTS, draw_probability=0.1)
    got = checkpoint.replay(None, recs, BOTS, draw_probability=0.1, history=True)
    assert isinstance(got.history, checkpoint.SampledHistory) and len(got.history) == len(ref.history) == 900
    at = data.sample_points(900)
    assert len(at) == data.HISTORY_POINTS
    for a, b in zip(data.sampled_history(got.history, BOTS, (25.0, 25.0 / 3), at),
                    data.sampled_history(ref.history, BOTS, (25.0, 25.0 / 3), at)):
        assert np.array_equal(a, b)
    assert sum(1 for h in got.history if h) <= data.HISTORY_POINTS
    assert got.history[-1] and got.history[0] == {} and got.ratings == ref.ratings
    small = checkpoint.replay(None, recs[:150], BOTS, draw_probability=0.1, history=True)
    assert small.history == rate(recs[:150], BOTS, draw_probability=0.1).history  # all kept


@pytest.mark.parametrize("players", [2, 4])
def test_edited_seats_are_replayed_not_resumed(tmp_path, players):
    """A journal whose records 20–180 had their seats rotated (the ranks kept: other winners) after
    a first table: the checkpoint's prefix digest covers the seats (format 3), so the table is
    the full rebuild's, not the one of the old seats."""
    folder, clean = tmp_path / "t", tmp_path / "clean"
    bench.make_journal(folder, 200, 6, players)
    before = standings(folder, history=False)
    assert (folder / checkpoint.NAME).exists()
    journal = folder / "matches.jsonl"
    lines = journal.read_text().splitlines()
    for i in range(20, 180):
        rec = json.loads(lines[i])
        rec["seats"] = rec["seats"][1:] + rec["seats"][:1]
        lines[i] = json.dumps(rec)
    journal.write_text("\n".join(lines) + "\n")
    clean.mkdir()
    for name in ("matches.jsonl", "tournament.json"):
        (clean / name).write_bytes((folder / name).read_bytes())
    got, ref = standings(folder, history=False), standings(clean, history=False)
    assert got.ratings.ratings == ref.ratings.ratings != before.ratings.ratings
    assert_same_rows(got.rows, ref.rows)


@pytest.mark.parametrize("seats, shown", [((0, 1, 0, 2), "(A, A) vs (B, C)"), ((0, 1, 2, 0), "(A, C) vs (B, A)")])
def test_a_partnership_record_with_uneven_sides_is_refused_naming_its_line(tmp_path, seats, shown):
    """Sides of unequal distinct bots, or a bot on both sides, are seatings the schedule never
    makes and the side models cannot rate (the counters would shift every later result): the
    reader refuses the line instead of misreading it."""
    from arena.errors import JournalError

    folder = tmp_path / "t"
    bench.make_journal(folder, 60, 6, 4)
    journal = folder / "matches.jsonl"
    lines = journal.read_text().splitlines()
    rec = json.loads(lines[40])
    rec["seats"] = [["A", "B", "C"][s] for s in seats]
    lines[40] = json.dumps(rec)
    journal.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match=rf"matches.jsonl: line 41: sides {re.escape(shown)} differ"):
        standings(folder, history=False)
