"""arena doctor on good and bad bots, and the JavaScript example bot."""

from __future__ import annotations

import shutil
import sys

import pytest

from arena.doctor import doctor
from arena.specs import Clock
from tests.arena.conftest import ROOT, ZOO
from tests.conftest import require

FAST = Clock(move_ms=500, bank_ms=0, startup_ms=3000)


def test_python_random_bot_passes():
    rep = doctor("toy", ["python", "bots/random_bot.py"], matches=2, cwd=ROOT)
    assert rep.passed, rep.text()
    assert {c.name for c in rep.checks} >= {"handshake", "matches", "timing", "exit on EOF"}
    assert rep.move_ms and "PASS" in rep.text()


def test_js_bot_passes_doctor():
    require(bool(shutil.which("node")), "node is not installed")
    rep = doctor("toy", ["node", "bots/js_random_bot.js"], matches=2, cwd=ROOT)
    assert rep.passed, rep.text()
    assert all(c.status == "pass" for c in rep.checks), rep.text()


@pytest.mark.parametrize("mode,check,cls", [("illegal", "matches", "illegal"),
                                            ("no_ready", "handshake", "stall"),
                                            ("garbage", "matches", "protocol")])
def test_bad_bots_fail_with_a_reason(mode, check, cls):
    rep = doctor("toy", [sys.executable, f"{ZOO}/misbehave.py", mode], matches=2, clock=FAST)
    assert not rep.passed
    failed = [c for c in rep.checks if c.status == "fail"]
    assert failed[0].name == check and cls in failed[0].message, rep.text()


def test_exit_code_on_eof_is_a_warning():
    rep = doctor("toy", [sys.executable, f"{ZOO}/misbehave.py", "exit_code_on_eof"], matches=1, clock=FAST)
    assert rep.passed
    assert [c.status for c in rep.checks if c.name == "exit on EOF"] == ["warn"]


def test_render_is_rich():
    from rich.console import Console
    rep = doctor("toy", ["python", "bots/random_bot.py"], matches=1, cwd=ROOT)
    console = Console(record=True, width=120)
    console.print(rep.render())
    assert "arena doctor" in console.export_text()


@pytest.mark.parametrize("cmd,path", [(["./does_not_exist.sh"], "does_not_exist.sh"),
                                      (["python", "no_such_bot.py"], "no_such_bot.py")])
def test_missing_command_or_script_is_named(cmd, path):
    rep = doctor("toy", cmd, matches=1, cwd=ROOT, clock=FAST)
    assert not rep.passed
    assert [c.name for c in rep.checks] == ["command"]
    assert f"{ROOT}/{path}" in rep.checks[0].message and ROOT in rep.checks[0].message, rep.text()


def test_doctor_checks_the_sandbox():
    require(bool(shutil.which("bwrap")), "bubblewrap is not installed")
    from arena.specs import Limits

    rep = doctor("toy", ["python", "bots/random_bot.py"], matches=1, cwd=ROOT,
                 limits=Limits(sandbox="bwrap"))
    sandbox = [c for c in rep.checks if c.name == "sandbox"]
    assert sandbox, rep.text()
    if sandbox[0].status == "fail":
        assert "cannot start" in sandbox[0].message
    else:
        assert rep.passed, rep.text()


ARGPARSE_BOT = """
import argparse
p = argparse.ArgumentParser(prog="ismcts_bot.py")
for name in ("iterations", "time-ms", "exploration", "determinizations", "rollout-depth", "seed"):
    p.add_argument("--" + name, metavar="N")
p.add_argument("--mode", choices=["so", "mo"])
p.add_argument("--opponent-model", choices=["tree", "rollout"])
p.parse_args(["--opponent-model", "rollouts"])
"""


def test_a_bot_that_fails_at_startup_is_quoted_on_whole_lines(tmp_path):
    import subprocess

    script = tmp_path / "ismcts_bot.py"
    script.write_text(ARGPARSE_BOT)
    stderr = subprocess.run([sys.executable, str(script)], capture_output=True, text=True).stderr
    lines = stderr.splitlines()
    assert len(stderr) > 300 and len(lines) > 3  # argparse wraps its usage over several lines
    rep = doctor("toy", [sys.executable, str(script)], matches=1, clock=FAST)
    (hs,) = [c for c in rep.checks if c.name == "handshake"]
    assert hs.status == "fail" and "crash: bot 'ismcts_bot' exited with code 2 | stderr: " in hs.message
    quoted = hs.message.split(" | stderr: ", 1)[1].split(" -- the bot must answer", 1)[0]
    assert quoted.endswith("error: argument --opponent-model: invalid choice: 'rollouts' "
                           "(choose from 'tree', 'rollout')")
    assert len(quoted) <= 300
    assert quoted.splitlines() == lines[-len(quoted.splitlines()):]  # whole lines, none cut


def test_a_timeout_fails_the_timing_check_too():
    """New-user trial (session 8): "matches FAIL … did not answer within …" next to "timing PASS"
    (the timing row counted only the answered decisions)."""
    rep = doctor("toy", [sys.executable, f"{ZOO}/misbehave.py", "late_at_second", "1.5"], matches=3, clock=FAST)
    timing = [c for c in rep.checks if c.name == "timing"]
    matches = [c for c in rep.checks if c.name == "matches"]
    assert matches and matches[0].status == "fail" and "timeout" in matches[0].message, rep.text()
    assert timing and timing[0].status == "fail" and "not answered in time" in timing[0].message, rep.text()


def test_a_bot_living_on_its_bank_fails_the_timing_check():
    """New-user trial (session 13): a bot answering in 0.3 s under move_ms 100 passed ("ready for a
    tournament") because the bank paid for every decision of the doctor's short matches."""
    bank = Clock(move_ms=100, bank_ms=60000, startup_ms=3000)
    rep = doctor("toy", [sys.executable, f"{ZOO}/misbehave.py", "slow", "0.3"], matches=2, clock=bank)
    (matches,) = [c for c in rep.checks if c.name == "matches"]
    (timing,) = [c for c in rep.checks if c.name == "timing"]
    assert matches.status == "pass", rep.text()  # the bank covered them: no timeout
    assert timing.status == "fail" and "paid from the bank (bank_ms 60000)" in timing.message, rep.text()
    assert not rep.passed
    quick = doctor("toy", [sys.executable, f"{ZOO}/misbehave.py", "slow", "0.01"], matches=2, clock=bank)
    assert [c.status for c in quick.checks if c.name == "timing"] in (["pass"], ["warn"]), quick.text()


def test_a_missing_script_without_a_config_names_the_folder_doctor_runs_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rep = doctor("toy", ["python", "nothere.py"], matches=1, cwd=str(tmp_path))
    (cmd,) = [c for c in rep.checks if c.name == "command"]
    assert cmd.status == "fail" and cmd.message.endswith("give the path relative to the folder doctor runs in, or absolute")


def test_a_missing_script_of_a_config_run_from_its_folder_says_paths_follow_the_file(tmp_path, monkeypatch):
    """New-user trial: `arena doctor --config nocmd.yaml` from the file's own folder said "relative
    to the folder doctor runs in" (true only by chance there)."""
    monkeypatch.chdir(tmp_path)
    rep = doctor("toy", ["python", "nothere.py"], matches=1, cwd=str(tmp_path), from_config=True)
    (cmd,) = [c for c in rep.checks if c.name == "command"]
    assert cmd.status == "fail" and cmd.message.endswith("in a config file, paths resolve against the file's folder")
