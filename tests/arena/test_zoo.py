"""The misbehaving-bot zoo (issue 8): each misbehaviour, as a real subprocess, gets the right
fault class (or no advantage), the match ends in bounded time, the opponent and the batch go on,
no process is left behind, and the arena's memory stays bounded."""

from __future__ import annotations

import os
import resource
import signal
import time

import pytest

from arena.batch import play_batch
from arena.specs import Clock, Limits
from tests.arena.conftest import RANDOM, leftovers, spec, zombies, zoo

FAST = Clock(move_ms=300, bank_ms=0, startup_ms=1000, grace_ms=20)


def play(mode, *args, matches=3, clock=FAST, limits=None, policy="forfeit", options=None):
    bots = {"bad": zoo("bad", "misbehave.py", mode, *args), "random": RANDOM}
    specs = [spec(["bad", "random"], deal=d, clock=clock, limits=limits, policy=policy,
                  options=options) for d in range(matches)]
    t = time.perf_counter()
    results = list(play_batch(specs, bots, None))
    elapsed = time.perf_counter() - t
    assert len(results) == matches
    assert not leftovers(), f"{mode}: processes left behind"
    assert not zombies(), f"{mode}: zombies"
    return results, elapsed


CASES = [
    ("crash_start", (), "crash"),
    ("crash_mid", (), "crash"),
    ("no_ready", (), "stall"),
    ("slow", (), "timeout"),
    ("late_then_ok", ("0.6",), "timeout"),
    ("garbage", (), "protocol"),
    ("prefix", (), "protocol"),
    ("huge_line", (), "protocol"),
    ("flood", (), "protocol"),
    ("illegal", (), "illegal"),
    ("big_info", (), "protocol"),
    # adversarial trial 6: an info orjson cannot write escaped the match as an infrastructure failure
    ("deep_info", ("300",), "protocol"),
    ("deep_info", ("65",), "protocol"),
]


@pytest.mark.parametrize("mode,args,cls", CASES, ids=[c[0] + "".join(f"-{a}" for a in c[1]) for c in CASES])
def test_fault_class(mode, args, cls):
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    results, elapsed = play(mode, *args)
    for r in results:
        assert r.status == "forfeit", (mode, r)
        assert [f.cls for f in r.faults] == [cls], (mode, r.faults)
        assert r.faults[0].seat == 0 and r.faults[0].bot == "bad"
        assert r.faults[0].detail.startswith("bot 'bad' "), (mode, r.faults[0].detail)
        assert r.outcome == {"ranks": [1, 0], "scores": [0, 1]}
    assert elapsed < 3 * 5 * 1.5, f"{mode}: {elapsed:.1f} s"
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    assert grown_mb < 100, f"{mode}: arena grew by {grown_mb:.0f} MiB"


@pytest.mark.parametrize("mode", ["partial", "stale", "stderr_mb", "exit_code_on_eof", "info"])
def test_harmless_quirks_are_not_faults(mode):
    clock = Clock(move_ms=1000, bank_ms=0, startup_ms=1000) if mode == "stderr_mb" else FAST
    results, _ = play(mode, clock=clock)
    for r in results:
        assert r.status == "ok" and not r.faults, (mode, r.faults)


@pytest.mark.parametrize("sigchld", ["default", "ignored"])
def test_grandchild_ignoring_sigterm_is_killed(sigchld):
    # Ray's processes ignore SIGCHLD; the bot must not inherit that (its own wait() breaks)
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN if sigchld == "ignored" else signal.SIG_DFL)
    try:
        results, _ = play("fork_grandchild", matches=2)
    finally:
        signal.signal(signal.SIGCHLD, old)
    assert all(r.status == "ok" for r in results), results


def test_memory_hog_is_killed_by_rss_limit():
    limits = Limits(max_rss_mb=150)
    results, elapsed = play("memory", matches=1, clock=Clock(move_ms=20000, bank_ms=0), limits=limits)
    (r,) = results
    assert r.status == "forfeit" and r.faults[0].cls == "crash"
    assert "resident memory" in r.faults[0].detail
    assert elapsed < 10


def test_files_do_not_survive_between_matches(tmp_path):
    bots = {"bad": zoo("bad", "misbehave.py", "file_memory"), "random": RANDOM}
    specs = [spec(["bad", "random"], deal=d) for d in range(3)]
    results = list(play_batch(specs, bots, str(tmp_path)))
    assert all(r.status == "ok" for r in results)
    logs = sorted((tmp_path / "logs" / "bad").iterdir())
    assert len(logs) == 3
    for p in logs:
        assert p.read_text().strip() == "NOFILE", p


def test_random_policy_zoo_keeps_playing():
    results, _ = play("slow", "30", policy="random", matches=2, options={"hand_size": 4})
    for r in results:
        # restarted twice (max_restarts_per_match), then forfeited on the third timeout
        assert r.status == "forfeit" and [f.cls for f in r.faults] == ["timeout"] * 3


def test_wrong_ids_are_named_in_the_timeout():
    results, _ = play("wrong_id", matches=1)
    (f,) = results[0].faults
    assert f.cls == "timeout"
    assert "answered id 1001 (stale or wrong id), expected 1" in f.detail, f.detail


INNER = '''
import subprocess, time
from arena.batch import play_batch
from tests.arena.conftest import RANDOM, leftovers, spec, zombies, zoo

KEEP = []

def test_a_fails_half_way_through_a_batch():
    gen = play_batch([spec(["bad", "random"], deal=d) for d in range(3)],
                     {"bad": zoo("bad", "misbehave.py", "crash_mid"), "random": RANDOM}, None)
    KEEP.append(gen)          # kept alive, as a failing test's traceback keeps it
    next(gen)
    KEEP.append(subprocess.Popen(["true"]))  # a child never waited for: a zombie
    time.sleep(0.2)
    assert False, "failed on purpose"

def test_b_later_test_is_not_blamed():
    assert not leftovers()
    assert not zombies()
'''


def test_a_failing_test_leaves_nothing_for_later_tests(tmp_path):
    # run two tests in a separate pytest with this package's fixtures as a plugin
    import subprocess
    import sys

    from tests.arena.conftest import ROOT

    (tmp_path / "test_inner.py").write_text(INNER)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                        "tests.arena.conftest", "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert "1 failed, 1 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert "failed on purpose" in r.stdout
