"""Reports: crosstable, duplicate efficiency, bootstrap intervals, report.html (self-contained)."""

from __future__ import annotations

import json
import random
import re
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from arena import render, report_html, stats, tables
from arena.cli import app
from arena.faults import StartupWatch
from arena.record import MatchRecord, records_of
from arena.results import export, standings


def rec(game, seats, ranks, deal=0, rot=0, status="ok", faults=(), lineup=None, move_ms=None):
    """A journal record with just the fields the reports read."""
    lineup = lineup or "+".join(sorted(set(seats)))
    return {"match_id": f"t/{lineup}/d{deal:05d}/r{rot:02d}", "game": game, "seats": list(seats),
            "deal_index": deal, "rotation": rot, "status": status,
            "outcome": {"ranks": list(ranks), "scores": [0] * len(ranks)}, "faults": list(faults),
            "move_ms": move_ms if move_ms is not None else [[1.0, 2.0, 3.0] for _ in seats]}


R = MatchRecord.from_json

BOTS = ["alpha", "beta", "gamma"]


def demo_records(deals: int = 20, seed: int = 7) -> list[dict]:
    """A 3-player agram tournament: ``alpha`` wins most deals, cyclic rotations, one fault."""
    rng = random.Random(seed)
    out = []
    for d in range(deals):
        for r in range(3):
            seats = BOTS[r:] + BOTS[:r]
            u = rng.random()
            winner = "alpha" if u < 0.6 else "beta" if u < 0.85 else "gamma"
            ranks = [0 if b == winner else 1 for b in seats]
            out.append(rec("agram", seats, ranks, deal=d, rot=r, lineup="alpha+beta+gamma",
                           move_ms=[[0.5 + i + 10 * (b == "gamma") for i in range(6)] for b in seats]))
    out[5]["faults"] = [{"seat": 0, "bot": out[5]["seats"][0], "class": "timeout", "move": 2, "detail": "x"}]
    return out


