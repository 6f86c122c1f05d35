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
into lines (each capped), stderr is drained continuously into a head+tail capture (read to
the end of the pipe before a fault is recorded and when the process is killed), and
:meth:`Hub.wait_line` waits for the next line of one process while polling a deadline and
calling a housekeeping ``tick`` every 100 ms (exits, resident memory, wall budget).

Before a batch starts anything, :func:`preflight` checks that every bot can run at all:
its command and script exist (:func:`check_command`), the sandbox starts
(:func:`check_sandbox`) and ``bot_user`` can execute the interpreter and read the script
(:func:`check_access`); otherwise :class:`BotSetupError` names the bot, the path and the
folder or user. A ``bwrap`` sandbox binds back, read-only, what its private ``/tmp`` would
hide (:func:`sandbox_binds`: interpreter prefix, project root, command and script
folders). Under Ray, :func:`default_sigchld` gives SIGCHLD its default disposition for
the batch, so exit codes and signals of bots are not lost.

Working directories live under one root per arena process (:func:`workdir_root`); a
process's directory is deleted when it is killed, and the root with the last of them.
Roots left by an arena that was killed outright are swept by the next one
(:func:`sweep_stale_roots`).

Memory is limited by resident size: the RSS of the process and its descendants is polled
(by :meth:`BotProcess.check_memory`) and the whole group is killed above ``max_rss_mb``.
Killing (:meth:`BotProcess.kill`) sends SIGTERM to the group and to every known
descendant (also those that started their own session), then SIGKILL after a short grace,
and reaps the leader and any orphan re-parented to the arena (the arena makes itself a
child subreaper, so escaped grandchildren come back to it instead of to init).
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import pwd
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

from arena.errors import ArenaError, BotCrashed, BotFault, BotTimeout, ProtocolError
from arena.protocol import MAX_LINE_BYTES
from arena.specs import BotSpec, Limits

log = logging.getLogger(__name__)

#: read size per ready event (a max-size line takes two reads). Kept below glibc's default
#: mmap threshold (128 KiB): a larger ``os.read`` buffer can cost mmap + mremap + munmap per read.
CHUNK = 64 * 1024
#: stdout lines that may wait unread before the bot is flooding (a protocol fault).
MAX_QUEUED_LINES = 64
#: stderr bytes kept from the start and from the end of each match's log.
STDERR_HEAD = 16 * 1024
STDERR_TAIL = 16 * 1024
#: characters of stderr attached to a fault record.
FAULT_TAIL_CHARS = 2000
#: most recent stderr bytes kept per process for fault records (not reset between matches).
RECENT_BYTES = 4 * FAULT_TAIL_CHARS
#: how long a fault record waits for the end of an exited bot's stderr (held open by a
#: descendant, or not read yet), seconds.
STDERR_DRAIN_S = 0.5
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

    Besides the capture (reset by :meth:`take` after every match, for the logs) it keeps the
    most recent :data:`RECENT_BYTES` bytes ever seen, which :meth:`tail_text` returns: a
    process that dies between two matches still has its last words for the fault record.

    :ivar total: bytes seen since the last :meth:`take`.
    """

    __slots__ = ("head", "tail", "total", "head_cap", "tail_cap", "recent")

    def __init__(self, head_cap: int = STDERR_HEAD, tail_cap: int = STDERR_TAIL) -> None:
        self.head_cap, self.tail_cap = head_cap, tail_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.recent = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        """Append ``data``; memory stays bounded by ``2 * (head_cap + tail_cap + RECENT_BYTES)``."""
        self.total += len(data)
        recent = self.recent
        recent += data[-RECENT_BYTES:]
        if len(recent) > 2 * RECENT_BYTES:
            del recent[:-RECENT_BYTES]
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
        """The last ``chars`` characters seen (also before the last :meth:`take`)."""
        return bytes(self.recent[-RECENT_BYTES:]).decode("utf-8", "replace")[-chars:]

    def take(self) -> str:
        """:meth:`text`, then reset the capture (not the recent bytes of :meth:`tail_text`)."""
        out = self.text()
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        return out


def stderr_excerpt(text: str, max_chars: int = 300, cut: bool = False) -> str:
    """The end of a bot's stderr for a one-screen message, cut on line boundaries.

    The last lines that fit in ``max_chars`` (newlines included), trailing blank lines
    dropped. When even the last line is longer, its beginning (where an error message
    says what went wrong) up to ``max_chars``, ending in ``…``.

    :param cut: ``text`` is a tail that may begin in the middle of a line (e.g.
        :attr:`arena.specs.Fault.stderr_tail` at its full length): its first line is then
        never shown whole; if it is the only line, it starts with ``…`` at a word boundary.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    if cut and len(lines) > 1:
        lines = lines[1:]
    elif cut:
        space = lines[0].find(" ")
        lines = ["…" + (lines[0][space + 1:] if 0 <= space < 40 else lines[0])]
    out: list[str] = []
    size = 0
    for line in reversed(lines):
        add = len(line) + (1 if out else 0)
        if size + add > max_chars:
            break
        out.append(line)
        size += add
    if out:
        return "\n".join(reversed(out)).lstrip("\n")
    return lines[-1][:max_chars - 1].rstrip() + "…"


