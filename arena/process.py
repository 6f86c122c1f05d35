"""One bot subprocess: spawn, limits, I/O, deadlines, kill, logs (DESIGN "Isolation").

A :class:`BotProcess` is one running bot. It is spawned in its own session (hence its
own process group) with exactly the environment of DESIGN (``PATH``, ``HOME`` = its
working directory, ``LANG``, ``PYTHONUNBUFFERED``, ``PYTHONHASHSEED`` plus the bot's
``env``) and a private working directory that :meth:`BotProcess.reset_workdir` empties
before every match. Limits are applied without ``preexec_fn`` (unsafe in threaded
processes such as Ray workers) by exec-ing small wrappers in front of the command:
``setpriv`` (parent-death signal, ``bot_user``), ``prlimit`` (open files, CPU seconds),
``env --default-signal`` (signal dispositions reset: ignored signals survive ``exec``),
``unshare -n`` (``network: deny``) or ``bwrap`` (``sandbox: bwrap``). Each wrapper execs
the next, so the bot keeps the pid that the arena spawned.

A :class:`Hub` multiplexes the pipes of many processes with one selector: stdout is split
into lines (each capped), stderr is drained continuously into a head+tail capture, and
:meth:`Hub.wait_line` waits for the next line of one process while polling a deadline and
calling a housekeeping ``tick`` every 100 ms (exits, resident memory, wall budget).

Memory is limited by resident size: the RSS of the process and its descendants is polled
(by :meth:`BotProcess.check_memory`) and the whole group is killed above ``max_rss_mb``.
Killing (:meth:`BotProcess.kill`) sends SIGTERM to the group and to every known
descendant (also those that started their own session), then SIGKILL after a short grace,
and reaps the leader and any orphan re-parented to the arena (the arena makes itself a
child subreaper, so escaped grandchildren come back to it instead of to init).
"""

from __future__ import annotations

import ctypes
import logging
import os
import pwd
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable

from arena.errors import BotCrashed, BotFault, BotTimeout, ProtocolError
from arena.protocol import MAX_LINE_BYTES
from arena.specs import BotSpec, Limits

log = logging.getLogger(__name__)

#: read size per ready event.
CHUNK = 256 * 1024
#: stdout lines that may wait unread before the bot is flooding (a protocol fault).
MAX_QUEUED_LINES = 64
#: stderr bytes kept from the start and from the end of each match's log.
STDERR_HEAD = 16 * 1024
STDERR_TAIL = 16 * 1024
#: characters of stderr attached to a fault record.
FAULT_TAIL_CHARS = 2000
#: housekeeping period while waiting (exits, memory, wall budget), seconds.
TICK_S = 0.1
#: time between SIGTERM and SIGKILL of a bot's group, seconds.
TERM_GRACE_S = 0.2

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_done = False
_PAGE = os.sysconf("SC_PAGE_SIZE")


def make_subreaper() -> bool:
    """Make this process a child subreaper (Linux), so orphaned bot descendants are re-parented
    to it and can be found, killed and reaped. Idempotent; returns whether it succeeded."""
    global _subreaper_done
    if _subreaper_done:
        return True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper_done = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper_done = False
    return _subreaper_done


