"""play_batch: one process per seat across matches, logs, fresh processes, generator close,
real Agram matches between the random and greedy bots."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

import psutil
import pytest

from arena.batch import match_file_name, play_batch
from arena.process import BotSetupError
from arena.specs import BotSpec, Limits
from engine import registry
from tests.arena.conftest import GREEDY, RANDOM, ROOT, ZOO, bot, leftovers, spec, zoo
from tests.conftest import require


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


@pytest.mark.parametrize("fresh", [False, True])
@pytest.mark.parametrize("script", [("misbehave.py", "end_log", "0.05"), ("sdk_end_logger.py",)])
def test_a_line_logged_after_the_end_goes_to_its_own_match(tmp_path, fresh, script):
    """stderr written after ``end`` (an ``on_end`` log, 50 ms late) and before the bot's
    end-of-match mark belongs to the match that ended, what it writes at the next ``start`` to
    the next, and the last match's is not lost (new-user trial, 2026-12-04: 7 of 8 END lines,
    two of them in another match's file)."""
    logger = zoo("logger", *script, fresh_process=fresh)
    specs = [spec(["logger", "random"], deal=d) for d in range(5)]
    results = list(play_batch(specs, bots_of(logger, RANDOM), str(tmp_path)))
    assert all(r.status == "ok" for r in results), [r.faults for r in results]
    for s in specs:
        text = (tmp_path / "logs" / "logger" / (match_file_name(s.match_id) + ".stderr")).read_text()
        assert "\x1e" not in text and "end of match" not in text  # the mark is not logged
        words = list(zip(text.split()[::2], text.split()[1::2]))
        assert {t for _, t in words} == {s.token}, (s.match_id, words)  # only this match's lines
        kinds = [k for k, _ in words]
        assert kinds[0] == "START" and kinds[-1] == "END" and kinds.count("END") == 1, kinds


def test_the_sdk_writes_the_arenas_mark():
    from arena.protocol import END_OF_MATCH_MARK
    from bots import sdk

    assert sdk.END_OF_MATCH_MARK == END_OF_MATCH_MARK


def test_without_the_mark_late_lines_go_to_the_next_match_and_the_last_is_kept(tmp_path):
    logger = zoo("logger", "misbehave.py", "end_log_unmarked", "0.05")
    specs = [spec(["logger", "random"], deal=d) for d in range(3)]
    list(play_batch(specs, bots_of(logger, RANDOM), str(tmp_path)))
    texts = [(tmp_path / "logs" / "logger" / (match_file_name(s.match_id) + ".stderr")).read_text() for s in specs]
    for k, s in enumerate(specs[:-1]):  # in the match it was read in: its own, or (usually) the next
        assert f"END {s.token}" in texts[k] + texts[k + 1], k
    assert f"END {specs[-1].token}" in texts[-1]  # written as the batch closed: kept, in the last one
    assert sum(t.count("END ") for t in texts) == len(specs)


def test_stderr_logs_are_capped(tmp_path):
    noisy = zoo("noisy", "misbehave.py", "stderr_mb")
    specs = [spec(["noisy", "random"], deal=0)]
    (r,) = play_batch(specs, bots_of(noisy, RANDOM), str(tmp_path))
    assert r.status == "ok"
    p = tmp_path / "logs" / "noisy" / (match_file_name(specs[0].match_id) + ".stderr")
    assert p.stat().st_size < 64 * 1024 and "bytes omitted" in p.read_text()


def test_sandbox_and_network_options(tmp_path):
    import shutil
    require(bool(shutil.which("bwrap")), "bubblewrap is not installed")
    env = zoo("env", "misbehave.py", "env")
    for limits in (Limits(sandbox="bwrap", network="deny"), Limits(network="deny")):
        specs = [spec(["env", "random"], deal=0, limits=limits)]
        try:
            (r,) = play_batch(specs, bots_of(env, RANDOM), None)
        except BotSetupError as e:
            require(False, f"namespaces unavailable: {e}")
        assert r.status == "ok", r.faults
    assert not leftovers()


def test_real_agram_random_vs_greedy(tmp_path):
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


