"""The replay read from the journal's columns (arena/replay_columns.py, ``FastRate.pair``,
``Rater.pair``) gives the record path's values bit for bit (issue 18): the scalar two-player
update against the package's ``env.rate``; whole replays over a :class:`RecordView` (forfeits,
ties, free-for-all, both partnerships, ``draw_probability: auto``, the mpmath fallback) against
``ratings.rate`` on the records; the same checkpoint bytes; a checkpoint written by the
record path (``data/checkpoint-v3.json``) resumes to the same table, and not past an edited
record's seats; random
interruptions with the journal's vouched-for prefixes (the append-only path) and corruptions."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest
import trueskill

from arena import checkpoint, ratings, replay_columns
from arena.record import MatchRecord
from arena.record_view import view_of
from arena.trueskill_fast import FastRate
from tests.ratings.test_trueskill_fast import _env
from tests.scale import test_columns as tc

DATA = Path(__file__).parent / "data"
BOTS = tc.BOTS + ["eta", "theta", "iota"]


def _mixed(n: int, seed: int) -> list[MatchRecord]:
    """Journal records of every kind the replay meets: test_columns' (two players with ties,
    ``partners: self`` sedma, forfeits, records kept whole, huge deal numbers) plus free-for-all
    agram of 3–4 players (ties included) and ``partners: mixed`` sedma."""
    rng = random.Random(seed)
    out = tc.records(n, seed)
    for i in range(n // 3):
        kind = rng.random()
        if kind < 0.5:
            seats = rng.sample(BOTS, rng.choice([3, 4]))
            game = "agram"
            ranks = [rng.randrange(len(seats)) for _ in seats]
        else:
            seats = rng.sample(BOTS, 4)
            game = "sedma"
            win = rng.random() < 0.5
            ranks = [0, 1, 0, 1] if win else [1, 0, 1, 0]
        deal, rot = rng.randrange(40), rng.randrange(len(seats))
        out.append(MatchRecord.from_json({
            "match_id": f"t/{'+'.join(sorted(seats))}/d{deal:05d}/r{rot:02d}", "fingerprint": f"f{i:07x}",
            "game": game, "deal_index": deal, "rotation": rot, "seats": seats, "status": "ok", "faults": [],
            "outcome": {"ranks": ranks, "scores": [float(len(seats) - r) for r in ranks]}}, moves=False))
    rng.shuffle(out)
    return out


def _state(r: ratings.RatingResult) -> tuple:
    return r.ratings, list(r.history), r.draw_probability, r.fallbacks


@pytest.mark.parametrize("seed", [1, 2])
def test_pair_equals_the_package_to_the_last_bit(seed):
    rng = random.Random(seed)
    raised = 0
    for _ in range(3000):
        env = _env(rng)
        fast = FastRate(env)
        assert fast.scalar
        spread = rng.choice([0.1, 1.0, 3.0, 8.0, 60.0])
        a, b = (trueskill.Rating(rng.gauss(env.mu, env.sigma * spread), env.sigma * rng.uniform(0.01, 1.5))
                for _ in range(2))
        tie = rng.random() < 0.3
        try:
            want = [(r.pi, r.tau) for g in env.rate([(a,), (b,)], ranks=[0, 0 if tie else 1]) for r in g]
        except Exception as e:
            raised += 1
            with pytest.raises(type(e)):  # the package raises: so does the scalar path
                fast.pair(a.pi, a.tau, b.pi, b.tau, tie)
            continue
        pa, ta, pb, tb = fast.pair(a.pi, a.tau, b.pi, b.tau, tie)
        assert [(pa, ta), (pb, tb)] == want  # ==: the same floats
    assert raised >= 15  # the upsets were exercised


def test_rater_pair_equals_update_with_fixed_bots_and_the_mpmath_fallback():
    rng = random.Random(3)
    one, two = ratings.Rater(0.2, "default", fixed=["b0"]), ratings.Rater(0.2, "default", fixed=["b0"])
    bots = [f"b{i}" for i in range(12)]
    for _ in range(2000):
        a, b = rng.choice(bots), rng.choice(bots)  # a bot may meet itself
        if rng.random() < 0.02:
            one.cur[a] = two.cur[a] = trueskill.Rating(rng.uniform(-400, 400), rng.uniform(0.05, 2))
        ra, rb = rng.choice([(0, 1), (1, 0), (0, 0), (3, 7)])
        moved: dict = {}
        two.pair(a, b, ra, rb, moved)
        assert one.update([[a], [b]], [ra, rb]) == moved
        assert {k: (r.pi, r.tau) for k, r in one.cur.items()} == {k: (r.pi, r.tau) for k, r in two.cur.items()}
    assert one.fallbacks == two.fallbacks >= 5


@pytest.mark.parametrize("dp, forfeits", [("auto", False), (0.2, True), ("auto", True)])
def test_column_replay_equals_the_record_replay(dp, forfeits):
    recs = _mixed(900, 5)
    view = view_of(recs)
    assert view.cols.extra and any(len(r.sides) == 3 for r in recs)
    got = checkpoint.replay(None, view, BOTS, draw_probability=dp, rate_forfeits=forfeits, history=True)
    want = ratings.rate(recs, BOTS, draw_probability=dp, rate_forfeits=forfeits)
    assert _state(got)[::2] == _state(want)[::2] and got.fallbacks == want.fallbacks
    # the history (sampled at the source beyond 200 matches) equals the record path's, entry by entry
    ref = checkpoint.replay(None, recs, BOTS, draw_probability=dp, rate_forfeits=forfeits, history=True)
    assert len(got.history) == len(want.history) > 200 and list(got.history) == list(ref.history)
    assert sum(1 for h in got.history if h) > 150
    assert replay_columns.ties(view.replay_order(forfeits)) == checkpoint._ties(
        sorted((r for r in recs if r.rated(forfeits)), key=MatchRecord.replay_key))


@pytest.mark.parametrize("cap", [1, 7])
def test_a_bounded_tail_cache_gives_the_same_bytes(tmp_path, monkeypatch, cap):
    """The digest tails kept for reuse are bounded (``TAILS_MAX``: 1M distinct keys of a four-player
    field held ~360 MB); cleared when full, the checkpoint is the same bytes as the record path's."""
    recs = _mixed(600, 7)
    (tmp_path / "records").mkdir()
    checkpoint.replay(tmp_path / "records", recs, BOTS, draw_probability=0.15, rate_forfeits=True, history=False)
    seen = []
    real = replay_columns._tail

    def counted(names, key):
        seen.append(key)
        return real(names, key)

    monkeypatch.setattr(replay_columns, "TAILS_MAX", cap)
    monkeypatch.setattr(replay_columns, "_tail", counted)
    (tmp_path / "view").mkdir()
    checkpoint.replay(tmp_path / "view", view_of(recs), BOTS, draw_probability=0.15, rate_forfeits=True, history=False)
    assert (tmp_path / "records" / checkpoint.NAME).read_bytes() == (tmp_path / "view" / checkpoint.NAME).read_bytes()
    assert len(seen) > len(set(seen))  # keys built again after a clear: the bound was reached


