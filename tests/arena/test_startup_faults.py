"""Bots that cannot start, end to end (real bot processes, inline run): every one of them is
blamed in every match, none is ranked above a working bot, and the console says why."""

from __future__ import annotations

import os
import textwrap

from typer.testing import CliRunner

from arena import config as cfg
from arena.cli import app
from arena.driver import run_tournament
from arena.journal import read_records
from arena.results import standings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the user trial's repro: two bots that exit at start-up next to a working one
CONFIG = """
bots:
  random: {cmd: [python, bots/random_bot.py]}
  exiter: {cmd: [python, -c, 'import sys; sys.exit(0)']}
  exiter3: {cmd: [python, tests/arena/zoo/misbehave.py, usage_error]}
tournaments:
  - name: twoexit
    game: agram
    players: 3
    bots: [random, exiter, exiter3]
    deals: 2
    salt: fixed-test-salt
    faults: {disable_on_startup: null}  # play every match: each one must blame both
"""

USAGE_ERROR = ("misbehave.py: error: argument --opponent-model: invalid choice: 'rollouts' "
               "(choose from 'tree', 'rollout')")


def test_two_bots_that_exit_at_startup_are_both_blamed_and_never_ranked_above_random(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(CONFIG))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    summary = run_tournament(t, tmp_path / "res", inline=True)
    folder = tmp_path / "res" / "twoexit"
    recs = read_records(folder)
    assert summary.played == len(recs) == 6  # 2 deals x 3 rotations
    for r in recs:
        assert r.status == "forfeit"
        seat = {b: i for i, b in enumerate(r.seats)}
        faults = {f.bot: f for f in r.faults}
        assert sorted(faults) == ["exiter", "exiter3"], r.faults
        assert [f.seat for f in r.faults] == sorted(f.seat for f in r.faults)
        assert faults["exiter"].cls == faults["exiter3"].cls == "crash"
        assert faults["exiter"].detail == "bot 'exiter' exited with code 0"
        assert faults["exiter3"].detail == "bot 'exiter3' exited with code 2"
        assert faults["exiter3"].stderr_tail.endswith(USAGE_ERROR + "\n")
        ranks = r.ranks
        assert ranks[seat["random"]] == 0 and ranks[seat["exiter"]] == ranks[seat["exiter3"]] == 1
        assert r.bot_versions[seat["random"]] == "random/1"
    st = standings(folder)
    rows = {row["bot"]: row for row in st.rows}
    assert st.rows[0]["bot"] == "random"
    assert rows["random"]["wins"] == 6 and rows["random"]["score"] == 1.0 and rows["random"]["faults"] == 0
    for b in ("exiter", "exiter3"):
        assert rows[b]["wins"] == 0 and rows[b]["score"] == 0.25 and rows[b]["faults"] == 6
        assert rows[b]["mu"] < rows["random"]["mu"]
    first = st.rel["exiter3"]["first_fault"]
    assert first["at_startup"] and first["stderr_last"] == USAGE_ERROR
    out = CliRunner().invoke(app, ["leaderboard", str(folder)])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())  # long lines wrap at the console's width
    assert text.index("Reliability") < text.index("First fault of each faulting bot:")
    assert ("exiter3: crash at start-up — bot 'exiter3' exited with code 2; stderr: " + USAGE_ERROR
            + " (first of 6 faults)") in text
    assert "exiter: crash at start-up — bot 'exiter' exited with code 0 (first of 6 faults)" in text


DISABLE = """
bots:
  random: {cmd: [python, bots/random_bot.py]}
  greedy: {cmd: [python, bots/greedy_bot.py]}
  ism-bad: {cmd: [python, tests/arena/zoo/misbehave.py, usage_error]}
tournaments:
  - name: disable
    game: agram
    players: 3
    bots: [random, greedy, ism-bad]
    deals: 6
    salt: fixed-test-salt
    execution: {batch_size: 1}
"""