@pytest.fixture
def readable_js_bot():
    """The JS bot copied to a world-readable temporary folder: the project itself may sit in a
    mode-700 folder (a clone in ``mktemp -d``) that ``nobody`` cannot enter."""
    d = tempfile.mkdtemp(prefix="cardarena-test-js-")
    os.chmod(d, 0o755)
    shutil.copy(os.path.join(ROOT, "bots", "js_random_bot.js"), d)
    os.chmod(os.path.join(d, "js_random_bot.js"), 0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _nobody_can_run(path: str) -> bool:
    r = subprocess.run(["setpriv", f"--reuid={pwd.getpwnam('nobody').pw_uid}", "--clear-groups",
                        f"--regid={pwd.getpwnam('nobody').pw_gid}", "--", "test", "-x", path])
    return r.returncode == 0


def test_bot_user_runs_bots_unprivileged(readable_js_bot):
    require(os.geteuid() == 0 and bool(shutil.which("node")), "needs root and node")
    # the arena's Python may live under /root, so use the JS bot (node is world-readable)
    node = shutil.which("node")
    require(_nobody_can_run(node), f"the interpreter {node} is not accessible to user 'nobody'")
    a = BotSpec("js-a", ("node", "js_random_bot.js"), cwd=readable_js_bot)
    b = BotSpec("js-b", ("node", "js_random_bot.js"), cwd=readable_js_bot)
    for limits in (Limits(bot_user="nobody"), Limits(bot_user="nobody", sandbox="bwrap", network="deny")):
        if limits.sandbox == "bwrap" and not shutil.which("bwrap"):
            continue
        specs = [spec(["js-a", "js-b"], deal=d, limits=limits) for d in range(2)]
        gen = play_batch(specs, bots_of(a, b), None)
        first = next(gen)
        assert first.status == "ok", first.faults
        from arena.process import live_leaders
        procs = [psutil.Process(pid) for pid in live_leaders()]
        procs += [c for p in procs for c in p.children(recursive=True)]
        uids = {p.uids().real for p in procs if p.name() == "node"}
        assert uids == {pwd.getpwnam("nobody").pw_uid}
        gen.close()
    assert not leftovers()


def test_bot_user_that_cannot_read_the_bot_is_named(tmp_path, readable_js_bot):
    require(os.geteuid() == 0 and bool(shutil.which("node")), "needs root and node")
    # a bot in a mode-700 folder (like `mktemp -d`): a clear error before any match, not a crash
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    shutil.copy(os.path.join(readable_js_bot, "js_random_bot.js"), private)
    hidden = BotSpec("hidden", ("node", "js_random_bot.js"), cwd=str(private))
    ok = BotSpec("js-b", ("node", "js_random_bot.js"), cwd=readable_js_bot)
    specs = [spec(["hidden", "js-b"], deal=0, limits=Limits(bot_user="nobody"))]
    with pytest.raises(BotSetupError) as e:
        list(play_batch(specs, bots_of(hidden, ok), None))
    msg = str(e.value)
    assert "'hidden'" in msg and "'nobody'" in msg and str(private / "js_random_bot.js") in msg, msg
    assert "js-b" not in msg
    assert not leftovers()


def _play_in_ray(root, specs, bots):
    import sys

    from arena.batch import play_batch
    from engine import registry

    if root not in sys.path:
        sys.path.insert(0, root)
    registry.GAMES["toy"] = "tests.arena.toy_game:Toy"
    return [r.faults[0].detail if r.faults else "" for r in play_batch(specs, bots, None)]


@pytest.mark.ray
def test_exit_codes_and_signals_survive_under_ray(ray_session):
    # a Ray worker ignores SIGCHLD: without care every crash reads "exited with code 0"
    remote = ray_session.remote(num_cpus=1, max_retries=0)(_play_in_ray)
    bots = {"code3": zoo("code3", "misbehave.py", "crash_mid", "3"),
            "segv": zoo("segv", "misbehave.py", "segv_mid"), "random": RANDOM}
    jobs = {name: remote.remote(ROOT, [spec([name, "random"], deal=d) for d in range(2)], bots)
            for name in ("code3", "segv")}
    details = {name: ray_session.get(ref, timeout=120) for name, ref in jobs.items()}
    assert all("exited with code 3" in d for d in details["code3"]), details
    assert all("killed by SIGSEGV" in d for d in details["segv"]), details


def test_sigchld_disposition_restored_after_a_batch():
    from arena.process import sigchld_ignored

    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        gen = play_batch([spec(["code3", "random"], deal=d) for d in range(2)],
                         bots_of(zoo("code3", "misbehave.py", "crash_mid", "3"), RANDOM), None)
        first = next(gen)
        assert "exited with code 3" in first.faults[0].detail
        assert not sigchld_ignored()
        gen.close()
        assert sigchld_ignored()
    finally:
        signal.signal(signal.SIGCHLD, old)


def test_sandbox_runs_a_bot_that_lives_under_tmp(tmp_path):
    require(bool(shutil.which("bwrap")), "bubblewrap is not installed")
    # the sandbox's private /tmp must not hide the bot, its project or the interpreter
    shutil.copy(os.path.join(ZOO, "misbehave.py"), tmp_path)
    env = BotSpec("env", ("python", "misbehave.py", "env"), cwd=str(tmp_path))
    (r,) = play_batch([spec(["env", "random"], deal=0, limits=Limits(sandbox="bwrap"))],
                      bots_of(env, RANDOM), None)
    if r.status != "ok":
        require("namespace" not in r.faults[0].stderr_tail,
                f"namespaces unavailable: {r.faults[0].stderr_tail[-200:]}")
    assert r.status == "ok", r.faults


def test_sandbox_that_cannot_start_is_reported_not_counted(tmp_path, monkeypatch):
    # a bwrap that fails as it does without user namespaces
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    # (the sandbox check's cache is keyed by the bwrap found on PATH: this fake one is checked)
    specs = [spec(["env", "random"], deal=0, limits=Limits(sandbox="bwrap"))]
    with pytest.raises(BotSetupError, match="sandbox cannot start.*No permissions to create new namespace"):
        list(play_batch(specs, bots_of(zoo("env", "misbehave.py", "env"), RANDOM), None))
    assert not leftovers()


def test_missing_command_is_a_setup_error_not_crashes():
    missing = bot("missing", "./does_not_exist.sh")
    with pytest.raises(BotSetupError, match="does_not_exist.sh"):
        list(play_batch([spec(["missing", "random"], deal=0)], bots_of(missing, RANDOM), None))


def test_batch_leaves_no_directory_behind():
    from arena import process

    specs = [spec(["crash", "random"], deal=d) for d in range(3)]
    gen = play_batch(specs, bots_of(zoo("crash", "misbehave.py", "crash_mid"), RANDOM), None)
    next(gen)
    root = process.workdir_root()
    assert os.listdir(root) and len(os.listdir(root)) == len(process.live_workdirs())  # live processes only
    list(gen)
    assert not os.path.exists(root)
    assert not process.live_workdirs()


@pytest.mark.parametrize("depth", [64, 253])
def test_a_deep_info_is_a_protocol_fault_and_the_match_is_recorded(tmp_path, depth):
    # adversarial trial 6: 253 levels passed the protocol's check but not the info log (one level
    # deeper): the batch failed as the infrastructure's fault and no match was recorded
    specs = [spec(["deep", "random"], deal=d) for d in range(2)]
    results = list(play_batch(specs, bots_of(zoo("deep", "misbehave.py", "deep_info", str(depth)), RANDOM),
                              str(tmp_path)))
    assert [r.match_id for r in results] == [s.match_id for s in specs]
    for r in results:
        if depth <= 64:  # within the cap: kept in the info log, no fault
            assert r.status == "ok" and not r.faults, r.faults
        else:
            assert r.status == "forfeit" and [(f.cls, f.bot) for f in r.faults] == [("protocol", "deep")]
            assert "nested more than 64 levels" in r.faults[0].detail
    logs = list((tmp_path / "logs").glob("*.jsonl"))
    assert (len(logs) == 2) == (depth <= 64)


def test_info_log_keeps_the_head_and_tail_of_each_seat():
    # adversarial finding: an `info` of 4,000 bytes on each of 2,800 moves wrote 4.5 MB per match
    from arena.batch import INFO_KEEP_BYTES, InfoLog

    log = InfoLog(("flood", "quiet"))
    for move in range(300):
        log.add(0, move, {"pad": "x" * 1000, "move": move})
        if move in (5, 150, 299):
            log.add(1, move, {"move": move})
    rows = [json.loads(x) for x in log.lines()]
    flood = [r for r in rows if r["seat"] == 0 and "info" in r]
    assert sum(len(x) for x in log.lines() if b'"seat":0' in x) <= 2 * INFO_KEEP_BYTES + 100
    kept = [r["move"] for r in flood]
    assert kept[0] == 0 and kept[-1] == 299 and kept == sorted(kept)
    (gap,) = [r for r in rows if "dropped" in r]
    assert gap == {"seat": 0, "bot": "flood", "dropped": 300 - len(flood)} and len(flood) < 80
    i = rows.index(gap)  # the gap sits between the flood's head and its tail
    before = [r["move"] for r in rows[:i] if r["seat"] == 0]
    after = [r["move"] for r in rows[i + 1:] if r["seat"] == 0]
    assert before and after and after[0] - before[-1] == gap["dropped"] + 1
    assert [r["move"] for r in rows if r["seat"] == 1] == [5, 150, 299]  # the quiet seat keeps all
    assert [r["move"] for r in rows if "info" in r] == sorted(r["move"] for r in rows if "info" in r)


def test_a_slow_folder_to_empty_is_not_charged_to_the_seats_started_before_it(tmp_path, monkeypatch):
    """Every working folder is emptied before any ``start`` is sent (adversarial trial,
    2026-12-04: a bot's 150,000 folders took seconds to empty after its opponent's ``start``,
    whose ``ready`` then missed ``move_ms``). Here the second seat's folder takes 0.6 s to
    empty (a real reset, then a wait), against a ``move_ms`` of 300 for the first seat's ready."""
    from arena.process import BotProcess
    from arena.specs import Clock

    real = BotProcess.reset_workdir

    def slow(self):
        real(self)
        if self.name == "greedy" and not self.fresh:
            time.sleep(0.6)

    monkeypatch.setattr(BotProcess, "reset_workdir", slow)
    clock = Clock(move_ms=300, bank_ms=0, startup_ms=5000)
    specs = [spec(["random", "greedy"], deal=d, clock=clock) for d in range(3)]
    results = list(play_batch(specs, bots_of(RANDOM, GREEDY), str(tmp_path)))
    assert [r.status for r in results] == ["ok"] * 3, [r.faults for r in results]
