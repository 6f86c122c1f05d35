"""``preset: competition`` paces forced moves (issue 15): the time between a bot's action and
the arena's next message must not tell it that an opponent had a single legal move.

The toy game's last trick is forced for both seats. A spy bot that takes ~60 ms per
decision logs when it replies and when each message arrives; the gap between its last
reply and ``end`` spans the two forced moves of the last trick — near 0 unpaced, about two
decisions' worth paced.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest

from arena.match import SeatPool, _Match, play_match
from arena.specs import Clock
from tests.arena.conftest import bot, spec

SPY = textwrap.dedent("""
    import json, sys, time
    log = sys.stderr  # the arena captures it (a sandboxed bot cannot write elsewhere)
    for line in sys.stdin:
        msg = json.loads(line)
        log.write(json.dumps({"t": time.monotonic(), "type": msg["type"]}) + "\\n")
        log.flush()
        if msg["type"] == "start":
            print(json.dumps({"type": "ready", "protocol": 1, "name": "spy", "version": "1"}), flush=True)
        elif msg["type"] == "act":
            time.sleep(0.06)
            print(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}), flush=True)
            log.write(json.dumps({"t": time.monotonic(), "type": "reply"}) + "\\n")
            log.flush()
        elif msg["type"] == "end":
            break
""")


def _gap_before_end(log: str) -> float:
    """Seconds between the spy's last reply and its ``end`` (one match)."""
    events = [json.loads(x) for x in log.splitlines() if x.startswith("{")]
    end = next(e["t"] for e in events if e["type"] == "end")
    last_reply = max(e["t"] for e in events if e["type"] == "reply")
    return end - last_reply


def _play(tmp_path, paced: bool):
    script = tmp_path / "spy.py"
    script.write_text(SPY)
    bots = [bot(f"spy{i}", "python", str(script)) for i in range(2)]
    s = spec(["spy0", "spy1"], game="toy", clock=Clock(move_ms=2000, bank_ms=2000, startup_ms=10000))
    if paced:
        from dataclasses import replace

        s = replace(s, pace_forced=True)
    pool = SeatPool(bots, s.limits)
    try:
        res = play_match(s, pool)
        time.sleep(0.3)  # the spies log `end` before exiting
        logs = [pool.take_stderr(seat) for seat in range(2)]
    finally:
        pool.close()
        pool.hub.close()
    assert res.status == "ok", res.faults
    assert len(res.actions) == 6 and all(len(m) == 2 for m in res.move_ms)  # 2 decisions + 1 forced each
    return res, [_gap_before_end(p) for p in logs]


def test_forced_moves_are_paced_like_the_seats_decisions(tmp_path):
    res, gaps = _play(tmp_path, paced=True)
    lows = [min(m) for m in res.move_ms]  # a paced move lasts one of the seat's decisions
    # the seat that decided last waits for both forced moves of the last trick
    assert max(gaps) >= 0.9 * sum(lows) / 1000.0, (gaps, res.move_ms)
    assert max(gaps) >= 0.1  # two decisions of ~60 ms each


def test_unpaced_forced_moves_are_instant_which_is_what_leaks(tmp_path):
    _, gaps = _play(tmp_path, paced=False)
    assert min(gaps) < 0.05, gaps


def test_forced_delay_is_a_draw_of_the_seats_times_then_its_bots_then_a_share_of_move_ms():
    from collections import Counter, deque
    from types import SimpleNamespace

    from arena import match as match_mod

    a, b = bot("a", "python", "a.py"), bot("b", "python", "b.py")
    m = _Match.__new__(_Match)
    m.pool = SimpleNamespace(bots=[a, b])
    m.clock = Clock(move_ms=400)
    m.spec = SimpleNamespace(deal_seed=12345)
    m.actions = []
    saved = dict(match_mod.HISTORY)
    match_mod.HISTORY.clear()
    try:
        m.move_ms = [[], [10.0, 30.0, 20.0]]
        # before seat 0 decided: never the other seats' times (a prober's would set the pace)
        assert m.forced_delay_ms(0) == pytest.approx(match_mod.FIRST_PACE_FRACTION * 400)
        match_mod.HISTORY[a] = deque([50.0, 70.0, 90.0])
        assert m.forced_delay_ms(0) in (50.0, 70.0, 90.0)  # its bot's earlier matches
        m.move_ms = [[5.0, 7.0], [10.0, 30.0, 20.0]]
        draws = Counter()
        for i in range(3000):
            m.actions = ["x"] * i  # the move index keys the draw
            draws[m.forced_delay_ms(1)] += 1
        assert set(draws) == {10.0, 30.0, 20.0}
        # uniform over the seat's own times: chi-square, 2 degrees of freedom, alpha = 0.001
        assert sum((c - 1000) ** 2 / 1000 for c in draws.values()) < 13.82, draws
        assert m.forced_delay_ms(0) in (5.0, 7.0)
        m.remember_times()
        assert list(match_mod.HISTORY[a]) == [50.0, 70.0, 90.0, 5.0, 7.0]
        assert list(match_mod.HISTORY[b]) == [10.0, 30.0, 20.0]
    finally:
        match_mod.HISTORY.clear()
        match_mod.HISTORY.update(saved)


def test_preset_competition_bundles_sandbox_network_strict_faults_and_pacing(tmp_path):
    from arena import config as cfg
    from arena.errors import ConfigError
    from arena.schedule import build_schedule

    base = textwrap.dedent("""
        defaults:
          limits: {network: allow, sandbox: none}
        bots:
          a: {cmd: [python, a.py]}
          b: {cmd: [python, b.py]}
        tournaments:
          - name: cup
            game: agram
            players: 2
            bots: [a, b]
            deals: 1
            preset: competition
        """)
    (tmp_path / "t.yaml").write_text(base)
    (t,) = cfg.load(tmp_path / "t.yaml")
    limits, policy = t.limits(), t.fault_policy()
    assert (limits.sandbox, limits.network) == ("required", "deny")  # over the defaults
    assert (policy.policy, policy.disable_after) == ("forfeit", 3)
    assert all(s.pace_forced and s.pause_idle and s.limits == limits for s in build_schedule(t, "salt"))
    plain = base.replace("    preset: competition\n", "")
    (tmp_path / "p.yaml").write_text(plain)
    (p,) = cfg.load(tmp_path / "p.yaml")
    assert not any(s.pace_forced or s.pause_idle for s in build_schedule(p, "salt")) and p.limits().sandbox == "none"
    (tmp_path / "bad.yaml").write_text(base + "    limits: {network: allow}\n")
    with pytest.raises(ConfigError, match=r"'competition' sets limits.network itself"):
        cfg.load(tmp_path / "bad.yaml")
