"""A real multi-node Ray run on one machine (issue 18): a head and two more nodes started with
``ray start`` on 127.0.0.1 (own ports, own temp dirs), a tournament run with ``--address``,
batches seen on at least two nodes, one node killed mid-run, every match recorded exactly once.

Nodes are stopped by the ids of their own processes (:meth:`Node.processes`), never with
``ray stop`` (which would stop every Ray instance on the machine).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

import psutil
import pytest

from arena.journal import read_records
from tests.arena.test_cluster import ROOT, Head, alive, free_port, listening_addresses, project_copy


def _ports() -> list[str]:
    lo = free_port()
    return ["--node-manager-port", str(free_port()), "--object-manager-port", str(free_port()),
            "--min-worker-port", str(20000 + lo % 20000), "--max-worker-port", str(20000 + lo % 20000 + 40),
            "--dashboard-agent-listen-port", str(free_port()), "--dashboard-agent-grpc-port", str(free_port()),
            "--runtime-env-agent-port", str(free_port()), "--metrics-export-port", str(free_port())]


class Node(Head):
    """``ray start --address <head>`` on loopback, with its own ports and temp dir."""

    def __init__(self, head: Head) -> None:  # noqa: D107 - Head.__init__ is not reused (no --head)
        self.port = head.port
        # a joining node needs the multi-node switch on (the head's 0 keeps a lone head on loopback)
        self.env = {**head.env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}
        self.temp = tempfile.mkdtemp(prefix="rn", dir="/tmp")
        self.marks = (self.temp,)
        cmd = ["ray", "start", "--address", head.address, "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
               "--disable-usage-stats", "--temp-dir", self.temp, *_ports()]
        self.manager_port = cmd[cmd.index("--node-manager-port") + 1]
        try:
            out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=240)
        except subprocess.TimeoutExpired:
            self.stop()
            raise RuntimeError("ray start timed out during startup (240 s)") from None
        if out.returncode != 0:
            self.stop()
            raise RuntimeError(f"ray start failed: {out.stdout[-1500:]}{out.stderr[-1500:]}")

    def processes(self) -> list[psutil.Process]:
        """This node's processes: its raylet (by its node manager port) and their descendants."""
        found: dict[int, psutil.Process] = {}
        for p in psutil.process_iter(["cmdline"]):
            try:
                cmd = " ".join(p.info["cmdline"] or [])
                if f"--node_manager_port={self.manager_port}" in cmd or (self.temp in cmd and "raylet" in cmd):
                    found[p.pid] = p
                    for c in p.children(recursive=True):
                        found[c.pid] = c
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return list(found.values())

    def stop(self, grace_s: float = 6.0) -> None:
        Head.stop(self, grace_s)


def _raylet_port(p: psutil.Process) -> str | None:
    """The node manager port of the raylet that ``p`` (a Ray worker) descends from."""
    try:
        for a in p.parents():
            for arg in a.cmdline():
                if arg.startswith("--node_manager_port="):
                    return arg.split("=", 1)[1]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        pass
    return None


def _batch_nodes() -> set[str]:
    out = set()
    for p in psutil.process_iter(["cmdline", "name"]):
        try:
            title = " ".join(p.info["cmdline"] or []) + " " + (p.info["name"] or "")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if "ray::run_batch" in title:
            port = _raylet_port(p)
            if port:
                out.add(port)
    return out


@pytest.mark.ray
@pytest.mark.slow
def test_three_nodes_one_killed_mid_run_every_match_once(tmp_path):
    deals = 30  # 3 lineups x 3 rotations x 30 deals = 270 matches
    path = project_copy(tmp_path, deals=deals)
    res = tmp_path / "res"
    head = _twice(Head)
    nodes: list[Node] = []
    proc = None
    try:
        nodes = [_twice(lambda: Node(head)), _twice(lambda: Node(head))]
        exposed = [x for n in (head, *nodes) for x in listening_addresses(n.processes())
                   if not (x[2].startswith("127.") or x[2] == "::1")]
        assert not exposed, f"a node listens beyond loopback: {exposed}"
        head_port = next((a.split("=", 1)[1] for p in head.processes() if head.temp in " ".join(_cmd(p))
                          for a in _cmd(p) if a.startswith("--node_manager_port=")), "?")
        cmd = [sys.executable, "-m", "arena.cli", "run", str(path), "--all", "--quiet", "--workers", "4",
               "--address", head.address, "--results", str(res)]
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**head.env, "PYTHONPATH": ROOT}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        journal = res / "small" / "matches.jsonl"
        seen: set[str] = set()
        killed = None
        deadline = time.monotonic() + 400
        while proc.poll() is None and time.monotonic() < deadline:
            seen |= _batch_nodes()
            done = journal.read_bytes().count(b"\n") if journal.exists() else 0
            victim = nodes[0]
            if killed is None and done >= 40 and victim.manager_port in seen:
                killed = done
                for p in victim.processes():  # SIGKILL: a node lost, not shut down
                    try:
                        p.send_signal(signal.SIGKILL)
                    except psutil.NoSuchProcess:
                        pass
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-3000:]
        assert len(seen) >= 2, f"batches ran on nodes {seen} only (head {head_port})"
        assert killed is not None and killed < 270, "the node was not killed mid-run"
        recs = read_records(res / "small")
        ids = Counter(r.match_id for r in recs)
        assert len(ids) == 270 and max(ids.values()) == 1
        assert all(r.status == "ok" for r in recs)
        assert not [p for p in nodes[0].processes() if alive(p.pid)]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        for n in nodes:
            n.stop()
        head.stop()
        for n in nodes:
            shutil.rmtree(n.temp, ignore_errors=True)


def _twice(start):
    """``start()``, once more if Ray's fixed 30 s wait for a raylet ran out (a loaded machine)."""
    try:
        return start()
    except RuntimeError as e:
        if "timed out during startup" not in str(e):
            raise
        return start()


def _cmd(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return []
