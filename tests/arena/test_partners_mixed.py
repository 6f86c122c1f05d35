"""``partners: mixed`` end to end: a 4-player Sedma tournament, inline, rated as TrueSkill teams."""

from __future__ import annotations

import os
import textwrap
from collections import Counter

import pytest
import trueskill

from arena import config as cfg
from arena import report_html
from arena.driver import run_tournament
from arena.results import export, standings
from arena.schedule import replay_key

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BOTS = ["random", "greedy", "random-b", "random-c"]
DEALS = 2

CONFIG = f"""
bots:
  random: {{cmd: [python, bots/random_bot.py]}}
  greedy: {{cmd: [python, bots/greedy_bot.py]}}
  random-b: {{cmd: [python, bots/random_bot.py]}}
  random-c: {{cmd: [python, bots/random_bot.py]}}
tournaments:
  - name: mixed
    game: sedma
    players: 4
    partners: mixed
    bots: [{", ".join(BOTS)}]
    deals: {DEALS}
    salt: fixed-test-salt
"""


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The tournament, played once inline; its results folder and standings."""
    tmp = tmp_path_factory.mktemp("mixed")
    path = tmp / "t.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    summary = run_tournament(t, tmp / "res", inline=True)
    st = standings(summary.folder)
    export(summary.folder, st)
    return summary, st


def test_schedule_makes_mixed_teams_with_four_rotations(played):
    summary, st = played
    # 4 bots make 3 ways to split into two teams; 4 rotations per deal
    assert summary.played == len(st.records) == 3 * DEALS * 4
    assert all(r.status == "ok" and not r.faults for r in st.records)
    by_lineup = Counter(r.match_id.split("/")[1] for r in st.records)
    assert sorted(by_lineup) == ["greedy+random-b~random+random-c", "greedy+random-c~random+random-b",
                                 "greedy+random~random-b+random-c"]
    assert set(by_lineup.values()) == {DEALS * 4}
    for r in st.records:
        assert sorted(r.seats) == sorted(BOTS)  # four distinct bots
        sides = r.sides
        assert [len(s) for s in sides] == [2, 2]
        t1, t2 = r.match_id.split("/")[1].split("~")
        assert sorted("+".join(sorted(s)) for s in sides) == sorted([t1, t2])
    # within a block the teams swap sides: each team sits on side 0 in two of the four rotations
    blocks = Counter()
    for r in st.records:
        blocks[(r.match_id.split("/")[1], r.deal_index, "+".join(sorted(r.sides[0])))] += 1
    assert set(blocks.values()) == {2}


def test_team_ratings_equal_trueskill_teams_in_replay_order(played):
    _, st = played
    dp = st.ratings.draw_probability
    tau = st.meta["ratings"]["tau"]  # as recorded by the run (the default for bots: 0)
    assert tau == 0
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=tau, draw_probability=dp)
    cur = {b: env.create_rating() for b in BOTS}
    for r in sorted(st.records, key=replay_key):
        sides = r.sides
        new = env.rate([tuple(cur[b] for b in s) for s in sides], ranks=list(r.side_ranks))
        for s, rs in zip(sides, new):
            for b, x in zip(s, rs):
                cur[b] = x
    for b in BOTS:
        assert st.ratings.ratings[b] == pytest.approx((cur[b].mu, cur[b].sigma), rel=1e-9)
    # every match moved all four bots
    assert len(st.ratings.history) == len(st.records)
    assert all(sorted(h) == sorted(BOTS) for h in st.ratings.history)


def test_rows_count_each_bot_once_per_match(played):
    _, st = played
    rows = {r["bot"]: r for r in st.rows}
    assert sorted(rows) == sorted(BOTS)
    for b in BOTS:
        mine = [r for r in st.records if b in r.seats]
        wins = sum(r.ranks[r.seats.index(b)] == 0 for r in mine)
        assert rows[b]["matches"] == len(mine) == 3 * DEALS * 4
        assert rows[b]["wins"] == wins
        assert rows[b]["mu"] == st.ratings.ratings[b][0]
        assert rows[b]["score_low"] <= rows[b]["score"] <= rows[b]["score_high"]
    # partners are never opponents: each pair faces each other in 2 of the 3 lineups
    for a in BOTS:
        for b in BOTS:
            if a != b:
                assert st.cross[a][b]["matches"] == 2 * DEALS * 4
                assert st.cross[a][b]["score"] + st.cross[b][a]["score"] == pytest.approx(1.0)
    assert [r["rank"] for r in st.rows] == [1, 2, 3, 4]
    # the rows follow the batch fit (teams: a side's strength is the sum of its two bots')
    strength = [r["strength"] for r in st.rows]
    assert strength == sorted(strength, reverse=True)


def test_team_table_and_report(played):
    summary, st = played
    teams = report_html.team_stats(st.records, st.ratings)
    assert len(teams) == 6  # every pair of the 4 bots is a team in one lineup
    for t in teams:
        a, b = t["bots"]
        assert t["matches"] == DEALS * 4
        assert t["mu"] == pytest.approx(st.ratings.ratings[a][0] + st.ratings.ratings[b][0])
        mine = [r for r in st.records if any(sorted(s) == [a, b] for s in r.sides)]
        assert t["wins"] == sum(r.ranks[r.seats.index(a)] == 0 for r in mine)
    # complementary teams of one lineup share its matches: their scores sum to 1
    by_name = {t["team"]: t for t in teams}
    assert by_name["greedy+random"]["score"] + by_name["random-b+random-c"]["score"] == pytest.approx(1.0)
    page = (summary.folder / "report.html").read_text()
    assert '<table id="teams">' in page
    assert all(f'<tr data-team="{t["team"]}">' in page for t in teams)
    assert "partners: mixed" in page
    # the duplicate block of a mixed lineup is one deal in its 4 rotations
    assert st.efficiency["blocks"] == 3 * DEALS and st.efficiency["block_size"] == 4
    assert st.efficiency["bot_blocks"] == 4 * 3 * DEALS
