"""Issue 15: a spy bot (``spy_bot.py``, a real process speaking protocol v1) tries each leak
through the real match path (:func:`arena.batch.play_batch`).

Every test is run three ways: ``auto`` (the default ``limits``: bubblewrap here), ``unshare``
(the util-linux fallback, forced) — the leak must fail — and ``none`` (``sandbox: none,
network: allow``) — the same spy must observe the leak, which shows that the test can see it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from arena.batch import play_batch
from arena.process import effective_mode
from arena.specs import Clock, Limits
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.conftest import require

HERE = os.path.dirname(os.path.abspath(__file__))
SPY = os.path.join(HERE, "spy_bot.py")
MODES = ["auto", "unshare", "none"]
CLOCK = Clock(move_ms=15000, bank_ms=0, startup_ms=10000)


def limits_for(mode: str, **kw) -> Limits:
    """The limits of a test run: the defaults (plus ``kw``), ``unshare`` forced, or no sandbox."""
    if mode == "none":
        return Limits(sandbox="none", network="allow", **kw)
    if mode == "unshare":
        require(bool(shutil.which("unshare")), "util-linux unshare is not installed")
        lim = Limits(sandbox="unshare", **kw)
    else:
        lim = Limits(**kw)
    require(effective_mode(lim) != "none", "no sandbox can start on this machine")
    return lim


def spy_run(tmp_path, mode: str, leak: str, arg: str = "", cmd: tuple[str, ...] | None = None,
            **limits) -> tuple[list[str], object]:
    """Play one match spy vs random; return the spy's ``SPY ...`` stderr lines and the result
    (``cmd``: the spy's command instead of ``python spy_bot.py LEAK ARG``)."""
    from arena.specs import BotSpec

    results = tmp_path / "results" / "t"
    results.mkdir(parents=True, exist_ok=True)
    bots = {"spy": BotSpec("spy", cmd or (sys.executable, SPY, leak, arg), cwd=HERE), "random": RANDOM}
    s = replace(spec(["spy", "random"], deal=0, clock=CLOCK), limits=limits_for(mode, **limits))
    (r,) = play_batch([s], bots, str(results))
    log = results / "logs" / "spy"
    text = "".join(p.read_text() for p in log.iterdir()) if log.is_dir() else ""
    lines = [x for x in text.splitlines() if x.startswith("SPY ")]
    assert not leftovers()
    return lines, r


def verdict(lines: list[str], leak: str) -> str:
    (line,) = [x for x in lines if x.split()[2] == leak]
    return line.split()[1]


def expect(mode: str) -> str:
    return "LEAK" if mode == "none" else "BLOCKED"


@pytest.mark.parametrize("mode", MODES)
def test_process_scan_does_not_show_the_opponent(tmp_path, mode):
    lines, r = spy_run(tmp_path, mode, "proc_scan")
    assert r.status == "ok", r.faults
    assert verdict(lines, "proc_scan") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_environment_of_other_processes_is_unreadable(tmp_path, mode):
    # another process of the arena's user whose environment holds a secret (a shell with
    # tokens, the arena's own parent): the bot must not read it
    marker = uuid.uuid4().hex
    neighbour = subprocess.Popen(["sleep", "60"], env={**os.environ, "CARDARENA_SPY_MARKER": marker})
    try:
        lines, _ = spy_run(tmp_path, mode, "environ", marker)
    finally:
        neighbour.kill()
        neighbour.wait()
    assert verdict(lines, "environ") == expect(mode), lines


@pytest.mark.parametrize("name", ["secret.json", "matches.jsonl", "tournament.json"])
@pytest.mark.parametrize("mode", MODES)
def test_results_folder_is_unreadable(tmp_path, mode, name):
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True)
    (results / name).write_text('{"salt": "SPY-SECRET"}\n')
    lines, _ = spy_run(tmp_path, mode, "read", str(results / name))
    assert verdict(lines, "read") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_other_tournaments_results_folders_are_unreadable(tmp_path, mode):
    # found by an adversarial trial: only the running tournament's folder was hidden, so a bot read
    # the salt of a tournament it would play later and rebuilt all of its deals
    other = tmp_path / "results" / "later-tournament"
    other.mkdir(parents=True)
    (other / "secret.json").write_text('{"salt": "SPY-SECRET"}\n')
    # the path as hex: a file named in a bot's command is bound into its sandbox as its own
    lines, _ = spy_run(tmp_path, mode, "readhex", str(other / "secret.json").encode().hex())
    assert verdict(lines, "readhex") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_memory_of_the_arena_is_unreadable(tmp_path, mode):
    lines, _ = spy_run(tmp_path, mode, "mem_arena", str(os.getpid()))
    assert verdict(lines, "mem_arena") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_memory_of_the_opponent_is_unreadable(tmp_path, mode):
    lines, _ = spy_run(tmp_path, mode, "mem_opponent")
    assert verdict(lines, "mem_opponent") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_ray_token_in_the_home_is_unreadable(tmp_path, mode, monkeypatch):
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text("SPY-SECRET token\n")
    monkeypatch.setenv("HOME", str(home))  # the arena's home: ~/.ray is hidden in the sandbox
    lines, _ = spy_run(tmp_path, mode, "read", str(home / ".ray" / "auth_token"))
    assert verdict(lines, "read") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_no_connection_to_a_listener_on_loopback(tmp_path, mode):
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(20)
    got: list[bytes] = []

    def accept():
        try:
            conn, _ = srv.accept()
            got.append(conn.recv(16))
            conn.close()
        except OSError:
            pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        lines, _ = spy_run(tmp_path, mode, "tcp", f"127.0.0.1:{srv.getsockname()[1]}")
    finally:
        srv.close()
        t.join(5)
    assert verdict(lines, "tcp") == expect(mode), lines
    assert (got == [b"spy"]) == (mode == "none"), got


