"""Adversarial finding 3 (docs/security.md): ``network: deny`` does not stop pathname unix
sockets, and a read-only mount does not stop ``connect()`` on one: a bot reached a daemon's
socket (docker, systemd, D-Bus) as the host's root. ``/run`` (and ``/var/run``,
``/var/lib/docker``) are covered by an empty tmpfs in both kinds.

A real listener the test opens under ``/run``; the spy tries to connect in a real match. Under
``none`` it connects, which shows the test sees the leak.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest

from tests.conftest import require
from tests.security.test_leaks import MODES, expect, spy_run, verdict


@pytest.fixture
def run_socket():
    """A unix socket listening at ``/run/cardarena-test-<pid>/s`` (its accepted peers are
    counted in the returned list), removed afterwards."""
    require(os.path.isdir("/run") and os.access("/run", os.W_OK), "/run is not a writable folder")
    d = f"/run/cardarena-test-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    path = os.path.join(d, "s")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o777)
    srv.listen(4)
    srv.settimeout(0.2)
    peers: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            with c:
                c.settimeout(2)
                peers.append(c.recv(16))

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield path, peers
    stop.set()
    t.join(5)
    srv.close()
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_no_connection_to_a_unix_socket_under_run(tmp_path, mode, run_socket):
    path, peers = run_socket
    lines, r = spy_run(tmp_path, mode, "unixsock", path.encode().hex())
    assert r.status == "ok", r.faults
    assert verdict(lines, "unixsock") == expect(mode), lines
    for _ in range(50):  # the listener's own view (its thread may accept a moment later)
        if peers or mode != "none":
            break
        time.sleep(0.1)
    assert (peers == [b"spy"]) == (mode == "none"), peers
