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
so ``/tmp`` and the working folder share one cap), the results folders, ``~/.ray``,
``/tmp/ray`` covered by empty mode-0 tmpfs (other bots' folders elsewhere stay readable:
see docs/security.md, "Not done here"), and no
capabilities (``setpriv --bounding-set=-all --no-new-privs``, also when the arena is root).
Nothing here is home-made namespace code: bwrap's options, or ``unshare`` running a short
``sh`` script of ``mount`` calls (:func:`unshare_script`) before it execs the bot.
"""

from __future__ import annotations

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
from arena.specs import BotSpec, Limits

log = logging.getLogger(__name__)

#: ``limits.sandbox`` values.
MODES = ("auto", "required", "bwrap", "unshare", "none")
#: what ``auto`` and ``required`` try, in order.
AUTO_ORDER = ("bwrap", "unshare")
#: environment variable that makes ``auto`` use one kind (``bwrap`` | ``unshare`` | ``none``):
#: how CI runs the whole suite on the ``unshare`` path on a machine that has bubblewrap.
AUTO_ENV = "CARDARENA_SANDBOX_AUTO"
#: folders the sandbox replaces by private tmpfs mounts.
SANDBOX_TMPFS = ("/tmp", "/dev/shm")
#: size of the empty tmpfs laid over a hidden folder, bytes.
_HIDE_BYTES = 4096

#: the project holding ``engine``/``bots`` (an editable install's source folder): bound into the
#: sandbox so Python bots importing the SDK or the engine still run when it lies under /tmp.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

REMEDY = ("install bubblewrap (apt-get install bubblewrap) or enable unprivileged user "
          "namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container, allow "
          "user namespaces or run it with CAP_SYS_ADMIN)")


class SandboxUnavailable(ArenaError):
    """``sandbox: required`` (or an explicit kind) and no sandbox can start on this machine."""


class _SandboxState:
    """What the sandbox remembers across bots (one object instead of module globals).

    :ivar hidden: folders covered by an empty tmpfs in every later sandbox (results folders).
    :ivar works: per ``(kind, tool path, euid)``, whether a probe ran ``true`` in that sandbox
        (None: cannot start), with the tool's error.
    :ivar warned: the unsandboxed warning was printed.
    """

    def __init__(self) -> None:
        self.hidden: set[str] = set()
        self.roots: set[str] = set()  # results roots (hide_results_root)
        self.works: dict[tuple, str | None] = {}
        self.warned = False


_STATE = _SandboxState()


def hide_from_sandbox(path: str) -> None:
    """Hide ``path`` (a results folder: journal, logs, secret) from every later sandbox.

    It is covered by an empty tmpfs inside the sandbox, so a bot cannot read the finished
    matches of the deal it is playing (other rotations and lineups replay the same deals).
    """
    _STATE.hidden.add(os.path.abspath(path))


def hide_results_root(path: str) -> None:
    """Hide the results root ``path`` (other tournaments' secrets and journals) from every later
    sandbox, except from a bot whose own files are bound inside it (it could not run)."""
    _STATE.roots.add(os.path.abspath(path))


def _covers_bind(h: str, binds: Iterable[str]) -> bool:
    """Whether results folder ``h`` (given to :func:`hide_from_sandbox`) holds a bound folder."""
    return h in _STATE.hidden and any(_under(b, [h]) for b in binds)


def _spared(h: str, binds: Iterable[str]) -> bool:
    """A results root holding a folder bound for the bot (its program) is not hidden from it."""
    return h in _STATE.roots and h not in _STATE.hidden and any(_under(b, [h]) for b in binds)


def hidden_paths() -> list[str]:
    """The existing folders every sandbox covers: results folders given to
    :func:`hide_from_sandbox`, the Ray folders ``~/.ray`` (of ``$HOME`` and of the user's
    home) and ``/tmp/ray`` (and ``$RAY_TMPDIR``); sorted, parents first."""
    cands = set(_STATE.hidden) | set(_STATE.roots)
    homes = {os.path.expanduser("~")}
    try:
        homes.add(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        pass
    cands.update(os.path.join(h, ".ray") for h in homes)
    cands.add(os.path.join(os.environ.get("RAY_TMPDIR", "/tmp"), "ray"))
    cands.add("/tmp/ray")
    return sorted((p for p in cands if os.path.isdir(p)), key=lambda p: (p.count(os.sep), p))


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def sandbox_binds(spec: BotSpec | None, argv: Sequence[str] = ()) -> list[str]:
    """The folders bound read-only into a sandbox so that the bot can still run when they
    lie under a folder the sandbox hides (:data:`SANDBOX_TMPFS`, e.g. a project, venv or
    interpreter under ``/tmp``): the interpreter's ``sys.prefix`` and ``sys.base_prefix``,
    the bot's ``cwd`` (project root), the directory of the resolved command ``argv[0]`` and
    of every existing file argument (the script). Symbolic links are followed (both the
    link's folder and its target's are bound). Folders elsewhere are already visible
    (read-only) and are not listed.

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
            if os.path.isdir(p) and _under(p, SANDBOX_TMPFS):
                out.add(p)
    # a symbolic link inside a bound folder already shows there (and resolves to its bound or
    # visible target); binding onto it would make bubblewrap follow it outside the new root
    out = {p for p in out if not (os.path.islink(p) and any(_under(p, [q]) and q != p for q in out))}
    return sorted(out, key=lambda p: (p.count(os.sep), p))


def _private_dirs(workdir: str) -> list[str]:
    """The tmpfs mounts of a sandbox: ``/tmp``, ``/dev/shm``, and the working-directory root
    when it does not lie under ``/tmp`` (``TMPDIR`` elsewhere)."""
    out = list(SANDBOX_TMPFS)
    if not _under(workdir, ["/tmp"]):
        out.append(os.path.dirname(workdir))
    return out


def _workdir_mode(limits: Limits) -> str:
    # another user (bot_user) must write its folder; only its own sandbox sees it anyway
    return "0777" if limits.bot_user and os.geteuid() == 0 else "0700"


def own_user_namespace(limits: Limits) -> bool:
    """Whether a sandbox gets a user namespace of its own also when the arena is root: yes unless
    ``bot_user`` is set (its uid must stay mappable for the inner ``setpriv``). Without one, every
    root bot shared root's kernel keyring (``add_key``), a channel between bots and matches that
    outlived the run (found by an adversarial trial); keyrings are per user namespace."""
    return not limits.bot_user


def bwrap_argv(limits: Limits, workdir: str, binds: Iterable[str]) -> list[str]:
    """bubblewrap's argv for one bot (ends with ``--``).

    :raises ValueError: bubblewrap is not installed.
    """
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise ValueError(f"sandbox: bwrap needs bubblewrap; {REMEDY}")
    size = str(limits.max_disk_mb * 2**20)
    out = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    private = _private_dirs(workdir)
    for t in private:
        out += ["--perms", "1777", "--size", size, "--tmpfs", t]
    binds = list(binds)
    for b in binds:
        out += ["--ro-bind", b, b]
    for h in [h for h in hidden_paths() if not _spared(h, binds)]:
        # a results folder stays hidden also over a folder bound inside it (the Ray folders do
        # not: a cluster job's bots run from Ray's copy of the project inside them)
        if not _under(h, private) or _under(h, binds) or _covers_bind(h, binds):
            out += ["--perms", "0000", "--size", str(_HIDE_BYTES), "--tmpfs", h]
    parent = os.path.dirname(workdir)
    if parent not in private:
        out += ["--perms", "0755", "--dir", parent]
    out += ["--perms", _workdir_mode(limits), "--dir", workdir, "--chdir", workdir,
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    if own_user_namespace(limits):
        out.append("--unshare-user")
    if limits.network == "deny":
        out.append("--unshare-net")
    out.append("--")
    return out


def unshare_script(limits: Limits, workdir: str, binds: Sequence[str]) -> str:
    """The ``sh`` script run inside ``unshare`` (as the namespace's init) around the bot.

    The private ``/tmp`` is first mounted on the (empty) working directory, filled (the
    read-only binds, the hidden folders inside them, the working folder) and then moved
    onto ``/tmp``: sources under ``/tmp`` are still reachable while it is being filled.
    Finally every other mount is remounted read-only. ``mount -n``: nothing is written to
    the host's ``/run/mount/utab``.
    """
    q = shlex.quote
    size = f"size={limits.max_disk_mb}m,mode=1777"
    hide = f"size={_HIDE_BYTES},mode=0"
    stage = workdir

    def staged(p: str) -> str:
        """Where ``p`` (under ``/tmp``) lies in the private ``/tmp`` while it is staged on the working folder."""
        return stage + p[len("/tmp"):]

    lines = ["set -e", f"mount -n -t tmpfs -o {size} tmpfs {q(stage)}"]
    for b in binds:
        lines.append(f"mkdir -p {q(staged(b))} && mount -n --bind -o ro {q(b)} {q(staged(b))}")
    hidden = [h for h in hidden_paths() if not _spared(h, binds)]
    for h in hidden:
        if _under(h, ["/tmp"]) and (_under(h, binds) or _covers_bind(h, binds)):
            lines.append(f"if [ -d {q(staged(h))} ]; then mount -n -t tmpfs -o {hide} tmpfs {q(staged(h))}; fi")
    private = _private_dirs(workdir)
    if _under(workdir, ["/tmp"]):
        lines.append(f"mkdir -p {q(os.path.dirname(staged(workdir)))} && "
                     f"mkdir -m {_workdir_mode(limits)} {q(staged(workdir))}")
    lines.append(f"mount -n --move {q(stage)} /tmp")
    lines.append(f"mount -n -t tmpfs -o {size} tmpfs /dev/shm")
    if not _under(workdir, ["/tmp"]):
        lines.append(f"mount -n -t tmpfs -o {size} tmpfs {q(private[-1])} && "
                     f"mkdir -m {_workdir_mode(limits)} {q(workdir)}")
    for h in hidden:
        if not _under(h, private):
            lines.append(f"mount -n -t tmpfs -o {hide} tmpfs {q(h)}")
    keep = "|".join(q(p) for p in private)
    # every other mount read-only; those not read-only yet, in parallel (each is one exec)
    lines.append('while read -r _ _ _ _ m o _; do case "$m" in ' + keep + ") ;; *) case \"$o\" in ro|ro,*) ;; "
                 '*) mount -n -o remount,bind,ro "$m" 2>/dev/null & esac;; esac; done < /proc/self/mountinfo')
    lines.append("wait")
    lines.append(f"cd {q(workdir)}")
    # the bot is not the namespace's init (which gets no signal it has no handler for): sh
    # is, and exits with the bot's status (128 + N when killed by signal N)
    lines.append('exec 3<&0')  # a background job's stdin would be /dev/null
    lines.append('"$@" <&3 3<&- &')
    lines.append('wait $!')
    return "\n".join(lines)


def unshare_argv(limits: Limits, workdir: str, binds: Sequence[str]) -> list[str]:
    """util-linux ``unshare``'s argv for one bot: new user (when not root), PID, mount,
    IPC, UTS and (``network: deny``) network namespaces, a fresh ``/proc``, then
    :func:`unshare_script` (ends with the script's ``$0``; the bot's argv follows).

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
    return out + ["--", sh, "-c", unshare_script(limits, workdir, binds), "cardarena-sandbox"]


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
        return bwrap_argv(limits, workdir, binds)
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
    return ("WARNING: bots run WITHOUT A SANDBOX: no bubblewrap or user namespaces on this "
            "machine, so every bot can read the results folder (the deal secret), other "
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