def test_column_play_takes_the_mpmath_fallback_as_the_record_path():
    recs = [r for r in tc.records(400, 8) if r.status == "ok"]
    view = view_of(recs).replay_order()
    runs = []
    for seq in (view, list(view)):
        rater = ratings.Rater(0.1)
        for b in BOTS:
            rater.rating(b)
        rater.cur["alpha"], rater.cur["beta"] = trueskill.Rating(-350.0, 0.2), trueskill.Rating(350.0, 0.2)
        hist: list = []
        h = checkpoint._Chain()
        snaps: dict = {}
        checkpoint._play(rater, seq, 0, [50, len(seq)], h, snaps, hist)
        runs.append(({b: (r.pi, r.tau) for b, r in rater.cur.items()}, rater.fallbacks, hist, h.hexdigest(), snaps))
    assert runs[0] == runs[1] and runs[0][1] >= 1


def test_checkpoints_are_the_same_bytes_on_both_paths(tmp_path):
    recs = _mixed(600, 7)
    for name, seq in (("records", recs), ("view", view_of(recs))):
        (tmp_path / name).mkdir()
        checkpoint.replay(tmp_path / name, seq, BOTS, draw_probability=0.15, rate_forfeits=True, history=False)
    assert (tmp_path / "records" / checkpoint.NAME).read_bytes() == (tmp_path / "view" / checkpoint.NAME).read_bytes()


