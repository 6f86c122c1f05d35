"""The frictions of issue 17, one test each: messages, the SDK's stray print, doctor's options
and seats, game-name spellings, "did you mean", a Ray start-up failure."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from arena import config
from arena.doctor import doctor
from arena.errors import ConfigError
from arena.specs import Clock
from engine import registry
from engine.errors import UnknownGameError
from tests.conftest import ROOT

ZOO = os.path.join(ROOT, "tests", "arena", "zoo")
FAST = Clock(move_ms=500, bank_ms=0, startup_ms=3000)
ENV = {**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "400"}  # rich wraps at COLUMNS


def arena(*args: str, cwd: str = ROOT, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the ``arena`` command as a user would (a real subprocess)."""
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=cwd, env=env or ENV,
                          capture_output=True, text=True, timeout=timeout)


def test_a_stall_says_to_flush_each_line_and_read_line_by_line():
    rep = doctor("agram", [sys.executable, f"{ZOO}/misbehave.py", "no_ready"], matches=1, clock=FAST)
    (hs,) = [c for c in rep.checks if c.name == "handshake"]
    assert hs.status == "fail" and "stall: no 'ready' within startup_ms 3000" in hs.message
    assert "flush stdout after every line" in hs.message and "read stdin line by line" in hs.message
    assert "mawk -W interactive" in hs.message


PRINTING_BOT = f"""
import sys
sys.path.insert(0, {ROOT!r})  # this checkout's SDK, whatever the installed one
from bots import sdk

def act(observation, legal, ctx):
    print("thinking about", len(legal), "moves")   # a stray debugging print
    return legal[0]

sdk.run(act, name="printer", version="1")
"""


def test_the_sdk_sends_a_stray_print_to_stderr(tmp_path):
    bot = tmp_path / "printer.py"
    bot.write_text(PRINTING_BOT)
    start = {"type": "start", "protocol": 1, "game": "agram", "options": {}, "players": 2, "seat": 0,
             "teams": [[0], [1]], "match": "m", "seed": 1, "clock": {"move_ms": 1000, "bank_ms": 0}}
    act = {"type": "act", "id": 7, "observation": {}, "legal": ["play 5h", "play Th"], "clock": {}}
    inp = (json.dumps(start) + "\n" + json.dumps(act) + "\n").encode()
    out = subprocess.run([sys.executable, str(bot)], input=inp, capture_output=True, env=ENV, timeout=60)
    lines = out.stdout.decode().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["ready", "action"]
    assert json.loads(lines[1]) == {"type": "action", "id": 7, "action": "play 5h"}
    assert out.stderr.decode() == "thinking about 2 moves\n"
    assert out.returncode == 0
    rep = doctor("agram", [sys.executable, str(bot)], matches=2)
    assert rep.passed, rep.text()


def test_doctor_calls_an_unknown_option_an_unknown_option():
    for args in (["--foo", "agram", "--", "python", "bots/random_bot.py"],
                 ["agram", "--foo", "--", "python", "bots/random_bot.py"]):
        out = arena("doctor", *args)
        assert out.returncode == 2, out.stderr
        assert "unknown option '--foo' for arena doctor" in out.stderr and "unknown game" not in out.stderr


def test_doctor_suggests_no_option_that_does_not_exist():
    rep = doctor("agram", ["python", "no_such_bot.py"], matches=1, cwd=ROOT)
    assert rep.checks[0].status == "fail" and "no_such_bot.py" in rep.checks[0].message
    assert "--cwd" not in rep.checks[0].message


def test_doctor_tests_every_seat_and_calls_the_bot_by_its_name():
    rep = doctor("sedma", ["python", "bots/random_bot.py"], matches=1, players=4, cwd=ROOT)
    assert rep.passed, rep.text()
    assert len(rep.results) == 4
    seats = [r.match_id.rsplit("/r", 1)[1] for r in rep.results]
    assert seats == ["00", "01", "02", "03"]
    assert "seats [0, 1, 2, 3]" in [c for c in rep.checks if c.name == "matches"][0].message


def test_a_crash_is_placed_at_the_bots_own_move():
    # crash_mid answers its first act and exits at its second (the match has moves in between)
    rep = doctor("agram", [sys.executable, f"{ZOO}/misbehave.py", "crash_mid"], matches=1, clock=FAST)
    (m,) = [c for c in rep.checks if c.name == "matches"]
    assert m.status == "fail"
    assert "crash at its move 2 (move " in m.message and "bot 'misbehave' exited with code 1" in m.message
    match_move = int(m.message.split("(move ", 1)[1].split(" ", 1)[0])
    assert match_move > 2  # the other seat moved in between: the match's count differs


@pytest.mark.parametrize("spelling,name", [("Sedma", "sedma"), ("whiskey-poker", "whiskey_poker"),
                                           ("Whiskey Poker", "whiskey_poker"), ("guiñote", "guinote"),
                                           ("Guiñote", "guinote"), ("AGRAM", "agram")])
