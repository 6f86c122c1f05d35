"""The tables' counters checkpointed for the journal's prefix (arena/tallies.py): the tables of
an incremental ``standings`` equal a full rebuild's bit for bit after random interruptions (the
journal growing by chunks, a line being written, the counters' checkpoint cut or deleted, the
journal cache deleted, a line edited in the middle), with faults, forfeits, a disabled and an
aborted match, ties; and only the new records are added."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena import checkpoint, journal_cache, stats, tables, tallies, tallies_checkpoint
from arena.journal import read_records
from arena.results import standings
from tests.scale.test_checkpoint import bench


def journal_lines(tmp: Path, n: int, bots: int, seed: int) -> tuple[list[bytes], dict]:
    """``n`` synthetic lines with faults, forfeits, a disabled and an aborted match and ties."""
    src = tmp / "src"
    bench.make_journal(src, n, bots, 2, seed=seed)
    rng = random.Random(seed)
    recs = [json.loads(x) for x in (src / "matches.jsonl").read_bytes().splitlines()]
    for r in recs:
        u = rng.random()
        if u < 0.05:
            r["status"] = "forfeit"
            r["faults"] = [{"seat": 1, "bot": r["seats"][1], "class": "timeout", "move": 3, "detail": "late"}]
        elif u < 0.07:
            r["status"] = "forfeit"
            r["faults"] = [{"seat": 0, "bot": r["seats"][0], "class": "disabled", "move": 0, "detail": "off"}]
        elif u < 0.08:
            r["status"], r["outcome"] = "aborted", None
        elif u < 0.2:
            r["outcome"]["ranks"] = [0, 0]
    for i in range(0, len(recs) - 12, 12):  # a parallel run finishes neighbours out of replay order
        if rng.random() < 0.3:
            block = recs[i:i + 12]
            rng.shuffle(block)
            recs[i:i + 12] = block
    meta = json.loads((src / "tournament.json").read_text())
    if seed % 2 == 0:
        meta["ratings"]["draw_probability"] = "auto"
    return [(json.dumps(r) + "\n").encode() for r in recs], meta


def fresh(folder: Path, tmp: Path):
    ref = tmp / "ref"
    shutil.rmtree(ref, ignore_errors=True)
    ref.mkdir()
    shutil.copy(folder / "matches.jsonl", ref / "matches.jsonl")
    shutil.copy(folder / "tournament.json", ref / "tournament.json")
    return standings(ref, history=False)


def assert_same_tables(got, ref) -> None:
    assert json.dumps(got.rows) == json.dumps(ref.rows)  # every float bit for bit (nan included)
    assert got.rel == ref.rel and got.mixing == ref.mixing
    assert json.dumps(got.efficiency) == json.dumps(ref.efficiency)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_checkpointed_tables_equal_the_full_rebuild_after_random_interruptions(tmp_path, seed, monkeypatch):
    resumed: list[int] = []
    real = tallies_checkpoint.tallies

    def observed(*a, **kw):
        t = real(*a, **kw)
        resumed.append(t.resumed_from)
        return t

    monkeypatch.setattr(tallies_checkpoint, "tallies", observed)  # the real function, its result observed
    lines, meta = journal_lines(tmp_path, 700, 16, seed)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    rng = random.Random(seed)
    done = fast = slow = prev_rated = 0
    while done < len(lines):
        done = min(len(lines), done + rng.randint(20, 160))
        body = b"".join(lines[:done])
        if done < len(lines) and rng.random() < 0.3:
            body += lines[done][: rng.randrange(1, len(lines[done]))]  # a line being written
        (folder / "matches.jsonl").write_bytes(body)
        fault, cp = rng.random(), folder / tallies_checkpoint.NAME
        if fault < 0.15 and cp.exists():
            data = cp.read_bytes()
            cp.write_bytes(data[: rng.randrange(len(data))])
        elif fault < 0.25:
            (folder / journal_cache.NAME).unlink(missing_ok=True)
        elif fault < 0.35 and done > 50:  # a line in the middle edited: its prefix changed
            i = rng.randrange(done // 2)
            rec = json.loads(lines[i])
            if rec["outcome"]:
                rec["outcome"]["ranks"] = rec["outcome"]["ranks"][::-1]
                lines[i] = (json.dumps(rec) + "\n").encode()
                (folder / "matches.jsonl").write_bytes(b"".join(lines[:done]))
        got = standings(folder, history=False)
        cpj = json.loads((folder / checkpoint.NAME).read_text())
        fast += cpj["resumed_from"] > 0 and cpj["journal"] is not None and cpj["resumed_from"] == prev_rated
        slow += cpj["resumed_from"] < prev_rated
        prev_rated = cpj["journal"]["rated"]
        assert_same_tables(got, fresh(folder, tmp_path))
    assert len(read_records(folder)) == len(lines)
    mine = resumed[0::2]  # each step: the incremental call, then the fresh rebuild's
    assert all(r == 0 for r in resumed[1::2]) and sum(1 for r in mine if r > 0) >= len(mine) // 3, mine
    if meta["ratings"]["draw_probability"] == "auto":  # every new tie moves it: the replay starts over
        assert fast == 0 and slow >= 1, (fast, slow)
    else:  # both ways of resuming the replay were taken
        assert fast >= 1 and slow >= 1, (fast, slow)


def test_an_update_adds_only_the_new_records(tmp_path):
    lines, meta = journal_lines(tmp_path, 300, 12, 5)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:250]))
    ok = lambda r: True  # noqa: E731 - every synthetic record is in the schedule

    def read():
        prefixes: list = []
        recs = journal_cache.read(folder, ok, meta["bots"], prefixes=prefixes)[0]
        return recs, prefixes

    recs, pre = read()
    assert pre[-1][2] == 250 == len(recs)
    first = tallies_checkpoint.tallies(folder, recs, meta["bots"], prefixes=pre)
    assert first.resumed_from == 0 and first.count == 250
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs, pre = read()
    inc = tallies_checkpoint.tallies(folder, recs, meta["bots"], prefixes=pre)
    assert inc.resumed_from == 250 and inc.count == 300
    whole = tallies.Tallies(meta["bots"]).add_all(recs)
    assert json.dumps(inc.bot_stats()) == json.dumps(whole.bot_stats())
    assert inc.efficiency() == whole.efficiency() or json.dumps(inc.efficiency()) == json.dumps(whole.efficiency())
    # an edit before the checkpoint's end: the digest no longer matches, the counters are rebuilt
    body = bytearray((folder / "matches.jsonl").read_bytes())
    body[body.index(b'"deal_seed": ') + 13] ^= 1
    (folder / "matches.jsonl").write_bytes(bytes(body))
    recs, pre = read()
    assert tallies_checkpoint.tallies(folder, recs, meta["bots"], prefixes=pre).resumed_from == 0
    # other bots or rate_forfeits: another key
    assert tallies_checkpoint.tallies(folder, recs, meta["bots"][:-1], prefixes=pre).resumed_from == 0
    assert tallies_checkpoint.tallies(folder, recs, meta["bots"][:-1], True, prefixes=pre).resumed_from == 0


def test_the_counters_reproduce_the_record_tables(tmp_path):
    """Against the record-by-record definitions: the small-sample score interval is the block
    bootstrap's bit for bit, a bot with many blocks gets the blocks' interval; the efficiency and
    the mixing equal the direct computation."""
    lines, meta = journal_lines(tmp_path, 600, 6, 3)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs = read_records(folder)
    bots = meta["bots"]
    st = tables.bot_stats(recs, bots)
    for b in bots:
        blocks: dict = {}
        for r in recs:
            for bb, _seat, _win, _rank, score in tables.credits(r):
                if bb == b:
                    blocks.setdefault((r.lineup, r.deal_index), []).append(score)
        if len(blocks) < stats.T_FROM:
            assert (st[b]["score"], st[b]["score_low"], st[b]["score_high"]) == stats.bootstrap_ci(blocks, seed=len(b))
        else:
            m, lo, hi = stats.block_t_ci([sum(v) for v in blocks.values()], [len(v) for v in blocks.values()])
            assert st[b]["score"] == pytest.approx(m, abs=1e-12)
            assert (st[b]["score_low"], st[b]["score_high"]) == pytest.approx((lo, hi), abs=1e-12)
            assert lo < m < hi
    # efficiency: the pooled variances of single results and block means, directly
    eff = tables.duplicate_efficiency(recs)
    assert eff["factor"] == pytest.approx(_direct_efficiency(recs)[0], rel=1e-9)
    lineups = {r.lineup: tuple(dict.fromkeys(r.seats)) for r in recs if r.finished}
    from arena.schedule import design_mixing

    assert tallies.Tallies(bots).add_all(recs).mixing() == design_mixing(list(lineups.values()), bots)
    assert tallies.Tallies(bots[:3]).add_all(recs).mixing() == design_mixing(list(lineups.values()), bots[:3])


def _records_with_oddities(tmp_path, n: int, bots: int, seed: int):
    """Records with faults, forfeits, a disabled and an aborted match, ties, a lineup outside the
    field, a bot twice in one match and an arena-side fault (no bot)."""
    lines, meta = journal_lines(tmp_path, n, bots, seed)
    recs = [json.loads(x) for x in lines]
    rng = random.Random(seed)
    for r in recs[n // 2:]:  # three players from the middle on (rank patterns first seen out of order)
        r["seats"].append(next(b for b in meta["bots"] if b not in r["seats"]))
        r["bot_versions"].append("")
        r["match_id"] = r["match_id"].replace("/", "+3/", 1)
        if r["outcome"]:
            r["outcome"] = {"ranks": [rng.randrange(3) for _ in range(3)], "scores": [1.0, 0.0, 0.5]}
    for r in recs:
        r["move_ms"] = []  # as the journal cache keeps them: the plain records go by the columns
    recs[3]["seats"] = [recs[3]["seats"][0], "stranger"]  # a name outside the field
    recs[3]["bot_versions"] = ["", ""]
    recs[7]["seats"] = [recs[7]["seats"][0]] * 2  # the same bot in both seats
    recs[11]["faults"] = [{"seat": None, "bot": None, "class": "crash", "move": 0, "detail": "arena"}]
    recs[11]["status"] = "forfeit"
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "matches.jsonl").write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in recs))
    return read_records(folder), meta["bots"]


@pytest.mark.parametrize("chunk", [tallies.CHUNK, 37])
@pytest.mark.parametrize("rate_forfeits", [False, True])
def test_the_columns_path_gives_the_record_by_record_counters_bit_for_bit(tmp_path, chunk, rate_forfeits,
                                                                          monkeypatch):
    """The plain records read straight from the columns (a ``RecordView``) and every record built
    one by one (a list) give equal counters, array for array, however the chunks cut them; the
    matches and wins are :func:`tables.credits`' own."""
    from arena.record_view import view_of

    monkeypatch.setattr(tallies, "CHUNK", chunk)
    recs, bots = _records_with_oddities(tmp_path, 400, 9, 6)
    view = view_of(recs)
    assert 10 < len(view.cols.extra) < len(recs) // 2  # both paths taken
    a = tallies.Tallies(bots, rate_forfeits).add_all(recs).arrays()
    b = tallies.Tallies(bots, rate_forfeits).add_all(view).arrays()
    half = tallies.Tallies(bots, rate_forfeits).add_all(view[:150]).add_all(view[150:]).arrays()
    assert a.keys() == b.keys() == half.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) and np.array_equal(a[k], half[k]), k
    t = tallies.Tallies(bots, rate_forfeits).add_all(view)
    assert "stranger" in t.bot_stats() and t.met_extra  # the name outside the field was counted
    assert t.mixing() == tallies.Tallies(bots, rate_forfeits).add_all(recs).mixing()
    ref = {b: (0, 0) for b in t.names}
    for r in recs:
        for b, _seat, win, _rank, _score in tables.credits(r):
            ref[b] = (ref[b][0] + 1, ref[b][1] + win)
    assert {b: (s["matches"], s["wins"]) for b, s in t.bot_stats().items()} == ref


