"""A tournament changed between runs: the tables count only the tournament as now configured.

Real `arena run --inline` processes and real bots. A results folder recorded with other
settings (game, players, options, clock, ...) is refused with the changes and the remedies;
records outside a shrunk schedule stay in the journal but are not rated; `arena leaderboard`
agrees with the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena import config as cfg
from arena.driver import prepare, write_meta
from arena.errors import JournalError
from arena.journal import read_records, record_of

ROOT = Path(__file__).resolve().parent.parent.parent


def write_config(path: Path, game: str, players: int, bots: list[str], deals: int, extra: str = "") -> Path:
    path.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
          r2: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
        tournaments:
          - name: club
            game: {game}
            players: {players}
            bots: [{", ".join(bots)}]
            deals: {deals}
            salt: rerun-test-salt
    """) + extra)
    return path


def arena(*args: str) -> subprocess.CompletedProcess:
    out = subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})
    # rich wraps long lines: compare words, not line breaks
    out.stdout_words = " ".join(out.stdout.split())
    out.stderr_words = " ".join(out.stderr.split())
    return out


def run(config: Path, results: Path, name: str = "club") -> subprocess.CompletedProcess:
    return arena("run", str(config), "-t", name, "--inline", "--results", str(results))


def board(folder: Path) -> dict:
    out = arena("leaderboard", str(folder), "--format", "json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def rows(doc: dict) -> list[tuple]:
    return [(r["bot"], round(r["mu"], 9), round(r["sigma"], 9), r["matches"], r["wins"]) for r in doc["rows"]]


def test_changed_game_and_players_are_refused_naming_the_changes(tmp_path):
    res = tmp_path / "res"
    folder = res / "club"
    first = run(write_config(tmp_path / "a.yaml", "cuttle", 2, ["random", "greedy"], 3), res)
    assert first.returncode == 0, first.stderr
    assert "club — cuttle, 2 players, 6 matches" in first.stdout_words
    journal = (folder / "matches.jsonl").read_bytes()
    meta = (folder / "tournament.json").read_bytes()
    before = board(folder)

    # the user's repro: the same tournament name, now agram with 3 players and a third bot
    b = write_config(tmp_path / "b.yaml", "agram", 3, ["random", "greedy", "r2"], 3)
    second = run(b, res)
    assert second.returncode == 2, second.stdout
    msg = second.stderr_words
    assert "tournament 'club'" in msg and "6 matches recorded in" in msg and str(folder) in msg
    assert "game: cuttle → agram" in msg and "players: 2 → 3" in msg
    assert "new name" in msg and "--results" in msg and "delete or move" in msg
    assert "options" not in msg  # another game's options are not listed one by one
    # nothing was played or rewritten; the table is still the cuttle one
    assert (folder / "matches.jsonl").read_bytes() == journal
    assert (folder / "tournament.json").read_bytes() == meta
    assert board(folder) == before and before["matches"] == 6 and before["outside_schedule"] == 0

    # a folder written before settings were recorded in tournament.json: checked record by record
    old = json.loads(meta)
    del old["settings"], old["schedule"]
    (folder / "tournament.json").write_text(json.dumps(old))
    again = run(b, res)
    assert again.returncode == 2 and "game: cuttle → agram" in again.stderr_words
    assert (folder / "matches.jsonl").read_bytes() == journal

    # the remedy: another tournament name gets its own folder and a table of agram matches only
    b.write_text(b.read_text().replace("name: club", "name: club-agram"))
    renamed = run(b, res, "club-agram")
    assert renamed.returncode == 0, renamed.stderr
    assert "club-agram — agram, 3 players, 9 matches" in renamed.stdout_words
    assert {r.game for r in read_records(res / "club-agram")} == {"agram"}

    # other options or another clock are refused the same way, each change named old → new
    c = write_config(tmp_path / "c.yaml", "cuttle", 2, ["random", "greedy"], 3,
                     "    options: {max_turns: 300}\n    clock: {move_ms: 500}\n")
    third = run(c, res)
    assert third.returncode == 2
    assert "options.max_turns: 500 → 300" in third.stderr_words and "clock.move_ms: 1000 → 500" in third.stderr_words


def test_lowered_deals_keep_the_records_but_rate_only_the_schedule(tmp_path):
    res = tmp_path / "res"
    folder = res / "club"
    full = write_config(tmp_path / "full.yaml", "cuttle", 2, ["random", "greedy"], 3)
    assert run(full, res).returncode == 0
    rated_full = rows(board(folder))
    assert all(r[3] == 6 for r in rated_full)

    low = write_config(tmp_path / "low.yaml", "cuttle", 2, ["random", "greedy"], 1)
    out = run(low, res)
    assert out.returncode == 0, out.stderr
    assert "club — cuttle, 2 players, 2 matches" in out.stdout_words
    assert ("0 matches played now, 2 already recorded, 4 recorded matches are outside the current schedule "
            "and not rated") in out.stdout_words
    assert len(read_records(folder)) == 6  # nothing finished is lost
    # the live board is not left on screen under the final table (it would print the table twice)
    assert "provisional leaderboard" not in out.stderr_words
    doc = board(folder)
    assert doc["matches"] == 2 and doc["outside_schedule"] == 4
    assert all(r["matches"] == 2 for r in doc["rows"])
    # the run's own exports and `arena leaderboard` agree, and both equal a run of 1 deal from scratch
    exported = json.loads((folder / "leaderboard.json").read_text())
    assert rows(exported) == rows(doc)
    assert exported["matches"] == 2 and exported["outside_schedule"] == 4
    assert run(low, tmp_path / "fresh").returncode == 0
    assert rows(board(tmp_path / "fresh" / "club")) == rows(doc)
    table = arena("leaderboard", str(folder))
    assert "club — cuttle, 2 players, 2 matches" in table.stdout_words
    assert "4 recorded matches are outside the current schedule and not rated" in table.stdout_words

    # raising the deals again rates the kept records without replaying them
    back = run(full, res)
    assert back.returncode == 0, back.stderr
    assert "0 matches played now, 6 already recorded," in back.stdout_words
    assert "outside the current schedule" not in back.stdout_words
    assert rows(board(folder)) == rated_full


def test_a_removed_bot_leaves_the_table_and_is_counted_outside(tmp_path):
    res = tmp_path / "res"
    three = write_config(tmp_path / "three.yaml", "agram", 2, ["random", "greedy", "r2"], 2)
    assert run(three, res).returncode == 0  # 3 lineups x 2 rotations x 2 deals
    two = write_config(tmp_path / "two.yaml", "agram", 2, ["random", "greedy"], 2)
    out = run(two, res)
    assert out.returncode == 0, out.stderr
    assert "club — agram, 2 players, 4 matches" in out.stdout_words
    assert "8 recorded matches are outside the current schedule" in out.stdout_words
    doc = board(res / "club")
    assert {r["bot"] for r in doc["rows"]} == {"random", "greedy"} and doc["matches"] == 4


def _with_one_record(tmp_path, text: str):
    """A results folder as a run leaves it: one finished match and tournament.json."""
    (t,) = cfg.load(write_yaml(tmp_path, text))
    journal, specs = prepare(t, tmp_path / "res")
    res = {"status": "ok", "outcome": {"ranks": [0] + [1] * (specs[0].players - 1)}, "faults": []}
    journal.append(record_of(specs[0], res, 1))
    write_meta(t, journal.folder, specs)
    journal.close()


def write_yaml(tmp_path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    return path


SEATINGS = """
bots:
  a: {cmd: [python, bots/random_bot.py]}
  b: {cmd: [python, bots/random_bot.py]}
  c: {cmd: [python, bots/random_bot.py]}
  d: {cmd: [python, bots/random_bot.py]}
tournaments:
  - name: s
    game: GAME
    players: PLAYERS
    bots: [a, b, c, d]
    deals: 2
"""


@pytest.mark.parametrize("game,players,old,new,refused", [
    ("agram", 3, "deals: 2\n", "deals: 2\n    rotations: permutations\n", "rotations: cyclic → permutations"),
    # two seats: both schemes give the same seatings
    ("agram", 2, "deals: 2\n", "deals: 2\n    rotations: permutations\n", None),
    ("sedma", 4, "deals: 2\n", "deals: 2\n    partners: mixed\n", "partners: self → mixed"),
    # partnership seatings do not use rotations
    ("sedma", 4, "deals: 2\n", "deals: 2\n    rotations: permutations\n", None),
    ("agram", 3, "deals: 2\n", "deals: 5\n", None),
    ("agram", 3, "deals: 2\n", "deals: 1\n", None),
    ("agram", 3, "[a, b, c, d]", "[a, b, c]", None),
])
def test_which_setting_changes_are_refused(tmp_path, game, players, old, new, refused):
    base = SEATINGS.replace("GAME", game).replace("PLAYERS", str(players))
    _with_one_record(tmp_path, base)
    (t,) = cfg.load(write_yaml(tmp_path, base.replace(old, new)))
    if refused is None:
        journal, _ = prepare(t, tmp_path / "res")
        journal.close()
        return
    with pytest.raises(JournalError) as e:
        prepare(t, tmp_path / "res")
    assert "tournament 's'" in str(e.value) and refused in str(e.value)


def test_a_folder_with_no_recorded_match_takes_any_settings(tmp_path):
    (t,) = cfg.load(write_yaml(tmp_path, SEATINGS.replace("GAME", "agram").replace("PLAYERS", "3")))
    journal, specs = prepare(t, tmp_path / "res")
    write_meta(t, journal.folder, specs)  # a run interrupted before its first match
    journal.close()
    (t2,) = cfg.load(write_yaml(tmp_path, SEATINGS.replace("GAME", "cuttle").replace("PLAYERS", "2")))
    journal, _ = prepare(t2, tmp_path / "res")
    journal.close()


def test_another_salt_is_refused_naming_the_tournament(tmp_path):
    base = SEATINGS.replace("GAME", "agram").replace("PLAYERS", "3")
    _with_one_record(tmp_path, base)
    (t,) = cfg.load(write_yaml(tmp_path, base + "    salt: public\n"))
    with pytest.raises(JournalError) as e:
        prepare(t, tmp_path / "res")
    msg = str(e.value)
    assert msg.startswith("tournament 's': ") and "another salt" in msg
    assert "remove the config's 'salt'" in msg and "delete or move" in msg


def test_changed_bot_command_or_version_names_the_bot_old_and_new(tmp_path):
    res = tmp_path / "res"
    a = write_config(tmp_path / "a.yaml", "agram", 3, ["random", "greedy", "r2"], 2)
    assert run(a, res).returncode == 0
    journal = (res / "club" / "matches.jsonl").read_bytes()
    b = tmp_path / "b.yaml"
    b.write_text(a.read_text().replace("greedy_bot.py]}", "greedy_bot.py, --x]}")
                 .replace(f"r2: {{cmd: [python, {ROOT}/bots/random_bot.py]}}",
                          f'r2: {{cmd: [python, {ROOT}/bots/random_bot.py], version: "2"}}'))
    out = run(b, res)
    assert out.returncode == 2, out.stdout
    msg = out.stderr_words
    assert "tournament 'club': match club/greedy+r2+random/d00000/r00" in msg
    # the brackets of a cmd are printed as they are (not taken for markup)
    assert (f"changed: bot 'greedy': cmd [python, {ROOT}/bots/greedy_bot.py] → "
            f"[python, {ROOT}/bots/greedy_bot.py, --x]; bot 'r2': version unset → 2)") in msg
    assert "bot_commands" not in msg and "new name" in msg
    assert (res / "club" / "matches.jsonl").read_bytes() == journal


@pytest.mark.parametrize("args", [[], ["--all"], ["-t", "x"]])
def test_arena_run_on_a_file_without_tournaments_names_the_file(tmp_path, args):
    path = tmp_path / "f.yaml"
    path.write_text("bots: {}\ntournaments: []\n")
    out = arena("run", str(path), *args, "--inline", "--results", str(tmp_path / "res"))
    assert out.returncode == 2
    assert f"error: {path}: defines no tournaments; add one under 'tournaments:' (docs/config.md)" in out.stderr_words
