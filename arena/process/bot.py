"""One running bot process: spawn, limits, stdin/stdout/stderr, memory, kill.

A :class:`BotProcess` is spawned in its own session (hence its own process group) with
exactly the environment of DESIGN (:func:`arena.process.launch.bot_env`) behind the
wrappers of :func:`arena.process.launch.wrapper_argv`, in a private working directory that
:meth:`BotProcess.reset_workdir` empties before every match.

(~650 lines: one process's life — spawn, I/O, memory, exit — in one class; the memory gauges
(memfd, System V) are the part to move out next.)

Memory is limited by resident size: the RSS of the process and its descendants, plus the
``memfd`` files they hold (:func:`arena.process.tree.memfd_bytes`) and their System V shared
memory (:mod:`arena.process.sysvshm`), is polled (by
:meth:`BotProcess.check`) and the whole group is killed above ``max_rss_mb``. A sandboxed bot
that closes its stdout while alive is a crash at the next check (the sandbox tool keeps the
pipe open, so no end of file comes); :meth:`BotProcess.pause` stops every process of the bot
between its turns (``MatchSpec.pause_idle``), :meth:`BotProcess.send` resumes it.
Killing (:meth:`BotProcess.kill`) sends SIGTERM to the group and to every known
descendant (also those that started their own session; in a sandbox, to the processes
inside it only), then SIGKILL after a short grace, and reaps the leader and any orphan
re-parented to the arena (see :mod:`arena.process.reaping`). The grace ends as soon as no
target is running any more: zombies have died (:func:`~arena.process.reaping.pid_running`).
"""

from __future__ import annotations

import logging
import os
import pwd
import select
import signal
import subprocess
import time
from collections import deque
from typing import TYPE_CHECKING

from arena.errors import BotCrashed, BotFault, ProtocolError
from arena.process.launch import (
    bot_env,
    env_assignments,
    prlimit_available,
    resolve_argv,
    wrapper_argv,
)
from arena.process.reaping import TRACKER, make_subreaper, pid_running, reap_all, sweep_orphans
from arena.process.sandbox import effective_mode, sandbox_binds
from arena.process.stderr import StderrLog
from arena.process.sysvshm import ShmGauge
from arena.process.tree import (
    cont_tree,
    in_bot,
    memfd_bytes,
    memfd_paths,
    pipe_holder,
    stop_tree,
    walk,
)
from arena.process.workdirs import open_root_for_other_users, remove_workdir
from arena.protocol import MAX_LINE_BYTES
from arena.specs import BotSpec, Limits

if TYPE_CHECKING:
    from arena.process.hub import Hub

log = logging.getLogger(__name__)

