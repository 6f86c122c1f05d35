"""Adversarial finding 5 (docs/security.md): with results outside ``/tmp`` the results root and
the results folder inside it are both hidden; under ``unshare`` the folder's mount point lay in
the root's empty mode-0 tmpfs, every bot died at start-up and the match was recorded as a crash
of both seats. Real matches under every kind, results under ``/var/tmp``; the pre-flight probe
must use the real view (the same hidden folders) and report a set-up failure before any match.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.process.preflight import BotSetupError, clear_caches, preflight
from arena.process.sandbox_view import hide_from_sandbox, hide_results_root
from arena.specs import BotSpec
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.security.test_leaks import CLOCK, MODES, SPY, expect, limits_for, verdict


@pytest.fixture
def outside():
    """A results root outside /tmp (the sandbox's /tmp is private anyway), removed afterwards."""
    d = tempfile.mkdtemp(prefix="cardarena-results-", dir="/var/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_a_match_with_results_outside_tmp_is_played_and_hides_them(outside, mode):
    results = os.path.join(outside, "t")
    os.makedirs(results)
    secret = os.path.join(results, "secret.json")
    with open(secret, "w") as f:
        f.write('{"salt": "SPY-SECRET"}\n')
    bots = {"spy": BotSpec("spy", (sys.executable, SPY, "readhex", secret.encode().hex()),
                           cwd=os.path.dirname(SPY)), "random": RANDOM}
    s = replace(spec(["spy", "random"], deal=0, clock=CLOCK), limits=limits_for(mode))
    (r,) = play_batch([s], bots, results)
    assert r.status == "ok", r.faults  # both bots started (finding 5: both crashed at start-up)
    log = os.path.join(results, "logs", "spy")
    text = "".join(open(os.path.join(log, p)).read() for p in os.listdir(log))
    lines = [x for x in text.splitlines() if x.startswith("SPY ")]
    assert verdict(lines, "readhex") == expect(mode), lines
    assert not leftovers()


@pytest.mark.parametrize("mode", ["auto", "unshare"])
def test_a_sandbox_set_up_failure_is_a_setup_error_naming_the_bot_not_a_result(outside, mode, monkeypatch, request):
    # the view made to fail for real: a "hidden folder" that is a file (an empty tmpfs cannot be
    # mounted on it), so the wrapper's own mounts fail before the bot's program starts
    from arena.process import sandbox_view

    results = os.path.join(outside, "t")
    os.makedirs(results)
    bad = os.path.join(tempfile.mkdtemp(prefix="cardarena-bad-", dir="/var/tmp"), "not-a-folder")
    open(bad, "w").close()
    request.addfinalizer(lambda: shutil.rmtree(os.path.dirname(bad), ignore_errors=True))
    real = sandbox_view.hidden_paths
    monkeypatch.setattr(sandbox_view, "hidden_paths", lambda: [*real(), bad])
    clear_caches()
    s = replace(spec(["random", "random"], deal=0, clock=CLOCK), limits=limits_for(mode))
    with pytest.raises(BotSetupError) as e:
        list(play_batch([s], {"random": RANDOM}, results))
    assert "bot 'random'" in str(e.value) and "not-a-folder" in str(e.value), e.value
    assert not os.path.exists(os.path.join(results, "matches.jsonl"))  # no match recorded
    assert not leftovers()
    clear_caches()


@pytest.mark.parametrize("mode", ["auto", "unshare"])
def test_preflight_probes_the_view_of_the_moment(outside, mode):
    # finding 5: the driver's pre-flight ran before the results were hidden and its success was
    # cached; the batch's pre-flight must probe again with the results root and folder hidden
    clear_caches()
    lim = limits_for(mode)
    preflight([RANDOM], lim)
    results = os.path.join(outside, "t")
    os.makedirs(results)
    hide_from_sandbox(results)
    hide_results_root(outside)
    preflight([RANDOM], lim)  # the real view (results root and folder hidden) starts
