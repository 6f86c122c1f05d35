"""What a sandboxed bot sees of the file system: the folders replaced, covered, bound back, hidden.

Both sandbox kinds (:mod:`arena.process.sandbox`) build the same view from :func:`view`
(docs/security.md, "The sandbox"), on top of a read-only copy of the machine's folders:

* **private** folders (:data:`SANDBOX_TMPFS`, and the working-folder root when it is not under
  ``/tmp``): fresh writable tmpfs of ``max_disk_mb``;
* **covers**: an empty read-only tmpfs over the arena user's home (``$HOME`` and the user's
  home) and over the program folders of the tournament's other bots and the folders of
  submissions (:func:`hide_bot_folders`);
* **binds**: the folders the bot needs that lie in a private folder or a cover, bound back
  read-only (:func:`sandbox_binds`: interpreter prefix, project, user site-packages, the bot's
  own ``cwd``, command and script folders);
* **hidden**: results folders, results roots, Ray folders (:func:`hidden_paths`), covered by an
  empty mode-0 tmpfs where the bot could otherwise still see them.

A cover holding a bind has mode 0711 (the bot can reach the bound folder, not list the rest),
else mode 0.
"""

from __future__ import annotations

import glob
import os
import pwd
import site
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arena.specs import BotSpec

#: folders the sandbox replaces by private tmpfs mounts.
SANDBOX_TMPFS = ("/tmp", "/dev/shm")
#: folders of the system holding daemons' unix sockets (docker, systemd, D-Bus, databases):
#: covered in every sandbox, since a read-only mount does not stop ``connect()`` on a socket
#: (adversarial finding 3); symbolic links (``/var/run`` -> ``/run``) are covered through their target.
SOCKET_DIRS = ("/run", "/var/run", "/var/lib/docker", "/var/lib/containerd")
#: the prefix of Ray's private session folder (``arena.ray_setup.private_dir``), hidden in every sandbox
RAY_DIR_PREFIX = "cardarena-ray-"
#: the project holding ``engine``/``bots`` (an editable install's source folder): every bot may
#: import the SDK or the engine from it.
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: the project and its packages (the shipped bots share ``bots/`` with the SDK every bot may
#: import): never hidden as a bot's program folder.
PROJECT_SHARED = (PROJECT_ROOT, *(os.path.join(PROJECT_ROOT, d) for d in ("arena", "bots", "engine")))
#: folders of the system, never hidden as a bot's program folder (a bot's ``cmd`` may name them).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
               "/proc", "/sys", "/dev", "/run", "/boot", "/var/lib")


class _ViewState:
    """What the sandbox hides across bots (one object instead of module globals).

    :ivar hidden: results folders (:func:`hide_from_sandbox`).
    :ivar roots: results roots (:func:`hide_results_root`).
    :ivar bots: program folders of the tournaments' bots (:func:`hide_bot_folders`).
    """

    def __init__(self) -> None:
        self.hidden: set[str] = set()
        self.roots: set[str] = set()
        self.bots: set[str] = set()


_STATE = _ViewState()