def last_stderr_line(text: str, max_chars: int = 200) -> str:
    """The last non-blank line of ``text`` (at most ``max_chars``, then ``…``): for a crash,
    usually the error message itself (``...: error: ...``, ``ValueError: ...``)."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line:
            return line if len(line) <= max_chars else line[:max_chars - 1].rstrip() + "…"
    return ""


class BotSetupError(ArenaError):
    """A bot cannot be run at all on this machine, whatever it does: its command or script
    is missing, ``bot_user`` cannot reach its interpreter or script, or the sandbox cannot
    start. Raised before any match is played (not a fault of a match, never a crash count)."""


_PY_NAMES = ("python", "python3")


def _interpreter_kind(argv0: str) -> str | None:
    """``python`` or ``node`` when ``argv0`` names one of those interpreters, else None."""
    base = os.path.basename(argv0)
    if base in _PY_NAMES or (base.startswith("python3.") and base[8:].isdigit()):
        return "python"
    if base in ("node", "nodejs"):
        return "node"
    return None


def _script_index(argv: Sequence[str], kind: str) -> int | None:
    """Index in ``argv`` of the script an interpreter runs, or None (``-m``, ``-c``, ``-e``
    or no script argument at all)."""
    no_script = {"python": ("-m", "-c"), "node": ("-e", "--eval", "-p", "--print")}[kind]
    takes_value = {"python": ("-W", "-X"), "node": ("-r", "--require", "--import", "--loader")}[kind]
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in no_script or any(a.startswith(o) and len(a) > 2 and not a.startswith("--")
                                 for o in no_script):
            return None
        if a == "--":
            return i + 1 if i + 1 < len(argv) else None
        if a.startswith("-"):
            i += 2 if a in takes_value else 1
            continue
        return i
    return None


def _on_path(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", os.defpath))


def resolve_argv(spec: BotSpec) -> list[str]:
    """The bot's argv with ``python``/``python3`` replaced by the arena's interpreter and
    relative paths resolved against ``spec.cwd`` (the project root). A bare command name
    that is not on ``PATH`` but is a file in ``spec.cwd`` resolves to that file.

    :raises ValueError: for an empty command.
    """
    if not spec.cmd:
        raise ValueError(f"bot {spec.name!r}: empty command")
    cwd = os.path.abspath(spec.cwd)
    argv = list(spec.cmd)
    if argv[0] in _PY_NAMES:
        argv[0] = sys.executable
    elif "/" in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.join(cwd, argv[0])
    elif "/" not in argv[0] and not _on_path(argv[0]) and os.path.isfile(os.path.join(cwd, argv[0])):
        argv[0] = os.path.join(cwd, argv[0])
    for i in range(1, len(argv)):
        a = argv[i]
        if a and not a.startswith("-") and not os.path.isabs(a):
            p = os.path.join(cwd, a)
            if os.path.exists(p):
                argv[i] = p
    return argv


def check_command(spec: BotSpec) -> str | None:
    """Whether the bot's command can be found, before anything is started.

    The executable must be on ``PATH`` or a file relative to ``spec.cwd`` (``python`` and
    ``python3`` are the arena's own interpreter); when it is ``python``/``python3``/``node``
    (any path or version suffix), the script argument must exist too (``-m``/``-c``/``-e``
    commands have none).

    :returns: None when both are found, else a one-line reason naming the bot, the path and
        the folder it was resolved against.
    """
    cwd = os.path.abspath(spec.cwd)
    if not spec.cmd:
        return f"bot {spec.name!r}: empty command"
    exe = spec.cmd[0]
    if exe in _PY_NAMES:
        pass  # the arena's interpreter
    elif "/" in exe:
        path = os.path.normpath(os.path.join(cwd, exe))
        if not os.path.isfile(path):
            return f"bot {spec.name!r}: command {exe!r} not found: no file {path} (resolved against {cwd})"
        if not os.access(path, os.X_OK):
            return f"bot {spec.name!r}: command {exe!r} is not executable: {path} (chmod +x it)"
    elif not _on_path(exe) and not os.path.isfile(os.path.join(cwd, exe)):
        return (f"bot {spec.name!r}: command {exe!r} not found: not on PATH and no file "
                f"{os.path.join(cwd, exe)} (resolved against {cwd})")
    kind = _interpreter_kind(exe)
    if kind is not None:
        i = _script_index(spec.cmd, kind)
        if i is not None:
            script = spec.cmd[i]
            path = os.path.normpath(os.path.join(cwd, script))
            if not os.path.exists(path):
                return (f"bot {spec.name!r}: script {script!r} not found: no file {path} "
                        f"(resolved against {cwd})")
    return None


def bot_env(spec: BotSpec, workdir: str) -> dict[str, str]:
    """Exactly DESIGN's environment: the arena's ``PATH``, ``HOME`` = ``workdir``, ``LANG``,
    ``PYTHONUNBUFFERED``, ``PYTHONHASHSEED`` and the bot's ``env`` keys."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": workdir, "LANG": "C.UTF-8",
           "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"}
    env.update(dict(spec.env))
    return env


