"""Bots whose folders are reached through symbolic links (a new user's trial, 2026-12-01: a
``bots -> /elsewhere/bots`` link made bubblewrap fail with "Can't mount tmpfs on ...: No such
file or directory" and unshare with "mount point does not exist": every bot disabled at
start-up). The sandbox hides and binds folders by their real paths: both bots run, and the
spy still cannot read the victim's source through the link (it can under ``none``).
"""

from __future__ import annotations

import os

import pytest

from tests.security.test_leaks import MODES, expect, verdict
from tests.security.test_sandbox_folders import outside, play, spy_bot, victim_bot  # noqa: F401


@pytest.mark.parametrize("linked", ["victim", "spy"])
@pytest.mark.parametrize("mode", MODES)
def test_bots_in_linked_folders_run_and_stay_apart(tmp_path, outside, mode, linked):  # noqa: F811
    real = {b: os.path.join(outside, "real", b) for b in ("victim", "spy")}
    os.makedirs(os.path.join(outside, "links"))
    via = dict(real)
    via[linked] = os.path.join(outside, "links", linked)
    victim = victim_bot(real["victim"])
    spy = spy_bot(real["spy"], "readhex", os.path.join(via["victim"], "victim_bot.py").encode().hex())
    os.symlink(real[linked], via[linked])
    bots = {"victim": victim, "spy": spy}
    bots[linked] = type(bots[linked])(bots[linked].name, bots[linked].cmd, cwd=via[linked])
    lines, r = play(tmp_path, mode, bots)
    assert r.status == "ok", r.faults  # before: the linked bot could not start in a sandbox
    assert verdict(lines, "readhex") == expect(mode), lines
