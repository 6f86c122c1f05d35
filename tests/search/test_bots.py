"""The ISMCTS and PIMC bots as real bot processes in short matches (arena.batch.play_batch)."""

from __future__ import annotations

import json
import os

from arena.batch import match_file_name, play_batch
from arena.specs import BotSpec, Clock, FaultPolicy, Limits, MatchSpec
from engine import registry
from engine.seeds import bot_seed, deal_seed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def bot(name: str, *cmd: str) -> BotSpec:
    """A bot run from the project root."""
    return BotSpec(name=name, cmd=tuple(cmd), cwd=ROOT)


ISMCTS = bot("ismcts", "python", "bots/ismcts_bot.py", "--iterations", "60", "--hand-rollouts")
ISMCTS_MO = bot("ismcts-mo", "python", "bots/ismcts_bot.py", "--iterations", "40", "--variant", "mo")
ISMCTS_TIMED = bot("ismcts-timed", "python", "bots/ismcts_bot.py", "--time-ms", "5000", "--c", "1.0")
ISMCTS_OM = bot("ismcts-om", "python", "bots/ismcts_bot.py", "--iterations", "80", "--hand-rollouts",
                "--opponent-model", "rollout")
PIMC = bot("pimc", "python", "bots/pimc_bot.py", "--iterations", "60", "--hand-rollouts")
RANDOM = bot("random", "python", "bots/random_bot.py")


def specs_for(seats: tuple[str, ...], game: str, options: dict, deals: range, rotation: int = 0,
              clock: Clock | None = None) -> list[MatchSpec]:
    """Match specifications of one lineup and rotation over ``deals``."""
    g = registry.get_game(game)
    n = len(seats)
    lineup = tuple(sorted(set(seats)))
    out = []
    for d in deals:
        mid = f"t/{'+'.join(lineup)}/d{d:05d}/r{rotation:02d}"
        out.append(MatchSpec(
            match_id=mid, tournament="t", token=f"tok{d}", game=game, options=dict(options), players=n,
            deal_index=d, deal_seed=deal_seed("salt", game, d), rotation=rotation, lineup=lineup, seats=seats,
            teams=tuple(tuple(t) for t in g.teams(n)), bot_seeds=tuple(bot_seed("salt", mid, s) for s in range(n)),
            fingerprint="fp", clock=clock or Clock(move_ms=30000, bank_ms=30000, startup_ms=20000),
            faults=FaultPolicy(policy="forfeit"), limits=Limits(), wall_s=300.0))
    return out


def test_ismcts_and_pimc_play_a_short_sedma_match(tmp_path):
    bots = {"ismcts": ISMCTS, "pimc": PIMC}
    results = list(play_batch(specs_for(("ismcts", "pimc"), "sedma", {}, range(2)), bots, str(tmp_path)))
    assert [r.status for r in results] == ["ok", "ok"]
    assert all(r.faults == [] for r in results)
    for r in results:
        assert sorted(r.outcome["ranks"]) in ([0, 1], [0, 0])
        assert len(r.actions) >= 8  # a single hand of 2-player Sedma: at least 8 plays
    # both bots' replies carried their info: iterations spent, value in [0, 1]
    infos = [json.loads(line) for line in
             (tmp_path / "logs" / (match_file_name(results[0].match_id) + ".jsonl")).read_text().splitlines()]
    by_bot = {}
    for rec in infos:
        by_bot.setdefault(rec["bot"], []).append(rec["info"])
    assert set(by_bot) == {"ismcts", "pimc"}
    assert all(i["iterations"] == 60 for i in by_bot["ismcts"] if i["value"] is not None)
    assert all(i["iterations"] <= 60 for i in by_bot["pimc"] if i["value"] is not None)
    assert all(0.0 <= i["value"] <= 1.0 for infos_ in by_bot.values() for i in infos_ if i["value"] is not None)


def test_iteration_budget_is_reproducible_across_processes():
    bots = {"ismcts": ISMCTS, "random": RANDOM}
    a = list(play_batch(specs_for(("random", "ismcts"), "agram", {}, range(1)), bots, None))
    b = list(play_batch(specs_for(("random", "ismcts"), "agram", {}, range(1)), bots, None))
    assert a[0].status == b[0].status == "ok"
    assert a[0].actions == b[0].actions
    assert a[0].outcome == b[0].outcome


def test_rollout_opponent_model_bot_plays_whiskey_poker_reproducibly():
    bots = {"ismcts-om": ISMCTS_OM, "random": RANDOM}
    spec = specs_for(("ismcts-om", "random", "random"), "whiskey_poker", {"hands_per_match": 1}, range(1))
    a = list(play_batch(spec, bots, None))
    b = list(play_batch(spec, bots, None))
    assert a[0].status == "ok" and a[0].faults == []
    assert a[0].actions == b[0].actions and a[0].outcome == b[0].outcome


def test_mo_variant_plays_argute_with_hidden_bids():
    bots = {"ismcts-mo": ISMCTS_MO, "random": RANDOM}
    spec = specs_for(("ismcts-mo", "random"), "argute", {"target_score": 1, "max_hands": 2}, range(1))
    [res] = list(play_batch(spec, bots, None))
    assert res.status == "ok" and res.faults == []
    assert any(a.startswith("bid") for a in res.actions)


def test_time_budget_bot_stays_inside_a_tight_clock():
    # asks for 5 s per move; the clock (300 ms per move, 1 s of bank) caps it to ~240 ms
    clock = Clock(move_ms=300, bank_ms=1000, startup_ms=20000, grace_ms=20)
    bots = {"ismcts-timed": ISMCTS_TIMED, "random": RANDOM}
    [res] = list(play_batch(specs_for(("ismcts-timed", "random"), "sedma", {}, range(1), clock=clock), bots, None))
    assert res.status == "ok"
    assert res.faults == []


def test_search_bots_refuse_nonsense_budgets_at_start():
    import subprocess
    import sys
    cases = [("ismcts_bot.py", ["--iterations", "-5"], "argument --iterations: expected an integer >= 1, got -5"),
             ("ismcts_bot.py", ["--iterations", "0"], "argument --iterations: expected an integer >= 1, got 0"),
             ("ismcts_bot.py", ["--time-ms", "0"], "argument --time-ms: expected a finite number > 0, got 0"),
             ("ismcts_bot.py", ["--c", "-1"], "argument --c: expected a finite number >= 0, got -1"),
             ("ismcts_bot.py", ["--c", "nan"], "argument --c: expected a finite number >= 0, got nan"),
             ("pimc_bot.py", ["--determinizations", "x"], "argument --determinizations: expected an integer >= 1, "
                                                          "got 'x'")]
    for script, args, message in cases:
        out = subprocess.run([sys.executable, f"bots/{script}", *args], cwd=ROOT, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=60)
        assert out.returncode == 2 and message in out.stderr, (script, args, out.stderr)
    # c = 0 (pure exploitation) stays allowed
    ok = subprocess.run([sys.executable, "bots/ismcts_bot.py", "--c", "0", "--iterations", "5"], cwd=ROOT,
                        input='{"type": "quit"}\n', capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