#: folders the sandbox replaces by private, empty tmpfs mounts.
SANDBOX_TMPFS = ("/tmp", "/dev/shm")

#: the project holding ``engine``/``bots`` (an editable install's source folder): bound into the
#: sandbox so Python bots importing the SDK or the engine still run when it lies under /tmp.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_HIDDEN: set[str] = set()


def hide_from_sandbox(path: str) -> None:
    """Hide ``path`` (a results folder: journal, logs, secret) from every later ``bwrap`` sandbox.

    It is covered by an empty tmpfs inside the sandbox, so a bot cannot read the finished
    matches of the deal it is playing (other rotations and lineups replay the same deals).
    """
    _HIDDEN.add(os.path.abspath(path))


def sandbox_binds(spec: BotSpec | None, argv: Sequence[str] = ()) -> list[str]:
    """The folders bound read-only into a ``bwrap`` sandbox so that the bot can still run
    when they lie under a folder the sandbox hides (:data:`SANDBOX_TMPFS`, e.g. a project,
    venv or interpreter under ``/tmp``): the interpreter's ``sys.prefix`` and
    ``sys.base_prefix``, the bot's ``cwd`` (project root), the directory of the resolved
    command ``argv[0]`` and of every existing file argument (the script). Symbolic links
    are followed (both the link's folder and its target's are bound). Folders elsewhere are
    already visible (read-only) and are not listed.

    :returns: absolute paths, parents before children, without duplicates.
    """
    cands: list[str] = [sys.prefix, sys.base_prefix, PROJECT_ROOT]
    if spec is not None:
        cands.append(os.path.abspath(spec.cwd))
    for i, a in enumerate(argv):
        if not a or not os.path.isabs(a):
            continue
        if i == 0 or os.path.isfile(a):
            cands.append(os.path.dirname(a))
            cands.append(os.path.dirname(os.path.realpath(a)))
    out: set[str] = set()
    for c in cands:
        for p in (os.path.abspath(c), os.path.realpath(c)):
            if os.path.isdir(p) and any(p == t or p.startswith(t + os.sep) for t in SANDBOX_TMPFS):
                out.add(p)
    return sorted(out, key=lambda p: (p.count(os.sep), p))


