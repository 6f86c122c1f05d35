"""Issue 15: ``kill -9`` of the arena mid-batch leaves no bot process behind — in a sandbox
not even a double-forked daemon with a cleared environment (the sandbox dies with its parent);
under ``sandbox: none`` that daemon survives (which shows the test can see it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import psutil
import pytest

from tests.arena.conftest import ROOT
from tests.security.test_leaks import MODES, limits_for

ARENA = textwrap.dedent("""
    import sys
    from dataclasses import replace
    sys.path.insert(0, {root!r})
    from arena.batch import play_batch
    from arena.specs import BotSpec
    from engine import registry
    from tests.arena.conftest import RANDOM, spec
    from tests.security.test_leaks import CLOCK, SPY, HERE, limits_for

    registry.GAMES["toy"] = "tests.arena.toy_game:Toy"
    bots = {{"spy": BotSpec("spy", (sys.executable, SPY, "daemon", {marker!r}), cwd=HERE), "random": RANDOM}}
    specs = [replace(spec(["spy", "random"], deal=d, clock=CLOCK), limits=limits_for({mode!r}))
             for d in range(5000)]
    for r in play_batch(specs, bots, None):
        pass
""")


def marked(marker: str) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if marker in (p.info["cmdline"] or []) and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.mark.parametrize("mode", MODES)
def test_kill_9_of_the_arena_leaves_no_bot_process(mode):
    limits_for(mode)  # skips (or fails under CI) where the sandbox cannot start
    marker = f"spy-death-{uuid.uuid4().hex}"
    arena = subprocess.Popen([sys.executable, "-c", ARENA.format(root=ROOT, marker=marker, mode=mode)],
                             cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and arena.poll() is None:
            # the spy (its argv holds the marker) and its daemon: both running
            if len(marked(marker)) >= 2:
                break
            time.sleep(0.1)
        assert arena.poll() is None, arena.stderr.read().decode()[-2000:] if arena.stderr else ""
        assert len(marked(marker)) >= 2
        os.kill(arena.pid, signal.SIGKILL)
        arena.wait(10)
        deadline = time.time() + 5
        while marked(marker) and time.time() < deadline:
            time.sleep(0.05)
        left = marked(marker)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
    lines = [" ".join(p.info["cmdline"] or []) for p in left]  # read before the kill (a zombie has none)
    for p in left:
        p.kill()
    if mode == "none":
        assert left, "unsandboxed, the double-forked daemon should have survived"
        assert all("time.sleep(600)" in c for c in lines), lines
    else:
        assert not left, [(p.pid, c) for p, c in zip(left, lines, strict=True)]