class StderrLog:
    """A capped capture of a byte stream: the first ``head`` and the last ``tail`` bytes.

    :ivar total: bytes seen since the last :meth:`take`.
    """

    __slots__ = ("head", "tail", "total", "head_cap", "tail_cap")

    def __init__(self, head_cap: int = STDERR_HEAD, tail_cap: int = STDERR_TAIL) -> None:
        self.head_cap, self.tail_cap = head_cap, tail_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Append ``data``; memory stays bounded by ``2 * (head_cap + tail_cap)``."""
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:
                del self.tail[:-self.tail_cap]

    def text(self) -> str:
        """Head, a marker with the number of omitted bytes if any, and tail, decoded."""
        tail = bytes(self.tail[-self.tail_cap:])
        omitted = self.total - len(self.head) - len(tail)
        out = self.head.decode("utf-8", "replace")
        if omitted > 0:
            out += f"\n[... {omitted} bytes omitted ...]\n"
        return out + tail.decode("utf-8", "replace")

    def tail_text(self, chars: int = FAULT_TAIL_CHARS) -> str:
        """The last ``chars`` characters seen."""
        return self.text()[-chars:]

    def take(self) -> str:
        """:meth:`text`, then reset."""
        out = self.text()
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        return out


def resolve_argv(spec: BotSpec) -> list[str]:
    """The bot's argv with ``python``/``python3`` replaced by the arena's interpreter and
    relative paths resolved against ``spec.cwd`` (the project root).

    :raises ValueError: for an empty command.
    """
    if not spec.cmd:
        raise ValueError(f"bot {spec.name!r}: empty command")
    cwd = os.path.abspath(spec.cwd)
    argv = list(spec.cmd)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    elif "/" in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.join(cwd, argv[0])
    for i in range(1, len(argv)):
        a = argv[i]
        if a and not a.startswith("-") and not os.path.isabs(a):
            p = os.path.join(cwd, a)
            if os.path.exists(p):
                argv[i] = p
    return argv


def bot_env(spec: BotSpec, workdir: str) -> dict[str, str]:
    """Exactly DESIGN's environment: the arena's ``PATH``, ``HOME`` = ``workdir``, ``LANG``,
    ``PYTHONUNBUFFERED``, ``PYTHONHASHSEED`` and the bot's ``env`` keys."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": workdir, "LANG": "C.UTF-8",
           "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"}
    env.update(dict(spec.env))
    return env


def wrapper_argv(limits: Limits, workdir: str) -> list[str]:
    """The wrapper commands exec-ed before the bot (see the module docstring).

    :raises ValueError: if ``sandbox: bwrap`` or ``network: deny`` is asked for and the tool
        is missing, or ``bot_user`` names no user.
    """
    out: list[str] = []
    if limits.sandbox == "bwrap":
        bwrap = shutil.which("bwrap")
        if not bwrap:
            raise ValueError("sandbox: bwrap needs bubblewrap (apt-get install bubblewrap)")
        out += [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--bind", workdir, workdir,
                "--chdir", workdir, "--unshare-pid", "--unshare-ipc", "--die-with-parent",
                "--new-session"]
        if limits.network == "deny":
            out.append("--unshare-net")
        out.append("--")
    elif limits.network == "deny":
        unshare = shutil.which("unshare")
        if not unshare:
            raise ValueError("network: deny needs unshare (util-linux)")
        out += [unshare, "--net", "--"]
    setpriv = shutil.which("setpriv")
    if setpriv:
        out += [setpriv, "--pdeathsig", "KILL"]
        if limits.bot_user and os.geteuid() == 0:
            try:
                pw = pwd.getpwnam(limits.bot_user)
            except KeyError:
                raise ValueError(f"bot_user {limits.bot_user!r} is not a user of this machine") from None
            out += [f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]
        out.append("--")
    prlimit = shutil.which("prlimit")
    if prlimit:
        out += [prlimit, f"--nofile={limits.max_open_files}:{limits.max_open_files}"]
        if limits.cpu_s:
            out.append(f"--cpu={limits.cpu_s}:{limits.cpu_s}")
        out.append("--")
    if _env_resets_signals():
        # ignored signals survive exec: a Ray worker ignores SIGCHLD, which breaks bots' wait()
        out += [shutil.which("env") or "/usr/bin/env", "--default-signal", "--"]
    return out


_ENV_OK: bool | None = None