def make_folder(path, records, bots=BOTS, game="agram", players=3, partners="self"):
    """A results folder (tournament.json + matches.jsonl) as `arena run` writes it."""
    path.mkdir(parents=True, exist_ok=True)
    meta = {"name": "demo", "game": game, "players": players, "options": {}, "bots": list(bots),
            "deals": 0, "partners": partners, "ratings": {"draw_probability": "auto", "tau": "default", "fixed": []},
            "rate_forfeits": False}
    (path / "tournament.json").write_text(json.dumps(meta))
    (path / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# ------------------------------------------------------------------ crosstable

def test_crosstable_hand_made_free_for_all():
    recs = [rec("agram", ["a", "b", "c"], [0, 1, 1]),           # a beats b and c; b ties c
            rec("agram", ["b", "c", "a"], [0, 1, 2], deal=1),   # b > c > a
            rec("agram", ["a", "b", "c"], [2, 1, 0], deal=2, status="aborted")]  # not counted
    cross = tables.crosstable(records_of(recs))
    assert cross["a"]["b"] == {"score": 0.5, "matches": 2}
    assert cross["a"]["c"] == {"score": 0.5, "matches": 2}
    assert cross["b"]["c"] == {"score": 0.75, "matches": 2}
    assert cross["c"]["b"] == {"score": 0.25, "matches": 2}
    assert cross["b"]["a"] == {"score": 0.5, "matches": 2}
    score, matches = report_html.crosstable_matrix(cross, ["a", "b", "c"])
    assert score[1, 2] == 0.75 and matches[1, 2] == 2
    assert score[0, 0] != score[0, 0]  # nan on the diagonal


def test_crosstable_mixed_partners_only_counts_opponents():
    # sedma: sides {0, 2} and {1, 3}: team a+b beats c+d, then c+a beats d+b
    recs = [rec("sedma", ["a", "c", "b", "d"], [0, 1, 0, 1], lineup="a+b~c+d"),
            rec("sedma", ["c", "d", "a", "b"], [0, 1, 0, 1], deal=1, lineup="a+c~b+d")]
    cross = tables.crosstable(records_of(recs))
    assert cross["a"]["c"] == {"score": 1.0, "matches": 1}  # partners in the second match: not counted
    assert cross["a"]["d"] == {"score": 1.0, "matches": 2}
    assert cross["a"]["b"] == {"score": 1.0, "matches": 1}
    assert cross["b"]["a"] == {"score": 0.0, "matches": 1}
    assert cross["d"]["b"] == {"score": 0.0, "matches": 1}  # partners in the second match
    assert cross["c"]["d"] == {"score": 1.0, "matches": 1}  # partners in the first match
    assert cross["b"]["c"] == {"score": 0.5, "matches": 2}


# ------------------------------------------------------------------ duplicate efficiency

def test_stats_duplicate_efficiency_known_value():
    # singles 1,0,1,0,0,1,1,1: var = 1.875/7; block means .5,.5,.5,1: var = 0.0625; k = 2
    assert stats.duplicate_efficiency([[1, 0], [1, 0], [0, 1], [1, 1]]) == pytest.approx(15 / 7)
    # the deal decides everything (rotations agree): singles var 2/7, block means var 1/3 -> 3/7
    assert stats.duplicate_efficiency([[1, 1], [0, 0], [1, 1], [0, 0]]) == pytest.approx(3 / 7)


def _two_player(blocks_by_lineup):
    out = []
    for (a, b), blocks in blocks_by_lineup.items():
        for d, blk in enumerate(blocks):
            for r, x in enumerate(blk):
                seats = [a, b] if r % 2 == 0 else [b, a]
                ra = 0 if x == 1 else 1
                out.append(rec("agram", seats, [ra, 1 - ra] if seats[0] == a else [1 - ra, ra], deal=d, rot=r,
                               lineup=f"{a}+{b}"))
    return out


def test_tournament_duplicate_efficiency_one_lineup_equals_stats():
    recs = _two_player({("a", "b"): [[1, 0], [1, 0], [0, 1], [1, 1]]})
    eff = tables.duplicate_efficiency(records_of(recs))
    assert eff["factor"] == pytest.approx(15 / 7)
    assert eff["blocks"] == 4 and eff["bot_blocks"] == 8 and eff["block_size"] == 2  # a's and b's
    assert eff["var_single"] == pytest.approx(1.875 / 7)
    assert eff["var_block_mean"] == pytest.approx(0.0625)
    # an incomplete block (deal still running) is left out
    recs.append(rec("agram", ["a", "b"], [0, 1], deal=9, rot=0, lineup="a+b"))
    assert tables.duplicate_efficiency(records_of(recs))["factor"] == pytest.approx(15 / 7)
    assert tables.efficiency_line(eff).startswith("Duplicate efficiency: 2.14×")


def test_tournament_duplicate_efficiency_pools_groups_around_their_own_means():
    # group a+b as above (SS 15/8 on 7 df, block SS 3/16 on 3 df); group a+c: a scores
    # 1,1 | 1,0 | 1,1 (SS 5/6 on 5 df, block SS 1/6 on 2 df). Pooled:
    # (65/24 / 12) / (2 * (17/48) / 5) = 325/204.
    recs = _two_player({("a", "b"): [[1, 0], [1, 0], [0, 1], [1, 1]], ("a", "c"): [[1, 1], [1, 0], [1, 1]]})
    eff = tables.duplicate_efficiency(records_of(recs))
    assert eff["factor"] == pytest.approx(325 / 204)
    assert eff["blocks"] == 7 and eff["bot_blocks"] == 14


def test_duplicate_efficiency_undefined_and_infinite():
    assert tables.duplicate_efficiency(records_of([]))["factor"] != tables.duplicate_efficiency(records_of([]))["factor"]  # nan
    # every block is one win and one loss: the deal's luck cancels completely
    recs = _two_player({("a", "b"): [[1, 0], [0, 1], [1, 0]]})
    assert tables.duplicate_efficiency(records_of(recs))["factor"] == float("inf")
    assert "∞" in tables.efficiency_line(tables.duplicate_efficiency(records_of(recs)))
    assert tables.efficiency_line(tables.duplicate_efficiency(records_of([]))).startswith("Duplicate efficiency: –")


# ------------------------------------------------------------------ bootstrap

def test_bootstrap_interval_covers_the_mean():
    blocks = {i: [1.0, 0.0, 1.0] if i % 3 else [0.0, 0.0, 1.0] for i in range(30)}
    m, lo, hi = stats.bootstrap_ci(blocks, seed=3)
    assert m == pytest.approx((20 * 2 + 10 * 1) / 90)
    assert lo < m < hi
    assert hi - lo < 0.25
    st = tables.bot_stats(records_of(demo_records()), BOTS)
    for b in BOTS:
        assert st[b]["score_low"] <= st[b]["score"] <= st[b]["score_high"]
    # alpha wins 60% of the matches in expectation; its whole interval is above the others'
    assert st["alpha"]["score_low"] > st["gamma"]["score_high"]


# ------------------------------------------------------------------ report.html

class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_report_html_is_self_contained_with_rows_and_plots(tmp_path):
    folder = make_folder(tmp_path / "demo", demo_records())
    st = standings(folder)
    export(folder, st)
    page = (folder / "report.html").read_text()
    # nothing loaded from elsewhere
    assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", page, re.I)
    p = _Collect()
    p.feed(page)
    tags = [t for t, _ in p.tags]
    assert "link" not in tags and "iframe" not in tags and "img" not in tags
    assert not [a for _, a in p.tags if "src" in a]  # no script, image or frame from a file or address
    scripts = [a for t, a in p.tags if t == "script"]
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}]  # the data, then the inline script
    data = json.loads(page[page.index('id="report-data">') + 17:page.index("</script>")])
    assert data["bots"] == [r["bot"] for r in st.rows]
    assert data["history"]["rated"] == len(st.ratings.history) == 60
    # one leaderboard row per bot, in table order, with its numbers
    lb = page[page.index('<table id="leaderboard">'):page.index("</table>")]
    assert re.findall(r'<tr data-bot="([^"]+)">', lb) == [r["bot"] for r in st.rows]
    assert st.rows[0]["bot"] == "alpha"
    for r in st.rows:
        row = re.search(rf'<tr data-bot="{r["bot"]}">(.*?)</tr>', lb).group(1)
        assert f"<td>{r['mu']:.2f}</td>" in row and f"<td>{r['sigma']:.2f}</td>" in row
        assert f"{r['score']:.3f} [{r['score_low']:.3f}, {r['score_high']:.3f}]" in row
        assert f"<td>{r['matches']}</td>" in row and r["matches"] == 60
    # reliability and efficiency
    assert '<table id="reliability">' in page
    rel = page[page.index('<table id="reliability">'):]
    gamma = re.search(r'<tr data-bot="gamma">(.*?)</tr>', rel).group(1)
    assert "<td>13.0 ms</td>" in gamma and st.rel["gamma"]["p50_ms"] == 13.0  # ms with a decimal (arena.tables.latency_text)
    assert tables.efficiency_line(st.efficiency) in page
    assert 'id="teams"' not in page  # not a mixed-partners tournament


