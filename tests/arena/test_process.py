"""One bot process: environment, working directory, I/O, stderr capture, killing and reaping."""

from __future__ import annotations

import os
import signal
import time

import orjson
import psutil
import pytest

from arena.errors import BotCrashed, BotTimeout
from arena.process import (
    BotProcess,
    Hub,
    StderrLog,
    new_workdir,
    remove_workdir,
    resolve_argv,
    workdir_root,
)
from arena.specs import Limits
from tests.arena.conftest import RANDOM, bot, zoo


def spawn(spec, limits=None):
    wd = new_workdir(spec.name)
    proc = BotProcess(spec, limits or Limits(), wd, 0)
    hub = Hub()
    hub.add(proc)
    return proc, hub


def start_line():
    return (b'{"type":"start","protocol":1,"game":"toy","options":{},"players":2,"seat":0,'
            b'"teams":[[0],[1]],"match":"m","seed":1,"clock":{"move_ms":1000,"bank_ms":0}}\n')


def test_resolve_argv_uses_our_python_and_project_paths():
    argv = resolve_argv(RANDOM)
    import sys
    assert argv[0] == sys.executable
    assert os.path.isabs(argv[1]) and argv[1].endswith("bots/random_bot.py")


def test_handshake_env_and_workdir():
    spec = zoo("env", "misbehave.py", "env", env=(("MY_KEY", "v"),))
    proc, hub = spawn(spec)
    try:
        proc.send(start_line())
        line, _ = hub.wait_line(proc, time.perf_counter() + 10)
        assert orjson.loads(line)["type"] == "ready"
        proc.send(b'{"type":"act","id":1,"observation":{},"legal":["a"],"clock":{}}\n')
        line, _ = hub.wait_line(proc, time.perf_counter() + 10)
        info = orjson.loads(line)["info"]
        env = info["env"]
        assert env.pop("MY_KEY") == "v"
        assert env.pop("HOME") == proc.workdir == info["cwd"]
        env.pop("LC_CTYPE", None)  # set by Python's C-locale coercion, not by the arena
        assert env == {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
                       "PYTHONHASHSEED": "0"}
        assert proc.workdir.startswith(workdir_root())
        assert os.getpgid(proc.pid) == proc.pid and os.getsid(proc.pid) == proc.pid
        lim = psutil.Process(proc.pid).rlimit(psutil.RLIMIT_NOFILE)
        assert lim == (64, 64)
    finally:
        proc.kill()
        remove_workdir(proc.workdir)
    assert not os.path.exists(proc.workdir)


def test_timeout_and_crash_detection():
    proc, hub = spawn(zoo("slow", "misbehave.py", "slow"))
    try:
        t = time.perf_counter()
        with pytest.raises(BotTimeout):
            hub.wait_line(proc, t + 0.2)
        assert time.perf_counter() - t < 1.0
    finally:
        proc.kill()
    proc, hub = spawn(zoo("crash", "misbehave.py", "crash_start"))
    t = time.perf_counter()
    with pytest.raises(BotCrashed, match="exited with code 3"):
        hub.wait_line(proc, t + 30)
    assert time.perf_counter() - t < 5
    proc.kill()


def test_kill_escalates_to_sigkill_and_reaps():
    proc, hub = spawn(zoo("term", "misbehave.py", "ignore_term"))
    proc.send(start_line())
    hub.wait_line(proc, time.perf_counter() + 10)
    t = time.perf_counter()
    proc.kill()
    assert time.perf_counter() - t < 3
    assert proc.returncode == -signal.SIGKILL
    assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE
    remove_workdir(proc.workdir)


def test_close_on_eof_returns_exit_code():
    proc, hub = spawn(zoo("eof", "misbehave.py", "exit_code_on_eof"))
    assert proc.close(5) == 7
    remove_workdir(proc.workdir)


def test_stderr_log_keeps_head_and_tail():
    log = StderrLog(head_cap=10, tail_cap=10)
    for i in range(1000):
        log.feed(f"{i:05d}\n".encode())
    text = log.text()
    assert text.startswith("00000\n0000") and text.endswith("998\n00999\n")
    assert "bytes omitted" in text
    assert len(log.tail) <= 20 + 6
    assert log.take() == text and log.total == 0


def test_no_fd_leak_over_many_spawns():
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        proc, hub = spawn(bot("random", "python", "bots/random_bot.py"))
        proc.close(2)
        hub.close()
        remove_workdir(proc.workdir)
    assert len(os.listdir("/proc/self/fd")) <= before + 1