def under(path: str, roots: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies inside one (plain string test on absolute paths)."""
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _depth_order(paths: Iterable[str]) -> list[str]:
    return sorted(set(paths), key=lambda p: (p.count(os.sep), p))


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


def hide_bot_folders(specs: Iterable[BotSpec]) -> None:
    """Hide the program folders of ``specs`` (a tournament's bots: :func:`program_folders`)
    from every later sandbox but each bot's own: a bot cannot read another's source. For a
    submission (``bots: {from: DIR}``) the whole ``DIR`` is hidden: the submissions of other
    tournaments, its dot-folders (``.git``) and loose files (``grades.csv``) too."""
    for s in specs:
        _STATE.bots.update(program_folders(s))
        if s.submitted:
            _STATE.bots.update(_own([os.path.dirname(os.path.abspath(s.cwd))]))


def program_folders(spec: BotSpec) -> set[str]:
    """The folders of a bot's own program: its ``cwd`` and the folders of the files its
    ``cmd`` names (relative to ``cwd``; symbolic links followed too). Folders of the system
    (:data:`SYSTEM_DIRS`, ``PATH``), the interpreter's prefix, the project root and its
    packages (:data:`PROJECT_SHARED`: the shipped bots live next to the SDK), the homes and
    ``/`` are never a bot's own (every bot may need them).
    """
    return _own({os.path.abspath(spec.cwd), *_cmd_folders(spec)})


def _cmd_folders(spec: BotSpec) -> set[str]:
    """The folders of the files ``spec.cmd`` names (relative to its ``cwd``), as given and resolved."""
    cwd = os.path.abspath(spec.cwd)
    out = set()
    for a in spec.cmd:
        p = a if os.path.isabs(a) else os.path.join(cwd, a)
        if a and os.path.isfile(p):
            out |= {os.path.dirname(os.path.abspath(p)), os.path.dirname(os.path.realpath(p))}
    return out


def _own(cands: Iterable[str]) -> set[str]:
    """``cands`` as real paths, without the folders every bot may need (see :func:`program_folders`)."""
    shared = set(os.environ.get("PATH", os.defpath).split(os.pathsep)) | homes() | {"/", *PROJECT_SHARED}
    prefixes = [sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)]
    # real paths: a folder reached through a symbolic link is hidden (and spared) as its target;
    # a mount cannot be made on the link itself
    real = {os.path.realpath(c) for c in cands}
    return {c for c in real if c not in shared and not under(c, SYSTEM_DIRS) and not under(c, prefixes)}


def foreign_files(specs: Iterable[BotSpec]) -> list[tuple[str, str, str]]:
    """Bots whose ``cmd`` names a file in another bot's working folder (``cwd``) outside their
    own: ``(bot, folder, owner)`` each. Such a file's folder would be bound back into the bot's
    sandbox over the cover that hides the owner's program (adversarial finding: a submission's
    ``cmd: [python, bot.py, ../alice/bot.py]`` read alice's source); the pre-flight and ``arena doctor --config`` refuse them.
    Bots sharing one working folder share it knowingly (docs/security.md)."""
    specs = list(specs)
    cwds = {s.name: os.path.realpath(s.cwd) for s in specs}
    owners = {c: n for n, c in sorted(cwds.items(), reverse=True) if _own([c])}
    out = []
    for s in specs:
        mine = cwds[s.name]
        for f in sorted(_own(_cmd_folders(s))):
            if under(f, [mine]):
                continue
            hit = [(c, n) for c, n in owners.items() if c != mine and under(f, [c])]
            if hit:
                c, n = max(hit, key=lambda x: len(x[0]))  # the deepest working folder holding it
                out.append((s.name, f, n))
    return out


def homes() -> set[str]:
    """The arena user's home folders: ``$HOME`` and the password file's home of the effective
    user (existing folders other than ``/``)."""
    out = {os.path.expanduser("~")}
    try:
        out.add(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        pass
    return {os.path.abspath(h) for h in out if h and os.path.abspath(h) != "/" and os.path.isdir(h)}


def _covers_bind(h: str, binds: Iterable[str]) -> bool:
    """Whether results folder ``h`` (given to :func:`hide_from_sandbox`) holds a bound folder."""
    return h in _STATE.hidden and any(under(b, [h]) for b in binds)


def _spared(h: str, binds: Iterable[str]) -> bool:
    """A results root holding a folder bound for the bot (its program) is not hidden from it."""
    return h in _STATE.roots and h not in _STATE.hidden and any(under(b, [h]) for b in binds)


def hidden_paths() -> list[str]:
    """The existing folders every sandbox hides: results folders given to
    :func:`hide_from_sandbox` and :func:`hide_results_root`, the Ray folders ``~/.ray`` (of
    every home) and ``/tmp/ray`` (and ``$RAY_TMPDIR/ray``), Ray's private folders of the arena
    (:data:`RAY_DIR_PREFIX`, in ``$TMPDIR`` and ``/tmp``); sorted, parents first."""
    cands = set(_STATE.hidden) | set(_STATE.roots)
    cands.update(os.path.join(h, ".ray") for h in homes() | {os.path.expanduser("~")})
    cands.add(os.path.join(os.environ.get("RAY_TMPDIR", "/tmp"), "ray"))
    cands.add("/tmp/ray")
    # Ray's private session folders and tokens (arena.ray_setup.private_dir) in the temporary
    # directory: $TMPDIR may be outside /tmp, which the private /tmp covers (adversarial finding:
    # with TMPDIR set a bot read the token and killed the raylet through its socket)
    for base in {tempfile.gettempdir(), "/tmp"}:
        cands.update(glob.glob(os.path.join(glob.escape(base), RAY_DIR_PREFIX + "*")))
    return _depth_order(p for p in cands if os.path.isdir(p) and not os.path.islink(p))


def cover_candidates() -> set[str]:
    """The folders covered in every sandbox unless the bot needs them whole: the homes, the
    registered bots' program folders and the socket folders (:data:`SOCKET_DIRS`; the folder of
    ``/etc/resolv.conf``'s target in one of them is bound back by :func:`view`)."""
    sockets = {d for d in SOCKET_DIRS if os.path.isdir(d) and not os.path.islink(d)}
    return homes() | sockets | {b for b in _STATE.bots if os.path.isdir(b)}


def _needs(spec: BotSpec | None, argv: Sequence[str]) -> list[str]:
    """Every folder the bot may need (see :func:`sandbox_binds`), unfiltered."""
    cands: list[str] = [sys.prefix, sys.base_prefix, PROJECT_ROOT]
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    if user_site and os.path.isdir(user_site):
        cands.append(user_site)
    if spec is not None:
        cands.append(os.path.abspath(spec.cwd))
    for i, a in enumerate(argv):
        if not a or not os.path.isabs(a):
            continue
        if i == 0 or os.path.isfile(a):
            cands += [os.path.dirname(a), os.path.dirname(os.path.realpath(a))]
        if i == 0:
            cands += _tool_folders(a)
    return cands


def _tool_folders(argv0: str) -> list[str]:
    """For a command under a home: an interpreter's prefix (``<prefix>/bin/node``) and the
    home's top folder holding it (``~/.pyenv``, ``~/.nvm``: version managers' shims need it)."""
    out = []
    for p in {argv0, os.path.realpath(argv0)}:
        d = os.path.dirname(p)
        if os.path.basename(d) == "bin":
            out.append(os.path.dirname(d))
        for h in homes():
            if under(p, [h]) and p != h:
                out.append(os.path.join(h, p[len(h):].lstrip(os.sep).split(os.sep)[0]))
    return out


def sandbox_binds(spec: BotSpec | None, argv: Sequence[str] = ()) -> list[str]:
    """The folders bound read-only into a sandbox so that the bot can still run when they lie
    in a folder the sandbox replaces or covers (:data:`SANDBOX_TMPFS`, the homes, other bots'
    program folders): the interpreter's ``sys.prefix`` and ``sys.base_prefix``, the project
    root, the user site-packages, the bot's ``cwd``, the directory of the resolved command
    ``argv[0]`` (for one under a home also its prefix and the home's top folder holding it,
    e.g. ``~/.pyenv``) and of every existing file argument (the script). Symbolic links are
    followed (both the link's folder and its target's are bound). Folders elsewhere are
    already visible (read-only) and are not listed.

    :returns: absolute paths, parents before children, without duplicates.
    """
    roots = [*SANDBOX_TMPFS, *cover_candidates()]
    out: set[str] = set()
    for c in _needs(spec, argv):
        for p in (os.path.abspath(c), os.path.realpath(c)):
            if os.path.isdir(p) and under(p, roots) and p != "/":
                out.add(p)
    # a symbolic link inside a bound folder already shows there (and resolves to its bound or
    # visible target); binding onto it would make bubblewrap follow it outside the new root
    out = {p for p in out if not (os.path.islink(p) and any(under(p, [q]) and q != p for q in out))}
    return _depth_order(out)


@dataclass
class View:
    """The mounts of one sandbox, in the order to apply them.

    :ivar outside: ``(op, path, mode)`` outside the private folders, parents first: ``cover``
        (empty tmpfs, then made read-only), ``bind`` (read-only bind of the same path), ``hide``,
        ``null`` (a file: ``/dev/null`` bound over it, last).
    :ivar private: the private tmpfs folders (``/tmp`` first).
    :ivar inside: the same ops inside the private folders (after those are mounted).
    :ivar covers: the covered folders (made read-only once their binds are in).
    """

    outside: list[tuple[str, str, str]] = field(default_factory=list)
    private: list[str] = field(default_factory=list)
    inside: list[tuple[str, str, str]] = field(default_factory=list)
    covers: list[str] = field(default_factory=list)


def _visible(path: str, layers: Iterable[tuple[str, str]]) -> bool:
    """Whether ``path`` still shows its real contents under ``layers`` (``(op, folder)``):
    the deepest layer holding it is a bind, or there is none."""
    holding = [(p.count(os.sep), op) for op, p in layers if under(path, [p])]
    return not holding or max(holding)[1] == "bind"


def view(workdir: str, binds: Sequence[str], files: Sequence[str] = ()) -> View:
    """The mounts of a sandbox for a bot working in ``workdir`` with ``binds``
    (:func:`sandbox_binds`; the interpreter prefix and the project are added in any case)
    and ``files`` shown empty (``null``: ``/dev/null`` bound over each that the bot could read:
    the tournament's config file, ``Limits.hidden_files``).

    A cover equal to a bind is left out (the bot needs that folder whole); a bind that would
    show anyway is left out; a hidden folder is covered only where it would still show (the
    deepest layer over it is a bind, or it is a results folder holding a bind) and not
    inside a folder hidden already (a results folder inside its hidden results root).
    """
    out = View(private=list(SANDBOX_TMPFS))
    if not under(workdir, ["/tmp"]):
        out.private.append(os.path.dirname(workdir))
    binds_set = set(binds) | set(sandbox_binds(None, []))
    resolv = os.path.dirname(os.path.realpath("/etc/resolv.conf"))
    if os.path.isdir(resolv) and under(resolv, SOCKET_DIRS) and resolv not in SOCKET_DIRS:
        binds_set.add(resolv)  # e.g. /run/systemd/resolve: names still resolve under network: allow
    covers = {c for c in cover_candidates() if c not in binds_set}
    if not under(workdir, ["/tmp"]) and under(os.path.dirname(workdir), covers):
        binds_set.add(os.path.dirname(workdir))  # the mount point of its private tmpfs
    layers: list[tuple[str, str]] = []

    def seen(p: str) -> bool:
        """Whether ``p`` is still visible through the layers so far (no cover but its own hides it)."""
        return _visible(p, [*layers, *(("cover", q) for q in out.private if q != p)])

    for p in _depth_order(covers | binds_set):
        op = "bind" if p in binds_set else "cover"
        if op == "cover" and not seen(p) and not any(under(b, [p]) for b in binds_set):
            continue  # already out of sight
        if op == "bind" and seen(p):
            continue  # shows anyway
        mode = "0711" if op == "cover" and any(under(b, [p]) and b != p for b in binds_set) else "0"
        layers.append((op, p))
        (out.inside if under(p, out.private) else out.outside).append((op, p, mode))
        if op == "cover":
            out.covers.append(p)
    hidden: list[str] = []
    for h in hidden_paths():  # parents first
        if _spared(h, binds_set) or not (seen(h) or _covers_bind(h, binds_set)):
            continue
        if under(h, hidden):
            continue  # already out of sight: its mount point would lie in a mode-0 tmpfs (finding 5)
        hidden.append(h)
        (out.inside if under(h, out.private) else out.outside).append(("hide", h, "0"))
    for f in sorted(set(files)):
        f = os.path.abspath(f)
        if os.path.isfile(f) and seen(f) and not under(f, hidden):
            # a file in a private folder shows only through a bind back (e.g. the bot's cwd
            # under /tmp holding the tournaments file): nulled after that bind
            (out.inside if under(f, out.private) else out.outside).append(("null", f, "0"))
    return out
