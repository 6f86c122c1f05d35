"""The sandbox of a bot: which one applies, and the wrapper argv of each kind.

``limits.sandbox`` (DESIGN "Isolation", docs/security.md):

* ``auto`` (the default): bubblewrap when installed and able to start, else util-linux
  ``unshare`` (user namespace when not root), else **no sandbox**, said loudly
  (:func:`warn_if_unsandboxed`; :func:`effective_mode` gives the mode to record);
* ``required``: like ``auto``, but refuses to start without a sandbox (:class:`SandboxUnavailable`);
* ``bwrap`` / ``unshare``: that tool (the pre-flight check reports when it cannot start);
* ``none``: no sandbox (``network: deny`` still gets an empty network namespace).

Both sandboxes give every bot the same view: its own PID, mount and IPC namespaces (it
sees only its own processes; when its first process ends, the kernel kills every other
one: ``setsid``, double forks and cleared environments included), an empty network
namespace unless ``network: allow`` (bubblewrap brings up a loopback private to the
sandbox; util-linux leaves it down), everything read-only, private ``/tmp`` and
``/dev/shm`` (tmpfs of ``max_disk_mb`` each; the working folder lives in that ``/tmp``,
so ``/tmp`` and the working folder share one cap), the arena user's home and the other bots'
program folders covered (what the bot needs bound back), the results folders, ``~/.ray``,
``/tmp/ray`` covered by empty mode-0 tmpfs (:mod:`arena.process.sandbox_view`), and no
capabilities (``setpriv --bounding-set=-all --no-new-privs``, also when the arena is root).
Nothing here is home-made namespace code: bwrap's options, or ``unshare`` running a short
``sh`` script of three ``mount``/``mkdir`` calls (:func:`unshare_script`) before it execs the bot.
Both get their options or script through a pipe (bwrap ``--args 3``; the script on fd 5), so
``/proc/1/cmdline`` in the sandbox names no covered or hidden path.
"""

from __future__ import annotations

import functools
import logging
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence

from arena.errors import ArenaError
from arena.process.sandbox_view import (
    PROJECT_ROOT,
    SANDBOX_TMPFS,
    hidden_paths,
    hide_bot_folders,
    hide_from_sandbox,
    hide_results_root,
    sandbox_binds,
    under,
    view,
)
from arena.specs import Limits

log = logging.getLogger(__name__)

#: the view's names are re-exported here (``arena.process`` and older callers import them from this module).
__all__ = ["AUTO_ENV", "AUTO_ORDER", "MODES", "PROJECT_ROOT", "REMEDY", "SANDBOX_TMPFS", "SandboxUnavailable",
           "bwrap_argv", "effective_mode", "hidden_paths", "hide_bot_folders", "hide_from_sandbox",
           "hide_results_root", "inner_setpriv", "own_user_namespace", "sandbox_argv", "sandbox_binds",
           "unsandboxed_warning", "unshare_argv", "unshare_script", "warn_if_unsandboxed"]

#: ``limits.sandbox`` values.
MODES = ("auto", "required", "bwrap", "unshare", "none")
#: what ``auto`` and ``required`` try, in order.
AUTO_ORDER = ("bwrap", "unshare")
#: environment variable that makes ``auto`` use one kind (``bwrap`` | ``unshare`` | ``none``):
#: how CI runs the whole suite on the ``unshare`` path on a machine that has bubblewrap.
AUTO_ENV = "CARDARENA_SANDBOX_AUTO"
#: size of the empty tmpfs laid over a hidden or covered folder, bytes.
_HIDE_BYTES = 4096

REMEDY = ("install bubblewrap (apt-get install bubblewrap) or enable unprivileged user "
          "namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, allow "
          "user namespaces or run it with CAP_SYS_ADMIN)")


class SandboxUnavailable(ArenaError):
    """``sandbox: required`` (or an explicit kind) and no sandbox can start on this machine."""


class _SandboxState:
    """What the sandbox remembers across bots (one object instead of module globals).

    :ivar works: per ``(kind, tool path, euid)``, whether a probe ran ``true`` in that sandbox
        (None: cannot start), with the tool's error.
    :ivar warned: the unsandboxed warning was printed.
    """

    def __init__(self) -> None:
        self.works: dict[tuple, str | None] = {}
        self.warned = False