def _env_resets_signals() -> bool:
    """Whether ``env --default-signal`` (GNU coreutils >= 8.31) is available (checked once)."""
    global _ENV_OK
    if _ENV_OK is None:
        env = shutil.which("env")
        try:
            _ENV_OK = bool(env) and subprocess.run(
                [env, "--default-signal", "--", "true"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=5).returncode == 0
        except (OSError, subprocess.SubprocessError):
            _ENV_OK = False
    return _ENV_OK


class BotProcess:
    """One running bot.

    :ivar spec: the :class:`BotSpec`.
    :ivar seat: the seat it plays (set by the caller; used in fault records).
    :ivar workdir: its private working directory (``HOME``), emptied before every match.
    :ivar lines: complete stdout lines not yet consumed, as ``(line, t_read)`` with
        ``t_read`` from :func:`time.perf_counter`.
    :ivar violation: a protocol fault seen while reading (oversized line, flood), or None.
    :ivar eof: stdout was closed.
    :ivar stderr: the head+tail capture of stderr since the last :meth:`StderrLog.take`.
    :ivar started: ``perf_counter`` time of the spawn.
    :ivar fresh: no ``start`` has been answered yet (the start-up limit applies).
    """

    def __init__(self, spec: BotSpec, limits: Limits, workdir: str, seat: int = -1) -> None:
        self.spec, self.limits, self.workdir, self.seat = spec, limits, workdir, seat
        self.lines: deque[tuple[bytes, float]] = deque()
        self.violation: ProtocolError | None = None
        self.eof = False
        self.stderr = StderrLog()
        self.fresh = True
        self._buf = bytearray()
        self._pending = bytearray()
        self._hub: Hub | None = None
        self._known: dict[int, float] = {}
        self._scan_at = 0.0
        self.returncode: int | None = None
        self.rss_peak_mb = 0.0
        make_subreaper()
        argv = wrapper_argv(limits, workdir) + resolve_argv(spec)
        if limits.bot_user and os.geteuid() == 0:
            pw = pwd.getpwnam(limits.bot_user)
            os.chown(workdir, pw.pw_uid, pw.pw_gid)
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, env=bot_env(spec, workdir), start_new_session=True, close_fds=True,
                bufsize=0)
        except OSError as e:
            raise BotCrashed(f"bot {spec.name!r} could not start: {e}") from None
        self.pid = self.proc.pid
        _LEADERS.add(self.pid)
        self.stdin_fd = self.proc.stdin.fileno()
        self.stdout_fd = self.proc.stdout.fileno()
        self.stderr_fd = self.proc.stderr.fileno()
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            os.set_blocking(fd, False)
        if not prlimit_available():
            self._apply_limits_late()
        log.debug("spawned %s pid %d: %s", spec.name, self.pid, argv)

    # ------------------------------------------------------------ limits and state

    def _apply_limits_late(self) -> None:
        import resource
        try:
            n = self.limits.max_open_files
            resource.prlimit(self.pid, resource.RLIMIT_NOFILE, (n, n))
            if self.limits.cpu_s:
                c = self.limits.cpu_s
                resource.prlimit(self.pid, resource.RLIMIT_CPU, (c, c))
        except (OSError, ValueError):
            pass

    @property
    def name(self) -> str:
        """The bot's name in the config."""
        return self.spec.name

    def alive(self) -> bool:
        """True while the leader has not exited (reaps it if it has)."""
        if self.returncode is not None:
            return False
        rc = self.proc.poll()
        if rc is None:
            return True
        self.returncode = rc
        return False

    def describe_exit(self) -> str:
        """``exited with code N`` / ``killed by SIGX`` / ``closed stdout``."""
        self.alive()
        rc = self.returncode
        if rc is None:
            return "closed its stdout"
        if rc < 0:
            try:
                return f"killed by {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exited with code {rc}"

    def descendants(self) -> list[int]:
        """Pids of the process's descendants (any session), via /proc parent links."""
        try:
            import psutil
            pids = [p.pid for p in psutil.Process(self.pid).children(recursive=True)]
        except Exception:  # noqa: BLE001 - gone or unreadable
            return []
        _DESCENDANTS.update(pids)
        return pids

    def rss_mb(self) -> float:
        """Resident size of the process and its descendants, MiB (descendants rescanned each second)."""
        now = time.perf_counter()
        if now >= self._scan_at:
            self._scan_at = now + 1.0
            for pid in self.descendants():
                self._known.setdefault(pid, now)
        total = _rss_pages(self.pid)
        for pid in list(self._known):
            pages = _rss_pages(pid)
            if pages < 0:
                del self._known[pid]
            else:
                total += pages
        mb = max(total, 0) * _PAGE / 2**20
        self.rss_peak_mb = max(self.rss_peak_mb, mb)
        return mb

    def check(self) -> None:
        """Housekeeping: raise a fault if the process died, overran memory or flooded.

        :raises BotCrashed: the leader exited, or resident memory exceeded ``max_rss_mb``
            (the group is killed first).
        :raises ProtocolError: an oversized line or a flood of unrequested lines.
        """
        if self.violation is not None:
            raise self._tag(self.violation)
        if not self.alive():
            raise self._tag(BotCrashed(f"bot {self.name!r} {self.describe_exit()}"))
        limit = self.limits.max_rss_mb
        if limit:
            mb = self.rss_mb()
            if mb > limit:
                self.kill()
                raise self._tag(BotCrashed(
                    f"bot {self.name!r} used {mb:.0f} MiB resident memory; the limit is {limit} MiB"))

    def cpu_seconds(self) -> float:
        """CPU time used so far by the leader (user + system), seconds; 0 if unknown."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def _tag(self, fault: BotFault) -> BotFault:
        fault.process = self  # type: ignore[attr-defined]
        return fault

    # ------------------------------------------------------------ I/O

    def send(self, data: bytes) -> None:
        """Write ``data`` to the bot's stdin without blocking (the rest is written by the hub).

        :raises BotCrashed: if the bot closed its stdin or exited.
        """
        if self._pending:
            self._pending += data
            return
        try:
            n = os.write(self.stdin_fd, data)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, OSError):
            raise self._tag(BotCrashed(f"bot {self.name!r} closed its stdin ({self.describe_exit()})")) from None
        if n < len(data):
            self._pending += data[n:]
            if self._hub is not None:
                self._hub._want_write(self, True)

    def _flush(self) -> None:
        try:
            n = os.write(self.stdin_fd, self._pending)
        except BlockingIOError:
            return
        except OSError:
            self._pending.clear()
            self.eof = True
            return
        del self._pending[:n]
        if not self._pending and self._hub is not None:
            self._hub._want_write(self, False)

    def _on_stdout(self, data: bytes, now: float) -> None:
        if not data:
            self.eof = True
            return
        buf = self._buf
        start = len(buf)
        buf += data
        idx = buf.find(b"\n", start)
        while idx >= 0:
            line = bytes(buf[:idx])
            del buf[:idx + 1]
            if line.endswith(b"\r"):
                line = line[:-1]
            self.lines.append((line, now))
            idx = buf.find(b"\n")
        if len(buf) > MAX_LINE_BYTES and self.violation is None:
            self.violation = ProtocolError(
                f"bot {self.name!r} wrote a line longer than {MAX_LINE_BYTES} bytes without a newline")
            buf.clear()
        if len(self.lines) > MAX_QUEUED_LINES and self.violation is None:
            self.violation = ProtocolError(
                f"bot {self.name!r} flooded stdout with {len(self.lines)} unrequested lines")
            self.lines.clear()

    def discard_lines(self) -> None:
        """Forget unread stdout lines and a partial line (after a timeout or between requests)."""
        self.lines.clear()
        self._buf.clear()

    def reset_workdir(self) -> None:
        """Empty the working directory (a fresh, empty directory for every match)."""
        for entry in os.scandir(self.workdir):
            try:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass

    # ------------------------------------------------------------ ending

    def kill(self) -> None:
        """Terminate then kill the whole group and every known descendant; reap; close pipes.

        Idempotent. Waits at most about ``TERM_GRACE_S`` + 1 s.
        """
        if self._hub is not None:
            self._hub.remove(self)
        targets = set(self.descendants()) | set(self._known)
        self._signal_all(signal.SIGTERM, targets)
        deadline = time.monotonic() + TERM_GRACE_S
        while time.monotonic() < deadline:
            if not self.alive() and not any(_pid_alive(p) for p in targets):
                break
            time.sleep(0.005)
        targets |= set(self.descendants())
        self._signal_all(signal.SIGKILL, targets)
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            log.warning("bot %s pid %d did not die after SIGKILL", self.name, self.pid)
        self.alive()
        _LEADERS.discard(self.pid)
        for pid in targets:
            _reap(pid)
        sweep_orphans()
        self._close_pipes()

    def _signal_all(self, sig: int, pids: set[int]) -> None:
        if self.returncode is None:
            try:
                os.killpg(self.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.killpg(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self, wait_s: float = 1.0) -> int | None:
        """End politely: close stdin (the bot should exit), wait up to ``wait_s``, then :meth:`kill`.

        :returns: the exit code if the bot exited by itself in time, else None.
        """
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        rc = None
        try:
            rc = self.proc.wait(timeout=wait_s)
            self.returncode = rc
        except subprocess.TimeoutExpired:
            rc = None
        self.kill()
        return rc

    def _close_pipes(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass


def prlimit_available() -> bool:
    """Whether the ``prlimit`` wrapper is used (else limits are set right after the spawn)."""
    return shutil.which("prlimit") is not None


def _rss_pages(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    except OSError:
        pass


def sweep_orphans(root: str | None = None) -> list[int]:
    """Kill and reap orphaned bot descendants re-parented to this (subreaper) process.

    An orphan is recognised as a bot's by its ``HOME``, which lies under the arena's
    working-directory root (``root``, default :func:`workdir_root`).

    :returns: the pids killed.
    """
    root = root or workdir_root()
    killed = []
    me = os.getpid()
    try:
        import psutil
        children = psutil.Process(me).children()
    except Exception:  # noqa: BLE001
        return killed
    for child in children:
        if child.pid in _LEADERS:
            continue
        try:
            env = child.environ()
        except Exception:  # noqa: BLE001 - gone or not ours
            env = {}
        try:
            zombie = child.status() == "zombie"
        except Exception:  # noqa: BLE001
            zombie = False
        if (zombie and child.pid in _DESCENDANTS) or env.get("HOME", "").startswith(root + os.sep):
            try:
                os.kill(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                os.waitpid(child.pid, 0)
                killed.append(child.pid)
            except ChildProcessError:
                pass
            _DESCENDANTS.discard(child.pid)
    return killed


#: pids of bot processes spawned and not yet killed (never swept as orphans).
_LEADERS: set[int] = set()
#: pids ever seen as descendants of a bot (so their zombies may be reaped by the sweep).
_DESCENDANTS: set[int] = set()


_ROOT: str | None = None


def workdir_root() -> str:
    """The directory under which every bot working directory of this arena process lives."""
    global _ROOT
    if _ROOT is None or not os.path.isdir(_ROOT):
        _ROOT = tempfile.mkdtemp(prefix="cardarena-bots-")
        os.chmod(_ROOT, 0o711)
    return _ROOT


def new_workdir(name: str) -> str:
    """A fresh, empty private directory for one bot process (removed by :func:`remove_workdir`)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40]
    d = tempfile.mkdtemp(prefix=f"{safe}-", dir=workdir_root())
    os.chmod(d, 0o700)
    return d