def wrapper_argv(limits: Limits, workdir: str, binds: Iterable[str] = ()) -> list[str]:
    """The wrapper commands exec-ed before the bot (see the module docstring).

    :param binds: folders bound read-only into a ``bwrap`` sandbox after its private
        ``/tmp`` and ``/dev/shm`` are mounted (see :func:`sandbox_binds`); the working
        directory is bound read-write last.
    :raises ValueError: if ``sandbox: bwrap`` or ``network: deny`` is asked for and the tool
        is missing, or ``bot_user`` names no user.
    """
    out: list[str] = []
    if limits.sandbox == "bwrap":
        bwrap = shutil.which("bwrap")
        if not bwrap:
            raise ValueError("sandbox: bwrap needs bubblewrap (apt-get install bubblewrap)")
        out += [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for t in SANDBOX_TMPFS:
            out += ["--tmpfs", t]
        for b in binds:
            out += ["--ro-bind", b, b]
        for h in sorted(_HIDDEN):
            if os.path.isdir(h):
                out += ["--tmpfs", h]
        out += ["--bind", workdir, workdir, "--chdir", workdir, "--unshare-pid", "--unshare-ipc",
                "--die-with-parent", "--new-session"]
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


# ---------------------------------------------------------------- SIGCHLD under Ray

_SIGCHLD_LOCK = threading.Lock()
_sigchld_depth = 0
_sigchld_changed = False


def sigchld_ignored() -> bool:
    """Whether this process ignores SIGCHLD, as the kernel sees it (``SigIgn`` of
    ``/proc/self/status``): Ray's core worker ignores it with ``sigaction`` behind Python's
    back, so :func:`signal.getsignal` still says ``SIG_DFL`` there."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("SigIgn:"):
                    return bool((int(line.split()[1], 16) >> (signal.SIGCHLD - 1)) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN


@contextmanager
def default_sigchld() -> Iterator[bool]:
    """Within the block, SIGCHLD has its default disposition, so exit codes of child
    processes can be read.

    With SIGCHLD ignored (Ray workers), the kernel reaps children by itself and
    ``wait()`` reports every bot as "exited with code 0", losing crash codes and signals.
    Only the main thread may change dispositions: elsewhere this does nothing. Nested and
    interleaved blocks (several live batch generators) are counted: the previous
    disposition (ignored) is restored when the last one ends.

    :yields: whether SIGCHLD is at its default within the block.
    """
    global _sigchld_depth, _sigchld_changed
    if threading.current_thread() is not threading.main_thread():
        yield not sigchld_ignored()
        return
    with _SIGCHLD_LOCK:
        if _sigchld_depth == 0 and sigchld_ignored():
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _sigchld_changed = True
        _sigchld_depth += 1
    try:
        yield True
    finally:
        with _SIGCHLD_LOCK:
            _sigchld_depth -= 1
            if _sigchld_depth == 0 and _sigchld_changed:
                _sigchld_changed = False
                try:
                    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
                except ValueError:  # finalized off the main thread (garbage collection)
                    pass


# ---------------------------------------------------------------- pre-flight checks

_ACCESS_OK: set[tuple] = set()
_SANDBOX_OK: dict[tuple, str | None] = {}


def _user_can(pw: pwd.struct_passwd, test_args: list[str]) -> bool:
    """Run ``test ARGS`` as the user ``pw`` (kernel permission checks, ACLs included)."""
    setpriv = shutil.which("setpriv")
    test = shutil.which("test") or "/usr/bin/test"
    if not setpriv:
        return True  # cannot switch users either: bot_user is not applied
    try:
        with default_sigchld():
            r = subprocess.run([setpriv, f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                                "--", test, *test_args], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return True
    return r.returncode == 0


def _blocking_folder(path: str, pw: pwd.struct_passwd) -> str:
    """A hint naming the first folder on ``path``'s way that ``pw`` cannot search (mode bits)."""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts)):
        d = os.sep.join(parts[:i]) or os.sep
        try:
            st = os.stat(d)
        except OSError:
            return ""
        if st.st_uid == pw.pw_uid:
            ok = st.st_mode & 0o100
        elif st.st_gid == pw.pw_gid:
            ok = st.st_mode & 0o010
        else:
            ok = st.st_mode & 0o001
        if not ok:
            try:
                owner = pwd.getpwuid(st.st_uid).pw_name
            except KeyError:
                owner = str(st.st_uid)
            return f" (the folder {d} is mode {st.st_mode & 0o7777:o}, owned by {owner})"
    return ""


def check_access(spec: BotSpec, limits: Limits) -> str | None:
    """With ``bot_user`` (and the arena running as root): can that user execute the bot's
    interpreter or command, and read its script (python/node)? Checked by running ``test``
    as that user. Successes are cached per process.

    :returns: None when it can (or when no user switch applies), else a one-line reason
        naming the bot, the path and the user.
    """
    user = limits.bot_user
    if not user or os.geteuid() != 0:
        return None
    key = (spec.cmd, os.path.abspath(spec.cwd), user)
    if key in _ACCESS_OK:
        return None
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return f"bot_user {user!r} is not a user of this machine"
    try:
        argv = resolve_argv(spec)
    except ValueError as e:
        return str(e)
    exe = argv[0] if "/" in argv[0] else (_on_path(argv[0]) or argv[0])
    needs = [("-x", exe, "execute the command" if _interpreter_kind(exe) is None else "execute the interpreter")]
    kind = _interpreter_kind(exe)
    if kind is not None:
        i = _script_index(argv, kind)
        if i is not None:
            needs.append(("-r", argv[i], "read the script"))
    args: list[str] = []
    for flag, path, _what in needs:
        args += (["-a"] if args else []) + [flag, path]
    if _user_can(pw, args):
        _ACCESS_OK.add(key)
        return None
    for flag, path, what in needs:
        if not _user_can(pw, [flag, path]):
            return (f"bot {spec.name!r}: bot_user {user!r} cannot {what} {path}"
                    f"{_blocking_folder(path, pw)}; make it and its folders readable by {user!r} "
                    f"or move the bot to a world-readable place")
    return None


def check_sandbox(limits: Limits) -> str | None:
    """Can the sandbox of ``limits`` (``sandbox: bwrap``, ``network: deny``, ``bot_user``)
    start on this machine? Runs ``true`` through the same wrappers as a bot, once per
    process and set of options.

    :returns: None if it starts (or no sandboxing is asked for), else a one-line reason
        with the wrapper's own error (e.g. user namespaces disabled) and remedies.
    """
    if limits.sandbox != "bwrap" and limits.network != "deny" and not (limits.bot_user and os.geteuid() == 0):
        return None
    key = (limits.sandbox, limits.network, limits.bot_user, os.geteuid())
    if key in _SANDBOX_OK:
        return _SANDBOX_OK[key]
    true = shutil.which("true") or "/bin/true"
    wd = new_workdir("sandbox-probe")
    try:
        try:
            argv = wrapper_argv(limits, wd, sandbox_binds(None, [true])) + [true]
            if limits.bot_user and os.geteuid() == 0:
                pw = pwd.getpwnam(limits.bot_user)
                os.chown(wd, pw.pw_uid, pw.pw_gid)
        except ValueError as e:
            reason: str | None = f"the sandbox cannot start: {e}"
        else:
            try:
                with default_sigchld():
                    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, cwd=wd, env={"PATH": os.environ.get("PATH", os.defpath),
                                                                            "HOME": wd}, timeout=30)
                rc, err = r.returncode, r.stderr.decode("utf-8", "replace").strip()
            except (OSError, subprocess.SubprocessError) as e:
                rc, err = -1, str(e)
            reason = None
            if rc != 0:
                tool = os.path.basename(argv[0])
                opts = f"sandbox: {limits.sandbox}, network: {limits.network}, bot_user: {limits.bot_user}"
                err = " | ".join(err.splitlines()[-3:]) or "no message"
                reason = (f"the sandbox cannot start on this machine ({opts}): {tool} failed with exit code "
                          f"{rc}: {err}. Remedies: enable unprivileged user namespaces "
                          "(sysctl kernel.unprivileged_userns_clone=1, or run the arena as root / in a "
                          "container with CAP_SYS_ADMIN), or set limits.sandbox: none and network: allow")
    finally:
        remove_workdir(wd)
    _SANDBOX_OK[key] = reason
    return reason


