"""Session fixtures shared by every test package.

``ray_session``: one local Ray instance (2 CPUs, loopback only, dashboard off) for the
tests that only need a running Ray. The loopback pin must be in the environment before
``ray`` is imported, hence the assignment at the top of this file.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper", "true")

import pytest  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def ray_session():
    """A running local Ray (started once per session, shut down at the end)."""
    from arena.ray_setup import init_ray

    ray = init_ray(workers=2)
    yield ray
    ray.shutdown()


def require(ok: bool, reason: str) -> None:
    """Skip a test whose machine lacks a tool it needs (bwrap, node, root, namespaces) — but
    fail under CI (``CI`` set), whose ``.ci/run`` installs those tools and runs as root, so the
    isolation tests can never pass there by skipping."""
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide this: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _interrupts_not_left_ignored():
    """A command run in-process may end by ignoring Ctrl-C and SIGTERM (``arena.cli._ignore_interrupts``:
    the process is exiting). Left so in pytest, every process a later test starts inherits the
    ignored SIGINT, and a test of Ctrl-C waits out a whole run (seen in CI). Restored after each test."""
    import signal

    yield
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