def test_a_checkpoint_written_by_the_record_path_resumes_to_the_same_table(tmp_path):
    # data/checkpoint-v3.json: written by the record path (format 3: seats and faulty seats in the
    # digest) with checkpoint.replay(folder, recs[:500], BOTS, draw_probability=0.15,
    # rate_forfeits=True, history=False) for the records below; data/checkpoint-v2-main.json: the
    # same call before format 3 (its digests do not cover the seats), refused and rebuilt
    recs = sorted(_mixed(600, 7), key=MatchRecord.replay_key)
    old = json.loads((DATA / "checkpoint-v3.json").read_text())
    at = 300
    seats = recs[at].seats
    changed = {"fingerprint": dataclasses.replace(recs[at], fingerprint="another"),
               "seats": dataclasses.replace(recs[at], seats=seats[1:] + seats[:1])}
    assert changed["seats"].seats != seats and changed["seats"].rated(True)
    late = sum(1 for r in recs[:at] if r.rated(True))  # rated records before the changed one
    ns = [s["n"] for s in old["snapshots"]]
    for what, more in [("none", recs)] + [(k, recs[:at] + [r] + recs[at + 1:]) for k, r in changed.items()]:
        (tmp_path / checkpoint.NAME).write_text(json.dumps(old))
        got = checkpoint.replay(tmp_path, view_of(more), BOTS, draw_probability=0.15, rate_forfeits=True,
                                history=False)
        assert got.ratings == ratings.rate(more, BOTS, draw_probability=0.15, rate_forfeits=True).ratings
        resumed = checkpoint.load(tmp_path)["resumed_from"]
        if what == "none":  # every old snapshot's digest recomputed from the columns matched: the end one used
            assert resumed == max(ns) > 400
        else:  # a record changed in the middle: the latest snapshot before it
            assert resumed == max(n for n in ns if n <= late) > 0, what
    (tmp_path / checkpoint.NAME).write_text((DATA / "checkpoint-v2-main.json").read_text())
    assert checkpoint.load(tmp_path) is None
    got = checkpoint.replay(tmp_path, view_of(recs), BOTS, draw_probability=0.15, rate_forfeits=True, history=False)
    assert got.ratings == ratings.rate(recs, BOTS, draw_probability=0.15, rate_forfeits=True).ratings
    assert checkpoint.load(tmp_path)["resumed_from"] == 0


def _prefixes(ends: list[int]) -> list[tuple[int, str, int]]:
    """Vouched-for journal prefixes (``journal_cache.read``'s shape) of these record counts."""
    return [(1000 + k, f"{k:032x}", k) for k in ends]


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
def test_interrupted_column_replays_equal_a_full_rebuild(tmp_path, seed):
    rng = random.Random(seed)
    recs = sorted(_mixed(700, seed), key=MatchRecord.replay_key)
    recs = [r for i, r in sorted(enumerate(recs), key=lambda ir: ir[0] + rng.uniform(0, 12))]  # finished a bit out of order
    dp = 0.1 if seed != 3 else "auto"
    done, ends, resumed = 0, [], []
    while done < len(recs):
        done = min(len(recs), done + rng.randint(1, 120))
        ends.append(done)
        cp = tmp_path / checkpoint.NAME
        fault = rng.random()
        if fault < 0.1 and cp.exists():  # a writer killed mid-write
            data = cp.read_bytes()
            cp.write_bytes(data[: rng.randrange(len(data))])
        elif fault < 0.2 and cp.exists():  # a corrupt end snapshot
            data = json.loads(cp.read_text())
            data["snapshots"][-1]["digest"] = "0" * 32
            cp.write_text(json.dumps(data))
        got = checkpoint.replay(tmp_path, view_of(recs[:done]), BOTS, draw_probability=dp, rate_forfeits=True,
                                history=False, journal=_prefixes(ends))
        want = ratings.rate(recs[:done], BOTS, draw_probability=dp, rate_forfeits=True)
        assert (got.ratings, got.draw_probability) == (want.ratings, want.draw_probability)
        assert list(got.ratings) == list(want.ratings)
        resumed.append(checkpoint.load(tmp_path)["resumed_from"])
    if dp != "auto":  # (``auto`` moves with the ties: a changed value replays from the start)
        assert sum(1 for r in resumed if r > 0) >= len(resumed) // 2, resumed