def test_rating_series_follows_history_in_replay_order():
    history = [{"a": (27.0, 7.0), "b": (23.0, 7.0)}, {"b": (24.0, 6.0)}, {}, {"a": (26.0, 6.5)}]
    s = report_html.rating_series(history, ["a", "b", "c"], prior=(25.0, 8.0))
    assert list(s["a"][0]) == [25.0, 27.0, 27.0, 27.0, 26.0]
    assert list(s["a"][1]) == [8.0, 7.0, 7.0, 7.0, 6.5]
    assert list(s["b"][0]) == [25.0, 23.0, 24.0, 24.0, 24.0]
    assert list(s["c"][0]) == [25.0] * 5


def test_leaderboard_json_md_and_cli_show_duplicate_efficiency(tmp_path):
    folder = make_folder(tmp_path / "demo", demo_records())
    st = standings(folder)
    export(folder, st)
    doc = json.loads((folder / "leaderboard.json").read_text())
    eff = doc["duplicate_efficiency"]
    assert eff["factor"] == pytest.approx(st.efficiency["factor"])
    assert eff["blocks"] == 20 and eff["bot_blocks"] == 60 and eff["block_size"] == 3  # 20 deals, 3 rotations
    assert [r["bot"] for r in doc["rows"]] == [r["bot"] for r in st.rows]  # existing content kept
    assert tables.efficiency_line(st.efficiency) in (folder / "leaderboard.md").read_text()
    runner = CliRunner()
    out = runner.invoke(app, ["leaderboard", str(folder), "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["duplicate_efficiency"]["factor"] == pytest.approx(st.efficiency["factor"])
    out = runner.invoke(app, ["leaderboard", str(folder)])
    assert out.exit_code == 0 and "Duplicate efficiency:" in out.output


def test_p_above_next_follows_the_trueskill_posteriors():
    from arena.tables import skill_above

    a = {"mu": 27.0, "sigma": 1.0}
    b = {"mu": 25.0, "sigma": 1.0}
    assert skill_above(a, b) == pytest.approx(0.9214, abs=1e-4)  # Φ(2 / √2)
    assert skill_above(b, a) == pytest.approx(1 - 0.9214, abs=1e-4)
    assert skill_above(a, dict(a)) == pytest.approx(0.5)


# ------------------------------------------------------------------ explaining faults

ARGPARSE_TAIL = ("usage: ismcts_bot.py [-h] [--opponent-model {tree,rollout}]\n"
                 "ismcts_bot.py: error: argument --opponent-model: invalid choice: 'rollouts' "
                 "(choose from 'tree', 'rollout')\n")


def startup_crash(seat, bot, code=2, tail=ARGPARSE_TAIL):
    return {"seat": seat, "bot": bot, "class": "crash", "move": 0,
            "detail": f"bot {bot!r} exited with code {code}", "stderr_tail": tail}


def test_reliability_explains_each_faulting_bot_by_its_first_fault():
    r1 = rec("agram", ["ism-bad", "alpha", "beta"], [1, 0, 0], status="forfeit", faults=[startup_crash(0, "ism-bad")])
    r1["bot_versions"] = ["", "alpha/1", "beta/1"]
    r2 = rec("agram", ["alpha", "ism-bad", "beta"], [0, 1, 0], rot=1, status="forfeit",
             faults=[startup_crash(1, "ism-bad", tail="")])
    r2["bot_versions"] = ["alpha/1", "", "beta/1"]
    r3 = rec("agram", ["alpha", "beta", "ism-bad"], [0, 2, 1], rot=2, status="forfeit",
             faults=[{"seat": 1, "bot": "beta", "class": "timeout", "move": 4,
                      "detail": "bot 'beta' did not answer act 9 within 1020 ms", "stderr_tail": "x" * 2000}])
    r3["bot_versions"] = ["alpha/1", "beta/1", "ism-bad/1"]
    rel = tables.reliability(records_of([r1, r2, r3]), ["alpha", "beta", "ism-bad"])
    assert rel["alpha"]["first_fault"] is None
    assert rel["ism-bad"]["first_fault"] == {
        "class": "crash", "detail": "bot 'ism-bad' exited with code 2", "match_id": r1["match_id"], "move": 0,
        "at_startup": True,
        "stderr_last": "ismcts_bot.py: error: argument --opponent-model: invalid choice: 'rollouts' "
                       "(choose from 'tree', 'rollout')"}
    assert rel["beta"]["first_fault"]["at_startup"] is False
    assert tables.fault_lines(rel) == [
        "beta: timeout — bot 'beta' did not answer act 9 within 1020 ms; stderr: " + "x" * 199 + "…",
        "ism-bad: crash at start-up — bot 'ism-bad' exited with code 2; stderr: ismcts_bot.py: error: argument "
        "--opponent-model: invalid choice: 'rollouts' (choose from 'tree', 'rollout') (first of 2 faults)"]
    from rich.console import Console
    console = Console(record=True, width=400)
    console.print(render.reliability_table(rel))
    text = console.export_text()
    assert text.index("Reliability") < text.index("First fault of each faulting bot:")
    assert tables.fault_lines(rel)[1] in text
    # stderr with rich markup in it is printed as is
    rel["beta"]["first_fault"]["stderr_last"] = "[bold]not markup[/bold]"
    console.print(render.reliability_table(rel))
    assert "stderr: [bold]not markup[/bold]" in console.export_text()
    # the HTML report carries the same lines, escaped
    from arena.report_html import reliability_html
    page = reliability_html(rel, ["alpha", "beta", "ism-bad"])
    assert page.index('<table id="reliability">') < page.index('<ul id="first-faults">')
    assert "<li>beta: timeout — bot &#x27;beta&#x27; did not answer act 9 within 1020 ms; stderr: " \
           "[bold]not markup[/bold]</li>" in page
    assert page.count("<li>") == 2
    assert '<ul id="first-faults">' not in reliability_html({"a": {**rel["alpha"]}}, ["a"])


def test_a_disabled_fault_is_first_only_without_another():
    dis = {"seat": 0, "bot": "a", "class": "disabled", "move": 0, "detail": "bot disabled after too many faults"}
    r1 = rec("agram", ["a", "b", "c"], [1, 0, 0], status="forfeit", faults=[dis])
    r2 = rec("agram", ["a", "b", "c"], [1, 0, 0], deal=1, status="forfeit", faults=[startup_crash(0, "a")])
    assert tables.reliability(records_of([r1]), ["a", "b", "c"])["a"]["first_fault"]["class"] == "disabled"
    assert tables.reliability(records_of([r1, r2]), ["a", "b", "c"])["a"]["first_fault"]["class"] == "crash"
    # no bot_versions recorded (older journals): start-up unknown, not claimed
    assert tables.reliability(records_of([r2]), ["a", "b", "c"])["a"]["first_fault"]["at_startup"] is False


def test_a_bot_that_faulted_never_counts_a_win():
    # every side faulted: all share rank 0, and none of them won
    both = rec("agram", ["a", "b"], [0, 0], status="forfeit", faults=[startup_crash(0, "a"), startup_crash(1, "b")])
    both["outcome"]["scores"] = [0, 0]
    ok = rec("agram", ["a", "b"], [0, 1], deal=1)
    st = tables.bot_stats(records_of([both, ok]), ["a", "b"])
    assert st["a"]["wins"] == 1 and st["b"]["wins"] == 0
    assert st["a"]["matches"] == st["b"]["matches"] == 2


def test_live_fault_notes_show_each_bots_first_fault():
    from arena.progress import FaultNotes

    notes = FaultNotes(max_rows=1)
    assert notes.lines() == ()
    r1 = rec("agram", ["ism-bad", "alpha", "beta"], [1, 0, 0], status="forfeit", faults=[startup_crash(0, "ism-bad")])
    r1["bot_versions"] = ["", "alpha/1", "beta/1"]
    notes.add(R(r1))
    notes.add(R({**r1, "match_id": "t/x/d00001/r00"}))
    assert notes.lines() == ("ism-bad: crash at start-up — bot 'ism-bad' exited with code 2; stderr: ismcts_bot.py: "
                             "error: argument --opponent-model: invalid choice: 'rollouts' (choose from 'tree', "
                             "'rollout') (first of 2 faults)",)
    notes.add(R(rec("agram", ["alpha", "beta"], [0, 1], status="forfeit", faults=[startup_crash(1, "beta")])))
    assert len(notes.lines()) == 2 and notes.lines()[1] == "… and 1 more faulting bots"


def startup_record(seats, failing, deal=0, rot=0, detail_code=2, ready=()):
    """A forfeit in which the bots of ``failing`` crashed at start-up (the others answered ready)."""
    faults = [startup_crash(i, b, code=detail_code) for i, b in enumerate(seats) if b in failing]
    r = rec("agram", seats, [1 if b in failing else 0 for b in seats], deal=deal, rot=rot, status="forfeit",
            faults=faults)
    r["bot_versions"] = ["" if b in failing and b not in ready else f"{b}/1" for b in seats]
    return r


def test_startup_watch_condemns_a_bot_that_never_starts():
    watch = StartupWatch(3)
    seats = ["ism-bad", "alpha", "beta"]
    assert watch.add(R(startup_record(seats, {"ism-bad"}))) == []
    assert watch.add(R(rec("agram", seats, [2, 1, 0], status="aborted"))) == []  # not counted
    assert watch.add(R(startup_record(seats, {"ism-bad"}, deal=1))) == []
    assert watch.add(R(startup_record(seats, {"ism-bad"}, deal=2))) == [(
        "ism-bad", "it failed at start-up in each of its first 3 matches: crash — bot 'ism-bad' exited with "
                   "code 2; stderr: ismcts_bot.py: error: argument --opponent-model: invalid choice: 'rollouts' "
                   "(choose from 'tree', 'rollout')")]
    assert watch.add(R(startup_record(seats, {"ism-bad"}, deal=3))) == []  # once


def test_startup_watch_spares_bots_that_started_or_failed_differently():
    seats = ["a", "b", "c"]
    watch = StartupWatch(2)
    # a: answered ready once (then crashed at move 0 in the same way): it can start
    ok_then_crash = startup_record(seats, {"a"}, ready={"a"})
    assert watch.add(R(ok_then_crash)) == [] and "a" in watch.settled
    # b: two different start-up faults (a and c answered ready: they started)
    watch = StartupWatch(2)
    assert watch.add(R(startup_record(seats, {"b"}, detail_code=2))) == []
    assert watch.add(R(startup_record(seats, {"b"}, deal=1, detail_code=3))) == []
    assert watch.settled == {"a", "b", "c"} and watch.failures["b"][1]["detail"] == "bot 'b' exited with code 3"
    # matches not played (a disabled bot) count for nobody
    w = StartupWatch(1)
    dis = {"seat": 0, "bot": "a", "class": "disabled", "move": 0, "detail": "bot disabled"}
    assert w.add(R({**startup_record(seats, {"a"}), "faults": [dis]})) == [] and not w.failures
    # n = 0 or None: nobody is ever condemned
    for n in (0, None):
        w = StartupWatch(n)
        assert all(w.add(R(startup_record(seats, {"a"}, deal=d))) == [] for d in range(5))


def test_latency_keeps_its_resolution_below_a_millisecond():
    """A warm bot answers in tens of microseconds: shown as µs, never rounded to 0.0 ms."""
    from arena.tables import latency_text
    assert [latency_text(x) for x in (0.083, 0.9994, 2.349, 41.25, 1203.4, None)] == \
        ["83 µs", "999 µs", "2.35 ms", "41.2 ms", "1203 ms", "–"]


@pytest.mark.parametrize("mode", ["none", "bwrap"])
def test_the_sandbox_mode_is_in_leaderboard_json_and_loud_in_report_html_when_none(tmp_path, mode):
    folder = make_folder(tmp_path / "demo", demo_records()[:6])
    meta = json.loads((folder / "tournament.json").read_text())
    (folder / "tournament.json").write_text(json.dumps({**meta, "sandbox": mode}))
    export(folder, standings(folder))
    assert json.loads((folder / "leaderboard.json").read_text())["sandbox"] == mode
    page = (folder / "report.html").read_text()
    assert ('id="sandbox-none"' in page) == (mode == "none")
    assert re.search(rf'<div class="k">sandbox</div><div class="v">{mode}</div>', page)
