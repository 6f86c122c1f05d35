"""Infrastructure faults are never results (issue 15), on real Ray through the real ``arena run``.

* ``kill -9`` of the run's raylet mid-run: the arena replaces its local instance and plays the
  interrupted matches again; ``kill -9`` of a worker mid-run: its batch is played again.
  Either way every scheduled match ends up recorded exactly once with a real result.
* ``RAY_ADDRESS`` naming a dead address, and a second Ray cluster running on the machine
  (``ray start`` on 127.0.0.1 with its own ports and temp dir): a local run starts its own
  instance anyway.
* What the local instance creates is private: its folder is mode 0700, its token 0600, and
  ``~/.ray/auth_token`` is neither created nor used.

Every process a test starts is stopped by its own pid (never ``ray stop``).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from collections import Counter

import psutil
import pytest

from tests.arena.test_cluster import Head, free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIG = """
bots:
  random: {{cmd: [python, bots/random_bot.py]}}
  slow: {{cmd: [python, bots/ismcts_bot.py, --time-ms, "{ms}"]}}
tournaments:
  - name: chaos
    game: agram
    players: 2
    bots: [random, slow]
    deals: {deals}
    salt: fixed-chaos-salt
    # the bots live under pytest's /tmp, which a sandbox hides; these tests are about Ray
    limits: {{sandbox: none}}
"""


def setup(tmp_path, deals=6, ms=100):
    (tmp_path / "t.yaml").write_text(textwrap.dedent(CONFIG.format(deals=deals, ms=ms)))
    os.symlink(os.path.join(ROOT, "bots"), tmp_path / "bots")
    return tmp_path / "t.yaml"


def start(path, results, env=None, workers=2, quiet=True):
    env = {**(env if env is not None else os.environ), "PYTHONPATH": ROOT, "COLUMNS": "200"}
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "run", str(path), "--all",
                             *(["--quiet"] if quiet else []),
                             "--workers", str(workers), "--results", str(results)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def records(results):
    path = results / "chaos" / "matches.jsonl"
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def wait_for(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cond()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def descendants(pid):
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def raylet_of(pid):
    return next((p for p in descendants(pid) if p.name() == "raylet"), None)


def _cpu(proc):
    """CPU seconds of *proc*'s descendants (the bots a worker keeps), 0 for those gone."""
    total = 0.0
    for c in proc.children(recursive=True):
        try:
            t = c.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            continue
    return total


def busy_worker_of(pid, window=0.5):
    """A Ray worker of the run that is playing a match now: titled by the batch task it runs
    (``ray::run_batch``; an idle one is ``ray::IDLE``), its bots spent CPU in *window* s.

    Not "default_worker" in the command line: that is the raylet's (its worker command), whose
    descendants are every bot. A worker keeps its bots between batches (the seat pool), so
    having bot processes is not being busy; the ISMCTS bot thinking is.
    """
    workers = []
    for p in descendants(pid):
        try:
            if p.cmdline()[:1] == ["ray::run_batch"] and any(
                    "bots/" in " ".join(c.cmdline()) for c in p.children(recursive=True)):
                workers.append((p, _cpu(p)))
        except psutil.Error:
            continue
    if not workers:
        return None
    time.sleep(window)
    for p, before in workers:
        try:
            if _cpu(p) - before > 0.05 * window:
                return p
        except psutil.Error:
            continue
    return None


