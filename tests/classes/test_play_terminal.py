"""``arena play``: a whole match played as a person through a real terminal (tmux)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from engine import registry
from tests.conftest import ROOT, require

PROMPT = re.compile(r"your move \[1-(\d+), or the action; q resigns\]: $")
HISTORY = re.compile(r"^\s*(\d+)\. (?:you \(seat (\d)\)|seat (\d) \([^)]*\)): (.+?)\s*$")


class Terminal:
    """A tmux session on a private server socket, driven like a person at a keyboard."""

    def __init__(self, command: str, width: int = 150, height: int = 60) -> None:
        self.socket = f"cardarena-test-{uuid.uuid4().hex[:8]}"
        self.tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                  f"{command}; echo EXIT=$?; sleep 600")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, timeout=30).stdout

    def screen(self) -> str:
        """Everything the terminal showed (with its scroll-back)."""
        return self.tmux("capture-pane", "-t", "t", "-p", "-S", "-5000")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "t", "-l", text)
        self.tmux("send-keys", "-t", "t", "Enter")

    def wait(self, pattern: re.Pattern, timeout: float = 120.0) -> re.Match:
        """Wait until the last non-empty line matches ``pattern`` (or ``EXIT=`` shows)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            lines = [x for x in self.screen().splitlines() if x.strip()]
            last = lines[-1] + " " if lines else ""
            m = pattern.search(last)
            if m or last.startswith("EXIT="):
                return m
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {pattern.pattern!r}; screen:\n{self.screen()[-3000:]}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def terminal():
    require(bool(shutil.which("tmux")), "tmux is not installed")
    made: list[Terminal] = []

    def start(args: list[str]) -> Terminal:
        cmd = f"cd {shlex.quote(ROOT)} && PYTHONPATH={shlex.quote(ROOT)} {shlex.quote(sys.executable)} -m arena.cli " \
              + " ".join(shlex.quote(a) for a in args)
        made.append(Terminal(cmd))
        return made[-1]

    yield start
    for t in made:
        t.close()


def _history(screen: str) -> list[tuple[int, str]]:
    """The final public history printed after "match over": (seat, action) per line."""
    tail = screen.split("match over", 1)[1]
    out = []
    for line in tail.splitlines():
        m = HISTORY.match(line)
        if m:
            assert int(m.group(1)) == len(out) + 1
            seat = m.group(2) if m.group(2) is not None else m.group(3)
            out.append((int(seat), m.group(4)))
    return out


@pytest.mark.slow
def test_a_person_plays_a_whole_match_in_a_terminal(terminal):
    t = terminal(["play", "agram", "--vs", "greedy", "--seed", "5", "--seat", "1"])
    typed = []
    m = t.wait(PROMPT)
    t.type("99")  # not a move: asked again
    m = t.wait(PROMPT)
    assert "not a legal move: '99'" in t.screen()
    while m is not None:
        n = int(m.group(1))
        screen = t.screen()
        choices = re.findall(r"(\d+)\) (\S+ \S+)", screen.rsplit("your legal moves:", 1)[1])
        assert [int(i) for i, _ in choices] == list(range(1, n + 1))
        if len(typed) % 2:  # every other move typed as the action's text, the others as its number
            t.type(choices[-1][1])
            typed.append(choices[-1][1])
        else:
            t.type("1")
            typed.append(choices[0][1])
        m = t.wait(PROMPT)
    screen = t.screen()
    assert "EXIT=0" in screen, screen[-2000:]
    history = _history(screen)
    # the person's moves are the ones typed, in order (forced moves are played for them)
    game = registry.get_game("agram")
    state = game.new_match(2, 5)
    asked = []
    for seat, action in history:
        legal = [game.format_action(a) for a in state.legal_actions()]
        assert state.current_player() == seat and action in legal
        if seat == 1 and len(legal) > 1:
            asked.append(action)
        state.apply(game.parse_action(action))
    assert state.is_terminal() and asked == typed and len(typed) >= 2
    ranks = state.outcome().to_json()["ranks"]
    verdict = "you won" if ranks[1] == 0 and ranks[0] == 1 else "you ranked 2 of 2"
    assert verdict in screen
    assert re.search(rf"you \(seat 1\)\s*│ {ranks[1] + 1}\s", screen)


