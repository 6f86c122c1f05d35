"""play_batch: one process per seat across matches, logs, fresh processes, generator close,
real Agram matches between the random and greedy bots."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import time

import psutil
import pytest

from arena.batch import match_file_name, play_batch
from arena.specs import Limits
from engine import registry
from tests.arena.conftest import GREEDY, RANDOM, bot, spec, zoo
from tests.arena.test_zoo import leftovers


def bots_of(*specs):
    return {b.name: b for b in specs}


def test_live_process_serves_the_batch(tmp_path):
    info = zoo("info", "misbehave.py", "info")
    specs = [spec(["info", "random"], deal=d) for d in range(5)]
    results = list(play_batch(specs, bots_of(info, RANDOM), str(tmp_path)))
    assert [r.match_id for r in results] == [s.match_id for s in specs]
    pids = set()
    for s in specs:
        lines = (tmp_path / "logs" / (match_file_name(s.match_id) + ".jsonl")).read_text().splitlines()
        recs = [json.loads(x) for x in lines]
        assert recs and all(r["seat"] == 0 and r["bot"] == "info" for r in recs)
        pids |= {r["info"]["pid"] for r in recs}
    assert len(pids) == 1  # one live process for the whole batch
    assert not leftovers()


def test_fresh_process_per_match(tmp_path):
    info = zoo("info", "misbehave.py", "info", fresh_process=True)
    specs = [spec(["info", "random"], deal=d) for d in range(3)]
    list(play_batch(specs, bots_of(info, RANDOM), str(tmp_path)))
    pids = set()
    for s in specs:
        for line in (tmp_path / "logs" / (match_file_name(s.match_id) + ".jsonl")).read_text().splitlines():
            pids.add(json.loads(line)["info"]["pid"])
    assert len(pids) == 3


def test_process_restarted_after_a_fault(tmp_path):
    crash = zoo("crash", "misbehave.py", "crash_mid")
    specs = [spec(["crash", "random"], deal=d) for d in range(3)]
    results = list(play_batch(specs, bots_of(crash, RANDOM), str(tmp_path)))
    assert [r.status for r in results] == ["forfeit"] * 3
    for s in specs:
        text = (tmp_path / "logs" / "crash" / (match_file_name(s.match_id) + ".stderr")).read_text()
        assert "about to crash" in text


def test_closing_the_generator_ends_every_process():
    specs = [spec(["random", "greedy"], deal=d) for d in range(50)]
    gen = play_batch(specs, bots_of(RANDOM, GREEDY), None)
    next(gen)
    assert leftovers()
    gen.close()
    assert not leftovers()


def test_mixed_seats_are_refused():
    with pytest.raises(ValueError, match="one lineup and rotation"):
        list(play_batch([spec(["random", "greedy"]), spec(["greedy", "random"])], bots_of(RANDOM, GREEDY), None))


def test_stderr_logs_are_capped(tmp_path):
    noisy = zoo("noisy", "misbehave.py", "stderr_mb")
    specs = [spec(["noisy", "random"], deal=0)]
    (r,) = play_batch(specs, bots_of(noisy, RANDOM), str(tmp_path))
    assert r.status == "ok"
    p = tmp_path / "logs" / "noisy" / (match_file_name(specs[0].match_id) + ".stderr")
    assert p.stat().st_size < 64 * 1024 and "bytes omitted" in p.read_text()


def test_sandbox_and_network_options(tmp_path):
    import shutil
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    env = zoo("env", "misbehave.py", "env")
    for limits in (Limits(sandbox="bwrap", network="deny"), Limits(network="deny")):
        specs = [spec(["env", "random"], deal=0, limits=limits)]
        (r,) = play_batch(specs, bots_of(env, RANDOM), None)
        if r.status != "ok" and "unshare" in r.faults[0].stderr_tail:
            pytest.skip(f"namespaces unavailable: {r.faults[0].stderr_tail[-200:]}")
        assert r.status == "ok", r.faults
    assert not leftovers()


@pytest.mark.skipif("agram" not in registry.GAMES, reason="agram not registered")
def test_real_agram_random_vs_greedy(tmp_path):
    try:
        registry.get_game("agram")
    except ImportError:
        pytest.skip("agram not written yet")
    rb2 = bot("random-b", "python", "bots/random_bot.py")
    specs = [spec(["random", "greedy", "random-b"], deal=d, game="agram") for d in range(30)]
    t = time.perf_counter()
    results = list(play_batch(specs, bots_of(RANDOM, GREEDY, rb2), str(tmp_path)))
    elapsed = time.perf_counter() - t
    assert all(r.status == "ok" and not r.faults for r in results), [r.faults for r in results if r.faults]
    assert all(v.startswith(("random/", "greedy/")) for r in results for v in r.bot_versions)
    game = registry.get_game("agram")
    for r, s in zip(results, specs, strict=True):
        state = game.new_match(3, s.deal_seed)
        for a in r.actions:
            state.apply_string(a)
        assert state.is_terminal() and state.outcome().to_json() == r.outcome
    assert elapsed < 30
    assert psutil.Process().num_fds() < 200


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("node"), reason="needs root and node")
def test_bot_user_runs_bots_unprivileged():
    # the arena's Python lives under /root here, so use the JS bot (node is world-readable)
    a = bot("js-a", "node", "bots/js_random_bot.js")
    b = bot("js-b", "node", "bots/js_random_bot.js")
    for limits in (Limits(bot_user="nobody"), Limits(bot_user="nobody", sandbox="bwrap", network="deny")):
        if limits.sandbox == "bwrap" and not shutil.which("bwrap"):
            continue
        specs = [spec(["js-a", "js-b"], deal=d, limits=limits) for d in range(2)]
        gen = play_batch(specs, bots_of(a, b), None)
        first = next(gen)
        assert first.status == "ok", first.faults
        from arena.process import _LEADERS
        procs = [psutil.Process(pid) for pid in _LEADERS]
        procs += [c for p in procs for c in p.children(recursive=True)]
        uids = {p.uids().real for p in procs if p.name() == "node"}
        assert uids == {pwd.getpwnam("nobody").pw_uid}
        gen.close()
    assert not leftovers()
