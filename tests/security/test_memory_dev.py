"""Issue 15, adversarial finding 4: bubblewrap's ``--dev /dev`` is an unsized writable tmpfs
(2600 MiB written, no fault). The sandbox makes ``/dev`` read-only (its ``/dev/shm`` stays the
private tmpfs of ``max_disk_mb``); with util-linux ``unshare`` every inherited mount is
read-only already.

A real bot (``memory_bot.py``) through :func:`arena.batch.play_batch` in ``auto`` (bubblewrap
here), forced ``unshare``, and ``none`` (as root: the write to the host's ``/dev`` succeeds,
which shows the test sees the leak).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.process import effective_mode
from arena.specs import BotSpec, Clock, Limits
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.conftest import require

HERE = os.path.dirname(os.path.abspath(__file__))
BOT = os.path.join(HERE, "memory_bot.py")
MODES = ["auto", "unshare", "none"]
CLOCK = Clock(move_ms=15000, bank_ms=0, startup_ms=10000)


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


def mem_run(tmp_path, mode: str, *args: str, **limits):
    """One match memory bot (seat 0) vs random: its ``MEM ...`` stderr lines and the record."""
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True, exist_ok=True)
    bots = {"mem": BotSpec("mem", (sys.executable, BOT, *args), cwd=HERE), "random": RANDOM}
    s = replace(spec(["mem", "random"], deal=0, clock=CLOCK), limits=limits_for(mode, **limits))
    (r,) = play_batch([s], bots, str(results))
    log = results / "logs" / "mem"
    text = "".join(p.read_text() for p in log.iterdir()) if log.is_dir() else ""
    assert not leftovers()
    return [x for x in text.splitlines() if x.startswith("MEM ")], r


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_writing_dev_fails_in_a_sandbox(tmp_path, mode):
    if mode == "none":
        require(os.geteuid() == 0, "only root can write the host's /dev (the leak to detect)")
    # under none it writes the host's /dev: keep that small (it removes the file after 5 s)
    lines, r = mem_run(tmp_path, mode, "devfill", "8" if mode == "none" else "300", max_rss_mb=200)
    (line,) = lines
    if mode == "none":
        assert line == "MEM LEAK devfill 8", lines
        assert not os.path.exists("/dev/cardarena-fill")
        return
    assert line == "MEM BLOCKED devfill EROFS after 0", lines
    assert r.status == "ok", r.faults