@pytest.mark.slow
def test_resigning_ends_the_match_as_a_forfeit(terminal):
    t = terminal(["play", "Sedma", "--vs", "random"])
    t.wait(PROMPT)
    assert "hand:" in t.screen() and "seat 1 (random)" in t.screen()
    t.type("q")
    t.wait(re.compile(r"^EXIT=\d"))
    screen = t.screen()
    assert "you ranked 2 of 2 (a forfeit)" in screen and "EXIT=1" in screen
    assert re.search(r"you resigned at move \d+", screen) and "crash" not in screen
    assert "the match is over" in screen and "hand 2" not in screen  # not the next hand's number


STEP_PROMPT = re.compile(r"\[Enter\] next, p previous, 0-(\d+) jump, q quit: $")


@pytest.mark.slow
def test_the_terminal_replay_steps_forward_back_and_jumps(terminal, tmp_path):
    import textwrap

    from arena.replay import find_record, frames

    cfg = tmp_path / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: r, default: true, game: agram, players: 2, bots: [random, greedy], deals: 1, salt: r}}
        """))
    done = subprocess.run([sys.executable, "-m", "arena.cli", "run", str(cfg), "--inline", "-q", "--results",
                           str(tmp_path / "res")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "res" / "r"
    rec = find_record(folder, "d00000/r01")
    steps = frames(rec, [1])
    t = terminal(["replay", str(folder), "d00000/r01", "--seat", "1"])
    m = t.wait(STEP_PROMPT)
    assert int(m.group(1)) == len(rec["actions"])

    def current() -> tuple[int, str]:
        screen = t.screen()
        k = int(re.findall(r"step (\d+) / \d+", screen)[-1])
        hand = re.findall(r"^hand: (.*?)\s*$", screen, re.M)[-1]
        return k, hand

    def step(keys: str, want: int) -> tuple[int, str]:
        """Type ``keys`` and wait until the screen shows step ``want`` (the prompt of the step
        before is still the last line until the replay redraws: CI once read it)."""
        t.type(keys)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            t.wait(STEP_PROMPT)
            if (got := current())[0] == want:
                return got
            time.sleep(0.2)
        return current()

    assert current() == (0, " ".join(steps[0].views[1]["hand"]))
    assert step("", 1)[0] == 1  # Enter: next
    assert step("5", 5) == (5, " ".join(steps[5].views[1]["hand"]) or "–")
    assert step("p", 4) == (4, " ".join(steps[4].views[1]["hand"]) or "–")
    t.type("q")
    t.wait(re.compile(r"^EXIT=\d"))
    assert "EXIT=0" in t.screen()


def test_the_outcome_of_a_partnership_names_the_partner_not_a_place_out_of_four():
    """New-user trial (session 8): Sedma 2 vs 2 ended "you ranked 2 of 4" (there are two sides)
    under a "score" column of game points."""
    from rich.console import Console

    from arena.terminal import outcome_view

    c = Console(width=100, record=True)
    c.print(outcome_view({"ranks": [0, 1, 0, 1], "scores": [70.0, 20.0, 70.0, 20.0]},
                         ["ismcts", "you", "ismcts", "random"], 1))
    text = c.export_text()
    assert "you ranked 2 with seat 3 (random)" in text and "of 4" not in text
    assert "points" in text and "score" not in text
    c = Console(width=100, record=True)
    c.print(outcome_view({"ranks": [1, 0], "scores": [0.0, 1.0]}, ["you", "b"], 0))
    assert "you ranked 2 of 2" in c.export_text()
