"""Pre-flight: before a batch starts anything, check that every bot can run at all.

Its command and script exist (:func:`check_command`), the sandbox starts
(:func:`check_sandbox`) and ``bot_user`` can execute the interpreter and read the script
(:func:`check_access`); otherwise :class:`BotSetupError` names the bot, the path and the
folder or user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterable

from arena.errors import ArenaError
from arena.process.launch import (
    PY_NAMES,
    interpreter_kind,
    on_path,
    resolve_argv,
    script_index,
    wrapper_argv,
)
from arena.process.reaping import default_sigchld
from arena.process.sandbox import (
    REMEDY,
    SandboxUnavailable,
    effective_mode,
    hidden_paths,
    sandbox_binds,
    warn_if_unsandboxed,
)
from arena.process.sandbox_view import cover_candidates, foreign_files, under
from arena.process.workdirs import new_workdir, remove_workdir
from arena.specs import BotSpec, Limits


class _Cache:
    """Checks that passed, per process (one object instead of module globals).

    :ivar access_ok: ``(cmd, cwd, user)`` keys that passed :func:`check_access`.
    :ivar sandbox: the result of :func:`check_sandbox` per set of options and tool path.
    """

    def __init__(self) -> None:
        self.access_ok: set[tuple] = set()
        self.sandbox: dict[tuple, str | None] = {}


_CACHE = _Cache()


def clear_caches() -> None:
    """Forget every cached check (the next batch checks again)."""
    _CACHE.access_ok.clear()
    _CACHE.sandbox.clear()


class BotSetupError(ArenaError):
    """A bot cannot be run at all on this machine, whatever it does: its command or script
    is missing, ``bot_user`` cannot reach its interpreter or script, or the sandbox cannot
    start. Raised before any match is played (not a fault of a match, never a crash count)."""



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
    if exe in PY_NAMES:
        pass  # the arena's interpreter
    elif "/" in exe:
        path = os.path.normpath(os.path.join(cwd, exe))
        if not os.path.isfile(path):
            return f"bot {spec.name!r}: command {exe!r} not found: no file {path} (resolved against {cwd})"
        if not os.access(path, os.X_OK):
            return f"bot {spec.name!r}: command {exe!r} is not executable: {path} (chmod +x it)"
    elif not on_path(exe) and not os.path.isfile(os.path.join(cwd, exe)):
        return (f"bot {spec.name!r}: command {exe!r} not found: not on PATH and no file "
                f"{os.path.join(cwd, exe)} (resolved against {cwd})")
    kind = interpreter_kind(exe)
    if kind is not None:
        i = script_index(spec.cmd, kind)
        if i is not None:
            script = spec.cmd[i]
            path = os.path.normpath(os.path.join(cwd, script))
            if not os.path.exists(path):
                return (f"bot {spec.name!r}: script {script!r} not found: no file {path} "
                        f"(resolved against {cwd})")
    return None



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
    """A hint naming the first folder on ``path``'s way that ``pw`` cannot search (mode bits),
    following symbolic links (a venv's ``bin/python`` is a link into ``/root/.pyenv``: the
    blocker is on the target's way, new-user finding)."""
    hint = _blocking_on_way(os.path.abspath(path), pw)
    real = os.path.realpath(path)
    if not hint and real != os.path.abspath(path):
        hint = _blocking_on_way(real, pw)
        if hint:
            hint = f" (it is a link to {real}; {hint[2:]}"
    return hint


def _blocking_on_way(path: str, pw: pwd.struct_passwd) -> str:
    """:func:`_blocking_folder` for one path, links not followed."""
    parts = path.split(os.sep)
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
    if key in _CACHE.access_ok:
        return None
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return f"bot_user {user!r} is not a user of this machine"
    try:
        argv = resolve_argv(spec)
    except ValueError as e:
        return str(e)
    exe = argv[0] if "/" in argv[0] else (on_path(argv[0]) or argv[0])
    needs = [("-x", exe, "execute the command" if interpreter_kind(exe) is None else "execute the interpreter")]
    kind = interpreter_kind(exe)
    if kind is not None:
        i = script_index(argv, kind)
        if i is not None:
            needs.append(("-r", argv[i], "read the script"))
    args: list[str] = []
    for flag, path, _what in needs:
        args += (["-a"] if args else []) + [flag, path]
    if _user_can(pw, args):
        _CACHE.access_ok.add(key)
        return None
    for flag, path, what in needs:
        if not _user_can(pw, [flag, path]):
            return (f"bot {spec.name!r}: bot_user {user!r} cannot {what} {path}"
                    f"{_blocking_folder(path, pw)}; make it and its folders readable by {user!r} "
                    f"or move the bot to a world-readable place")
    return None



def check_sandbox(limits: Limits, spec: BotSpec | None = None) -> str | None:
    """Can the sandbox of ``limits`` start on this machine (:func:`effective_mode`, then
    ``network: deny`` and ``bot_user``)? Runs ``true`` through the same wrappers as a bot,
    in the real view (the folders hidden and covered now; with ``spec``, that bot's own binds),
    once per process, set of options, view and tool found on ``PATH``.

    :returns: None if it starts (or no sandboxing is asked for), else a one-line reason
        with the wrapper's own error (e.g. user namespaces disabled) and remedies.
    """
    try:
        mode = effective_mode(limits)
    except SandboxUnavailable as e:
        return str(e)
    net = limits.network == "deny" and limits.sandbox not in ("auto", "required")
    if mode == "none" and not net and not (limits.bot_user and os.geteuid() == 0):
        return None
    true = shutil.which("true") or "/bin/true"
    try:
        binds = sandbox_binds(spec, resolve_argv(spec)) if spec is not None else sandbox_binds(None, [true])
    except ValueError as e:
        return str(e)
    # the view as it is now (finding 5: a probe before the results were hidden missed their mounts)
    key = (mode, limits.network, limits.bot_user, os.geteuid(), shutil.which("bwrap"),
           shutil.which("unshare"), tuple(binds), tuple(hidden_paths()), tuple(sorted(cover_candidates())))
    if key not in _CACHE.sandbox:
        _CACHE.sandbox[key] = _run_probe(limits, mode, binds)
    return _CACHE.sandbox[key]


def _run_probe(limits: Limits, mode: str, binds: list[str]) -> str | None:
    true = shutil.which("true") or "/bin/true"
    wd = new_workdir("sandbox-probe")
    try:
        try:
            argv = wrapper_argv(limits, wd, binds, mode) + [true]
            if limits.bot_user and os.geteuid() == 0:
                pw = pwd.getpwnam(limits.bot_user)
                os.chown(wd, pw.pw_uid, pw.pw_gid)
        except ValueError as e:
            return f"the sandbox cannot start: {e}"
        try:
            with default_sigchld():
                r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, cwd=wd, env={"PATH": os.environ.get("PATH", os.defpath),
                                                                        "HOME": wd}, timeout=30)
            rc, err = r.returncode, r.stderr.decode("utf-8", "replace").strip()
        except (OSError, subprocess.SubprocessError) as e:
            rc, err = -1, str(e)
    finally:
        remove_workdir(wd)
    if rc == 0:
        return None
    tool = mode if mode != "none" else "unshare"
    opts = f"sandbox: {limits.sandbox}, network: {limits.network}, bot_user: {limits.bot_user}"
    err = " | ".join(err.splitlines()[-3:]) or "no message"
    return (f"the sandbox cannot start on this machine ({opts}): {tool} failed with exit code "
            f"{rc}: {err}. Remedies: {REMEDY}; or set limits.sandbox: auto (which runs "
            "unsandboxed, loudly, when no sandbox can start)")