def preflight(bots: Iterable[BotSpec], limits: Limits) -> None:
    """The checks run before a batch plays anything: every bot's command and script exist
    (:func:`check_command`), the sandbox starts (:func:`check_sandbox`), and ``bot_user``
    can execute the interpreter and read the script (:func:`check_access`).

    :raises BotSetupError: naming every problem found (one line each).
    """
    problems: list[str] = []
    seen: set[BotSpec] = set()
    todo = [b for b in bots if not (b in seen or seen.add(b))]
    for b in todo:
        r = check_command(b)
        if r:
            problems.append(r)
    r = check_sandbox(limits)
    if r:
        problems.append(r)
    else:
        for b in todo:
            r = check_access(b, limits) if check_command(b) is None else None
            if r:
                problems.append(r)
    if problems:
        raise BotSetupError("; ".join(problems))


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
        make_subreaper()
        try:
            bot_argv = resolve_argv(spec)
            binds = sandbox_binds(spec, bot_argv) if limits.sandbox == "bwrap" else ()
            argv = wrapper_argv(limits, workdir, binds) + bot_argv
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
        except BaseException:
            remove_workdir(workdir)  # the process owns its directory, even when it never started
            raise
        self.pid = self.proc.pid
        _LEADERS.add(self.pid)
        _LIVE.add(self)
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
        """Pids of the process's descendants (any session), via /proc parent links (none once
        the leader is reaped: its pid may belong to another process by then)."""
        if self.returncode is not None:
            return []
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
        if self._stderr_eof or self.proc.stderr.closed:
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
        self.drain_stderr()  # its last words, for the logs
        self._close_pipes()
        _LIVE.discard(self)
        remove_workdir(self.workdir)

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

    An orphan is recognised as a bot's by its ``HOME``, which lies under a bot
    working-directory root of an arena (``root``, default any
    ``<tmp>/cardarena-bots-*`` folder: roots are removed and re-made between batches).
    Only this process's own children are looked at.

    :returns: the pids killed.
    """
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
        home = env.get("HOME", "")
        ours = home.startswith(root + os.sep) if root else is_bot_home(home)
        if (zombie and child.pid in _DESCENDANTS) or ours:
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


def kill_all() -> int:
    """Kill (and reap) every bot process of this arena process still running, then sweep
    orphans; for finalizers (a test that failed half-way, interpreter exit).

    :returns: how many processes were killed.
    """
    procs = list(_LIVE)
    for p in procs:
        p.kill()
    sweep_orphans()
    return len(procs)


#: pids of bot processes spawned and not yet killed (never swept as orphans).
_LEADERS: set[int] = set()
#: pids ever seen as descendants of a bot (so their zombies may be reaped by the sweep).
_DESCENDANTS: set[int] = set()
#: bot processes not yet killed.
_LIVE: weakref.WeakSet[BotProcess] = weakref.WeakSet()

#: the bot working-directory roots' name prefix (under the temporary folder).
ROOT_PREFIX = "cardarena-bots-"
_ROOT: str | None = None
_WORKDIRS: set[str] = set()
_ROOT_LOCK = threading.Lock()


def is_bot_home(path: str) -> bool:
    """Whether ``path`` lies in a bot working directory of an arena on this machine
    (``<tmp>/cardarena-bots-*/...``)."""
    base = os.path.join(tempfile.gettempdir(), ROOT_PREFIX)
    return path.startswith(base) and os.sep in path[len(base):]


#: a root is swept as stale only when untouched for this long (s) as well (see :func:`sweep_stale_roots`).
STALE_ROOT_AGE_S = 600.0


def _pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this machine's pid namespace)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_roots(tmp: str | None = None, min_age_s: float = STALE_ROOT_AGE_S) -> list[str]:
    """Remove the bot working-directory roots left behind by arena processes that died
    without cleaning up (``kill -9``, a lost Ray worker).

    A root ``<tmp>/cardarena-bots-<pid>-<random>`` is stale when it belongs to this user,
    process ``pid`` no longer exists and it was not modified for ``min_age_s`` seconds (the
    age guards against another pid namespace sharing ``/tmp``). Roots of other users and
    roots without a pid in their name are left alone. Called whenever a root is made.

    :returns: the paths removed.
    """
    tmp = tmp or tempfile.gettempdir()
    removed = []
    uid = os.geteuid()
    now = time.time()
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(ROOT_PREFIX):
            continue
        pid_text = name[len(ROOT_PREFIX):].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        path = os.path.join(tmp, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if (st.st_uid != uid or not stat.S_ISDIR(st.st_mode) or now - st.st_mtime < min_age_s
                or int(pid_text) == os.getpid() or _pid_alive(int(pid_text))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


def workdir_root() -> str:
    """The directory under which every bot working directory of this arena process lives.

    ``<tmp>/cardarena-bots-<pid>-<random>``, made on demand (mode 0711) and removed by
    :func:`remove_workdir` when its last working directory is removed, i.e. when the last
    process of a batch closes (a later batch makes a new one). Making one first sweeps the
    roots of dead arena processes (:func:`sweep_stale_roots`).
    """
    global _ROOT
    with _ROOT_LOCK:
        if _ROOT is None or not os.path.isdir(_ROOT):
            sweep_stale_roots()
            _ROOT = tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-")
            os.chmod(_ROOT, 0o711)
        return _ROOT


def new_workdir(name: str) -> str:
    """A fresh, empty private directory for one bot process (removed by :func:`remove_workdir`,
    which :meth:`BotProcess.kill` calls)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40]
    for _ in range(3):
        root = workdir_root()
        try:
            d = tempfile.mkdtemp(prefix=f"{safe}-", dir=root)
        except FileNotFoundError:  # the root was just removed by the last process closing
            continue
        break
    else:
        d = tempfile.mkdtemp(prefix=f"{safe}-", dir=workdir_root())
    os.chmod(d, 0o700)
    with _ROOT_LOCK:
        _WORKDIRS.add(d)
    return d


