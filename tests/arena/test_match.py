"""Matches: handshake, forced moves, clock and bank, forfeit outcome, the random policy, wall budget."""

from __future__ import annotations

import pytest

from arena.faults import forfeit_outcome, replacement_action
from arena.match import SeatPool, play_match
from arena.specs import Clock
from engine import registry
from tests.arena.conftest import GREEDY, RANDOM, bot, spec, zoo


def run(seats_specs, **kw):
    s = spec([b.name for b in seats_specs], **kw)
    pool = SeatPool(seats_specs, s.limits)
    try:
        return play_match(s, pool), pool
    finally:
        pool.close()


def test_forfeit_outcome_rule():
    assert forfeit_outcome([[0], [1], [2]], {1}) == {"ranks": [0, 2, 0], "scores": [1, 0, 1]}
    assert forfeit_outcome([[0], [1], [2]], {0, 2}) == {"ranks": [1, 0, 1], "scores": [0, 1, 0]}
    assert forfeit_outcome([[0, 2], [1, 3]], {2}) == {"ranks": [1, 0, 1, 0], "scores": [0, 1, 0, 1]}
    assert forfeit_outcome([[0], [1]], {0, 1}) == {"ranks": [0, 0], "scores": [0, 0]}


def test_replacement_is_keyed_by_deal_and_move():
    legal = list(range(10))
    assert replacement_action(5, 3, legal) == replacement_action(5, 3, legal)
    assert len({replacement_action(5, m, legal) for m in range(30)}) > 1


def test_ok_match_matches_engine_replay():
    res, _ = run([RANDOM, GREEDY], deal=3)
    assert res.status == "ok" and not res.faults
    assert res.bot_versions == ["random/1", "greedy/1"]
    game = registry.get_game("toy")
    s = spec(["random", "greedy"], deal=3)
    state = game.new_match(2, s.deal_seed)
    for a in res.actions:
        state.apply_string(a)
    assert state.is_terminal() and state.outcome().to_json() == res.outcome
    # the last trick is forced: 2 of the 6 moves are played by the arena
    assert len(res.move_ms[0]) + len(res.move_ms[1]) == 4
    assert all(ms >= 0 for seat in res.move_ms for ms in seat)


def test_ask_forced_asks_every_move():
    rb = bot("random", "python", "bots/random_bot.py", ask_forced=True)
    res, _ = run([rb, GREEDY], deal=3)
    assert len(res.move_ms[0]) == 3 and len(res.move_ms[1]) == 2


def test_same_seeds_same_match():
    a, _ = run([RANDOM, bot("random2", "python", "bots/random_bot.py")], deal=9)
    b, _ = run([RANDOM, bot("random2", "python", "bots/random_bot.py")], deal=9)
    assert a.actions == b.actions


def test_bank_absorbs_slow_move_then_times_out():
    # first move sleeps 0.3 s: move_ms 100 + bank 1000 covers it; the bank is charged
    late = zoo("late", "misbehave.py", "late_then_ok", "0.3")
    res, _ = run([late, RANDOM], clock=Clock(move_ms=100, bank_ms=1000, startup_ms=5000))
    assert res.status == "ok", res.faults
    assert res.move_ms[0][0] >= 300
    # same bot without a bank: a timeout, never an illegal move
    res, _ = run([late, RANDOM], clock=Clock(move_ms=100, bank_ms=0, startup_ms=5000))
    assert res.status == "forfeit"
    assert [f.cls for f in res.faults] == ["timeout"]
    assert res.outcome == {"ranks": [1, 0], "scores": [0, 1]}


def test_random_policy_restarts_and_resumes():
    crash = zoo("crash", "misbehave.py", "crash_mid")
    res, pool = run([crash, RANDOM], policy="random", max_restarts=5, options={"hand_size": 4})
    assert res.status == "ok"
    assert res.faults and all(f.cls == "crash" for f in res.faults)
    assert "about to crash" in res.faults[0].stderr_tail
    assert len(res.actions) == 8
    assert pool.spawns >= 2


def test_random_policy_forfeits_after_max_restarts():
    crash = zoo("crash", "misbehave.py", "crash_mid")
    res, _ = run([crash, RANDOM], policy="random", max_restarts=0, options={"hand_size": 4})
    assert res.status == "forfeit" and res.outcome["ranks"] == [1, 0]


def test_random_policy_replaces_illegal_move():
    ill = zoo("ill", "misbehave.py", "illegal")
    res, _ = run([ill, RANDOM], policy="random")
    assert res.status == "ok"
    assert {f.cls for f in res.faults} == {"illegal"}
    assert len(res.faults) == len(res.move_ms[0])


def test_wall_budget_is_a_timeout_of_the_thinker():
    slow = zoo("slow", "misbehave.py", "slow")
    # 3 s: the random bot's own decisions stay far below its 1.5 s share even on a loaded machine
    res, _ = run([RANDOM, slow], clock=Clock(move_ms=60000, bank_ms=0), wall_s=3.0)
    assert res.status == "forfeit"
    assert [(f.seat, f.cls) for f in res.faults] == [(1, "timeout")]
    assert res.time_ms < 15000


@pytest.mark.slow
def test_wall_budget_is_charged_to_the_seat_that_spent_it():
    # adversarial finding: a bot spent the budget and let it run out while its opponent thought,
    # which then forfeited; now the seat that took more than its share of the budget is charged.
    # The waller leaves ~1 s of the 8 s (its clock starts at its `start`, a little after the
    # match's), the opponent thinks 2.5 s a move: the budget runs out on the opponent's move
    waller = zoo("waller", "misbehave.py", "waller", "7.0")
    slow = zoo("slow", "misbehave.py", "slow", "2.5")
    for seats in ([waller, slow], [slow, waller]):
        res, _ = run(seats, clock=Clock(move_ms=60000, bank_ms=0), wall_s=8.0)
        w = [b.name for b in seats].index("waller")
        assert res.status == "forfeit", res
        assert [(f.seat, f.cls) for f in res.faults] == [(w, "timeout")], res.faults
        assert "bot 'waller' took" in res.faults[0].detail and "more than its share" in res.faults[0].detail