@pytest.mark.parametrize("mode", MODES)
def test_files_outside_the_working_folder_are_read_only(tmp_path, mode):
    # outside /tmp (the sandbox's /tmp is private anyway): the project, other bots, the results
    victim = tempfile.mkdtemp(prefix="cardarena-test-", dir="/var/tmp")
    try:
        lines, _ = spy_run(tmp_path, mode, "write", os.path.join(victim, "planted.py"))
        assert verdict(lines, "write") == expect(mode), lines
        assert os.path.exists(os.path.join(victim, "planted.py")) == (mode == "none")
    finally:
        shutil.rmtree(victim, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_no_capabilities_inside_the_sandbox(tmp_path, mode):
    require(mode != "none" or os.geteuid() == 0, "unsandboxed, only root holds capabilities")
    lines, _ = spy_run(tmp_path, mode, "caps")
    assert verdict(lines, "caps") == expect(mode), lines


@pytest.mark.parametrize("mode", ["auto", "unshare"])
def test_a_hidden_results_folder_cannot_be_written(tmp_path, mode):
    """The empty tmpfs over the results folder is read-only: a root bot could chmod it and fill
    it with inodes (the seventh trial's re-check: 300,000 files, ~400 MB of kernel memory)."""
    root = Path(tempfile.mkdtemp(prefix="cardarena-test-", dir="/var/tmp"))  # not under /tmp (private there)
    try:
        target = root / "results" / "planted"  # in the hidden results root, a tmpfs the bot owns
        lines, r = spy_run(root, mode, "chmod_write", str(target))
        assert verdict(lines, "chmod_write") == "BLOCKED", lines
        assert not target.exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_no_nested_user_namespace_under_bubblewrap(tmp_path):
    """bubblewrap's ``--disable-userns`` (0.8+): a bot cannot make a user namespace and hold
    every capability in it (adversarial trial, 2026-12-04: CapEff 000001ffffffffff inside)."""
    require(bool(shutil.which("bwrap")), "bubblewrap is not installed")
    from arena.process.sandbox import _bwrap_offers

    require(_bwrap_offers(shutil.which("bwrap") or "", "--disable-userns"), "bubblewrap older than 0.8")
    lines, _ = spy_run(tmp_path, "auto", "nested_userns", sandbox="bwrap")  # bubblewrap itself, whatever auto picks
    assert verdict(lines, "nested_userns") == "BLOCKED", lines
    lines, _ = spy_run(tmp_path, "none", "nested_userns")  # the spy can see it where it is allowed
    assert verdict(lines, "nested_userns") == "LEAK", lines


def _daemons(marker: str) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter(["cmdline"]):
        if marker in (p.info["cmdline"] or []):
            out.append(p)
    return out


@pytest.mark.parametrize("mode", MODES)
def test_a_double_forked_daemon_does_not_survive_the_match(tmp_path, mode):
    marker = f"spy-daemon-{uuid.uuid4().hex}"
    lines, _ = spy_run(tmp_path, mode, "daemon", marker)
    assert verdict(lines, "daemon") == "LEAK", lines  # it did start
    deadline = time.time() + 5
    while _daemons(marker) and mode != "none" and time.time() < deadline:
        time.sleep(0.05)
    alive = _daemons(marker)
    for p in alive:
        p.kill()
    assert bool(alive) == (mode == "none"), [p.pid for p in alive]


@pytest.mark.parametrize("mode", MODES)
def test_memory_of_an_escaped_child_counts(tmp_path, mode):
    lines, r = spy_run(tmp_path, mode, "memory", "300", max_rss_mb=100)
    if mode == "none":
        assert r.status == "ok" and verdict(lines, "memory") == "LEAK", (lines, r.faults)
    else:
        assert r.status == "forfeit" and [f.cls for f in r.faults] == ["crash"], r.faults
        assert "resident memory" in r.faults[0].detail and "the limit is 100 MiB" in r.faults[0].detail


@pytest.mark.parametrize("mode", MODES)
def test_disk_fill_stops_at_max_disk_mb(tmp_path, mode):
    lines, r = spy_run(tmp_path, mode, "disk", "48", max_disk_mb=16)
    assert r.status == "ok", r.faults
    assert verdict(lines, "disk") == expect(mode), lines
    if mode != "none":
        written = int(next(x for x in lines if "disk" in x).split("after ")[1].split()[0])
        assert 8 <= written <= 16, lines  # the cap, not an earlier failure


@pytest.mark.parametrize("mode", ["auto", "unshare"])
def test_files_in_the_private_tmp_stop_at_max_files(tmp_path, mode):
    """Empty files cost no bytes of ``max_disk_mb`` but an inode each (~1 KiB of kernel memory):
    566,000 of them raised no fault (adversarial trial, 2026-12-04)."""
    lines, r = spy_run(tmp_path, mode, "files", "3000", max_files=1000)
    assert r.status == "forfeit" and [f.cls for f in r.faults] == ["crash"], r.faults
    assert "files in its /tmp; the limit is 1000 (limits.max_files)" in r.faults[0].detail, r.faults
    assert not any("still running" in x for x in lines), lines
    lines, r = spy_run(tmp_path, mode, "files", "300", max_files=1000)  # under the limit: plays on
    assert r.status == "ok" and verdict(lines, "files") == "LEAK", (r.faults, lines)


@pytest.mark.parametrize("mode", MODES)
def test_a_working_folder_swapped_for_a_link_never_makes_the_arena_delete_its_target(tmp_path, mode):
    # found by an adversarial trial: the arena emptied the folder between matches through the
    # link, i.e. it deleted the contents of any host folder the bot named (as root)
    from arena.specs import BotSpec

    victim = tempfile.mkdtemp(prefix="cardarena-victim-", dir="/var/tmp")
    open(os.path.join(victim, "keep.txt"), "w").close()
    os.mkdir(os.path.join(victim, "sub"))
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True)
    bots = {"spy": BotSpec("spy", (sys.executable, SPY, "swaplink", victim), cwd=HERE), "random": RANDOM}
    specs = [replace(spec(["spy", "random"], deal=d, clock=CLOCK), limits=limits_for(mode)) for d in range(3)]
    try:
        res = play_batch(specs, bots, str(results))  # one process per seat for the batch: reset between matches
        assert all(r.status == "ok" for r in res), [(r.status, r.faults) for r in res]
        text = "".join(p.read_text() for p in (results / "logs" / "spy").iterdir())
        assert "SPY LEAK swaplink" in text, text[-2000:]  # the link was planted
        assert sorted(os.listdir(victim)) == ["keep.txt", "sub"]
        assert not leftovers()
    finally:
        shutil.rmtree(victim, ignore_errors=True)
        from arena.process import workdir_root

        for name in os.listdir(workdir_root()):  # unsandboxed, the spy's renamed folder stays behind
            if name.endswith(".old") or os.path.islink(os.path.join(workdir_root(), name)):
                p = os.path.join(workdir_root(), name)
                os.unlink(p) if os.path.islink(p) else shutil.rmtree(p, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_the_kernel_keyring_is_no_channel_between_bot_processes(tmp_path, mode):
    # found by an adversarial trial: root bots shared root's user keyring across matches and runs
    import ctypes

    require(platform_has_keyrings(), "no kernel keyrings here")
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        put, _ = spy_run(tmp_path / "a", mode, "keyring", "put")
        assert verdict(put, "keyring") == "LEAK", put  # a bot can use its own keyring
        got, _ = spy_run(tmp_path / "b", mode, "keyring", "get")  # another process, later
        assert verdict(got, "keyring") == expect(mode), got
    finally:
        key = libc.syscall(250, 10, -4, b"user", b"cardarena-spy-key", 0)
        if key > 0:
            libc.syscall(250, 21, key)  # KEYCTL_INVALIDATE


def platform_has_keyrings() -> bool:
    return os.path.exists("/proc/keys")


@pytest.mark.parametrize("mode", MODES)
def test_rays_private_folder_in_tmpdir_outside_tmp_is_hidden(tmp_path, mode, monkeypatch):
    # adversarial finding (2026-12-01, evening): with TMPDIR outside /tmp the arena's Ray folder
    # (token, raylet socket) was visible to bots, which read the token and killed the raylet
    import shutil
    import tempfile
    from pathlib import Path

    from arena.process.sandbox_view import RAY_DIR_PREFIX

    base = Path(tempfile.mkdtemp(prefix="cardarena-test-", dir="/var/tmp"))  # outside /tmp (the sandbox's own)
    try:
        ray_dir = base / f"{RAY_DIR_PREFIX}spy"
        ray_dir.mkdir()
        (ray_dir / "auth_token").write_text("SPY-SECRET token\n")
        monkeypatch.setattr(tempfile, "tempdir", str(base))  # what TMPDIR=... gives tempfile.gettempdir()
        lines, _ = spy_run(tmp_path, mode, "read", str(ray_dir / "auth_token"))
        assert verdict(lines, "read") == expect(mode), lines
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_no_descriptor_beyond_stdio_reaches_the_bot(tmp_path, mode):
    # third adversarial trial: bwrap's bots inherited fd 63 (the process substitution that fed
    # bwrap its options); nothing but stdin, stdout and stderr may reach a bot
    lines, _ = spy_run(tmp_path, mode, "fds")
    assert verdict(lines, "fds") == "BLOCKED", lines
    # the spy sees a descriptor its command inherits (the test can fail)
    leaky = ("bash", "-c", f'exec 7</dev/null; exec {sys.executable} {SPY} fds ""')
    lines, _ = spy_run(tmp_path / "leaky", mode, "fds", cmd=leaky)
    assert verdict(lines, "fds") == "LEAK" and "'7'" in lines[0], lines