def foreign_message(name: str, folder: str, owner: str) -> str:
    """The problem of a bot whose command names a file in another bot's folder
    (:func:`arena.process.sandbox_view.foreign_files`)."""
    return (f"bot {name!r}: its command names a file in {folder}, the folder of bot {owner!r}; a bot's "
            "command may name files of its own folder only (copy what it needs into it)")


def outside_files(specs: Iterable[BotSpec]) -> list[tuple[str, str]]:
    """Submissions (:attr:`BotSpec.submitted`) whose command would uncover a folder outside their
    own: ``(bot, problem)`` each. The sandbox binds back the folders of the files a command names
    (its script) when they lie in a covered folder (the homes, ``/tmp``, ``/run``, other bots'
    folders); for an entrant's command that let ``cmd: [python, bot.py, ~/.bashrc]`` show the
    whole home, ``/run/...`` a daemon's socket, ``../../results/t/secret.json`` another
    tournament's salt (adversarial finding, session 13). What the arena's interpreter needs
    anyway (``python``) is not counted; files of the submission's own folder are its own.
    """
    out = []
    for s in specs:
        if not s.submitted:
            continue
        try:
            argv = resolve_argv(s)
        except ValueError:
            continue  # the command check names it
        mine = os.path.realpath(s.cwd)
        base = [*sandbox_binds(s, [sys.executable]), mine]  # shown to every bot anyway, and its own
        extra = [b for b in sandbox_binds(s, argv) if not under(b, base)]
        if not extra:
            continue
        named = [a for a in s.cmd if a and os.path.exists(os.path.join(s.cwd, a)) and any(
            not under(q, [mine]) and under(os.path.dirname(q), extra)
            for q in {os.path.abspath(os.path.join(s.cwd, a)), os.path.realpath(os.path.join(s.cwd, a))})]
        what = ", ".join(repr(a) for a in named) or repr(" ".join(s.cmd))
        out.append((s.name, f"bot {s.name!r}: its command names {what}, outside its folder {mine}; the sandbox "
                            f"would show {extra[0]} to it. A submission's command may name files of its own "
                            "folder only (copy what it needs into it; name the interpreter as python, node, ...)"))
    return out


