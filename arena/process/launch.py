"""Launching a bot: its argv, its environment, and the wrapper commands exec-ed before it.

Limits are applied without ``preexec_fn`` (unsafe in threaded processes such as Ray
workers) by exec-ing small wrappers in front of the command: ``setpriv`` (parent-death
signal, ``bot_user``), ``prlimit`` (open files, CPU seconds), ``env --default-signal``
(signal dispositions reset: ignored signals survive ``exec``), ``unshare -n``
(``network: deny``) or ``bwrap`` (``sandbox: bwrap``). Each wrapper execs the next, so the
bot keeps the pid that the arena spawned.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence

from arena.specs import BotSpec, Limits

#: command names that run under the arena's own interpreter.
PY_NAMES = ("python", "python3")

#: the project holding ``engine``/``bots`` (an editable install's source folder): bound into the
#: sandbox so Python bots importing the SDK or the engine still run when it lies under /tmp.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _LaunchState:
    """What launching remembers across bots (one object instead of module globals).

    :ivar hidden: folders covered by an empty tmpfs in every later sandbox (results folders).
    :ivar env_resets: whether ``env --default-signal`` works (None: not checked yet).
    """

    def __init__(self) -> None:
        self.hidden: set[str] = set()
        self.env_resets: bool | None = None


_STATE = _LaunchState()


def on_path(name: str) -> str | None:
    """The full path of command ``name`` on the arena's ``PATH``, or None."""
    return shutil.which(name, path=os.environ.get("PATH", os.defpath))


def interpreter_kind(argv0: str) -> str | None:
    """``python`` or ``node`` when ``argv0`` names one of those interpreters, else None."""
    base = os.path.basename(argv0)
    if base in PY_NAMES or (base.startswith("python3.") and base[8:].isdigit()):
        return "python"
    if base in ("node", "nodejs"):
        return "node"
    return None


def script_index(argv: Sequence[str], kind: str) -> int | None:
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
    if argv[0] in PY_NAMES:
        argv[0] = sys.executable
    elif "/" in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.join(cwd, argv[0])
    elif "/" not in argv[0] and not on_path(argv[0]) and os.path.isfile(os.path.join(cwd, argv[0])):
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



#: folders the sandbox replaces by private, empty tmpfs mounts.
SANDBOX_TMPFS = ("/tmp", "/dev/shm")


def hide_from_sandbox(path: str) -> None:
    """Hide ``path`` (a results folder: journal, logs, secret) from every later ``bwrap`` sandbox.

    It is covered by an empty tmpfs inside the sandbox, so a bot cannot read the finished
    matches of the deal it is playing (other rotations and lineups replay the same deals).
    """
    _STATE.hidden.add(os.path.abspath(path))



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
        for h in sorted(_STATE.hidden):
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



def prlimit_available() -> bool:
    """Whether the ``prlimit`` wrapper is used (else limits are set right after the spawn)."""
    return shutil.which("prlimit") is not None



def _env_resets_signals() -> bool:
    """Whether ``env --default-signal`` (GNU coreutils >= 8.31) is available (checked once)."""
    if _STATE.env_resets is None:
        env = shutil.which("env")
        try:
            _STATE.env_resets = env is not None and subprocess.run(
                [env, "--default-signal", "--", "true"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=5).returncode == 0
        except (OSError, subprocess.SubprocessError):
            _STATE.env_resets = False
    return _STATE.env_resets

