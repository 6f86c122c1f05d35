"""Adversarial finding 6 (docs/security.md): the organiser's tournaments file lay next to the
submissions, readable in the sandbox; its ``salt:`` gave a bot every deal. The file named by
:class:`arena.config.Tournament` is shown empty in a sandbox (``/dev/null`` bound over it).

A real match spy vs random with the limits of a real tournaments file — under ``/var/tmp``, outside
the private ``/tmp``, and under ``/tmp`` with the spy working in the file's folder (bound back into
the private ``/tmp``: the file is nulled after that bind, adversarial finding of session 11);
under ``none`` the same spy reads the salt, which shows the test sees it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace

import pytest

from arena import config
from arena.batch import play_batch
from arena.specs import BotSpec
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.security.test_leaks import CLOCK, MODES, SPY, expect, limits_for, verdict

YAML = """tournaments:
  - name: class
    game: toy
    players: 2
    deals: 1
    salt: SPY-SECRET-salt-of-the-class
    bots: [random, other]
bots:
  random: {cmd: [python, %s]}
  other: {cmd: [python, %s]}
"""


@pytest.fixture(params=["/var/tmp", "/tmp"])
def organiser(request):
    """A folder holding the tournaments file (outside /tmp, or in it), removed afterwards."""
    d = tempfile.mkdtemp(prefix="cardarena-class-", dir=request.param)
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_the_tournaments_file_and_its_salt_are_unreadable(tmp_path, organiser, mode):
    random_bot = os.path.abspath(os.path.join(RANDOM.cwd, RANDOM.cmd[1]))
    path = os.path.join(organiser, "class.yaml")
    with open(path, "w") as f:
        f.write(YAML % (random_bot, random_bot))
    (t,) = config.load(path)
    assert t.limits().hidden_files == (os.path.realpath(path),)
    lim = limits_for(mode)
    lim = replace(t.limits(), sandbox=lim.sandbox, network=lim.network)
    results = tmp_path / "results" / "class"
    results.mkdir(parents=True)
    cwd = organiser if organiser.startswith("/tmp/") else os.path.dirname(SPY)  # the file's folder
    bots = {"spy": BotSpec("spy", (sys.executable, SPY, "readhex", path.encode().hex()), cwd=cwd),
            "random": RANDOM}
    s = replace(spec(["spy", "random"], deal=0, clock=CLOCK), limits=lim)
    (r,) = play_batch([s], bots, str(results))
    assert r.status == "ok", r.faults
    log = results / "logs" / "spy"
    lines = [x for p in log.iterdir() for x in p.read_text().splitlines() if x.startswith("SPY ")]
    assert verdict(lines, "readhex") == expect(mode), lines
    if mode != "none":
        assert "read 0 bytes" in lines[0], lines  # shown empty, not missing
    assert not leftovers()