#: read size per ready event (a max-size line takes two reads). Kept below glibc's default
#: mmap threshold (128 KiB): a larger ``os.read`` buffer can cost mmap + mremap + munmap per read.
CHUNK = 64 * 1024
#: stdout lines that may wait unread before the bot is flooding (a protocol fault).
MAX_QUEUED_LINES = 64
#: how long a fault record waits for the end of an exited bot's stderr (held open by a
#: descendant, or not read yet), seconds.
STDERR_DRAIN_S = 0.5
#: housekeeping period while waiting (exits, memory, wall budget), seconds.
TICK_S = 0.1
#: time between SIGTERM and SIGKILL of a bot's group, seconds.
TERM_GRACE_S = 0.2
#: seconds a sandboxed bot that closed its stdout is given to exit (then its exit code is the fault)
EXIT_WAIT_S = 0.5

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_pages(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return -1


class BotProcess:
    """One running bot.

    :ivar spec: the :class:`BotSpec`.
    :ivar seat: the seat it plays (set by the caller; used in fault records).
    :ivar workdir: its private working directory (``HOME``), emptied before every match.
    :ivar lines: complete stdout lines not yet consumed, as ``(line, t_read)`` with
        ``t_read`` from :func:`time.perf_counter`.
    :ivar violation: a protocol fault seen while reading (oversized line, flood), or None.
    :ivar eof: stdout was closed.
    :ivar stderr: the head+tail capture of stderr since the last :meth:`StderrLog.take`
        (and the most recent bytes ever written, :meth:`StderrLog.tail_text`).
    :ivar started: ``perf_counter`` time of the spawn.
    :ivar fresh: no ``start`` has been answered yet (the start-up limit applies).
    """

    def __init__(self, spec: BotSpec, limits: Limits, workdir: str, seat: int = -1) -> None:
        self.spec, self.limits, self.workdir, self.seat = spec, limits, workdir, seat
        self.lines: deque[tuple[bytes, float]] = deque()
        self.violation: ProtocolError | None = None
        self.eof = False
        self.stderr = StderrLog()
        self._stderr_eof = False
        self.fresh = True
        self._buf = bytearray()
        self._pending = bytearray()
        self._hub: Hub | None = None
        self._known: dict[int, float] = {}
        self._scan_at = 0.0
        self.returncode: int | None = None
        self.rss_peak_mb = 0.0
        self._killed = False
        self._ns_pid: int | None = None
        self._paused: list[int] = []
        self._memfds: list[str] = []
        self._files_at = 0.0  # when the private tmpfs's files are next counted
        self._shm = ShmGauge()
        self._is_bot: dict[int, bool | None] = {}
        self._holder: int | None = None
        make_subreaper()
        try:
            self.proc = self._spawn()
        except BaseException:
            remove_workdir(workdir)  # the process owns its directory, even when it never started
            raise
        self.pid = self.proc.pid
        TRACKER.started(self)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr  # all three are pipes
        self._pipes = (self.proc.stdin, self.proc.stdout, self.proc.stderr)
        self.stdin_fd, self.stdout_fd, self.stderr_fd = (f.fileno() for f in self._pipes)
        for fd in (self.stdin_fd, self.stdout_fd, self.stderr_fd):
            os.set_blocking(fd, False)
        self._stdout_ino = os.fstat(self.stdout_fd).st_ino
        if not prlimit_available():
            self._apply_limits_late()
        log.debug("spawned %s pid %d in sandbox %s", spec.name, self.pid, self.mode)

    def _spawn(self) -> subprocess.Popen[bytes]:
        """Start the wrapper chain and the bot (``self.mode``: the effective sandbox)."""
        spec, limits, workdir = self.spec, self.limits, self.workdir
        self.mode = effective_mode(limits)
        bot_argv = resolve_argv(spec)
        binds = sandbox_binds(spec, bot_argv) if self.mode != "none" else []
        argv = wrapper_argv(limits, workdir, binds, self.mode, env_assignments(spec)) + bot_argv
        if limits.bot_user and os.geteuid() == 0:
            pw = pwd.getpwnam(limits.bot_user)
            os.chown(workdir, pw.pw_uid, pw.pw_gid)
            if self.mode == "none":
                open_root_for_other_users()
        self.started = time.perf_counter()
        try:
            return subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=workdir, env=bot_env(spec, workdir), start_new_session=True, close_fds=True,
                bufsize=0)
        except (OSError, ValueError) as e:  # ValueError: a NUL in its command or env (the config refuses those)
            raise BotCrashed(f"bot {spec.name!r} could not start: {e}") from None

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
        if self.mode != "none" and rc > 128:
            rc = 128 - rc  # a sandbox exits with 128 + N when the bot was killed by signal N
        if rc < 0:
            try:
                return f"killed by {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exited with code {rc}"

    def descendants(self) -> list[int]:
        """Pids of the process's descendants (any session), via /proc parent links (none once
        the leader is reaped: its pid may belong to another process by then)."""
        if self.returncode is not None:
            return []
        try:
            import psutil
            pids = [p.pid for p in psutil.Process(self.pid).children(recursive=True)]
        except Exception:  # noqa: BLE001 - gone or unreadable
            return []
        TRACKER.descendants.update(pids)
        return pids

    def rss_mb(self) -> float:
        """Memory of the bot, MiB: the resident size of the process and its descendants plus
        the ``memfd`` files they hold open or mapped, each file once, plus their System V shared
        memory (:class:`arena.process.sysvshm.ShmGauge`, read a second late); descendants, memfds and segments
        rescanned each second; a memfd or segment also mapped and touched counts twice."""
        now = time.perf_counter()
        if now >= self._scan_at:
            self._scan_at = now + 1.0
            for pid in self.descendants():
                self._known.setdefault(pid, now)
            self._memfds = [p for pid in (self.pid, *self._known) for p in memfd_paths(pid, maps=True)]
            self._shm.update([self.pid, *self._known])
        total = _rss_pages(self.pid)
        for pid in list(self._known):
            pages = _rss_pages(pid)
            if pages < 0:
                del self._known[pid]
            else:
                total += pages
        mb = max(total, 0) * _PAGE / 2**20
        if self._memfds:
            mb += memfd_bytes(self._memfds) / 2**20
        mb += self._shm.bytes / 2**20
        self.rss_peak_mb = max(self.rss_peak_mb, mb)
        return mb

    def check(self) -> None:
        """Housekeeping: raise a fault if the process died, overran memory or flooded.

        :raises BotCrashed: the leader exited, memory (resident + memfd) exceeded ``max_rss_mb``
            (the group is killed first), or a sandboxed bot closed its stdout.
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
                    f"bot {self.name!r} used {mb:.0f} MiB resident memory (memfd files included); "
                    f"the limit is {limit} MiB" + self._shm_note()))
        if self.mode != "none" and not self.fresh:
            self._check_files()
        if self.mode != "none" and not self.fresh and self.stdout_closed():
            if self._exits_within(EXIT_WAIT_S):  # an exiting bot closes its stdout first
                raise self._tag(BotCrashed(f"bot {self.name!r} {self.describe_exit()}"))
            raise self._tag(BotCrashed(f"bot {self.name!r} closed its stdout (its process is still running)"))

    def _check_files(self) -> None:
        """Every second: the files in the sandbox's private ``/tmp`` and ``/dev/shm`` (their used
        inodes, ``statvfs``) against ``max_files`` (566,000 empty files held ~500 MiB of kernel
        memory and no fault: adversarial trial, 2026-12-04).

        :raises BotCrashed: over the limit (the group is killed first)."""
        now = time.perf_counter()
        if now < self._files_at:
            return
        self._files_at = now + 1.0
        where = self.visible_workdir()
        if where == self.workdir:  # the sandbox's root is not in sight (yet)
            return
        root = where[: -len(self.workdir)]
        for mount in ("/tmp", "/dev/shm"):
            try:
                st = os.statvfs(root + mount)
            except OSError:
                continue
            used = st.f_files - st.f_ffree
            if used > self.limits.max_files:
                self.kill()
                raise self._tag(BotCrashed(f"bot {self.name!r} made {used} files in its {mount}; the limit is "
                                           f"{self.limits.max_files} (limits.max_files)"))

    def _exits_within(self, wait_s: float) -> bool:
        """Whether the leader exits within ``wait_s`` seconds (reaped if it does)."""
        try:
            self.returncode = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _shm_note(self) -> str:
        mb = self._shm.bytes / 2**20
        return f" ({mb:.0f} MiB of it in System V shared memory segments)" if mb >= 1 else ""

    def stdout_closed(self) -> bool:
        """Whether a sandboxed bot's own processes (:func:`arena.process.tree.in_bot`) hold the
        arena's stdout pipe no more. False while none of them is seen (starting or exiting);
        unsandboxed bots give end of file instead (the hub reads it)."""
        holder = self._holder
        if holder is not None and pipe_holder([holder], self._stdout_ino, fds=("1",)) is not None:
            return False  # the usual case, one readlink: the last holder still has it as fd 1
        cache = self._is_bot
        mine = []
        for pid in walk(self.pid, self._known):
            if pid not in cache:
                cache[pid] = in_bot(pid)
            if cache[pid]:
                mine.append(pid)
        if not mine:
            return False
        self._holder = pipe_holder(mine, self._stdout_ino)
        return self._holder is None

    def pause(self) -> None:
        """SIGSTOP every process of the bot (it is not its turn); :meth:`resume` (or any
        :meth:`send`) lets them run again. No-op if already paused or exited."""
        if self._paused or self.returncode is not None:
            return
        self._paused = stop_tree(self.pid, self._known)

    def resume(self) -> None:
        """SIGCONT what :meth:`pause` stopped."""
        if self._paused:
            cont_tree(self._paused)
            self._paused = []

    def cpu_seconds(self) -> float:
        """CPU time used so far by the bot (user + system), seconds; 0 if unknown: the
        leader's, or in a sandbox the busiest of the sandbox's processes (the leader is then
        the sandbox tool, and RLIMIT_CPU counts per process)."""
        pids = [self.pid] if self.mode == "none" else [self.pid, *self.descendants()]
        best = 0.0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                best = max(best, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
            except (OSError, IndexError, ValueError):
                pass
        return best

    def _tag(self, fault: BotFault) -> BotFault:
        fault.process = self  # type: ignore[attr-defined]
        return fault

    # ------------------------------------------------------------ I/O

    def send(self, data: bytes) -> None:
        """Write ``data`` to the bot's stdin without blocking (the rest is written by the hub).

        :raises BotCrashed: if the bot closed its stdin or exited (unless it left a line on its
            stdout: that line is read first, e.g. a protocol error said before exiting).
        """
        if self._paused:
            self.resume()
        if self._pending:
            self._pending += data
            return
        try:
            n = os.write(self.stdin_fd, data)
        except BlockingIOError:
            n = 0
        except (BrokenPipeError, OSError):
            if self._hub is not None and self._hub._drain(self):  # it wrote before it went: read that first
                self.eof = True
                return
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
        if not buf and data[-1] == 10 and data.find(b"\n") == len(data) - 1:
            # the common case: exactly one whole line, nothing buffered before it
            line = data[:-1]
            if line[-1:] == b"\r":
                line = line[:-1]
            lines = self.lines
            lines.append((line, now))
            if len(lines) > MAX_QUEUED_LINES and self.violation is None:
                self.violation = ProtocolError(
                    f"bot {self.name!r} flooded stdout with {len(lines)} unrequested lines")
                lines.clear()
            return
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

    def drain_stderr(self, wait_s: float = 0.0) -> None:
        """Read what is left in the stderr pipe into :attr:`stderr` (the hub reads it only
        while it waits for a line).

        :param wait_s: when the process has exited, wait up to this long for the end of the
            pipe (a descendant may still hold it open); a live process is never waited for.
        """
        if self._stderr_eof or self._pipes[2].closed:
            return
        fd = self.stderr_fd
        deadline = time.perf_counter() + wait_s
        for _ in range(64):  # at most 4 MiB from a process that is still writing
            try:
                data = os.read(fd, CHUNK)
            except BlockingIOError:
                left = deadline - time.perf_counter()
                if left <= 0 or self.alive():
                    return
                select.select([fd], [], [], min(left, TICK_S))
                continue
            except OSError:
                data = b""
            if not data:
                self._stderr_eof = True
                if self._hub is not None:
                    self._hub._drop(fd)
                return
            self.stderr.feed(data)

    def visible_workdir(self) -> str:
        """The working directory as the arena reaches it: in a sandbox it lives in the
        sandbox's own ``/tmp``, reached through ``/proc/<pid>/root`` of a process of the
        sandbox (one in another mount namespace than the arena's); else :attr:`workdir`."""
        if self.mode == "none":
            return self.workdir
        if self._ns_pid is None or not os.path.exists(f"/proc/{self._ns_pid}"):
            self._ns_pid = None
            try:
                mine = os.stat("/proc/self/ns/mnt").st_ino
                for pid in [self.pid, *self.descendants()]:
                    if os.stat(f"/proc/{pid}/ns/mnt").st_ino != mine:
                        self._ns_pid = pid
                        break
            except OSError:
                pass
        if self._ns_pid is None:
            return self.workdir
        return f"/proc/{self._ns_pid}/root{self.workdir}"

    def reset_workdir(self) -> None:
        """Empty the working directory (a fresh, empty directory for every match).

        A process that has not answered a ``start`` yet is left alone: its folder is new (and
        its sandbox may still be mounting it). Mount points are never entered, and no symbolic
        link is followed: the path is opened one component at a time (``O_NOFOLLOW``) and
        emptied through file descriptors, so a bot that swaps its folder or an entry for a
        link to a host path cannot make the arena delete anything outside the folder.
        """
        if self.fresh:
            return
        where = self.visible_workdir()  # the workdir itself, or /proc/<pid>/root + the workdir
        root = where[: -len(self.workdir)] if where != self.workdir else "/"
        try:
            fd = open_no_follow(root, self.workdir)
        except OSError:
            return
        try:
            clear_dir_fd(fd, os.fstat(fd).st_dev)
        finally:
            os.close(fd)

    # ------------------------------------------------------------ ending

    def kill(self) -> None:
        """Terminate then kill the whole group and every known descendant; reap; read what is
        left of stderr (:meth:`drain_stderr`: what the bot wrote while dying reaches its log);
        close pipes; delete the working directory (no per-process directory outlives its process).

        Idempotent. Waits at most about ``TERM_GRACE_S`` + 1 s.
        """
        if self._hub is not None:
            self._hub.remove(self)
        if self._killed:
            return
        self._killed = True
        self._shm.close()
        self.resume()  # a stopped process would act on SIGTERM only when continued
        targets = set(self.descendants()) | set(self._known)
        # in a sandbox the leader is the sandbox tool: terminated first, it would take the bot
        # down at once with SIGKILL, before the bot's own SIGTERM handler could run
        self._signal_all(signal.SIGTERM, targets, leader=self.mode == "none")
        deadline = time.monotonic() + TERM_GRACE_S
        while time.monotonic() < deadline:
            if not self.alive() and not any(pid_running(p) for p in targets):
                break
            time.sleep(0.005)
        targets |= set(self.descendants())
        self._signal_all(signal.SIGKILL, targets)
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            log.warning("bot %s pid %d did not die after SIGKILL", self.name, self.pid)
        self.alive()
        reap_all(targets - {self.pid})  # the leader is reaped by proc.wait / alive()
        sweep_orphans()
        self.drain_stderr()  # its last words, for the logs
        self._close_pipes()
        TRACKER.ended(self)
        remove_workdir(self.workdir)

    def _signal_all(self, sig: int, pids: set[int], leader: bool = True) -> None:
        if leader and self.returncode is None:
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
        self.resume()
        try:
            self._pipes[0].close()
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
        for f in self._pipes:
            try:
                f.close()
            except OSError:
                pass


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_no_follow(base: str, path: str) -> int:
    """A descriptor of directory ``path`` (absolute) under ``base`` (a directory trusted as is,
    e.g. ``/proc/<pid>/root``), opened one component at a time without following links.

    :raises OSError: a component is missing, not a directory, or a symbolic link.
    """
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in [p for p in path.split("/") if p]:
            if part == "..":
                raise OSError(f"'..' in {path!r}")
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def clear_dir_fd(fd: int, dev: int, depth: int = 0) -> None:
    """Delete every entry of the directory open as ``fd`` on device ``dev`` (other devices —
    mount points — are left alone), never following a link; best effort (errors skipped;
    nesting deeper than 64 levels is left to the folder's removal when the process ends)."""
    import stat

    if depth > 64:
        return
    try:
        names = os.listdir(fd)
    except OSError:
        return
    for name in names:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if st.st_dev != dev:
                continue
            if stat.S_ISDIR(st.st_mode):
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                try:
                    clear_dir_fd(sub, dev, depth + 1)
                finally:
                    os.close(sub)
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except OSError:
            pass
