"""Issue 15, found by the adversarial trial: a bot that closes its stdout and stays alive, and
a bot that holds memory in a ``memfd`` (resident in none of its processes).

Real bot processes (``fairness_bot.py``) through :func:`arena.match.play_match`, in the
default sandbox (``auto``), forced ``unshare`` and ``none``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import replace

import pytest

from arena.match import SeatPool, play_match
from arena.process import effective_mode
from arena.specs import BotSpec, Clock, Limits
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.conftest import require

HERE = os.path.dirname(os.path.abspath(__file__))
BOT = os.path.join(HERE, "fairness_bot.py")
MODES = ["auto", "unshare", "none"]
#: a move may take 10 s: noticing a fault "at once" means well under that
CLOCK = Clock(move_ms=10000, bank_ms=0, startup_ms=10000)


def limits_for(mode: str, **kw) -> Limits:
    """The default limits (plus ``kw``), ``unshare`` forced, or no sandbox."""
    if mode == "none":
        return Limits(sandbox="none", network="allow", **kw)
    if mode == "unshare":
        require(bool(shutil.which("unshare")), "util-linux unshare is not installed")
        lim = Limits(sandbox="unshare", **kw)
    else:
        lim = Limits(**kw)
    require(effective_mode(lim) != "none", "no sandbox can start on this machine")
    return lim


def play(mode: str, *args: str, **limits):
    """One toy match: the fairness bot in ``mode``-limits (seat 0) against the random bot."""
    me = BotSpec("fair", (sys.executable, BOT, *args), cwd=HERE)
    s = replace(spec(["fair", "random"], clock=CLOCK), limits=limits_for(mode, **limits))
    pool = SeatPool([me, RANDOM], s.limits)
    try:
        return play_match(s, pool)
    finally:
        pool.close()
        pool.hub.close()
        assert not leftovers()


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_closed_stdout_is_a_crash_at_once_not_a_timeout(mode):
    r = play(mode, "close_stdout")
    assert r.status == "forfeit"
    (f,) = r.faults
    assert (f.seat, f.cls) == (0, "crash") and "closed its stdout" in f.detail, f
    # the bot sleeps 30 s after closing stdout and a move may take 10 s: noticed within 2 s
    assert r.time_ms < 2000, r.time_ms


@pytest.mark.slow
@pytest.mark.parametrize("how", ["fd", "map"])
@pytest.mark.parametrize("mode", MODES)
def test_memory_held_in_a_memfd_counts_in_max_rss_mb(mode, how):
    extra = ("map",) if how == "map" else ()
    if how == "map" and os.geteuid() != 0:
        require(False, "map_files of other processes are readable by root only")
    r = play(mode, "memfd", "300", *extra, max_rss_mb=200)
    assert r.status == "forfeit", (r.status, r.faults)
    (f,) = r.faults
    assert (f.seat, f.cls) == (0, "crash"), f
    m = re.search(r"used (\d+) MiB resident memory \(memfd files included\); the limit is 200 MiB", f.detail)
    assert m and int(m.group(1)) > 200, f.detail
    # killed while it held the memfd (it sleeps 5 s after filling it, then would answer)
    assert r.time_ms < 5000, r.time_ms