def test_game_names_in_the_readmes_spellings(spelling, name):
    assert registry.canonical(spelling) == name
    assert registry.get_game(spelling).name == name


def test_every_game_name_the_readme_spells_is_accepted():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    intro = readme.split("Eight card games", 1)[1].split("Every game", 1)[0]
    names = [w.strip(" .:\n") for w in intro.split(":", 1)[1].replace(" and ", ", ").split(",")]
    assert len(names) == 8
    shipped = [n for n in registry.names() if not registry.GAMES[n].startswith("tests.")]  # not the toy game
    assert sorted(registry.canonical(w) for w in names) == shipped


def test_an_unknown_game_offers_the_closest_name():
    with pytest.raises(UnknownGameError, match=r"unknown game 'sedmaa' \(did you mean 'sedma'\?\); known games"):
        registry.get_game("sedmaa")
    out = arena("rules", "Whiskey-Poker")
    assert out.returncode == 0 and "whiskey_poker" in out.stdout


def _load(tmp_path, text):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text))
    return config.load(path)


def test_config_errors_in_plain_words_with_did_you_mean(tmp_path):
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, """
            bots:
              a: {cmd: [python, a.py], fresh_proces: true}
            tournaments: []
            """)
    assert str(e.value).endswith("key 'bots.a.fresh_proces': unknown key (did you mean 'fresh_process'?)")
    assert "Extra inputs" not in str(e.value)
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, """
            bots: {a: {cmd: [python, a.py]}, b: {cmd: [python, b.py]}}
            tournaments:
              - {name: my cup, game: sedma, players: 2, bots: [a, b], deals: 1, clok: {}}
            """)
    msg = str(e.value)
    assert "key 'clok': unknown key (did you mean 'clock'?)" in msg
    assert "key 'name': a name uses letters, digits, '_', '.', '-' and starts with a letter or digit, got 'my cup'" in msg
    assert "pattern" not in msg and "^[" not in msg
    with pytest.raises(ConfigError, match=r"unknown bot 'greedyy' \(did you mean 'greedy'\?\)"):
        _load(tmp_path, """
            bots: {greedy: {cmd: [python, a.py]}, b: {cmd: [python, b.py]}}
            tournaments:
              - {name: cup, game: sedma, players: 2, bots: [greedyy, b], deals: 1}
            """)
    with pytest.raises(ConfigError, match=r"key 'game': unknown game 'sedmaa' \(did you mean 'sedma'\?\)"):
        _load(tmp_path, """
            bots: {a: {cmd: [python, a.py]}, b: {cmd: [python, b.py]}}
            tournaments:
              - {name: cup, game: sedmaa, players: 2, bots: [a, b], deals: 1}
            """)
    (t,) = _load(tmp_path, """
        bots: {a: {cmd: [python, a.py]}, b: {cmd: [python, b.py]}}
        tournaments:
          - {name: cup, game: Whiskey Poker, players: 2, bots: [a, b], deals: 1}
        """)
    assert t.model.game == "whiskey_poker"
    with pytest.raises(ConfigError, match=r"unknown tournament 'cpu' \(did you mean 'cup'\?\)"):
        config.select([t], ["cpu"], False)


def test_a_ray_start_up_failure_is_one_paragraph(tmp_path):
    # below Ray's minimum object store: ray.init raises (RAY_ADDRESS no longer stops a local run)
    env = {**ENV, "RAY_DEFAULT_OBJECT_STORE_MAX_MEMORY_BYTES": "1000"}
    out = arena("run", os.path.join(ROOT, "tournaments.yaml"), "-q", "--results", str(tmp_path), env=env)
    assert out.returncode == 2
    err = out.stderr[out.stderr.index("error:"):]
    assert "Ray could not start on this machine" in err and "arena run --inline" in err
    assert "Traceback" not in out.stderr and len(err.splitlines()) <= 8


def test_the_inline_hint_names_the_measured_figures():
    from arena.cli import inline_hint

    hint = inline_hint(False, None, 600, 45.0)
    if (os.cpu_count() or 1) <= 2:
        assert "--inline" in hint and "17 s" in hint and "20 s" in hint
    else:
        assert hint == ""
    assert inline_hint(True, None, 600, 45.0) == "" and inline_hint(False, None, 600, 4000.0) == ""


def test_no_tournaments_file_here_says_what_to_do(tmp_path):
    out = arena("run", cwd=str(tmp_path), timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "tournaments.yaml: cannot read the config file" in out.stderr
    assert "arena run path/to/tournaments.yaml" in out.stderr and "docs/config.md" in out.stderr


def test_docs_sdk_documents_every_field_of_ctx():
    import dataclasses

    from bots import sdk

    text = open(os.path.join(ROOT, "docs", "sdk.md"), encoding="utf-8").read()
    for f in dataclasses.fields(sdk.Context):
        assert f"`ctx.{f.name}`" in text or f"`ctx.{f.name}`," in text or f"ctx.{f.name}" in text, f.name
    assert "(action, info)" in text and "on_end(ctx, outcome, observation)" in text
