"""Bring Ray up (a private local instance, or a cluster with ``--address``) and undo its side effects.

The local Ray instance is pinned to loopback: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` must
be in the environment before ``ray`` is imported (this module sets it at import), together
with ``_node_ip_address="127.0.0.1"``; the dashboard is off. Also set at import: the
raylet reaps a dead worker's child processes (bots), and workers run at nice 0 (Ray's
default 15 would let any other load starve bots under wall-clock budgets). After
``ray.init`` the driver's ``SIGCHLD`` disposition and child-subreaper flag are restored
(Ray leaves ``SIGCHLD`` ignored, which breaks ``subprocess`` exit codes) and a guard
process kills the local instance's leftovers when the driver dies, even by ``kill -9``.
See ``docs/architecture.md``, ``docs/cluster.md``, ``tests/arena/test_tournament.py`` and
``tests/arena/test_cluster.py``.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper", "true")
# Ray runs workers at nice 15 by default; bots under wall-clock budgets must not be starved
# by whatever else runs on the machine (DESIGN's charging rule), so workers run at nice 0.
os.environ.setdefault("RAY_worker_niceness", "0")

from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from arena.errors import ArenaError  # noqa: E402
from arena.process import PR_SET_CHILD_SUBREAPER  # noqa: E402 - the reaping code's prctl option
from arena.process.sandbox_view import RAY_DIR_PREFIX  # noqa: E402 - hidden in every sandbox

#: ``prctl`` option reading the child-subreaper flag (``<linux/prctl.h>``); only the set option
#: lives in :mod:`arena.process.reaping`, which never reads the flag.
PR_GET_CHILD_SUBREAPER = 37

RUNTIME_EXCLUDES = ["results/", ".git/", ".venv/", "venv/", "bench/.venv-openspiel/", "**/__pycache__/",
                    ".pytest_cache/", ".hypothesis/", "*.egg-info/"]


def init_ray(workers: int, address: str | None = None, project_root: str | None = None) -> Any:
    """Start a private local Ray instance, or join a cluster; returns the ``ray`` module.

    Local (no ``address``): always a new instance of this process's own (``address="local"``:
    neither ``RAY_ADDRESS`` nor a cluster started on the machine with ``ray start`` is joined),
    ``num_cpus=workers``, loopback only, dashboard off, its session files under a private
    folder (mode 0700, :func:`private_dir`) and, unless ``RAY_AUTH_MODE`` or ``RAY_AUTH_TOKEN``
    say otherwise, a fresh token of its own there (mode 0600) instead of ``~/.ray/auth_token``.
    A start-up failure is retried once.

    With ``address`` (``auto`` or ``HOST:PORT``): join the cluster and ship ``project_root``
    as the job's working directory (excluding results, .git and virtual environments). If
    ``RAY_AUTH_MODE`` is unset and a token exists (``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``), token mode is used; Ray reads this
    setting when it is imported, so it is decided before ``import ray``.

    Ray ignores ``SIGCHLD`` in the driver once started, which makes every later
    ``subprocess`` of this process report exit code 0; the default disposition is
    restored after ``ray.init`` (:func:`restore_after_init`).

    :raises ArenaError: with remedies when a cluster cannot be reached (a refused
        connection within ~5 s; a token mismatch after Ray's own retries), or when the
        local instance cannot start.
    """
    import logging

    if address:
        if not os.environ.get("RAY_AUTH_MODE") and _token_exists():
            os.environ["RAY_AUTH_MODE"] = "token"  # effective only if ray is not imported yet
    else:
        _private_token()
    import ray

    if ray.is_initialized():
        return ray
    logging.getLogger("ray").setLevel(logging.ERROR)
    if address:
        _join(ray, address, project_root)
    else:
        start_local(ray, workers)
    return ray


def _join(ray: Any, address: str, project_root: str | None) -> None:
    """``ray.init`` on the cluster at ``address`` (see :func:`init_ray`)."""
    import logging
    import signal

    _probe_address(address)
    before = _subreaper()
    sigterm = signal.getsignal(signal.SIGTERM)
    runtime_env = {"working_dir": project_root or os.getcwd(), "excludes": RUNTIME_EXCLUDES}
    try:
        ray.init(address=address, runtime_env=runtime_env, configure_logging=False,
                 log_to_driver=False, logging_level=logging.ERROR)
    except Exception as e:  # noqa: BLE001 - Ray raises many kinds of errors here
        auth = os.environ.get("RAY_AUTH_MODE", "unset")
        raise ArenaError(
            f"cannot join the Ray cluster at {address!r}: {str(e)[:300]}. Remedies: check the address "
            "(`ray status` on the head) and the firewall; if the cluster uses token authentication "
            f"(RAY_AUTH_MODE here: {auth}), copy the head's token to ~/.ray/auth_token or set "
            "RAY_AUTH_TOKEN, and leave RAY_AUTH_MODE unset or set it to token (docs/cluster.md)") from e
    finally:
        restore_after_init(before, sigterm)


class _Local:
    """The local instance of this process: its private folder and its guard (see :func:`start_local`)."""

    dir: str | None = None
    guard: Any = None
    procs: list[tuple[int, float]] = []
    #: the raylet's and the GCS's (pid, creation time): the instance lives while they do
    core: list[tuple[int, float]] = []
    workers: int = 1
    #: when the instance was started (time.time()): older descendants are not its processes
    started: float = 0.0


def private_dir() -> str:
    """This process's private folder for Ray's session files and token (mode 0700, made once).

    Under ``/tmp`` (Unix socket paths inside it must stay short), removed at exit and by the
    orphan guard after a ``kill -9`` of the driver.
    """
    if _Local.dir is None or not os.path.isdir(_Local.dir):
        import atexit
        import tempfile

        base = tempfile.gettempdir()
        _Local.dir = tempfile.mkdtemp(prefix=RAY_DIR_PREFIX, dir=base if len(base) <= 20 else "/tmp")
        atexit.register(_remove_private_dir)
    return _Local.dir


def _remove_private_dir() -> None:
    import shutil

    if _Local.dir is not None:
        try:
            import ray

            if ray.is_initialized():
                ray.shutdown()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
        shutil.rmtree(_Local.dir, ignore_errors=True)
        _Local.dir = None


def _private_token() -> None:
    """A token of this run's own (mode 0600 in :func:`private_dir`) for the local instance,
    unless ``RAY_AUTH_MODE`` is set to something else or ``RAY_AUTH_TOKEN`` gives one."""
    import secrets

    mode = os.environ.get("RAY_AUTH_MODE")
    if (mode and mode.lower() != "token") or os.environ.get("RAY_AUTH_TOKEN"):
        return
    path = os.path.join(private_dir(), "auth_token")
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
    os.environ["RAY_AUTH_TOKEN_PATH"] = path
    os.environ["RAY_AUTH_MODE"] = "token"


def start_local(ray: Any, workers: int) -> None:
    """Start the private local instance (one retry on failure) and its orphan guard.

    :raises ArenaError: with remedies if Ray cannot start twice in a row.
    """
    import logging
    import signal

    os.environ.pop("RAY_ADDRESS", None)  # never joined by a local run; bots must not see it either
    _Local.workers = workers
    error: Exception | None = None
    for _attempt in range(2):
        before = _subreaper()
        sigterm = signal.getsignal(signal.SIGTERM)
        _Local.started = time.time()
        try:
            ray.init(address="local", num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1",
                     _temp_dir=os.path.join(private_dir(), "r"), configure_logging=False, log_to_driver=False,
                     logging_level=logging.ERROR)
            error = None
            break
        except Exception as e:  # noqa: BLE001 - Ray raises many kinds of errors at start-up
            error = e
            _kill_recorded(_children())
            try:
                ray.shutdown()
            except Exception:  # noqa: BLE001
                pass
        except BaseException:  # Ctrl-C mid-start: what it had started is tracked by nobody yet
            _kill_started()
            raise
        finally:
            restore_after_init(before, sigterm)
    if error is not None:
        raise ArenaError(ray_start_failure(error)) from error
    _start_orphan_guard()


def _kill_started() -> None:
    """Kill what a ``ray.init`` cut short (Ctrl-C) had started, Ctrl-C ignored meanwhile; twice,
    for an agent its raylet was spawning at the first pass (a new user's double Ctrl-C left a
    ``ray::DashboardAgent`` orphaned for minutes)."""
    import signal

    try:
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        old = None
    try:
        for _ in range(2):
            _kill_recorded([p for p in _children() if p[1] >= _Local.started - 1.0])
            time.sleep(0.2)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)


def ray_start_failure(e: BaseException) -> str:
    """The one-paragraph message for a local Ray that did not start twice in a row (``e`` its error)."""
    first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
    folder = os.path.dirname(private_dir())
    return (f"Ray could not start on this machine ({type(e).__name__}: {first}). Nothing recorded was lost. "
            "Remedies: run without Ray with `arena run --inline` (on 1-2 cores it is also the faster way for "
            "small tournaments); the machine may be overloaded or short of memory (run again, or with fewer "
            f"--workers); check free space and permissions of {folder} (or TMPDIR)")


def local_alive() -> bool:
    """Whether the local instance's raylet and GCS still run (True when unknown, e.g. on a cluster).

    Only those two decide: the other processes recorded at start include the workers Ray
    prestarts, and a worker's death is one failed batch, not a dead instance.
    """
    import psutil

    for pid, created in _Local.core:
        try:
            p = psutil.Process(pid)
            if abs(p.create_time() - created) >= 0.5 or p.status() == psutil.STATUS_ZOMBIE:
                return False
        except psutil.NoSuchProcess:
            return False
        except psutil.Error:
            continue
    return True


def restart_local(ray: Any) -> None:
    """Replace a broken local instance (its raylet or GCS died) by a new one.

    :raises ArenaError: if the new instance cannot start.
    """
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - the old instance is broken
        pass
    _kill_recorded(_Local.procs)
    if _Local.guard is not None:
        _Local.guard.kill()  # not its EOF: that would also remove the private folder, still in use
        _Local.guard.wait()
        _Local.guard = None
    start_local(ray, _Local.workers)


_GUARD_CODE = """
import shutil, sys, psutil
procs = []
for item in sys.argv[2:]:
    pid, created = item.split(":")
    procs.append((int(pid), float(created)))
sys.stdin.buffer.read()  # returns at EOF: the driver has exited, however it ended
for pid, created in procs:
    try:
        p = psutil.Process(pid)
        if abs(p.create_time() - created) < 0.5:
            p.kill()
    except psutil.Error:
        pass
if sys.argv[1] != "-":
    shutil.rmtree(sys.argv[1], ignore_errors=True)
"""


def _children(live_only: bool = False) -> list[tuple[int, float]]:
    """``(pid, creation time)`` of every descendant of this process now (``live_only``: not
    zombies)."""
    import psutil

    out = []
    for c in psutil.Process().children(recursive=True):
        try:
            if live_only and c.status() == psutil.STATUS_ZOMBIE:
                continue
            out.append((c.pid, c.create_time()))
        except psutil.Error:
            continue
    return out


def _name(pid: int) -> str:
    """The process name of ``pid``, or "" if it cannot be read."""
    import psutil

    try:
        return str(psutil.Process(pid).name())
    except psutil.Error:
        return ""


def _kill_recorded(procs: list[tuple[int, float]]) -> None:
    """Kill the recorded processes still running (pid and creation time must match)."""
    import psutil

    for pid, created in procs:
        try:
            p = psutil.Process(pid)
            if abs(p.create_time() - created) < 0.5:
                p.kill()
        except psutil.Error:
            pass


def _start_orphan_guard() -> None:
    """Make the local Ray instance die with the driver, even after ``kill -9``.

    Ray's own reaper stops the GCS and the raylet when the driver dies, but the raylet's
    agents (dashboard and runtime-environment agents) survive as orphans (measured with
    Ray 2.60). A small guard process, in its own session, holds the read end of a pipe
    whose write end only the driver has; at EOF it kills the processes Ray started
    (identified by pid and creation time, taken right after ``ray.init``) and removes the
    private folder (:func:`private_dir`) of a driver that could not.
    """
    import subprocess
    import sys

    guard = _Local.guard
    # only what this instance started: an older descendant (another driver's raylet re-parented
    # to this subreaper after a kill -9, often a zombie) would make local_alive() false at once
    # and the restart loop forever (seen in CI: 75 instances in 8 minutes)
    _Local.procs = [p for p in _children(live_only=True) if (guard is None or p[0] != guard.pid)
                    and p[1] >= _Local.started - 1.0]
    _Local.core = [(pid, t) for pid, t in _Local.procs if _name(pid) in ("raylet", "gcs_server")]
    if guard is not None or not _Local.procs:
        return
    items = [f"{pid}:{created}" for pid, created in _Local.procs]
    _Local.guard = subprocess.Popen([sys.executable, "-c", _GUARD_CODE, _Local.dir or "-", *items],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)


def _prctl(option: int, arg: Any) -> int:
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def _subreaper() -> int | None:
    """This process's child-subreaper flag (Linux), or None if unknown."""
    try:
        import ctypes

        flag = ctypes.c_int(0)
        if _prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag)) != 0:
            return None
        return flag.value
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


