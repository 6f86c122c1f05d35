"""Launching a bot: its argv, its environment, and the wrapper commands exec-ed before it.

Limits are applied without ``preexec_fn`` (unsafe in threaded processes such as Ray
workers) by exec-ing small wrappers in front of the command (:func:`wrapper_argv`):
``prlimit`` (open files, CPU seconds), ``setpriv`` (parent-death signal), the sandbox
(:mod:`arena.process.sandbox`), ``setpriv`` again (``bot_user``, no capabilities),
``env --default-signal`` (ignored signals survive ``exec``). Each wrapper execs the next.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace

from arena.process.sandbox import (
    PROJECT_ROOT,
    SANDBOX_TMPFS,
    effective_mode,
    hide_from_sandbox,
    inner_setpriv,
    sandbox_argv,
    sandbox_binds,
)
from arena.specs import BotSpec, Limits

__all__ = ["PROJECT_ROOT", "PY_NAMES", "SANDBOX_TMPFS", "bot_env", "env_assignments", "hide_from_sandbox", "interpreter_kind",
           "on_path", "prlimit_available", "resolve_argv", "sandbox_binds", "script_index", "wrapper_argv"]

#: command names that run under the arena's own interpreter.
PY_NAMES = ("python", "python3")


class _LaunchState:
    """What launching remembers across bots (one object instead of module globals).

    :ivar env_resets: whether ``env --default-signal`` works (None: not checked yet).
    """

    def __init__(self) -> None:
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
    """The wrappers' environment: DESIGN's fixed keys — the arena's ``PATH``, ``HOME`` =
    ``workdir``, ``LANG``, ``PYTHONUNBUFFERED``, ``PYTHONHASHSEED`` — and **not** the bot's
    ``env`` keys: the wrappers (``prlimit``, ``setpriv``, the sandbox) run outside the sandbox,
    as the arena's user, so a bot's ``LD_PRELOAD`` or ``PATH`` there would run its code
    unconfined (adversarial finding). The bot's keys are set by the innermost wrapper
    (:func:`env_assignments`, inside the sandbox)."""
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": workdir, "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"}


def env_assignments(spec: BotSpec) -> list[str]:
    """The bot's ``env`` keys as ``NAME=VALUE`` operands of the innermost ``env`` wrapper (after
    its ``--``): they reach the bot and nothing that runs outside its sandbox."""
    return [f"{k}={v}" for k, v in spec.env]



def wrapper_argv(limits: Limits, workdir: str, binds: Sequence[str] = (), mode: str | None = None,
                 assign: Sequence[str] = ()) -> list[str]:
    """The wrapper commands exec-ed before the bot, outermost first: ``prlimit`` (open files,
    CPU seconds), ``setpriv --pdeathsig KILL`` (the bot dies with the arena), the sandbox of
    ``mode`` (:func:`arena.process.sandbox.sandbox_argv`), the inner ``setpriv``
    (``bot_user``, no capabilities), ``env --default-signal`` with the bot's ``env`` keys
    (``assign``: :func:`env_assignments`).

    :param binds: folders bound read-only into the sandbox after its private ``/tmp`` and
        ``/dev/shm`` are mounted (see :func:`arena.process.sandbox.sandbox_binds`).
    :param mode: ``bwrap`` | ``unshare`` | ``none``; default :func:`effective_mode` of ``limits``.
    :raises ValueError: if the sandbox's tool is missing, or ``bot_user`` names no user.
    :raises SandboxUnavailable: ``sandbox: required`` and no sandbox can start.
    """
    if mode is None:
        mode = effective_mode(limits)
    out: list[str] = []
    prlimit = shutil.which("prlimit")
    if prlimit:
        out += [prlimit, f"--nofile={limits.max_open_files}:{limits.max_open_files}"]
        if limits.cpu_s:
            out.append(f"--cpu={limits.cpu_s}:{limits.cpu_s}")
        out.append("--")
    setpriv = shutil.which("setpriv")
    if setpriv:
        out += [setpriv, "--pdeathsig", "KILL", "--"]
    if mode == "none" and limits.sandbox in ("auto", "required"):
        limits = replace(limits, network="allow")  # no namespaces here at all (warned at start)
    out += sandbox_argv(limits, mode, workdir, binds)
    out += inner_setpriv(limits, mode)
    env = [shutil.which("env") or "/usr/bin/env"]
    if mode != "none":
        env += ["-u", "PWD", "-u", "OLDPWD", "-u", "SHLVL"]  # set by the sandbox's chdir and bash, not the bot's
    if _env_resets_signals():
        # ignored signals survive exec: a Ray worker ignores SIGCHLD, which breaks bots' wait()
        env.append("--default-signal")
    if len(env) > 1 or assign:
        out += [*env, "--", *assign]
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