def preflight(bots: Iterable[BotSpec], limits: Limits) -> None:
    """The checks run before a batch plays anything: no bot's command names a file in another
    bot's folder (:func:`arena.process.sandbox_view.foreign_files`), every bot's command and script exist
    (:func:`check_command`), the sandbox starts (:func:`check_sandbox`), and ``bot_user``
    can execute the interpreter and read the script (:func:`check_access`).

    :raises BotSetupError: naming every problem found (one line each).
    """
    warn_if_unsandboxed(limits)
    todo = list(dict.fromkeys(bots))  # each bot once, in order
    problems: list[str] = [foreign_message(*x) for x in foreign_files(todo)]
    try:
        sandboxed = effective_mode(limits) != "none"  # no sandbox, nothing is covered: nothing to uncover
    except SandboxUnavailable:
        sandboxed = False  # 'required' without a sandbox: check_sandbox below says so
    if sandboxed:
        named = {n for n, _f, _o in foreign_files(todo)}
        problems += [p for n, p in outside_files(todo) if n not in named]
    for b in todo:
        r = check_command(b)
        if r:
            problems.append(r)
    runnable = [b for b in todo if check_command(b) is None]
    failed: dict[str, list[str]] = {}  # the sandbox's reason -> the bots it stops
    for b in runnable:
        r = check_sandbox(limits, b)  # the bot's own view: its binds, the folders hidden now
        if r:
            failed.setdefault(r, []).append(repr(b.name))
    problems += [f"bot{'s' if len(n) > 1 else ''} {', '.join(n)}: {r}" for r, n in failed.items()]
    if not runnable:
        r = check_sandbox(limits)
        if r:
            problems.append(r)
    if not failed:
        for b in runnable:
            r = check_access(b, limits)
            if r:
                problems.append(r)
    if problems:
        raise BotSetupError("; ".join(problems))