@pytest.mark.slow
def test_wall_budget_running_out_on_a_paced_forced_move_is_charged_not_aborted():
    # adversarial finding: under pacing a bot timed the budget to run out during its own paced
    # forced move; nobody was thinking, so the match was `aborted` and replayed for ever
    from dataclasses import replace

    slow = zoo("slow", "misbehave.py", "slow", "1.5")  # 2 decisions of 1.5 s, then a forced card
    s = replace(spec(["slow", "random"], options={"hand_size": 3}, clock=Clock(move_ms=60000, bank_ms=0),
                     wall_s=4.5), pace_forced=True)
    pool = SeatPool([slow, RANDOM], s.limits)
    try:
        res = play_match(s, pool)
    finally:
        pool.close()
    assert res.status == "forfeit", res
    assert [(f.seat, f.cls) for f in res.faults] == [(0, "timeout")], res.faults
    assert "bot 'slow' took" in res.faults[0].detail, res.faults[0].detail


# ---------------------------------------------------------------- several faults at start-up

EXITER = zoo("exiter", "misbehave.py", "crash_start")       # exits with code 3, says nothing
USAGE = zoo("usage", "misbehave.py", "usage_error")         # argparse-style error, exit code 2


def test_every_bot_failing_at_startup_is_blamed_and_ranked_last():
    # DESIGN's forfeit rule for several faulty seats: all of them rank below every working seat.
    # Which exiter is noticed first is a race, so the match is played in every seating.
    for rot in range(3):
        bots = [EXITER, RANDOM, USAGE][rot:] + [EXITER, RANDOM, USAGE][:rot]
        res, _ = run(bots, rotation=rot)
        seat = {b.name: i for i, b in enumerate(bots)}
        assert res.status == "forfeit"
        assert [(f.seat, f.bot, f.cls, f.move) for f in res.faults] == sorted(
            [(seat["exiter"], "exiter", "crash", 0), (seat["usage"], "usage", "crash", 0)])
        detail = {f.bot: f.detail for f in res.faults}
        assert detail == {"exiter": "bot 'exiter' exited with code 3", "usage": "bot 'usage' exited with code 2"}
        tail = {f.bot: f.stderr_tail for f in res.faults}
        assert tail["exiter"] == ""
        assert tail["usage"].endswith("invalid choice: 'rollouts' (choose from 'tree', 'rollout')\n")
        ranks = res.outcome["ranks"]
        assert ranks[seat["random"]] == 0 and ranks[seat["exiter"]] == ranks[seat["usage"]] == 1
        assert res.outcome["scores"][seat["random"]] == 1
        assert res.bot_versions[seat["random"]] == "random/1"
        assert res.bot_versions[seat["exiter"]] == res.bot_versions[seat["usage"]] == ""


def test_a_stall_and_a_crash_at_startup_are_both_blamed():
    stall = zoo("stall", "misbehave.py", "no_ready")
    clock = Clock(move_ms=500, bank_ms=0, startup_ms=2000)  # the exiter's exit well inside it under load
    res, _ = run([stall, EXITER, RANDOM], clock=clock)
    assert res.status == "forfeit"
    assert [(f.bot, f.cls) for f in res.faults] == [("stall", "stall"), ("exiter", "crash")]
    assert res.faults[0].detail.startswith("bot 'stall' sent no 'ready' within 2000 ms; end each reply with a newline")
    assert res.outcome["ranks"] == [1, 1, 0]
    assert res.time_ms < 3000


def test_random_policy_restarts_each_seat_that_failed_at_startup():
    res, pool = run([EXITER, RANDOM, USAGE], policy="random", max_restarts=1)
    assert res.status == "forfeit"
    blamed = {f.bot for f in res.faults}
    assert blamed == {"exiter", "usage"} and not any(f.bot == "random" for f in res.faults)
    assert res.outcome["ranks"] == [1, 0, 1]


def test_all_seats_failing_at_startup_share_the_last_place():
    res, _ = run([EXITER, USAGE])
    assert res.status == "forfeit" and {f.bot for f in res.faults} == {"exiter", "usage"}
    assert res.outcome == {"ranks": [0, 0], "scores": [0, 0]}


def test_stderr_of_a_bot_dying_between_matches_stays_with_its_fault():
    # the bot prints its error while the batch takes the first match's log, and is still
    # alive (exiting) when the second match starts: that fault keeps the message
    from arena.batch import play_batch

    bad = zoo("bad", "misbehave.py", "crash_after_end", "0.3")
    specs = [spec(["bad", "random"], deal=d) for d in range(2)]
    first, second = play_batch(specs, {"bad": bad, "random": RANDOM}, None)
    assert first.status == "ok" and not first.faults
    assert [f.cls for f in second.faults] == ["crash"]
    assert second.faults[0].detail == "bot 'bad' exited with code 5"
    assert "crashing after end: cannot write my log" in second.faults[0].stderr_tail


def test_garbage_reply_names_the_bot():
    res, _ = run([zoo("chatty", "misbehave.py", "garbage"), RANDOM])
    assert [f.cls for f in res.faults] == ["protocol"]
    assert res.faults[0].detail.startswith("bot 'chatty' sent a line that is not JSON: 'hello world'")
