"""Shared fixtures of the arena tests: the toy game, bot specs, match specs, and the
clean-up of bot processes after every test (even a failing one)."""

from __future__ import annotations

import os
import sys
import time

import psutil
import pytest

from arena import process
from arena.specs import BotSpec, Clock, FaultPolicy, Limits, MatchSpec
from engine import registry
from engine.seeds import bot_seed, deal_seed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ZOO = os.path.join(ROOT, "tests", "arena", "zoo")


@pytest.fixture(autouse=True, scope="session")
def toy_game():
    """Register the toy game for the whole session."""
    registry.GAMES["toy"] = "tests.arena.toy_game:Toy"
    yield
    registry.GAMES.pop("toy", None)
    registry._cache.pop("toy", None)


#: wall-clock start of the running test (set by :func:`bot_cleanup`).
_TEST_START = [0.0]


@pytest.fixture(autouse=True)
def bot_cleanup():
    """Every arena test: at teardown, whether the test passed or failed, kill and reap the
    bot processes it left running (e.g. in an unclosed batch generator) and their orphans,
    so that one failure cannot leave processes or zombies that fail later tests."""
    _TEST_START[0] = time.time()
    yield
    process.kill_all()


def _started_by_this_test(p: psutil.Process) -> bool:
    # create_time has a resolution of one clock tick (10 ms)
    return p.create_time() >= _TEST_START[0] - 0.02


def zombies() -> list[int]:
    """Zombie children of this process started by the running test (zombies left by Ray or
    by earlier tests are not this test's business)."""
    out = []
    for c in psutil.Process().children():
        try:
            if c.status() == psutil.STATUS_ZOMBIE and _started_by_this_test(c):
                out.append(c.pid)
        except psutil.NoSuchProcess:
            pass
    return out


def leftovers() -> list[int]:
    """Pids of live processes descending from this one whose HOME lies in a bot working
    directory (escaped grandchildren included: the arena is their subreaper)."""
    out = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE and process.is_bot_home(p.environ().get("HOME", "")):
                out.append(p.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return out


def bot(name: str, *cmd: str, **kw) -> BotSpec:
    """A BotSpec run from the project root."""
    return BotSpec(name=name, cmd=tuple(cmd), cwd=ROOT, **kw)


def zoo(name: str, script: str, *args: str, **kw) -> BotSpec:
    """A misbehaving bot of the zoo (``tests/arena/zoo/<script>``)."""
    return bot(name, sys.executable, os.path.join(ZOO, script), *args, **kw)


RANDOM = bot("random", "python", "bots/random_bot.py")
GREEDY = bot("greedy", "python", "bots/greedy_bot.py")


def spec(seats, deal=0, rotation=0, game="toy", players=None, options=None,
         clock=None, policy="forfeit", limits=None, wall_s=60.0, max_restarts=2,
         tournament="t", salt="salt") -> MatchSpec:
    """A MatchSpec with seeds from ``salt``."""
    seats = tuple(seats)
    n = players or len(seats)
    lineup = tuple(sorted(set(seats)))
    mid = f"{tournament}/{'+'.join(lineup)}/d{deal:05d}/r{rotation:02d}"
    return MatchSpec(
        match_id=mid, tournament=tournament, token=f"tok{deal}-{rotation}", game=game,
        options=dict(options or {}), players=n, deal_index=deal,
        deal_seed=deal_seed(salt, game, deal), rotation=rotation, lineup=lineup, seats=seats,
        teams=tuple((i,) for i in range(n)), bot_seeds=tuple(bot_seed(salt, mid, i) for i in range(n)),
        fingerprint="fp", clock=clock or Clock(move_ms=2000, bank_ms=2000, startup_ms=5000),
        faults=FaultPolicy(policy=policy, max_restarts_per_match=max_restarts),
        limits=limits or Limits(), wall_s=wall_s)
