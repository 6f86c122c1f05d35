"""``arena play`` in-process (the answers typed by a function): partnerships, the person's
optional clock, bad seats; the terminal itself is tested in ``test_play_terminal.py``."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from arena.errors import ArenaError
from arena.play import play
from arena.specs import Clock
from engine import registry


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=200, force_terminal=False), buf


@pytest.mark.slow
def test_a_person_plays_four_handed_sedma_with_bots_in_the_other_seats():
    console, buf = _console()
    prompts = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return "1"

    res = play("Sedma", ["greedy", "random"], seat=1, players=4, seed=11, console=console, ask=ask)
    assert res.status == "ok"
    game = registry.get_game("sedma")
    state = game.new_match(4, 11)
    asked = 0
    for a in res.actions:
        if state.current_player() == 1 and len(state.legal_actions()) > 1:
            asked += 1
        state.apply(game.parse_action(a))
    assert state.is_terminal() and asked == len(prompts) > 0
    out = buf.getvalue()
    assert "you are seat 1; seat 0: greedy, seat 2: random, seat 3: random" in out
    assert res.outcome == state.outcome().to_json()
    assert res.bot_versions[1] == "person" and res.bot_versions[0].startswith("greedy")


def test_the_persons_clock_only_when_asked():
    console, buf = _console()

    prompts = []

    def slow(prompt: str) -> str:
        prompts.append(prompt)
        time.sleep(0.4)
        return "1"

    fast = Clock(move_ms=100, bank_ms=0, startup_ms=5000)
    unclocked = play("agram", ["random"], seed=3, console=console, ask=slow, bot_clock=fast)
    assert unclocked.status == "ok" and not unclocked.faults
    assert prompts and not any("s left" in p for p in prompts)
    clocked = play("agram", ["random"], seed=3, console=console, ask=slow, bot_clock=fast, clock=True)
    assert clocked.status == "forfeit"
    assert [(f.seat, f.cls) for f in clocked.faults] == [(0, "timeout")]
    assert "the person took 0.4 s; the limit was 0.1 s" in clocked.faults[0].detail
    assert prompts[-1].endswith("q resigns, 0 s left]: ")  # 0.1 s shown rounded


def test_a_seat_outside_the_game_is_refused():
    with pytest.raises(ArenaError, match="--seat 2: agram with 2 players has seats 0 to 1"):
        play("agram", ["random"], seat=2, console=_console()[0], ask=lambda p: "1")


def test_more_vs_bots_than_seats_is_refused_and_no_n_takes_one_seat_per_bot():
    # found by a new-user trial: `--vs random --vs greedy` without -n silently dropped greedy
    with pytest.raises(ArenaError, match=r"3 --vs bots for 2 players: give -n 4"):
        play("agram", vs=["random", "greedy", "random"], players=2)


def test_vs_takes_a_bot_of_the_local_config_and_suggests_close_names(tmp_path, monkeypatch):
    # a new user's trial: `--vs alice` (declared in ./tournaments.yaml) was "command not found"
    import pytest as _pytest

    from arena.errors import ArenaError
    from arena.play import opponent

    (tmp_path / "tournaments.yaml").write_text("bots:\n  alice: {cmd: [python, alice/bot.py]}\n")
    monkeypatch.chdir(tmp_path)
    a = opponent("alice")
    assert a.name == "alice" and a.cmd == ("python", "alice/bot.py") and a.cwd == str(tmp_path)
    assert opponent("greedy").cmd[1] == "bots/greedy_bot.py"  # the reference bots still come first
    with _pytest.raises(ArenaError, match="did you mean 'greedy'"):
        opponent("greedyy")
    with _pytest.raises(ArenaError, match="did you mean 'alice'"):
        opponent("alcie")
