"""Failed and disabled bots in the tables: matches not played credit nobody, disabled bots
sink (``rate_forfeits``), the tie-break never favours faults, and the live board follows the
final table's rules (real ``arena run --inline`` for the user-trial repro)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena import tables
from arena.progress import ProvisionalBoard
from arena.ratings import RatingResult, rate
from arena.record import MatchRecord
from arena.schedule import replay_key

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rec(seats, ranks, deal=0, rot=0, status="ok", faults=(), lineup="x", game="agram"):
    return MatchRecord.from_json({
        "match_id": f"t/{lineup}/d{deal:05d}/r{rot:02d}", "game": game, "seats": list(seats),
        "deal_index": deal, "rotation": rot, "status": status,
        "outcome": {"ranks": list(ranks), "scores": [0] * len(ranks)}, "faults": list(faults)})


def dis(seat, bot):
    return {"seat": seat, "bot": bot, "class": "disabled", "move": 0, "detail": "bot disabled"}


def crash(seat, bot):
    return {"seat": seat, "bot": bot, "class": "crash", "move": 0, "detail": "exited"}


def disabled_rec(seats, bad, deal=0, rot=0, lineup="x"):
    """As :func:`arena.faults.disabled_record` writes it (each seat its own side)."""
    n_good = sum(1 for b in seats if b not in bad)
    ranks = [n_good if b in bad else 0 for b in seats]
    return rec(seats, ranks, deal, rot, status="forfeit", lineup=lineup,
               faults=[dis(s, b) for s, b in enumerate(seats) if b in bad])


# ---- ratings -------------------------------------------------------------------------

def test_disabled_record_is_rated_as_a_loss_of_the_disabled_side_only():
    r = disabled_rec(["a", "b"], {"b"})
    assert r.rated(rate_forfeits=True) and not r.rated(rate_forfeits=False)
    out = rate([r], ["a", "b"], rate_forfeits=True)
    assert out.ratings["a"] == pytest.approx((25.0, 25 / 3))
    assert out.ratings["b"][0] < 25.0
    assert rate([r], ["a", "b"]).ratings["b"] == pytest.approx((25.0, 25 / 3))  # rate_forfeits false
    # every side disabled: nothing moves
    both = disabled_rec(["a", "b"], {"a", "b"})
    assert rate([both], ["a", "b"], rate_forfeits=True).ratings["a"] == pytest.approx((25.0, 25 / 3))


def test_bots_that_fail_each_other_then_get_disabled_sink_below_the_working_bot():
    # the inline duel2 order: the failing bots tie against each other, then are disabled
    recs = [rec(["e", "g"], [0, 0], deal=d, status="forfeit", faults=[crash(0, "e"), crash(1, "g")], lineup="e+g")
            for d in range(3)]
    recs += [disabled_rec(["r", b], {b}, deal=d, lineup=f"r+x{2 * d + i}")
             for d in range(3) for i, b in enumerate(("e", "g"))]
    out = rate(recs, ["r", "e", "g"], rate_forfeits=True, mu=1000.0, sigma=1000 / 3)
    rows = tables.leaderboard(recs, ["r", "e", "g"], out)
    assert [x["bot"] for x in rows][0] == "r"
    assert all(x["mu"] < 1000.0 for x in rows[1:])
    assert rows[0]["mu"] == pytest.approx(1000.0)


def test_auto_draw_probability_ignores_imposed_ties():
    recs = [rec(["a", "b"], [0, 0], deal=d, status="forfeit", faults=[crash(0, "a"), crash(1, "b")])
            for d in range(5)] + [rec(["a", "c"], [0, 1], lineup="y")]
    assert rate(recs, ["a", "b", "c"], rate_forfeits=True).draw_probability == 0.01


# ---- scores, wins, crosstable ----------------------------------------------------------

@pytest.mark.parametrize("seats,bad", [(["a", "b"], {"b"}), (["a", "b", "c", "d"], {"b", "d"})])
def test_matches_not_played_credit_only_the_disabled_bots_as_losses(seats, bad):
    r = disabled_rec(seats, bad)
    st = tables.bot_stats([r], seats)
    for b in seats:
        if b in bad:
            assert (st[b]["matches"], st[b]["wins"], st[b]["score"]) == (1, 0, 0.0)
            assert st[b]["faults"] == st[b]["forfeits"] == 1
            assert st[b]["mean_rank"] == len(seats) - 1
        else:  # never started: no match, no win, no score (2 players: no walkover)
            assert st[b]["matches"] == st[b]["wins"] == 0
            assert st[b]["score"] != st[b]["score"]  # nan
    cross = tables.crosstable([r])
    assert set(cross) == bad
    for b in bad:
        assert {o: v["score"] for o, v in cross[b].items()} == {o: 0.0 for o in seats if o != b}


def test_a_real_forfeit_still_counts_for_the_working_side():
    r = rec(["a", "b"], [0, 1], status="forfeit", faults=[crash(1, "b")])
    st = tables.bot_stats([r], ["a", "b"])
    assert (st["a"]["matches"], st["a"]["wins"], st["a"]["score"]) == (1, 1, 1.0)
    assert (st["b"]["matches"], st["b"]["wins"], st["b"]["score"]) == (1, 0, 0.0)


# ---- tie-break ---------------------------------------------------------------------------

def test_ties_order_by_score_then_fewer_faults_then_name():
    recs = [rec(["a", "z"], [0, 0], status="forfeit", faults=[crash(0, "a"), crash(1, "z")], deal=d)
            for d in range(3)]
    prior = RatingResult({b: (25.0, 25 / 3) for b in ("a", "b", "z")})
    rows = tables.leaderboard(recs, ["a", "b", "z"], prior)
    # a and z: 3 faults each, score 0.5; b: no match (no score) and no fault
    assert [x["bot"] for x in rows] == ["a", "z", "b"]
    mk = lambda bot, score, faults: {"bot": bot, "mu": 25.0, "sigma": 8.0, "score": score, "faults": faults}  # noqa: E731
    order = sorted([mk("aa", 0.5, 3), mk("zz", 0.5, 0), mk("mm", 0.7, 9), mk("bb", float("nan"), 0)],
                   key=tables.row_order)
    assert [x["bot"] for x in order] == ["mm", "zz", "aa", "bb"]


# ---- live board ----------------------------------------------------------------------------

def test_board_uses_the_rating_config_and_rates_forfeits_like_the_final_table():
    recs = [disabled_rec(["a", "b"], {"b"}, deal=d) for d in range(3)]
    recs.append(rec(["a", "c"], [1, 0], lineup="y", status="forfeit", faults=[crash(0, "a")]))
    board = ProvisionalBoard(["a", "b", "c"], 0.1, mu=1000.0, sigma=1000 / 3, rate_forfeits=True)
    for r in sorted(recs, key=replay_key):  # arriving in replay order, the numbers agree too
        board.add(r)
    rows = {b: (mu, sigma, n, w) for b, mu, sigma, n, w in board.rows()}
    final = rate(recs, ["a", "b", "c"], draw_probability=0.1, mu=1000.0, sigma=1000 / 3, rate_forfeits=True)
    for b in "abc":
        assert rows[b][:2] == pytest.approx(final.ratings[b])
    st = tables.bot_stats(recs, ["a", "b", "c"])
    assert {b: rows[b][2:] for b in "abc"} == {b: (st[b]["matches"], st[b]["wins"]) for b in "abc"}
    assert rows["c"][3] == 1 and rows["a"][2:] == (1, 0)  # the unplayed matches credit nobody


def test_board_with_auto_draw_probability_converges_to_the_final_tables():
    # 3-player matches where every third one ends in a tie for first: the final table's auto
    # estimate is far from the board's fresh-run start (0.1)
    import random as _random
    rng = _random.Random(3)
    recs = []
    for d in range(120):
        seats = ["a", "b", "c"]
        rng.shuffle(seats)
        ranks = [0, 0, 2] if d % 3 == 0 else [0, 1, 2]
        recs.append(rec(seats, ranks, deal=d))
    final = rate(recs, ["a", "b", "c"], draw_probability="auto")
    board = ProvisionalBoard(["a", "b", "c"], "auto")
    assert board.rater.dp == 0.1
    for r in sorted(recs, key=replay_key):
        board.add(r)
        board.catch_up()
    # 1 tied pair of 2 in a third of the matches: 1/6; the board re-estimated from 0.1 on the way
    assert final.draw_probability == pytest.approx(1 / 6)
    assert board.rater.dp == pytest.approx(final.draw_probability, abs=0.011)
    assert board.rated == len(recs) and len(board.applied) == len(recs)
    rows = {b: (mu, sigma) for b, mu, sigma, _, _ in board.rows()}
    for b in "abc":  # nearly the final numbers (the probabilities differ by at most 0.01)
        assert rows[b][0] == pytest.approx(final.ratings[b][0], abs=0.2)
        assert rows[b][1] == pytest.approx(final.ratings[b][1], abs=0.05)


# ---- end to end: the user-trial repro ------------------------------------------------------

BOTS = {
    "exit_bot.py": 'import sys; print("exit_bot: giving up immediately", file=sys.stderr); sys.exit(3)\n',
    "garbage_bot.py": 'import sys,time; print("HELLO THIS IS NOT JSON", flush=True); sys.stdin.readline(); '
                      'time.sleep(60)\n',
    "sleep_bot.py": "import time; time.sleep(100000)\n",
}


@pytest.fixture(scope="module")
def trial(tmp_path_factory):
    d = tmp_path_factory.mktemp("trial")
    for name, text in BOTS.items():
        (d / name).write_text(text)
    py = sys.executable
    (d / "cfg.yaml").write_text(f"""\