def remove_workdir(path: str) -> None:
    """Delete a bot working directory and its contents."""
    shutil.rmtree(path, ignore_errors=True)


class Hub:
    """One epoll set over the pipes of many bot processes.

    Reads whatever is available into each process's line queue and stderr capture, and
    writes pending stdin bytes, so no pipe ever fills while the arena waits for one bot.
    (``select.epoll`` is used directly: the :mod:`selectors` wrapper costs several µs per
    wait, a visible share of a ~30 µs round trip.)
    """

    def __init__(self) -> None:
        self.ep = select.epoll()
        self.fds: dict[int, tuple[BotProcess, int]] = {}
        self.procs: set[BotProcess] = set()

    def add(self, proc: BotProcess) -> None:
        """Watch ``proc``'s stdout and stderr (and stdin while bytes are pending)."""
        proc._hub = self
        self.procs.add(proc)
        for fd, kind in ((proc.stdout_fd, 1), (proc.stderr_fd, 2)):
            self.ep.register(fd, select.EPOLLIN)
            self.fds[fd] = (proc, kind)
        if proc._pending:
            self._want_write(proc, True)

    def remove(self, proc: BotProcess) -> None:
        """Stop watching ``proc`` (idempotent)."""
        if proc not in self.procs:
            return
        self.procs.discard(proc)
        for fd in (proc.stdout_fd, proc.stderr_fd, proc.stdin_fd):
            self._drop(fd)
        proc._hub = None

    def _want_write(self, proc: BotProcess, on: bool) -> None:
        fd = proc.stdin_fd
        if on:
            if fd not in self.fds:
                self.ep.register(fd, select.EPOLLOUT)
                self.fds[fd] = (proc, 0)
        else:
            self._drop(fd)

    def pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for pipe activity and handle all of it."""
        events = self.ep.poll(timeout)
        if not events:
            return
        now = time.perf_counter()
        fds = self.fds
        for fd, _mask in events:
            entry = fds.get(fd)
            if entry is None:
                continue
            proc, kind = entry
            if kind == 0:
                proc._flush()
                continue
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if kind == 1:
                proc._on_stdout(data, now)
                if not data:
                    self._drop(fd)
            elif data:
                proc.stderr.feed(data)
            else:
                self._drop(fd)

    def _drop(self, fd: int) -> None:
        if self.fds.pop(fd, None) is not None:
            try:
                self.ep.unregister(fd)
            except (OSError, ValueError):
                pass

    def wait_line(self, proc: BotProcess, deadline: float,
                  tick: Callable[[], None] | None = None) -> tuple[bytes, float]:
        """The next stdout line of ``proc``, waiting until ``deadline`` (``perf_counter`` time).

        Every :data:`TICK_S` ``tick()`` is called (it may raise a fault for any process) and
        ``proc`` itself is checked (exit, memory, flood).

        :returns: ``(line, t_read)``.
        :raises BotTimeout: nothing arrived by the deadline.
        :raises BotCrashed: stdout closed or the process exited.
        :raises ProtocolError: an oversized line or a flood.
        """
        lines = proc.lines
        next_tick = time.perf_counter() + TICK_S
        while True:
            if lines:
                if proc.violation is not None:
                    raise proc._tag(proc.violation)
                return lines.popleft()
            if proc.violation is not None:
                raise proc._tag(proc.violation)
            if proc.eof:
                if proc.alive():
                    _settle(proc)
                raise proc._tag(BotCrashed(f"bot {proc.name!r} {proc.describe_exit()}"))
            now = time.perf_counter()
            if now >= deadline:
                raise proc._tag(BotTimeout(f"bot {proc.name!r} did not reply in time"))
            if now >= next_tick:
                next_tick = now + TICK_S
                proc.check()
                if tick is not None:
                    tick()
            self.pump(max(0.0, min(deadline, next_tick) - now))

    def close(self) -> None:
        """Close the epoll set (processes are not killed)."""
        for p in list(self.procs):
            self.remove(p)
        self.ep.close()


def _settle(proc: BotProcess, wait_s: float = 0.5) -> bool:
    """Give a process that closed stdout a moment to exit, so its exit code can be reported."""
    try:
        proc.returncode = proc.proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
    return True
