"""Rules copies, README commands, and the CLI as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import registry

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "rules"
NAMES = registry.names()


@pytest.mark.parametrize("name", NAMES)
def test_rules_copy_matches_shared(name):
    copy = ROOT / "docs" / "rules" / f"{name}.md"
    assert copy.exists(), f"docs/rules/{name}.md is missing"
    if SHARED.exists():
        original = (SHARED / f"{name}.md").read_text(encoding="utf-8")
        # the copy is the shared text, optionally followed by "Rulings added by cardarena"
        assert copy.read_text(encoding="utf-8").startswith(original.rstrip("\n"))


def arena(*args, cwd=ROOT, timeout=120):
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})


def test_games_lists_every_game():
    out = arena("games")
    assert out.returncode == 0, out.stderr
    for name in NAMES:
        assert name in out.stdout


@pytest.mark.parametrize("name", NAMES)
def test_rules_prints_actions_and_observation(name):
    out = arena("rules", name)
    assert out.returncode == 0, out.stderr
    assert "Actions" in out.stdout and "Observation" in out.stdout
    game = registry.get_game(name)
    assert game.actions_doc.strip().splitlines()[0].strip()[:20] in out.stdout
    full = arena("rules", name, "--full")
    assert full.returncode == 0 and len(full.stdout) > 2000


def test_unknown_game_is_a_clear_error():
    out = arena("rules", "poker9")
    assert out.returncode == 2
    assert "unknown game 'poker9'" in out.stderr and "agram" in out.stderr


def test_bad_config_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent("""
        bots:
          random: {cmd: [python, bots/random_bot.py]}
        tournaments:
          - name: x
            game: agram
            players: 2
            bots: [random]
            deals: 3
            dealz: 4
    """))
    out = arena("run", str(bad), "-t", "x", "--inline")
    assert out.returncode == 2
    assert "bad.yaml" in out.stderr and "'x'" in out.stderr and "dealz" in out.stderr


def test_run_inline_then_leaderboard_formats(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - name: duel
            game: agram
            players: 2
            bots: [random, greedy]
            deals: 10
    """))
    out = arena("run", str(cfg), "-t", "duel", "--inline", "--quiet", "--results", str(tmp_path / "res"))
    assert out.returncode == 0, out.stderr
    assert "duel" in out.stdout and "greedy" in out.stdout and "strength [95%]" in out.stdout and "μ" in out.stdout
    folder = tmp_path / "res" / "duel"
    assert sum(1 for _ in open(folder / "matches.jsonl")) == 20
    js = arena("leaderboard", str(folder), "--format", "json")
    rows = json.loads(js.stdout)["rows"]
    assert {r["bot"] for r in rows} == {"random", "greedy"} and all(r["matches"] == 20 for r in rows)
    csv = arena("leaderboard", str(folder), "--format", "csv")
    head = csv.stdout.splitlines()[0].split(",")
    assert head[:5] == ["rank", "bot", "rank_low", "rank_high", "strength"] and {"mu", "sigma"} <= set(head), head
    md = arena("leaderboard", str(folder), "--format", "md")
    assert md.stdout.startswith("# duel")
    bad = arena("leaderboard", str(tmp_path))
    assert bad.returncode == 2 and "not a results folder" in bad.stderr


def test_doctor_passes_a_good_bot_and_fails_an_illegal_one():
    ok = arena("doctor", "agram", "--matches", "2", "--", "python", "bots/greedy_bot.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS: the bot is ready" in ok.stdout
    bad = arena("doctor", "agram", "--matches", "1", "--", "python", "tests/arena/zoo/misbehave.py", "illegal")
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout and "illegal" in bad.stdout.lower()


def test_missing_bot_command_stops_the_run_before_any_match(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          ghost: {{cmd: [python, no_such_bot.py]}}
        tournaments:
          - name: x
            game: agram
            players: 2
            bots: [random, ghost]
            deals: 2
    """))
    out = arena("run", str(cfg), "-t", "x", "--inline", "--quiet", "--results", str(tmp_path / "res"))
    assert out.returncode == 2
    assert "ghost" in out.stderr and "no_such_bot.py" in out.stderr
    assert not (tmp_path / "res" / "x" / "matches.jsonl").exists()


def test_doctor_with_players_and_options():
    ok = arena("doctor", "sedma", "--players", "4", "--option", "match=single", "--matches", "2", "--",
               "python", "bots/greedy_bot.py")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "seats [0, 1, 2, 3]" in ok.stdout  # every seat tested, whatever --matches
    bad = arena("doctor", "agram", "-o", "bogus=1", "--", "python", "bots/random_bot.py")
    assert bad.returncode == 2 and "unknown option 'bogus'" in bad.stderr


def test_no_tracked_file_keeps_merge_conflict_markers():
    """A merge resolved by hand must not leave ``<<<<<<<``/``>>>>>>>`` lines behind (one did in
    docs/architecture.md)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not files:  # not a git checkout (an sdist): nothing to check against
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.md")]
    bad = []
    for name in files:
        path = ROOT / name
        if path.suffix not in (".py", ".md", ".pyx", ".pxd", ".yaml", ".toml", ".txt", ".html", ".js", ".cfg") \
                and name != ".ci/run":
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        bad += [f"{name}:{i + 1}" for i, line in enumerate(lines)
                if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "<<<<<<<"]
    assert not bad, f"merge conflict markers left in: {bad}"


def test_leaderboard_without_a_folder_takes_the_only_one_or_lists_them(tmp_path):
    # new-user finding: `arena leaderboard` alone failed with "Missing argument 'folder'"
    empty = arena("leaderboard", cwd=tmp_path)
    assert empty.returncode == 2 and "no tournament folder under results/" in empty.stderr, empty.stderr
    cfg = tmp_path / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: one, game: agram, players: 2, bots: [random, greedy], deals: 2}}
          - {{name: two, game: agram, players: 2, bots: [random, greedy], deals: 2}}
    """))
    assert arena("run", str(cfg), "-t", "one", "--inline", "--quiet", cwd=tmp_path).returncode == 0
    one = arena("leaderboard", "--format", "json", cwd=tmp_path)
    assert one.returncode == 0 and json.loads(one.stdout)["tournament"] == "one", one.stderr
    assert arena("run", str(cfg), "-t", "two", "--inline", "--quiet", cwd=tmp_path).returncode == 0
    both = arena("leaderboard", cwd=tmp_path)
    assert both.returncode == 2 and "results/one, results/two" in both.stderr, both.stderr
