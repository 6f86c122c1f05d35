"""A real multi-node Ray run on one machine (issue 18): a head and two more nodes started with
``ray start`` on 127.0.0.1 (own ports, own temp folders), a tournament run with
``arena run --address``, batches seen on at least two nodes, one non-head node killed
mid-run (its raylet, workers and bots, by PID), every match recorded exactly once with the
same results as an uninterrupted run.

Why a private network namespace: Ray 2.60's ``ray start --address`` refuses to join unless
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=1``, and with that switch on it rewrites ``127.0.0.1``
(both ``--address`` and ``--node-ip-address``) to the machine's outward address
(``services.resolve_ip_for_localhost``); a head kept on loopback only listens on 127.0.0.1,
so the joining node retried ``192.0.2.2:<port>`` for ever — the hang of the first draft.
A node whose IP is not exactly 127.0.0.1 binds every interface. In a network namespace of
its own, holding only ``lo``, the outward address *is* 127.0.0.1: nodes join on loopback,
nothing can be reached from outside the namespace, and no port collides with another Ray
on the machine. The cluster's token is a private file (mode 0600) named by
``RAY_AUTH_TOKEN_PATH`` with ``RAY_AUTH_MODE=token`` on every node (a joining node's default
mode is ``disabled``: without it the head answers ``InvalidAuthToken``).

Every process is stopped by its PID (those in the namespace, found by ``/proc/<pid>/ns/net``),
never with ``ray stop``, which would stop every Ray instance on the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from arena.journal import read_records
from tests.arena.test_cluster import ROOT, listening_addresses, load, project_copy, table
from tests.conftest import require

GCS_PORT = 6379  # inside the namespace: no other Ray there
OBJECT_STORE = "80000000"  # bytes per node: three nodes on a small machine


def _can_unshare() -> bool:
    if not (shutil.which("unshare") and shutil.which("nsenter") and shutil.which("ip")):
        return False
    try:
        out = subprocess.run(["unshare", "--net", "--", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


class NetNamespace:
    """A network namespace of its own holding only ``lo`` (up), kept by a ``sleep`` process."""

    def __init__(self) -> None:
        self.holder = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", "ip link set lo up && exec sleep 100000"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        path = f"/proc/{self.holder.pid}/ns/net"
        deadline = time.monotonic() + 30
        while True:  # the holder is in the new namespace once its link differs from ours
            try:
                self.inode = os.readlink(path)
                if self.inode != os.readlink("/proc/self/ns/net"):
                    break
            except OSError:
                pass
            if self.holder.poll() is not None or time.monotonic() > deadline:
                why = self.holder.stderr.read().decode(errors="replace") if self.holder.stderr else ""
                raise RuntimeError(f"unshare --net failed: {why}")
            time.sleep(0.05)
        self.prefix = ["nsenter", f"--net={path}", "--"]

    def processes(self) -> list[psutil.Process]:
        """Every process in this namespace except its holder (all started by this test)."""
        out = []
        for p in psutil.process_iter():
            if p.pid == self.holder.pid:
                continue
            try:
                if os.readlink(f"/proc/{p.pid}/ns/net") == self.inode:
                    out.append(p)
            except OSError:
                continue
        return out

    def close(self) -> None:
        """SIGKILL every process in the namespace, then the holder (the namespace goes with it)."""
        for _ in range(3):  # a dying raylet may still spawn: look again
            procs = {p.pid: p for p in self.processes()}
            for p in list(procs.values()):  # and bots, in sandboxes of their own namespace
                try:
                    procs.update((c.pid, c) for c in p.children(recursive=True))
                except psutil.NoSuchProcess:
                    continue
            if not procs:
                break
            _kill(list(procs.values()))
        self.holder.kill()
        self.holder.wait()


def _kill(procs: list[psutil.Process]) -> None:
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


class RayNode:
    """``ray start`` (head, or joining ``127.0.0.1:GCS_PORT``) inside ``ns``, one CPU, its own
    ports and temp folder (short: Ray's socket paths are limited)."""

    def __init__(self, ns: NetNamespace, index: int, temp: str, env: dict[str, str]) -> None:
        self.index = index
        self.temp = temp
        base = 20000 + 100 * index
        ports = {"--node-manager-port": base + 1, "--object-manager-port": base + 2,
                 "--dashboard-agent-listen-port": base + 3, "--dashboard-agent-grpc-port": base + 4,
                 "--runtime-env-agent-port": base + 5, "--metrics-export-port": base + 6,
                 "--min-worker-port": base + 10, "--max-worker-port": base + 60}
        self.manager_port = str(base + 1)
        cmd = ["ray", "start", "--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--disable-usage-stats",
               "--object-store-memory", OBJECT_STORE, "--temp-dir", self.temp,
               *[str(x) for kv in ports.items() for x in kv]]
        if index == 0:
            cmd += ["--head", "--port", str(GCS_PORT), "--include-dashboard", "false"]
            env = {**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        else:
            cmd += ["--address", f"127.0.0.1:{GCS_PORT}"]
            env = {**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "1"}  # else: "not supported on Windows and OSX"
        out = subprocess.run(ns.prefix + cmd, env=env, capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"ray start (node {index}) failed: {out.stdout[-1500:]}{out.stderr[-1500:]}")

    def processes(self, among: list[psutil.Process]) -> list[psutil.Process]:
        """This node's processes among ``among``: those naming its temp folder, and their descendants."""
        found: dict[int, psutil.Process] = {}
        for p in among:
            try:
                if self.temp in " ".join(p.cmdline()):
                    found[p.pid] = p
                    for c in p.children(recursive=True):
                        found[c.pid] = c
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return list(found.values())


def _batch_workers(ns: NetNamespace, nodes: list[RayNode]) -> dict[int, tuple[list[psutil.Process], frozenset[int]]]:
    """Per node index, its processes now and the PIDs of its batch's bots, if it runs a batch (a
    ``ray::run_batch`` worker with bot processes); one snapshot, so that a node found busy is
    killed as it was seen."""
    procs = ns.processes()
    busy = {}
    for node in nodes:
        mine = node.processes(procs)
        for p in mine:
            try:
                if "ray::run_batch" in " ".join(p.cmdline()) + p.name() and (bots := p.children()):
                    busy[node.index] = (mine, frozenset(b.pid for b in bots))
                    break
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
    return busy


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


class Cluster:
    """A head and ``len - 1`` joining nodes in a private network namespace, sharing a token of
    their own (mode 0600 in a 0700 folder); :meth:`close` kills every process it started."""

    def __init__(self, size: int = 3) -> None:
        self.secret = Path(tempfile.mkdtemp(prefix="rtok", dir="/tmp"))  # mode 0700
        token = self.secret / "auth_token"
        fd = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(os.urandom(32).hex())
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        self.env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token))
        self.nodes: list[RayNode] = []
        self.temps: list[str] = []
        self.ns = NetNamespace()
        try:
            t0 = time.monotonic()
            for i in range(size):
                self.temps.append(tempfile.mkdtemp(prefix=f"rn{i}", dir="/tmp"))
                self.nodes.append(RayNode(self.ns, i, self.temps[-1], self.env))
            self.startup_s = time.monotonic() - t0
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.ns.close()
        for t in self.temps:
            shutil.rmtree(t, ignore_errors=True)
        shutil.rmtree(self.secret, ignore_errors=True)