defaults: {{clock: {{move_ms: 1000, bank_ms: 5000, startup_ms: 2000}}, ratings: {{mu: 1000, sigma: 333.3}}}}
bots:
  random: {{cmd: [{py}, {ROOT}/bots/random_bot.py]}}
  exit: {{cmd: [{py}, exit_bot.py]}}
  garbage: {{cmd: [{py}, garbage_bot.py]}}
  sleep: {{cmd: [{py}, sleep_bot.py]}}
  ism-bad: {{cmd: [{py}, {ROOT}/bots/ismcts_bot.py, --opponent-model, nope]}}
tournaments:
  - {{name: duel2, game: cuttle, players: 2, bots: [random, exit, garbage], deals: 3}}
  - {{name: ffa4, game: agram, players: 4, bots: [random, exit, garbage, sleep, ism-bad], deals: 1}}
""")
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = {}
    for t in ("duel2", "ffa4"):
        p = subprocess.run([sys.executable, "-m", "arena.cli", "run", "cfg.yaml", "-t", t, "--inline", "--quiet"],
                           cwd=d, env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        folder = d / "results" / t
        recs = [MatchRecord.from_json(json.loads(line))
                for line in (folder / "matches.jsonl").read_text().splitlines() if line.strip()]
        out[t] = (json.loads((folder / "leaderboard.json").read_text())["rows"], recs)
    return out


@pytest.mark.parametrize("t", ["duel2", "ffa4"])
def test_inline_run_ranks_the_working_bot_first_and_credits_failed_bots_no_win(trial, t):
    rows, recs = trial[t]
    assert rows[0]["bot"] == "random"
    for x in rows[1:]:
        assert x["faults"] > 0 and x["wins"] == 0
        assert x["mu"] < 1000 and x["conservative"] < rows[0]["conservative"]
    assert rows[0]["mu"] == pytest.approx(1000)
    assert any(f.cls == "disabled" for r in recs for f in r.faults)


@pytest.mark.parametrize("t", ["duel2", "ffa4"])
def test_live_board_agrees_with_the_final_table(trial, t):
    rows, recs = trial[t]
    board = ProvisionalBoard([x["bot"] for x in sorted(rows, key=lambda x: x["bot"])], "auto",
                             mu=1000.0, sigma=333.3, rate_forfeits=True)
    for r in recs:  # arrival order (the journal's)
        board.add(r)
    live = board.rows()
    # the board is TrueSkill: its order is the final table's TrueSkill order (the final table
    # itself is ordered by the batch fit, arena.strength)
    assert [b for b, *_ in live] == [x["bot"] for x in sorted(rows, key=tables.row_order)]
    assert {b: (n, w) for b, _, _, n, w in live} == {x["bot"]: (x["matches"], x["wins"]) for x in rows}
    assert live[0][1] == pytest.approx(1000)