def _partnership_records(tmp_path, n: int, bots: int, seed: int):
    """Four-player partnership records (seats 0+2 against 1+3, four distinct bots) with a forfeit,
    a tie, a record with one bot in both seats of each side and a two-player record among them."""
    src = tmp_path / "p4"
    bench.make_journal(src, n, bots, 4, seed=seed)
    recs = [json.loads(x) for x in (src / "matches.jsonl").read_bytes().splitlines()]
    for r in recs:
        r["move_ms"] = []
    recs[5]["status"] = "forfeit"
    recs[5]["faults"] = [{"seat": 2, "bot": recs[5]["seats"][2], "class": "illegal", "move": 4, "detail": "x"}]
    recs[9]["outcome"]["ranks"] = [0, 0, 0, 0]
    recs[13]["seats"][2:] = recs[13]["seats"][:2]  # partners: self — one bot for each side
    recs[17]["seats"], recs[17]["bot_versions"] = recs[17]["seats"][:2], recs[17]["bot_versions"][:2]
    recs[17]["outcome"] = {"ranks": [1, 0], "scores": [0.0, 1.0]}
    (src / "matches.jsonl").write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in recs))
    return read_records(src), json.loads((src / "tournament.json").read_text())["bots"]


@pytest.mark.parametrize("chunk", [tallies.CHUNK, 37])
def test_partnerships_read_from_the_columns_give_the_record_by_record_counters(tmp_path, chunk, monkeypatch):
    """Partnership records with a distinct bot in every seat go by the columns (the bulk path),
    and give the counters, results for the fit (both sides' bots, side by side) and pairs of the
    records built one by one, bit for bit."""
    from arena import tallies_events
    from arena.design_matrix import record_results
    from arena.record_view import view_of

    monkeypatch.setattr(tallies, "CHUNK", chunk)
    recs, bots = _partnership_records(tmp_path, 300, 12, 3)
    view = view_of(recs)
    ev = tallies_events._bulk(view, 0, len(view), tallies_events._Codes(view.cols.names), *(
        tallies_events._Codes() for _ in range(3)), set(bots))
    assert ev is not None and len(ev.k) > 250 and {5, 13, 17} <= set(ev.rest.tolist())
    assert ev.r_flat.shape[1] == 4  # both partnerships' bots
    a = tallies.Tallies(bots).add_all(recs).arrays()
    b = tallies.Tallies(bots).add_all(view).arrays()
    half = tallies.Tallies(bots).add_all(view[:101]).add_all(view[101:]).arrays()
    assert a.keys() == b.keys() == half.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) and np.array_equal(a[k], half[k]), k
    e = tallies_events.events_of(view, 0, len(view), set(bots), lambda r: record_results(r, False))
    r0 = recs[0]
    got = [e.names[c] for c in e.r_flat[:4]]
    assert e.r_rec[0] == 0 and got == [b for side in r0.sides for b in side]
    assert e.r_pats[e.r_pat[0]] == r0.side_ranks and e.r_shapes[e.r_shape[0]] == (2, 2)


