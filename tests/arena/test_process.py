"""One bot process: environment, working directory, I/O, stderr capture, killing and reaping."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import orjson
import psutil
import pytest

from arena.errors import BotCrashed, BotTimeout
from arena.process import (
    BotProcess,
    BotSetupError,
    Hub,
    StderrLog,
    check_command,
    last_stderr_line,
    new_workdir,
    preflight,
    remove_workdir,
    resolve_argv,
    sandbox_binds,
    stderr_excerpt,
    workdir_root,
)
from arena.specs import BotSpec, Limits
from tests.arena.conftest import RANDOM, ROOT, bot, zoo
from tests.conftest import require


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


def test_kill_of_a_bot_with_children_does_not_wait_the_full_grace(monkeypatch):
    # children killed by SIGTERM are zombies until reaped: they have died, so kill() must not
    # wait for them (the old code counted zombies as alive and always waited the whole grace)
    import arena.process.bot as bot_module

    grace = 2.0
    monkeypatch.setattr(bot_module, "TERM_GRACE_S", grace)
    proc, hub = spawn(zoo("kids", "misbehave.py", "children", "4"))
    proc.send(start_line())
    hub.wait_line(proc, time.perf_counter() + 10)
    kids = psutil.Process(proc.pid).children(recursive=True)
    assert sum(k.name() == "sleep" for k in kids) == 4
    t = time.perf_counter()
    proc.kill()
    took = time.perf_counter() - t
    assert took < grace / 5, f"kill() took {took:.3f} s with a {grace} s grace"
    assert not any(k.is_running() and k.status() != psutil.STATUS_ZOMBIE for k in kids)
    hub.close()


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


def test_stderr_tail_survives_the_per_match_take():
    # the capture is taken for each match's log; a process that dies in the next match must
    # still have its last words for the fault record
    log = StderrLog(head_cap=10, tail_cap=10)
    log.feed(b"x" * 50000 + b"\nTraceback ...\nValueError: bad config\n")
    assert log.take().endswith("ad config\n")  # tail_cap 10
    assert log.text() == "" and log.total == 0
    assert log.tail_text().endswith("Traceback ...\nValueError: bad config\n")
    assert len(log.tail_text(100)) == 100
    log.feed(b"later\n")
    assert log.tail_text().endswith("ValueError: bad config\nlater\n")
    assert len(log.recent) <= 2 * 8000


def test_kill_keeps_what_the_bot_wrote_while_dying():
    # the SIGTERM handler's message is in the pipe after the hub's last read: kill() drains it
    proc, hub = spawn(zoo("term", "misbehave.py", "term_message"))
    proc.send(start_line())
    hub.wait_line(proc, time.perf_counter() + 10)
    proc.kill()
    assert proc.returncode == 0
    assert "terminated: goodbye from the bot" in proc.stderr.take()
    remove_workdir(proc.workdir)


def test_drain_stderr_reads_an_exited_bot_to_the_end():
    proc, hub = spawn(zoo("usage", "misbehave.py", "usage_error"))
    with pytest.raises(BotCrashed, match="exited with code 2"):
        hub.wait_line(proc, time.perf_counter() + 10)
    proc.drain_stderr(1.0)
    assert proc.stderr.tail_text().endswith("(choose from 'tree', 'rollout')\n")
    proc.drain_stderr(1.0)  # at the end of the pipe: nothing more, no error
    proc.kill()
    proc.drain_stderr(1.0)  # pipes closed: nothing to read
    remove_workdir(proc.workdir)


def test_stderr_excerpt_cuts_on_line_boundaries():
    text = "usage: ismcts_bot.py [-h] [--iterations N]\n" + "ismcts_bot.py: error: invalid choice: 'x'\n\n"
    assert stderr_excerpt(text, 300) == text.strip()
    assert stderr_excerpt(text, 50) == "ismcts_bot.py: error: invalid choice: 'x'"
    # the last line alone is too long: its beginning, marked
    long = "Error: " + "word " * 100
    out = stderr_excerpt(long, 40)
    assert len(out) <= 40 and out.startswith("Error: word") and out.endswith("…")
    # a tail that begins mid-line: the partial first line is dropped, or marked if it is all there is
    assert stderr_excerpt("t.py [-h] [--x]\nt.py: error: bad\n", 300, cut=True) == "t.py: error: bad"
    assert stderr_excerpt("ror in the middle of a line", 300, cut=True) == "…in the middle of a line"
    assert stderr_excerpt("", 300) == stderr_excerpt("\n \n", 300) == ""
    assert last_stderr_line("a\nValueError: x\n\n") == "ValueError: x"
    assert last_stderr_line("x" * 300, 50) == "x" * 49 + "…"


def test_no_fd_leak_over_many_spawns():
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        proc, hub = spawn(bot("random", "python", "bots/random_bot.py"))
        proc.close(2)
        hub.close()
        remove_workdir(proc.workdir)
    assert len(os.listdir("/proc/self/fd")) <= before + 1


def test_check_command_finds_commands_and_scripts():
    assert check_command(RANDOM) is None
    assert check_command(bot("js", "node", "bots/js_random_bot.js")) is None or not shutil.which("node")
    assert check_command(bot("sh", "sh", "-c", "true")) is None  # on PATH, no script to check
    assert check_command(bot("mod", "python", "-m", "bots.random_bot")) is None
    assert check_command(bot("abs", sys.executable, "-u", os.path.join(ROOT, "bots", "random_bot.py"))) is None


@pytest.mark.parametrize("cmd,path", [(("./does_not_exist.sh",), "does_not_exist.sh"),
                                      (("python", "no_such_bot.py"), "no_such_bot.py"),
                                      (("python3", "-u", "bots/nope.py"), "bots/nope.py"),
                                      (("node", "nope.js"), "nope.js"),
                                      (("no-such-command-xyz", "arg"), "no-such-command-xyz")])
def test_check_command_names_bot_path_and_folder(cmd, path):
    reason = check_command(bot("mybot", *cmd))
    assert reason is not None and "\n" not in reason
    assert "'mybot'" in reason and os.path.join(ROOT, path) in reason and ROOT in reason, reason


def test_check_command_refuses_a_file_that_is_not_executable(tmp_path):
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/sh\n")
    reason = check_command(BotSpec("b", ("./bot.sh",), cwd=str(tmp_path)))
    assert reason and "not executable" in reason and str(script) in reason


def test_working_directories_and_their_root_do_not_outlive_processes():
    proc, hub = spawn(RANDOM)
    root = workdir_root()
    assert os.path.isdir(proc.workdir) and proc.workdir.startswith(root)
    proc.kill()
    hub.close()
    assert not os.path.exists(proc.workdir)  # the process owns its directory
    assert not os.path.exists(root)  # the last one takes the root with it


def test_working_directory_removed_when_the_bot_cannot_start():
    wd = new_workdir("nostart")
    with pytest.raises(ValueError):
        BotProcess(RANDOM, Limits(bot_user="no-such-user-xyz"), wd, 0) if os.geteuid() == 0 else \
            BotProcess(bot("empty"), Limits(), wd, 0)
    assert not os.path.exists(wd)


def test_sandbox_binds_only_what_the_private_tmp_hides(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("")
    binds = sandbox_binds(BotSpec("b", ("python", "bot.py"), cwd=str(tmp_path)),
                          ["/usr/bin/env", str(script)])
    assert str(tmp_path) in binds
    assert all(b == t or b.startswith(t + "/") for b in binds for t in ["/tmp", "/dev/shm"] if b.startswith(t))
    assert "/usr/bin" not in binds
    if sys.prefix.startswith("/tmp/"):
        assert sys.prefix in binds


def test_a_bot_reached_through_a_link_in_its_bound_folder_starts(tmp_path):
    # a config folder under /tmp with `bots -> <project>/bots`: binding onto the link itself made
    # bubblewrap fail ("Can't bind mount ... No such file or directory") and every match crash
    os.symlink(os.path.join(ROOT, "bots"), tmp_path / "bots")
    script = str(tmp_path / "bots" / "random_bot.py")
    binds = sandbox_binds(BotSpec("b", ("python", script), cwd=str(tmp_path)), ["/usr/bin/python3", script])
    assert str(tmp_path) in binds and str(tmp_path / "bots") not in binds
    proc, hub = spawn(BotSpec("linked", (sys.executable, script), cwd=str(tmp_path)))
    try:
        proc.send(start_line())
        line, _ = hub.wait_line(proc, time.perf_counter() + 30)
        assert orjson.loads(line)["type"] == "ready"
    finally:
        proc.kill()
        remove_workdir(proc.workdir)


def test_preflight_passes_for_runnable_bots():
    preflight([RANDOM, bot("greedy", "python", "bots/greedy_bot.py")], Limits())
    with pytest.raises(BotSetupError, match="no_such_bot.py"):
        preflight([RANDOM, bot("x", "python", "no_such_bot.py")], Limits())


def test_sandbox_hides_the_results_folder(tmp_path):
    require(bool(shutil.which("bwrap")), "bubblewrap is not installed")
    import tempfile
    from pathlib import Path

    from arena.process import hide_from_sandbox, wrapper_argv
    from arena.specs import Limits

    # outside /tmp, which the sandbox hides anyway
    outside = Path(tempfile.mkdtemp(prefix="cardarena-test-", dir="/var/tmp"))
    results = outside / "results" / "t"
    results.mkdir(parents=True)
    (results / "matches.jsonl").write_text('{"match_id": "finished deal"}\n')
    hide_from_sandbox(str(results))
    work = tmp_path / "work"
    work.mkdir()
    argv = wrapper_argv(Limits(sandbox="bwrap"), str(work)) + ["cat", str(results / "matches.jsonl")]
    probe = subprocess.run(wrapper_argv(Limits(sandbox="bwrap"), str(work)) + ["true"], capture_output=True)
    require(probe.returncode == 0, f"bwrap cannot start here: {probe.stderr.decode()[-200:]}")
    try:
        hidden = subprocess.run(argv, capture_output=True, text=True)
        assert hidden.returncode != 0 and "finished deal" not in hidden.stdout
        # the same file outside the hidden folder is readable: the hiding is what stops the bot
        (outside / "other.txt").write_text("finished deal")
        shown = subprocess.run(argv[:-1] + [str(outside / "other.txt")], capture_output=True, text=True)
        assert shown.returncode == 0 and "finished deal" in shown.stdout
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_stale_roots_of_dead_arenas_are_swept_and_nothing_else(tmp_path):
    from arena.process import ROOT_PREFIX, sweep_stale_roots
    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid is free now (reused only after the pid space wraps)
    old = time.time() - 3600

    def root(name, age=old):
        d = tmp_path / name
        (d / "bot-x").mkdir(parents=True)
        (d / "bot-x" / "state.txt").write_text("left behind")
        os.utime(d, (age, age))
        return d

    stale = root(f"{ROOT_PREFIX}{dead.pid}-abc")
    live = root(f"{ROOT_PREFIX}{os.getppid()}-def")          # its arena still runs
    young = root(f"{ROOT_PREFIX}{dead.pid}-ghi", age=time.time())  # too recent to judge
    legacy = root(f"{ROOT_PREFIX}xyz")                       # no pid in the name
    other = root("something-else")
    assert sweep_stale_roots(str(tmp_path)) == [str(stale)]
    assert not stale.exists()
    assert all(p.exists() for p in (live, young, legacy, other))


def test_roots_are_named_after_the_arena_process():
    proc, hub = spawn(RANDOM)
    try:
        assert os.path.basename(workdir_root()).startswith(f"cardarena-bots-{os.getpid()}-")
    finally:
        proc.kill()
        hub.close()


def test_bot_user_error_names_the_folder_behind_a_link(tmp_path):
    # new-user finding: a venv's world-readable bin/python links into /root/.pyenv; the error named
    # the link and told to make it readable, which could not help
    import pwd
    import shutil
    import tempfile

    from arena.process.preflight import check_access
    from arena.specs import BotSpec
    from tests.conftest import require

    require(os.geteuid() == 0, "needs root (bot_user)")
    d = tempfile.mkdtemp(dir="/var/tmp", prefix="cardarena-test-")
    try:
        os.chmod(d, 0o755)
        priv, pub = os.path.join(d, "priv"), os.path.join(d, "pub")
        os.mkdir(priv, 0o700)
        os.mkdir(pub, 0o755)
        shutil.copy("/bin/true", os.path.join(priv, "tool"))
        os.symlink(os.path.join(priv, "tool"), os.path.join(pub, "tool"))
        why = check_access(BotSpec("b", (os.path.join(pub, "tool"),), cwd=d),
                           Limits(bot_user=pwd.getpwnam("nobody").pw_name))
        assert why is not None and f"it is a link to {priv}/tool; the folder {priv} is mode 700, owned by root" \
            in why, why
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_an_excerpt_leaves_out_pythons_position_markers():
    """Python 3.11's ``~~~^^^`` lines under a frame took an excerpt's room (new-user trial:
    ``stderr: ^^^^^^^^...`` before the frame that mattered)."""
    from arena.process.stderr import stderr_excerpt

    tb = ("Traceback (most recent call last):\n  File \"bot.py\", line 12, in act\n    return legal[99]\n"
          "           ~~~~~^^^^\nIndexError: list index out of range\n")
    got = stderr_excerpt(tb, 100)
    assert got.endswith("return legal[99]\nIndexError: list index out of range") and "^" not in got
    assert stderr_excerpt("^^^^\n", 100) == "^^^^"  # nothing else: kept


def test_a_reply_that_came_during_slow_checks_is_not_late():
    """The hub's checks (a bot's memory gauge, the match's tick) may stall its loop — a bot
    made them take 3-5 s with 60,000 mappings (adversarial trial, 2026-12-04). A reply that
    arrived meanwhile is read before any timeout and timed from the checks' start: the
    thinking opponent is not charged for the stall."""
    proc, hub = spawn(zoo("env", "misbehave.py", "env"))
    try:
        proc.send(start_line())
        hub.wait_line(proc, time.perf_counter() + 10)
        sent = time.perf_counter()
        proc.send(b'{"type":"act","id":1,"observation":{},"legal":["a"],"clock":{}}\n')
        time.sleep(0.2)  # the reply is in the pipe now
        hub.next_tick = 0.0  # checks due

        def slow_tick():
            time.sleep(1.0)  # checks of 1 s, longer than the deadline below

        line, t_read = hub.wait_line(proc, sent + 0.5, slow_tick)
        assert orjson.loads(line)["type"] == "action"
        assert t_read - sent < 0.5, t_read - sent  # read before the checks: 0.2 s, not 1.2
    finally:
        proc.kill()
        hub.close()


def test_a_bot_pays_for_its_own_slow_checks():
    """The re-check of the fix above: a reply that came during the waited bot's *own* checks
    is timed from their end, not their start — its 300,000 memfds made them take 2.7 s, and
    a stamp from their start gave it that thinking time free."""
    proc, hub = spawn(zoo("slow", "misbehave.py", "slow", "0.3"))
    try:
        proc.send(start_line())
        hub.wait_line(proc, time.perf_counter() + 10)
        real = proc.check

        def slow_check():
            real()
            time.sleep(1.0)  # the bot's own checks: 1 s

        proc.check = slow_check  # type: ignore[method-assign]
        sent = time.perf_counter()
        proc.send(b'{"type":"act","id":1,"observation":{},"legal":["a"],"clock":{}}\n')
        hub.next_tick = 0.0  # checks due: the reply comes 0.3 s into them
        line, t_read = hub.wait_line(proc, sent + 5)
        assert orjson.loads(line)["type"] == "action"
        assert t_read - sent >= 0.95, t_read - sent  # charged to the bot: its own checks' end
    finally:
        proc.kill()
        hub.close()
