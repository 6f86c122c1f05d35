"""Adversarial finding (session 13): ``max_rss_mb`` was checked only once a single wait for a
reply lasted :data:`arena.process.TICK_S`, so while every seat replied faster than that, nothing
was ever checked: a bot whose forked child held 830 MiB under a 100 MiB limit played three
matches without a fault. The hub's housekeeping now runs every ``TICK_S`` of its own time,
however short each wait.

A real bot (``memory_bot.py fork``) replies at once while its child fills 300 MiB under a
200 MiB limit; its opponent replies after 30 ms, every time (each wait well under 100 ms).
The old code played the match to its end (status ``ok``).
"""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.specs import BotSpec
from tests.arena.conftest import leftovers, spec
from tests.security.test_memory_dev import BOT, CLOCK, HERE, MODES, limits_for


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_memory_is_checked_while_every_reply_is_fast(tmp_path, mode):
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True)
    bots = {"mem": BotSpec("mem", (sys.executable, BOT, "fork", "300"), cwd=HERE),
            "pace": BotSpec("pace", (sys.executable, BOT, "slow", "30"), cwd=HERE)}
    s = replace(spec(["mem", "pace"], deal=0, clock=CLOCK, game="whiskey_poker", options={"hands_per_match": 8}),
                limits=limits_for(mode, max_rss_mb=200))
    (r,) = play_batch([s], bots, str(results))
    assert not leftovers()
    log = results / "logs" / "mem"
    text = "".join(p.read_text() for p in log.iterdir()) if log.is_dir() else ""
    assert r.status == "forfeit", (r.status, r.faults, text[-500:])
    (f,) = r.faults
    assert (f.seat, f.bot, f.cls) == (0, "mem", "crash"), f
    assert "resident memory" in f.detail and "the limit is 200 MiB" in f.detail, f.detail