def test_a_bot_that_fails_at_startup_in_its_first_matches_is_disabled_with_the_reason(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(DISABLE))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    assert t.fault_policy().disable_on_startup == 3  # the default
    warnings = []
    summary = run_tournament(t, tmp_path / "res", inline=True, warn=warnings.append)
    recs = read_records(tmp_path / "res" / "disable")
    assert summary.played == len(recs) == 18 and summary.disabled == ["ism-bad"]
    played = [r for r in recs if r.faults and r.faults[0].cls == "crash"]
    skipped = [r for r in recs if r.faults and r.faults[0].cls == "disabled"]
    assert len(played) == 3 and len(skipped) == 15  # batches of one match: nothing else was in flight
    why = ("it failed at start-up in each of its first 3 matches: crash — bot 'ism-bad' exited with code 2; "
           "stderr: " + USAGE_ERROR)
    assert warnings == [f"disable: bot 'ism-bad' disabled: {why}. Its remaining matches are recorded as "
                        "forfeits (fault 'disabled'), rated as its losses; the other seats get no credit for "
                        "them (faults.disable_on_startup: 3)"]
    assert {f.detail for r in skipped for f in r.faults} == {f"bot disabled: {why}"}
    # a resumed run keeps it disabled without trying again
    again = run_tournament(t, tmp_path / "res", inline=True)
    assert again.played == 0


def test_disable_on_startup_null_keeps_trying(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(DISABLE.replace("batch_size: 1}", "batch_size: 1}\n    faults: {disable_on_startup: null}")))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    summary = run_tournament(t, tmp_path / "res", inline=True)
    recs = read_records(tmp_path / "res" / "disable")
    assert summary.disabled == [] and all(r.faults[0].cls == "crash" for r in recs)


def test_disable_after_warns_and_a_rerun_still_reports_the_disabled_bot(tmp_path):
    # a bot that crashes mid-match (it did start, so disable_on_startup does not apply)
    text = (DISABLE.replace("ism-bad: {cmd: [python, tests/arena/zoo/misbehave.py, usage_error]}",
                            "midcrash: {cmd: [python, tests/arena/zoo/misbehave.py, crash_mid]}")
            .replace("[random, greedy, ism-bad]", "[random, greedy, midcrash]")
            .replace("batch_size: 1}", "batch_size: 1}\n    faults: {disable_after: 2}"))
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    warnings = []
    summary = run_tournament(t, tmp_path / "res", inline=True, warn=warnings.append)
    recs = read_records(tmp_path / "res" / "disable")
    crashed = [r for r in recs if any(f.cls == "crash" for f in r.faults)]
    skipped = [r for r in recs if any(f.cls == "disabled" for f in r.faults)]
    assert len(crashed) == 2 and len(skipped) == 18 - 2 and summary.disabled == ["midcrash"]
    assert warnings == ["disable: bot 'midcrash' disabled: faults in 2 matches of this tournament. Its remaining matches are "
                        "recorded as forfeits (fault 'disabled'), rated as its losses; the other seats get no credit "
                        "for them (faults.disable_after: 2)"]
    again = run_tournament(t, tmp_path / "res", inline=True, warn=warnings.append)
    assert again.played == 0 and again.disabled == ["midcrash"] and len(warnings) == 1


def test_disable_after_counts_a_partnership_bot_once_per_match(tmp_path):
    # sedma 4 players, partners: self: the bot fills both seats of its side, and both fail at start-up
    text = textwrap.dedent("""
        bots:
          random: {cmd: [python, bots/random_bot.py]}
          midcrash: {cmd: [python, tests/arena/zoo/misbehave.py, usage_error]}
        tournaments:
          - name: pairs
            game: sedma
            players: 4
            partners: self
            bots: [random, midcrash]
            deals: 4
            salt: fixed-test-salt
            execution: {batch_size: 1}
            faults: {disable_after: 2, disable_on_startup: null}
    """)
    path = tmp_path / "t.yaml"
    path.write_text(text)
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    warnings = []
    summary = run_tournament(t, tmp_path / "res", inline=True, warn=warnings.append)
    recs = read_records(tmp_path / "res" / "pairs")
    played = [r for r in recs if not any(f.cls == "disabled" for f in r.faults)]
    assert summary.disabled == ["midcrash"] and len(recs) == 8
    assert len(played) == 2  # disabled after faults in 2 matches, not after the 2 seats of the first one
    assert all(len(r.faults) == 2 for r in played)  # both seats failed in each
    assert "disabled: faults in 2 matches of this tournament" in warnings[0]
