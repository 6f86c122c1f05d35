"""Adversarial finding 10 (docs/security.md): in bubblewrap, ``/proc/1/cmdline`` was bwrap's
whole argv, naming every covered and hidden path (other bots' program folders — a student's
name — and the results root). bwrap now reads its options from a pipe (``--args 3``).

A real match: the spy reads every ``/proc/*/cmdline`` it can see (``/proc/1`` included) and
looks for the hidden results root and the other bot's program folder (hex: not in its own argv).
Under ``none`` the arena's own command line shows the text, which shows the test sees it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.specs import BotSpec
from tests.arena.conftest import ROOT, leftovers, spec
from tests.security.test_leaks import CLOCK, MODES, SPY, expect, limits_for, verdict

VICTIM = """import runpy
runpy.run_path({random!r}, run_name="__main__")
"""


@pytest.fixture
def outside():
    """A folder outside /tmp, removed afterwards."""
    d = tempfile.mkdtemp(prefix="cardarena-student-", dir="/var/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# the results root is named by no command line unsandboxed either (the other bot's folder shows
# the scan can find a path: unsandboxed, the victim's own argv names its script)
CASES = [(m, "other_bot") for m in MODES] + [(m, "results_root") for m in MODES if m != "none"]


@pytest.mark.parametrize(("mode", "what"), CASES)
def test_no_command_line_names_a_hidden_path(outside, mode, what):
    victim_dir = os.path.join(outside, "alice-smith")  # a student's name
    os.makedirs(victim_dir)
    with open(os.path.join(victim_dir, "victim_bot.py"), "w") as f:
        f.write(VICTIM.format(random=os.path.join(ROOT, "bots", "random_bot.py")))
    results = os.path.join(outside, "results-root", "t")
    os.makedirs(results)
    target = victim_dir if what == "other_bot" else os.path.dirname(results)
    bots = {"spy": BotSpec("spy", (sys.executable, SPY, "cmdline", target.encode().hex()),
                           cwd=os.path.dirname(SPY)),
            "victim": BotSpec("victim", (sys.executable, "victim_bot.py"), cwd=victim_dir)}
    s = replace(spec(["spy", "victim"], deal=0, clock=CLOCK), limits=limits_for(mode))
    (r,) = play_batch([s], bots, results)
    assert r.status == "ok", r.faults
    log = os.path.join(results, "logs", "spy")
    lines = [x for p in os.listdir(log) for x in open(os.path.join(log, p)).read().splitlines()
             if x.startswith("SPY ")]
    assert verdict(lines, "cmdline") == expect(mode), lines
    assert not leftovers()