def _kill_mid_batch(node_procs: list[psutil.Process]) -> bool:
    """SIGKILL a node's processes, its batch worker first (so that a batch is lost, not one that
    just ended); whether such a worker was caught alive. ``node_procs`` is the snapshot in which
    the worker had bots: between two matches of its batch it has none for a moment and is still
    mid-batch, so its children are not asked again (that race left the node unkilled: CI,
    2026-12-03)."""
    caught = False
    for p in node_procs:
        try:
            if "ray::run_batch" in " ".join(p.cmdline()) + p.name():
                p.send_signal(signal.SIGKILL)
                caught = True
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    if caught:  # else the worker ended meanwhile: leave the node up and try again
        _kill(node_procs)
    return caught


def play(cluster: Cluster, path: Path, res: Path, kill: int | None = None, matches: int = 180) -> dict:
    """``arena run --address`` of the config at ``path`` on ``cluster``; with ``kill``, node
    ``kill`` is killed mid-batch once 30 matches are recorded. Returns what was seen: exit code,
    stderr, node indexes that ran batches, matches recorded at the kill, seconds from the kill
    to the lost attempt's record, run time."""
    ns, nodes = cluster.ns, cluster.nodes
    cmd = [sys.executable, "-m", "arena.cli", "run", str(path), "--all", "--quiet", "--workers", str(len(nodes)),
           "--address", f"127.0.0.1:{GCS_PORT}", "--results", str(res)]
    t0 = time.monotonic()
    proc = subprocess.Popen(ns.prefix + cmd, cwd=ROOT, env={**cluster.env, "PYTHONPATH": ROOT, "COLUMNS": "200"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    journal, attempts = res / "small" / "matches.jsonl", res / "small" / "attempts.jsonl"
    seen: set[int] = set()
    before: dict[int, frozenset[int]] = {}
    killed_at = killed_t = detected_t = None
    deadline = time.monotonic() + 900  # a run takes ~30-60 s on a 2-core machine, ~4 min when loaded
    while proc.poll() is None and time.monotonic() < deadline:
        busy = _batch_workers(ns, nodes)
        seen |= set(busy)
        # a batch seen starting (its bots new since the last look) has all its matches to
        # play: killed then, it is lost, not one whose result is already on its way (a kill
        # at any busy moment missed 1 in 9 times)
        fresh = kill in busy and not busy[kill][1] & before.get(kill, frozenset())
        if kill is not None and killed_at is None and fresh and _lines(journal) >= 30:
            done, t_kill = _lines(journal), time.monotonic()
            if _kill_mid_batch(busy[kill][0]):
                killed_at, killed_t = done, t_kill
                _kill(nodes[kill].processes(ns.processes()))  # and whatever it spawned meanwhile
        before = {i: bots for i, (_, bots) in busy.items()}
        if killed_t is not None and detected_t is None and _lines(attempts):
            detected_t = time.monotonic()
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate(timeout=60)
    return {"rc": proc.returncode, "err": err, "seen": seen, "killed_at": killed_at,
            "detect_s": (detected_t - killed_t) if detected_t is not None and killed_t is not None else None,
            "run_s": time.monotonic() - t0}


TOTAL = 600


@pytest.mark.ray
@pytest.mark.slow
def test_three_nodes_one_killed_mid_run_every_match_once(tmp_path):
    require(_can_unshare(), "needs unshare/nsenter/ip and the right to make a network namespace (root)")
    # one lineup x 3 rotations x 200 deals = 600 matches: with the compiled engine 180 matches
    # ended before node 1 was busy with 30 of them recorded (CI, 2026-12-01)
    path = project_copy(tmp_path, deals=200)
    res = tmp_path / "res"
    cluster = Cluster(3)
    try:
        exposed = [x for x in listening_addresses(cluster.ns.processes()) if x[2] != "127.0.0.1"]
        assert not exposed, f"a node listens beyond 127.0.0.1: {exposed}"
        out = play(cluster, path, res, kill=1, matches=TOTAL)
        print(f"\nmultinode: nodes up in {cluster.startup_s:.1f} s; exit {out['rc']}; batches on nodes "
              f"{sorted(out['seen'])}; node 1 killed after {out['killed_at']} matches; loss recorded "
              f"{out['detect_s']} s later; run {out['run_s']:.1f} s")
        assert out["rc"] == 0, f"exit {out['rc']}: {out['err'][-3000:]}"
        assert out["killed_at"] is not None and out["killed_at"] < TOTAL, "node 1 was not killed mid-batch"
        assert len(out["seen"]) >= 2, f"batches ran on nodes {sorted(out['seen'])} only"
        assert not cluster.nodes[1].processes(cluster.ns.processes()), "processes of the killed node survived"
    finally:
        cluster.close()
    recs = read_records(res / "small")
    ids = Counter(r.match_id for r in recs)
    assert len(ids) == TOTAL and max(ids.values()) == 1
    assert all(r.status == "ok" for r in recs), Counter(r.status for r in recs)
    lost = [json.loads(x) for x in (res / "small" / "attempts.jsonl").read_text().splitlines()]
    assert lost and all(a["infra"] for a in lost), lost  # the lost batch: infrastructure, not a result
    assert all(a["unfinished"] >= 1 for a in lost)  # the lost batch's size is recorded
    assert {a["match_id"] for a in lost} <= set(ids)  # ... and its matches were played again
    # the same table as an uninterrupted run: every match a real, reproducible result
    from arena.driver import run_tournament

    run_tournament(load(path), tmp_path / "clean", inline=True)
    assert table(res / "small") == table(tmp_path / "clean" / "small")