def remove_workdir(path: str) -> None:
    """Delete a bot working directory and its contents (idempotent); the root goes with the
    last working directory."""
    global _ROOT
    shutil.rmtree(path, ignore_errors=True)
    with _ROOT_LOCK:
        _WORKDIRS.discard(path)
        if not _WORKDIRS and _ROOT is not None:
            try:
                os.rmdir(_ROOT)
            except FileNotFoundError:
                _ROOT = None
            except OSError:
                pass  # not empty: something else lives there; keep it
            else:
                _ROOT = None


def _at_exit() -> None:
    kill_all()
    for d in list(_WORKDIRS):
        remove_workdir(d)


atexit.register(_at_exit)

_read = os.read
_perf_counter = time.perf_counter


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
        now = _perf_counter()
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
                data = _read(fd, CHUNK)
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
        next_tick = 0.0
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
            now = _perf_counter()
            if now >= deadline:
                raise proc._tag(BotTimeout(f"bot {proc.name!r} did not reply in time"))
            if not next_tick:
                # first pass: the reply is often in the pipe already (on a shared core the bot
                # ran while the request was written), and reading it directly saves an
                # epoll_wait; otherwise this costs one failed read while the bot thinks
                next_tick = now + TICK_S
                fd = proc.stdout_fd
                entry = self.fds.get(fd)
                if entry is not None and entry[0] is proc:
                    try:
                        data = _read(fd, CHUNK)
                    except BlockingIOError:
                        pass
                    except OSError:
                        proc._on_stdout(b"", now)
                        self._drop(fd)
                        continue
                    else:
                        proc._on_stdout(data, _perf_counter())
                        if not data:
                            self._drop(fd)
                        continue
            elif now >= next_tick:
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