_STATE = _SandboxState()


def _workdir_mode(limits: Limits) -> str:
    # another user (bot_user) must write its folder; only its own sandbox sees it anyway
    return "0777" if limits.bot_user and os.geteuid() == 0 else "0700"


def own_user_namespace(limits: Limits) -> bool:
    """Whether a sandbox gets a user namespace of its own also when the arena is root: yes unless
    ``bot_user`` is set (its uid must stay mappable for the inner ``setpriv``). Without one, every
    root bot shared root's kernel keyring (``add_key``), a channel between bots and matches that
    outlived the run (found by an adversarial trial); keyrings are per user namespace."""
    return not limits.bot_user


@functools.lru_cache(maxsize=8)
def _bwrap_offers(bwrap: str, option: str) -> bool:
    """Whether the bubblewrap at ``bwrap`` lists ``option`` in its ``--help`` (cached)."""
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in out.stdout + out.stderr


def bwrap_argv(limits: Limits, workdir: str, binds: Iterable[str]) -> list[str]:
    """bubblewrap's argv for one bot (ends with ``--``): the mounts of
    :func:`arena.process.sandbox_view.view`, then the namespaces.

    :raises ValueError: bubblewrap is not installed.
    """
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise ValueError(f"sandbox: bwrap needs bubblewrap; {REMEDY}")
    size = str(limits.max_disk_mb * 2**20)
    v = view(workdir, list(binds), limits.hidden_files)
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]

    def ops(items: list[tuple[str, str, str]]) -> None:
        """Covers and binds in order, the covers made read-only, then the hidden folders."""
        for op, p, mode in items:
            if op == "bind":
                out.extend(["--ro-bind", p, p])
            elif op == "cover":
                out.extend(["--perms", mode.zfill(4), "--size", str(_HIDE_BYTES), "--tmpfs", p])
        out.extend(a for op, p, _ in items if op == "cover" for a in ("--remount-ro", p))
        for op, p, _ in items:
            if op == "hide":
                out.extend(["--perms", "0000", "--size", str(_HIDE_BYTES), "--tmpfs", p])
        # read-only too: a root bot could chmod an empty one and fill it with inodes (kernel
        # memory outside every cap: the seventh adversarial trial's re-check, 300,000 files)
        out.extend(a for op, p, _ in items if op == "hide" for a in ("--remount-ro", p))
        # --ro-bind would add nodev (reading gives EACCES, which tells the file is there); a
        # bound /dev/null reads empty and swallows writes
        out.extend(a for op, p, _ in items if op == "null" for a in ("--dev-bind", "/dev/null", p))

    ops(v.outside)
    for t in v.private:
        out += ["--perms", "1777", "--size", size, "--tmpfs", t]
    ops(v.inside)
    out += ["--remount-ro", "/dev"]  # bwrap's /dev is an unsized tmpfs (its /dev/shm is the sized one)
    parent = os.path.dirname(workdir)
    if parent not in v.private:
        out += ["--perms", "0755", "--dir", parent]
    out += ["--perms", _workdir_mode(limits), "--dir", workdir, "--chdir", workdir,
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    if own_user_namespace(limits):
        out.append("--unshare-user")
        if _bwrap_offers(bwrap, "--disable-userns"):  # bubblewrap >= 0.8
            # no nested user namespace: inside one a bot holds every capability there (the
            # kernel's netfilter, mount and namespace code in reach: adversarial trial, 2026-12-04)
            out.append("--disable-userns")
    if limits.network == "deny":
        out.append("--unshare-net")
    out.append("--")
    return out


#: ``bash`` glue handing bubblewrap its options through ``--args 3`` (NUL-separated, from a
#: process substitution; ``bash`` execs bwrap itself, so the arena's child stays bwrap):
#: ``$1`` bwrap, ``$2`` the number of options, then the options, then ``--`` and the command.
#: (fd 3 opened by its own ``exec``: a redirection on the final ``exec`` would leave the process
#: substitution's fd 63 open in the bot — third adversarial trial)
_ARGS_FD_SCRIPT = ('b=$1; n=$2; shift 2; a=("${@:1:n}"); shift "$n"; '
                   'exec 3< <(printf \'%s\\0\' "${a[@]}"); exec "$b" --args 3 "$@"')
#: run inside ``unshare``: read the script from fd 5, close it, run it.
_FROM_FD5 = 's=$(cat <&5); exec 5<&-; eval "$s"'
#: outside (``bash``): ``$1`` the script (fed to fd 5 as a here-string: no writer process, which
#: as a child of ``unshare`` would be left a zombie for the arena to reap), then unshare's argv.
_SCRIPT_FD_GLUE = 's=$1; shift; exec "$@" 5<<<"$s"'


def through_args_fd(argv: Sequence[str]) -> list[str]:
    """``argv`` (:func:`bwrap_argv`: bwrap, its options, ``--``) run so that bubblewrap reads its
    options from a pipe (``--args 3``): its command line, which a sandboxed bot reads as
    ``/proc/1/cmdline``, then names no covered or hidden path (adversarial finding 10). The
    ``bash`` execs bwrap; the writer it forks runs in the host's PID namespace, out of the
    bot's sight. Without ``bash``, ``argv`` unchanged.
    """
    bash = shutil.which("bash")
    if not bash:
        return list(argv)  # (no bash: the options stay on bwrap's command line)
    bwrap, opts = argv[0], list(argv[1:-1])
    return [bash, "-c", _ARGS_FD_SCRIPT, "cardarena-bwrap", bwrap, str(len(opts)), *opts, "--"]


def _fstab_path(p: str) -> str:
    """``p`` as an fstab field (octal escapes for blanks and backslashes)."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in p)


def _fstab(items: list[tuple[str, str, str]], source: dict[str, str]) -> list[str]:
    """fstab lines for ``view`` ops in order: covers (writable until their binds are in, then
    ``remount,ro``), binds (from their ``source``), then the hidden folders."""
    lines, covers, late = [], [], []
    for op, p, mode in items:
        t = _fstab_path(p)
        if op == "bind":
            lines.append(f"{_fstab_path(source[p])} {t} none bind,ro,X-mount.mkdir 0 0")
        elif op == "cover":
            lines.append(f"cardarena {t} tmpfs size={_HIDE_BYTES},mode={mode},X-mount.mkdir 0 0")
            covers.append(f"cardarena {t} tmpfs remount,ro 0 0")
        elif op == "hide":
            late.append(f"cardarena {t} tmpfs ro,size={_HIDE_BYTES},mode=0 0 0")
        else:  # null: a file shown empty
            late.append(f"/dev/null {t} none bind,ro 0 0")
    return lines + covers + late


def unshare_script(limits: Limits, workdir: str, binds: Sequence[str]) -> str:
    """The ``sh`` script run inside ``unshare`` (as the namespace's init) around the bot.

    Three processes: ``mount -a -o remount,bind,ro`` makes every inherited mount read-only;
    one ``mount -a`` reads an fstab the script wrote (shell built-in ``printf``) into the
    working folder and mounts the view of :func:`arena.process.sandbox_view.view` in order;
    ``mkdir`` makes the working folder in the private ``/tmp``. Every folder to bind back is
    first bound into a scratch tmpfs on ``/dev/shm`` (its source is still in sight then) and
    bound from there once the covers are in; the private ``/tmp`` is mounted in the scratch
    tmpfs too and bound onto ``/tmp`` (so sources under ``/tmp`` stay reachable while it is
    filled); the private ``/dev/shm`` mounted last puts the scratch tmpfs out of reach. ``mount -n``: nothing is
    written to the host's ``/run/mount/utab``.
    """
    q = shlex.quote
    # by absolute path: nothing a PATH could bring runs as the namespace's root before the covers
    mount, mkdir = shutil.which("mount") or "/bin/mount", shutil.which("mkdir") or "/bin/mkdir"
    size = f"size={limits.max_disk_mb}m,mode=1777"
    v = view(workdir, binds, limits.hidden_files)
    tab = ["cardarena-scratch /dev/shm tmpfs size=65536,mode=0700 0 0"]
    source: dict[str, str] = {}
    for op, p, _ in v.outside + v.inside:
        if op == "bind":
            source[p] = f"/dev/shm/{len(source)}"
            tab.append(f"{_fstab_path(p)} {source[p]} none bind,ro,X-mount.mkdir 0 0")
    private = [t for t in v.private if t != "/dev/shm"]
    tab += [f"cardarena /dev/shm/p{i} tmpfs {size},X-mount.mkdir 0 0" for i in range(len(private))]
    tab += _fstab(v.outside, source)
    tab += [f"/dev/shm/p{i} {_fstab_path(t)} none bind 0 0" for i, t in enumerate(private)]
    tab += _fstab([x for x in v.inside if not under(x[1], ["/dev/shm"])], source)  # (bwrap only: rare)
    tab.append(f"cardarena /dev/shm tmpfs {size} 0 0")
    fstab = os.path.join(workdir, ".cardarena-fstab")
    lines = ["set -e", "umask 022", "printf '%s\\n' " + " ".join(q(x) for x in tab) + f" > {q(fstab)}",
             f"{q(mount)} -n -a -o remount,bind,ro 2>/dev/null || :",  # every inherited mount read-only
             f"{q(mount)} -n -a -T {q(fstab)}",
             f"{q(mkdir)} -p -m {_workdir_mode(limits)} {q(workdir)}",  # in the private /tmp
             f"cd {q(workdir)}"]
    # the bot is not the namespace's init (which gets no signal it has no handler for): sh
    # is, and exits with the bot's status (128 + N when killed by signal N)
    lines.append('exec 3<&0')  # a background job's stdin would be /dev/null
    lines.append('"$@" <&3 3<&- &')
    lines.append('wait $!')
    return "\n".join(lines)


def unshare_argv(limits: Limits, workdir: str, binds: Sequence[str]) -> list[str]:
    """util-linux ``unshare``'s argv for one bot: new user (when not root), PID, mount,
    IPC, UTS and (``network: deny``) network namespaces, a fresh ``/proc``, then
    :func:`unshare_script` (ends with the script's ``$0``; the bot's argv follows). The script
    reaches the namespace's ``sh`` through a pipe on fd 5 (fed by an outer ``bash``, which execs
    ``unshare``), so that no
    command line in the sandbox names a covered or hidden path.

    :raises ValueError: ``unshare`` is not installed.
    """
    unshare = shutil.which("unshare")
    sh = shutil.which("sh") or "/bin/sh"
    if not unshare:
        raise ValueError(f"sandbox: unshare needs util-linux's unshare; {REMEDY}")
    out = [unshare]
    if os.geteuid() != 0 or own_user_namespace(limits):
        out += ["--user", "--map-root-user"]
    out += ["--pid", "--fork", "--kill-child", "--mount", "--ipc", "--uts", "--mount-proc",
            "--propagation", "private"]
    if limits.network == "deny":
        out.append("--net")
    # the script (it names every covered and hidden path) comes through fd 5, so that the
    # namespace's init, whose /proc/1/cmdline the bot reads, names none (adversarial finding 10)
    script = unshare_script(limits, workdir, binds)
    bash = shutil.which("bash")
    if not bash:  # (no bash: the script stays on the init's command line)
        return out + ["--", sh, "-c", script, "cardarena-sandbox"]
    return [bash, "-c", _SCRIPT_FD_GLUE, "cardarena-unshare", script, *out, "--",
            sh, "-c", _FROM_FD5, "cardarena-sandbox"]


def inner_setpriv(limits: Limits, mode: str) -> list[str]:
    """The ``setpriv`` run last before the bot: ``bot_user``'s uid and gid (arena as root), and
    inside a sandbox no capabilities and no new privileges (root in the sandbox cannot undo
    its mounts). Empty when nothing applies.

    :raises ValueError: ``bot_user`` names no user.
    """
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return []
    out: list[str] = []
    if limits.bot_user and os.geteuid() == 0:
        try:
            pw = pwd.getpwnam(limits.bot_user)
        except KeyError:
            raise ValueError(f"bot_user {limits.bot_user!r} is not a user of this machine") from None
        out += [f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups"]
    if mode == "unshare" or (mode == "bwrap" and os.geteuid() == 0):
        out += ["--inh-caps=-all", "--bounding-set=-all"]
    if mode != "none":
        out.append("--no-new-privs")
    return [setpriv, *out, "--"] if out else []


def sandbox_argv(limits: Limits, mode: str, workdir: str, binds: Sequence[str]) -> list[str]:
    """The sandbox wrapper of ``mode`` (``bwrap`` | ``unshare`` | ``none``) for one bot.

    Under ``none`` with ``network: deny``: ``unshare --net`` (an empty network namespace).
    """
    if mode == "bwrap":
        return through_args_fd(bwrap_argv(limits, workdir, binds))
    if mode == "unshare":
        return unshare_argv(limits, workdir, binds)
    if limits.network == "deny":
        unshare = shutil.which("unshare")
        if not unshare:
            raise ValueError("network: deny needs unshare (util-linux)")
        return [unshare, "--net", "--"]
    return []


def _probe(kind: str) -> str | None:
    """Run ``true`` in a ``kind`` sandbox (cached): None if it started, else the error."""
    tool = shutil.which(kind)
    key = (kind, tool, os.geteuid())
    if key in _STATE.works:
        return _STATE.works[key]
    if tool is None:
        reason: str | None = f"{kind} is not installed"
    else:
        wd = tempfile.mkdtemp(prefix="cardarena-probe-")
        os.chmod(wd, 0o700)
        limits = Limits(sandbox=kind, network="deny", max_disk_mb=1)
        true = shutil.which("true") or "/bin/true"
        argv = sandbox_argv(limits, kind, wd, sandbox_binds(None, [true])) + inner_setpriv(limits, kind) + [true]
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, cwd=wd, timeout=30,
                               env={"PATH": os.environ.get("PATH", os.defpath), "HOME": wd})
            err = " | ".join(r.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
            reason = None if r.returncode == 0 else f"{kind} failed with exit code {r.returncode}: {err or 'no message'}"
        except (OSError, subprocess.SubprocessError) as e:
            reason = f"{kind} could not run: {e}"
        finally:
            shutil.rmtree(wd, ignore_errors=True)
    _STATE.works[key] = reason
    return reason


def effective_mode(limits: Limits) -> str:
    """The sandbox bots get under ``limits`` on this machine: ``bwrap`` | ``unshare`` | ``none``.

    ``auto`` and ``required`` try :data:`AUTO_ORDER` (or the kind named by ``$CARDARENA_SANDBOX_AUTO``)
    and take the first that starts (probed once per process); ``auto`` falls back to ``none``.
    The value to print at start and to record (``"sandbox": "none"`` in leaderboard.json).

    :raises SandboxUnavailable: ``sandbox: required`` and neither kind starts.
    """
    mode = limits.sandbox
    if mode not in ("auto", "required"):
        return mode
    forced = os.environ.get(AUTO_ENV, "")
    order = (forced,) if forced in ("bwrap", "unshare", "none") else AUTO_ORDER
    reasons = []
    for kind in order:
        if kind == "none":
            break
        reason = _probe(kind)
        if reason is None:
            return kind
        reasons.append(reason)
    if mode == "required":
        raise SandboxUnavailable(
            "limits.sandbox is 'required' but no sandbox can start on this machine ("
            + "; ".join(reasons or ["disabled by $" + AUTO_ENV]) + f"); {REMEDY}, or set "
            "limits.sandbox: auto to run unsandboxed")
    return "none"


def unsandboxed_warning(limits: Limits) -> str | None:
    """The loud message for ``auto`` falling back to no sandbox, else None."""
    if limits.sandbox != "auto" or effective_mode(limits) != "none":
        return None
    why = "; ".join(r for r in (_probe(k) for k in AUTO_ORDER if k != "none") if r) or "disabled by $" + AUTO_ENV
    return ("WARNING: bots run WITHOUT A SANDBOX: no sandbox can start on this machine for this user "
            f"({why}), so every bot can read the results folder (the deal secret), other "
            "processes' memory and environments, and use the network. To fix it, "
            f"{REMEDY}; set limits.sandbox: required to refuse to run like this.")


def warn_if_unsandboxed(limits: Limits) -> bool:
    """Print :func:`unsandboxed_warning` to stderr (and the log), once per process.

    :returns: whether bots run unsandboxed under ``auto``.
    """
    msg = unsandboxed_warning(limits)
    if msg is None:
        return False
    if not _STATE.warned:
        _STATE.warned = True
        log.warning(msg)
        print(msg, file=sys.stderr, flush=True)
    return True