def assert_complete(results, total):
    recs = records(results)
    ids = Counter(r["match_id"] for r in recs)
    assert len(ids) == total and max(ids.values()) == 1, ids
    assert all(r["status"] == "ok" and r["outcome"]["ranks"] for r in recs), Counter(r["status"] for r in recs)


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("target", ["raylet", "worker"])
def test_kill_9_mid_run_loses_no_match(tmp_path, target):
    # the worker is killed while its bot thinks: longer thinking, more time inside a match
    path = setup(tmp_path, ms=100 if target == "raylet" else 400)
    results = tmp_path / "res"
    proc = start(path, results)
    try:
        wait_for(lambda: len(records(results)) >= 2, 240, "two recorded matches")
        find = raylet_of if target == "raylet" else busy_worker_of
        victim = wait_for(lambda: find(proc.pid), 60, f"the run's {target}")
        assert len(records(results)) < 12, "the run ended before the kill"
        victim.kill()
        kills = 1
        # a worker may end its batch between the sample and the kill, with nothing to replay;
        # then the next busy one, while the run lasts
        attempts_file = results / "chaos" / "attempts.jsonl"
        for _ in range(3 if target == "worker" else 0):
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and proc.poll() is None and not attempts_file.exists():
                time.sleep(0.2)
            other = None if attempts_file.exists() or proc.poll() is not None else find(proc.pid)
            if other is None:
                break
            other.kill()
            kills += 1
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert_complete(results, 12)
    assert (results / "chaos" / "attempts.jsonl").exists(), f"{kills} kill(s), nothing replayed: {err[-3000:]}"
    attempts = [json.loads(x) for x in (results / "chaos" / "attempts.jsonl").read_text().splitlines()]
    assert attempts and all(a["infra"] for a in attempts)  # the interrupted matches, none recorded
    assert all(a["unfinished"] >= 1 for a in attempts)  # how many of its batch were played again
    # ... and the run's last line says so (new-user finding: only attempts.jsonl did)
    again = sum(a["unfinished"] for a in attempts)
    said = " ".join(err.split())
    assert f"{again} match{'es were' if again != 1 else ' was'} played again after an infrastructure failure" in said
    # the worker's death is a failed batch; the raylet's, a new instance (the worker case had
    # once killed the raylet: its command line names default_worker.py)
    assert ("the local Ray instance died" in said) == (target == "raylet"), said
    # a rerun has nothing left to play
    again = start(path, results, quiet=False)
    out2, err2 = again.communicate(timeout=300)
    assert again.returncode == 0, err2[-2000:]
    assert "0 matches played now, 12 already recorded" in " ".join(out2.split())


def _plain_run_works(tmp_path, env):
    path = setup(tmp_path, deals=2, ms=20)
    results = tmp_path / "res"
    proc = start(path, results, env=env)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert_complete(results, 4)


@pytest.mark.ray
@pytest.mark.slow
def test_ray_address_naming_a_dead_address_does_not_stop_a_local_run(tmp_path):
    _plain_run_works(tmp_path, {**os.environ, "RAY_ADDRESS": f"127.0.0.1:{free_port()}"})


@pytest.mark.ray
@pytest.mark.slow
def test_another_ray_cluster_on_the_machine_does_not_stop_a_local_run(tmp_path):
    head = Head()
    try:
        env = {**head.env, "RAY_ADDRESS": head.address}  # even when named in the environment
        _plain_run_works(tmp_path, env)
        assert head.processes(), "the other cluster must still run (the arena never stops it)"
    finally:
        head.stop()


@pytest.mark.ray
@pytest.mark.slow
def test_the_local_instance_keeps_its_files_and_token_private(tmp_path):
    """A run with HOME in tmp_path: while it plays, Ray's folder is 0700 and its token 0600;
    ~/.ray/auth_token is never written; the folder is gone after the run."""
    home = tmp_path / "home"
    home.mkdir()
    path = setup(tmp_path, deals=4, ms=50)
    results = tmp_path / "res"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    proc = start(path, results, env={**env, "HOME": str(home)})
    try:
        raylet = wait_for(lambda: raylet_of(proc.pid), 120, "the run's raylet")
        penv = raylet.environ()
        token = penv["RAY_AUTH_TOKEN_PATH"]
        folder = os.path.dirname(token)
        assert os.path.basename(folder).startswith("cardarena-ray-")
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(token).st_mode) == 0o600
        assert penv["RAY_AUTH_MODE"] == "token"
        assert folder in " ".join(raylet.cmdline())  # the session files live there
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert not (home / ".ray" / "auth_token").exists()
    wait_for(lambda: not os.path.exists(folder), 10, "the private folder to be removed")
