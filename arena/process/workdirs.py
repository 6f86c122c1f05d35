"""Bot working directories: one root per arena process, a private folder per bot process.

Every bot process gets a fresh, empty folder (mode 0700) under this arena process's root
``<tmp>/cardarena-bots-<pid>-<random>`` (mode 0700; 0711 only while an unsandboxed
``bot_user`` needs to reach its folder). A folder is deleted when its process is killed and
the root with the last of them; roots left by an arena that was killed outright are swept
by the next one (:func:`sweep_stale_roots`).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
import time

#: the bot working-directory roots' name prefix (under the temporary folder).
ROOT_PREFIX = "cardarena-bots-"
#: a root is swept as stale only when untouched for this long (s) as well (see :func:`sweep_stale_roots`).
STALE_ROOT_AGE_S = 600.0


class _Roots:
    """This process's working-directory root and the live folders in it.

    One object rather than module globals: every field changes under :attr:`lock`
    (batches may run in threads of one worker).
    """

    def __init__(self) -> None:
        self.root: str | None = None
        self.dirs: set[str] = set()
        self.lock = threading.Lock()


_ROOTS = _Roots()


def live_workdirs() -> set[str]:
    """A copy of the working directories made and not yet removed by this process."""
    with _ROOTS.lock:
        return set(_ROOTS.dirs)


def is_bot_home(path: str) -> bool:
    """Whether ``path`` lies in a bot working directory of an arena on this machine
    (``<tmp>/cardarena-bots-*/...``)."""
    base = os.path.join(tempfile.gettempdir(), ROOT_PREFIX)
    return path.startswith(base) and os.sep in path[len(base):]


def pid_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists in this pid namespace, zombies included (the
    question for an arena's pid in a root's name: a zombie arena still owns its root)."""
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
    removed: list[str] = []
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
                or int(pid_text) == os.getpid() or pid_exists(int(pid_text))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


def workdir_root() -> str:
    """The directory under which every bot working directory of this arena process lives.

    ``<tmp>/cardarena-bots-<pid>-<random>``, made on demand (mode 0700) and removed by
    :func:`remove_workdir` when its last working directory is removed, i.e. when the last
    process of a batch closes (a later batch makes a new one). Making one first sweeps the
    roots of dead arena processes (:func:`sweep_stale_roots`).
    """
    with _ROOTS.lock:
        if _ROOTS.root is None or not os.path.isdir(_ROOTS.root):
            sweep_stale_roots()
            _ROOTS.root = tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-")
            os.chmod(_ROOTS.root, 0o700)
        return _ROOTS.root


def open_root_for_other_users() -> None:
    """Let other users traverse (not list) the root: an unsandboxed ``bot_user`` must reach
    its own folder (mode 0711 instead of 0700)."""
    os.chmod(workdir_root(), 0o711)


def new_workdir(name: str) -> str:
    """A fresh, empty private directory (mode 0700) for one bot process, named after the
    bot (removed by :func:`remove_workdir`, which ``BotProcess.kill`` calls)."""
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
    with _ROOTS.lock:
        _ROOTS.dirs.add(d)
    return d


def remove_workdir(path: str) -> None:
    """Delete a bot working directory and its contents (idempotent); the root goes with the
    last working directory. A link a bot put in its folder's place is removed, never followed."""
    if os.path.islink(path):
        os.unlink(path)
    shutil.rmtree(path, ignore_errors=True)
    with _ROOTS.lock:
        _ROOTS.dirs.discard(path)
        if not _ROOTS.dirs and _ROOTS.root is not None:
            try:
                os.rmdir(_ROOTS.root)
            except FileNotFoundError:
                _ROOTS.root = None
            except OSError:
                pass  # not empty: something else lives there; keep it
            else:
                _ROOTS.root = None