def restore_after_init(subreaper: int | None, sigterm: Any = None) -> None:
    """Undo what ``ray.init`` does to the driver: ``SIGCHLD`` ignored, child subreaper on,
    and the caller's ``SIGTERM`` handler replaced (Ray's core worker installs a crash-dump
    handler; ``sigterm`` is the Python handler to put back, e.g. the CLI's, which turns
    ``SIGTERM`` into an orderly interrupt).

    Ignoring ``SIGCHLD`` makes every later ``subprocess`` of the driver report exit code 0.
    Once it is restored, the subreaper flag must go back to what it was before (off in
    ``arena run``; :mod:`arena.process` may have set it in a process that also runs bots
    inline): otherwise processes orphaned in Ray's tree would be adopted by the driver and
    stay zombies there. The bots of a dead worker go to the raylet instead (a subreaper with
    ``RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper``), which kills and
    reaps them (``tests/arena/test_cluster.py``).
    """
    import signal

    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if callable(sigterm):
            signal.signal(signal.SIGTERM, sigterm)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    if subreaper is None:
        return
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, subreaper)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _token_exists() -> bool:
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    return bool(os.environ.get("RAY_AUTH_TOKEN")) or Path(path).exists()


def _probe_address(address: str) -> None:
    """Fail within seconds (not Ray's ~20 s of retries) when HOST:PORT refuses connections."""
    import socket

    if address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    host = host.replace("ray://", "")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except (OSError, ValueError) as e:
        raise ArenaError(f"cannot reach the Ray head at {address}: {e}. Remedies: start it with "
                         "`ray start --head --node-ip-address=<ip> --port=<port>` (docs/cluster.md), check the "
                         "address and the firewall, or run without --address for a local instance") from e
