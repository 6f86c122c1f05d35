"""Whole tournaments: real Ray, real bot subprocesses, the journal, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import psutil
import pytest

from arena import config as cfg
from arena.driver import run_tournament
from arena.journal import read_records
from arena.results import export, standings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIG = """
bots:
  random: {{cmd: [python, bots/random_bot.py]}}
  greedy: {{cmd: [python, bots/greedy_bot.py]}}
  random-b: {{cmd: [python, bots/random_bot.py]}}
tournaments:
  - name: small
    game: agram
    players: 3
    bots: [random, greedy, random-b]
    deals: {deals}
    salt: fixed-test-salt
"""


def load(tmp_path, deals=6):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(CONFIG.format(deals=deals)))
    # bots' relative paths resolve against the config's folder: point them at the project
    (t,) = cfg.load(path)
    t.bots = {k: type(v)(**{**v.__dict__, "cwd": ROOT}) for k, v in t.bots.items()}
    return t


def table(folder):
    st = standings(folder)
    return [(r["bot"], round(r["mu"], 9), round(r["sigma"], 9), r["matches"], r["wins"]) for r in st.rows]


@pytest.mark.ray
def test_tournament_on_ray_with_real_bot_processes(ray_session, tmp_path):
    t = load(tmp_path)
    summary = run_tournament(t, tmp_path / "res", workers=2)
    recs = read_records(tmp_path / "res" / "small")
    assert summary.played == len(recs) == 6 * 3
    assert len({r.match_id for r in recs}) == 18
    assert all(r.status == "ok" and r.faults == () for r in recs)
    lines = [json.loads(x) for x in (tmp_path / "res" / "small" / "matches.jsonl").read_text().splitlines()]
    assert [x["match_id"] for x in lines] == [r.match_id for r in recs]
    assert all(len(x["actions"]) == 18 for x in lines)  # 6 tricks x 3 players, forced moves included
    r0 = lines[0]
    for key in ("format", "match_id", "tournament", "fingerprint", "game", "game_version", "engine_version",
                "options", "deal_index", "deal_seed", "rotation", "lineup", "seats", "bot_versions", "status",
                "outcome", "faults", "time_ms", "move_ms", "actions"):
        assert key in r0
    st = standings(tmp_path / "res" / "small")
    export(tmp_path / "res" / "small", st)
    doc = json.loads((tmp_path / "res" / "small" / "leaderboard.json").read_text())
    assert [row["bot"] for row in doc["rows"]] == [r["bot"] for r in st.rows]
    assert (tmp_path / "res" / "small" / "leaderboard.csv").read_text().startswith("rank,bot,rank_low,rank_high,strength")
    # a rerun plays nothing
    again = run_tournament(t, tmp_path / "res", workers=2)
    assert again.played == 0 and again.already == 18


@pytest.mark.ray
def test_workers_one_and_two_give_identical_tables(ray_session, tmp_path):
    t = load(tmp_path, deals=8)
    run_tournament(t, tmp_path / "w1", workers=1)
    run_tournament(t, tmp_path / "w2", workers=2)
    assert table(tmp_path / "w1" / "small") == table(tmp_path / "w2" / "small")
    inline = run_tournament(t, tmp_path / "in", inline=True)
    assert inline.played == 24
    assert table(tmp_path / "in" / "small") == table(tmp_path / "w1" / "small")


def _ray_pids():
    out = []
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            name = p.info["name"] or ""
            cmd = " ".join(p.info["cmdline"] or [])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if name in ("gcs_server", "raylet") or name.startswith("ray::") or "ray/_private" in cmd \
                or "ray/dashboard" in cmd or "default_worker.py" in cmd:
            out.append(p)
    return out


@pytest.mark.ray
def test_ray_listens_on_loopback_only(ray_session):
    @ray_session.remote
    def ping():
        return os.getpid()

    ray_session.get([ping.remote() for _ in range(4)])
    procs = _ray_pids()
    assert procs, "no Ray process found"
    exposed = []
    for p in procs:
        try:
            conns = p.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        for c in conns:
            listening = c.status == psutil.CONN_LISTEN or (c.type == 2 and not c.raddr)
            if listening:
                ip = c.laddr.ip.removeprefix("::ffff:")
                if not (ip.startswith("127.") or ip == "::1"):
                    exposed.append((p.pid, p.name(), c.laddr))
    assert not exposed, f"Ray listens on non-loopback addresses: {exposed}"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_sigkill_mid_tournament_then_resume(tmp_path):
    t = load(tmp_path, deals=60)
    cfg_path = tmp_path / "t.yaml"
    res = tmp_path / "res"
    env = {**os.environ, "PYTHONPATH": ROOT}
    cmd = [sys.executable, "-m", "arena.cli", "run", str(cfg_path), "-t", "small", "--inline", "--quiet",
           "--results", str(res)]
    # the config lives in tmp_path, so its bots resolve there: link the bots folder
    os.symlink(os.path.join(ROOT, "bots"), tmp_path / "bots")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = res / "small" / "matches.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 40:
            break
        if proc.poll() is not None:
            pytest.fail(f"arena run ended early: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    orphans = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = journal.read_bytes().count(b"\n")
    assert 40 <= killed_at < 180
    # the killed driver's bots see EOF and exit; this process (a subreaper once it has run bots
    # itself, arena.process) may adopt them: reap those, so no zombie outlives the test
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_running(p) for p in orphans):
        time.sleep(0.05)
    for p in orphans:
        try:
            os.waitpid(p, os.WNOHANG)
        except ChildProcessError:
            pass
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    ids = [r.match_id for r in read_records(res / "small")]
    assert len(ids) == 180 and len(set(ids)) == 180
    assert max(Counter(ids).values()) == 1
    # identical leaderboard to an uninterrupted run
    run_tournament(t, tmp_path / "clean", inline=True)
    assert table(res / "small") == table(tmp_path / "clean" / "small")


def test_a_bot_announcing_a_new_version_is_warned_about(tmp_path):
    bot = tmp_path / "mine.py"
    bot.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {ROOT!r})
        from bots import sdk
        sdk.run(lambda obs, legal, ctx: legal[0], name="mine", version=os.environ["V"])
    """))

    def config(version, deals):
        path = tmp_path / "v.yaml"
        path.write_text(textwrap.dedent(f"""
            bots:
              random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
              mine: {{cmd: [python, mine.py], env: {{V: "{version}"}}}}
            tournaments:
              - name: v
                game: agram
                players: 2
                bots: [random, mine]
                deals: {deals}
        """))
        (t,) = cfg.load(path)
        return t

    warnings = []
    run_tournament(config("1", 2), tmp_path / "res", inline=True, warn=warnings.append)
    assert warnings == []
    run_tournament(config("2", 3), tmp_path / "res", inline=True, warn=warnings.append)
    assert len(warnings) == 1
    assert "'mine' now announces 'mine/2'" in warnings[0] and "'mine/1'" in warnings[0]