def test_the_checkpoint_is_no_pickle_and_a_foreign_or_old_one_is_rebuilt(tmp_path):
    """``checkpoint-tables.npz`` holds arrays only (loads with ``allow_pickle=False``); a file
    with a pickled object inside, a cut one or another layout is ignored and rebuilt; the old
    ``checkpoint-tables.pkl`` is never opened, only deleted."""
    lines, meta = journal_lines(tmp_path, 200, 8, 9)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    ok = lambda r: True  # noqa: E731 - every synthetic record is in the schedule

    def run():
        prefixes: list = []
        recs = journal_cache.read(folder, ok, meta["bots"], prefixes=prefixes)[0]
        return tallies_checkpoint.tallies(folder, recs, meta["bots"], prefixes=prefixes)

    trap = tmp_path / "ran"

    class Trap:
        def __reduce__(self):
            return (Path.touch, (trap,))

    import pickle

    (folder / tallies_checkpoint.OLD_NAME).write_bytes(pickle.dumps(Trap()))
    first = run()
    cp = folder / tallies_checkpoint.NAME
    assert first.resumed_from == 0 and cp.exists() and not (folder / tallies_checkpoint.OLD_NAME).exists()
    with np.load(cp, allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)
    assert run().resumed_from == 200
    good = cp.read_bytes()
    with np.load(cp, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for bad in ("object", "cut", "layout"):
        if bad == "object":
            np.savez(cp, **{**arrays, "met": np.array([Trap()], dtype=object)})
        elif bad == "cut":
            cp.write_bytes(good[: len(good) // 2])
        else:
            np.savez(cp, **{**arrays, "s_sum": arrays["s_sum"][:-1]})
        again = run()
        assert again.resumed_from == 0 and not trap.exists(), bad
        assert json.dumps(again.bot_stats()) == json.dumps(first.bot_stats())


def test_groups_are_numpys_unique_inverse_and_counts():
    """The efficiency's grouping by one argsort equals ``numpy.unique``'s inverse and counts."""
    import numpy as np

    from arena.tallies import _groups

    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 7, 1000, 50_000):
        key = rng.integers(-5, max(1, n // 3) + 1, n) * 1_000_003
        _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        grp, size = _groups(key)
        assert grp.tolist() == inv.ravel().tolist() and size.tolist() == cnt.tolist(), n


def test_the_counters_are_checkpointed_again_only_when_worth_it(tmp_path):
    """A small update resumes from the checkpoint without rewriting it (writing it costs more than
    counting a few records again); once the records past it reach SAVE_FRACTION of all, it is
    rewritten; nothing new never writes. The counters equal a whole count every time."""
    lines, meta = journal_lines(tmp_path, 400, 12, 6)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))

    def update(n):
        (folder / "matches.jsonl").write_bytes(b"".join(lines[:n]))
        prefixes: list = []
        recs = journal_cache.read(folder, lambda r: True, meta["bots"], prefixes=prefixes)[0]
        t = tallies_checkpoint.tallies(folder, recs, meta["bots"], prefixes=prefixes)
        assert json.dumps(t.bot_stats()) == json.dumps(tallies.Tallies(meta["bots"]).add_all(recs).bot_stats())
        with np.load(folder / tallies_checkpoint.NAME, allow_pickle=False) as z:
            saved = json.loads(bytes(np.asarray(z["head"], np.uint8)).decode())["count"]
        return t.resumed_from, saved

    assert update(300) == (0, 300)
    assert update(300) == (300, 300)           # nothing new: not written again
    assert update(310) == (300, 300)           # 10 new < 310/16: resumed, not written
    assert update(318) == (300, 300)           # 18 new < 318/16 = 19.9
    assert update(330) == (300, 330)           # 30 new >= 330/16: written
    assert update(331) == (330, 330)
    assert tallies_checkpoint.worth_saving(0, 5) and not tallies_checkpoint.worth_saving(0, 0) and not tallies_checkpoint.worth_saving(7, 7)


def test_closed_counters_read_the_same_tables_and_refuse_more_records(tmp_path):
    """:meth:`Tallies.close` drops the lookup indexes: every table reads the same, adding or
    checkpointing raises instead of numbering blocks wrongly."""
    lines, meta = journal_lines(tmp_path, 200, 10, 8)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs = journal_cache.read(folder, lambda r: True, meta["bots"])[0]
    t = tallies.Tallies(meta["bots"]).add_all(recs)
    before = (json.dumps(t.bot_stats()), json.dumps(t.efficiency()), t.mixing(),
              [np.asarray(a).tolist() if isinstance(a, np.ndarray) else a for a in t.contests()[2:]])
    t.close()
    after = (json.dumps(t.bot_stats()), json.dumps(t.efficiency()), t.mixing(),
             [np.asarray(a).tolist() if isinstance(a, np.ndarray) else a for a in t.contests()[2:]])
    assert before == after and len(t.slots) == 0
    with pytest.raises(RuntimeError, match="closed"):
        t.add_all(recs[:1])
    with pytest.raises(RuntimeError, match="closed"):
        t.arrays()


@pytest.mark.parametrize("keep_end", [True, False])
def test_a_new_schedule_of_as_many_matches_does_not_resume_the_old_counters(tmp_path, keep_end):
    """Adversarial trial (session 8): `deals: 6`, then a gauntlet of 9 deals — the same number of
    scheduled records, another set — resumed the old counters and TrueSkill state (the prefix
    checkpoints were keyed by the journal's bytes and the count of inside records). The set of
    inside rows is now part of the prefix: the tables equal a rebuild."""
    from arena.schedule_file import KEY, encode, schedule_of

    lines, meta = journal_lines(tmp_path, 300, 12, 9)
    folder = tmp_path / "t"
    folder.mkdir()
    ids = [json.loads(x)["match_id"] for x in lines]
    every = dict(schedule_of(meta) or {})
    first, last = ids[:150], ids[150:]

    def schedule(chosen):
        m = {k: v for k, v in meta.items() if k != KEY}
        m.update(encode({i: every[i] for i in chosen}))
        (folder / "tournament.json").write_text(json.dumps(m))

    (folder / "matches.jsonl").write_bytes(b"".join(lines if keep_end else lines[:280]))
    schedule(first)
    a = standings(folder, history=False)
    assert_same_tables(a, fresh(folder, tmp_path))
    if not keep_end:  # the journal grew meanwhile: the old checkpoints cover a shorter prefix
        (folder / "matches.jsonl").write_bytes(b"".join(lines))
    schedule(last[:140] + first[:10])
    b = standings(folder, history=False)
    assert_same_tables(b, fresh(folder, tmp_path))
    assert json.dumps(a.rows) != json.dumps(b.rows)


@pytest.mark.parametrize("players, game", [(2, None), (4, None), (4, "agram")])
def test_a_shuffled_journal_gives_the_same_score_intervals_to_the_last_digit(tmp_path, players, game):
    """The README's promise (the tables do not depend on the order in which matches finished):
    the score, score_low and score_high of every bot — bootstrap (few blocks) and block-t
    (many) alike — are the same bits from a shuffled journal, and the whole rows too: with
    rewards 0, ½, 1 (two players, partnerships: sums exact in any order) and with a four-player
    free-for-all's thirds (the blocks taken in (lineup, deal) order)."""
    folder, mixed = tmp_path / "t", tmp_path / "mixed"
    bench.make_journal(folder, 3000, 40, players)
    if game:  # the same seatings as a free-for-all: rewards 1, 2/3, 1/3, 0
        for name in ("matches.jsonl", "tournament.json"):
            p = folder / name
            p.write_text(p.read_text().replace('"game":"sedma"', f'"game":"{game}"').replace(
                '"game": "sedma"', f'"game": "{game}"'))
    lines = (folder / "matches.jsonl").read_bytes().splitlines(keepends=True)
    random.Random(5).shuffle(lines)
    mixed.mkdir()
    (mixed / "matches.jsonl").write_bytes(b"".join(lines))
    shutil.copy(folder / "tournament.json", mixed / "tournament.json")
    a, b = standings(folder, history=False), standings(mixed, history=False)
    scores = [r["score"] for r in a.rows if r["matches"]]
    assert scores and json.dumps(a.rows) == json.dumps(b.rows)
    t = tallies.Tallies(a.meta["bots"]).add_all(read_records(folder))
    pos = np.flatnonzero(t.s_n.v > 0)
    assert stats.exact_sums(t.s_sum.v[pos], t.s_n.v[pos]) == (game is None)  # both paths taken


def _direct_efficiency(recs):
    """The pooled variances of single results and of block means over (bot, lineup) groups with
    two or more complete blocks, computed record by record."""
    groups: dict = {}
    for r in recs:
        if r.played:
            for b in dict.fromkeys(r.seats):
                groups.setdefault((b, r.lineup), {}).setdefault(r.deal_index, []).append(r.rewards[r.seats.index(b)])
    k = max(len(v) for g in groups.values() for v in g.values())
    ss1 = ss2 = df1 = df2 = 0.0
    n_block = 0
    for g in groups.values():
        xs = np.array([v for v in g.values() if len(v) == k])
        if len(xs) >= 2:
            ss1 += ((xs - xs.mean()) ** 2).sum()
            ss2 += ((xs.mean(1) - xs.mean()) ** 2).sum()
            df1, df2 = df1 + xs.size - 1, df2 + len(xs) - 1
            n_block += len(xs)
    return (ss1 / df1) / (k * ss2 / df2), n_block


def test_lineups_of_one_block_are_skipped_by_the_efficiency_without_changing_it(tmp_path):
    """The efficiency skips the slots of lineups with a single block before grouping (they can never
    make a group of two blocks: 4M such slots took ~110 MB to sort); with some lineups cut to one
    deal, the factor and counts equal the direct computation and the table before the cut keeps
    its value."""
    lines, meta = journal_lines(tmp_path, 600, 6, 3)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    recs = read_records(folder)
    lineups = sorted({r.lineup for r in recs})
    cut = set(lineups[::2])  # every other lineup keeps only its first deal
    first = {lu: min(r.deal_index for r in recs if r.lineup == lu) for lu in cut}
    kept = [r for r in recs if r.lineup not in cut or r.deal_index == first[r.lineup]]
    assert len(kept) < len(recs) and any(r.lineup in cut for r in kept)
    bots = meta["bots"]
    eff = tallies.Tallies(bots).add_all(kept).efficiency()
    factor, n_block = _direct_efficiency(kept)
    assert eff["factor"] == pytest.approx(factor, rel=1e-9) and eff["bot_blocks"] == n_block > 0
    assert json.dumps(eff) == json.dumps(tables.duplicate_efficiency(kept))


@pytest.mark.parametrize("keys, ok", [([], True), ([5], True), ([1, 2], True), ([2, 2], False), ([3, 1], False),
                                      ([1, 2, 3, 4, 5, 6, 7], True), ([1, 2, 3, 3, 5, 6, 7], False),
                                      ([1, 2, 3, 4, 5, 6, 5], False), ([1, 2, 4, 3, 5, 6, 7], False)])
def test_an_index_loaded_in_slices_refuses_keys_out_of_order(monkeypatch, keys, ok):
    """The ascending check of a loaded index runs a slice at a time: with slices of 3 keys, an
    inversion at a slice's edge (3 | 4 5 6 | 7) is caught as one inside it."""
    import numpy as np

    from arena import tallies_events

    monkeypatch.setattr(tallies_events, "_CHECK", 3)
    k = np.array(keys, np.int64)
    if ok:
        assert len(tallies_events.Sorted(k, np.arange(len(k)))) == len(k)
    else:
        with pytest.raises(ValueError, match="ascending"):
            tallies_events.Sorted(k, np.arange(len(k)))
