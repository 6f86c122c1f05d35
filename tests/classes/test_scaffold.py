"""``arena new bot``: every language whose toolchain is installed passes ``arena doctor`` at once."""

from __future__ import annotations

import shutil

import pytest
import yaml

from arena.doctor import doctor
from arena.errors import ArenaError
from arena.scaffold import new_bot
from tests.classes.test_frictions import arena
from tests.conftest import require

TOOL = {"python": "python3", "js": "node", "c": "cc", "sh": "sh"}


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["python", "js", "c", "sh"])
def test_a_new_bot_passes_doctor_at_once(tmp_path, lang):
    require(bool(shutil.which(TOOL[lang])), f"{TOOL[lang]} is not installed")
    made = new_bot("student-1", lang, tmp_path)
    assert yaml.safe_load((made.folder / "bot.yaml").read_text())["cmd"] == made.cmd
    rep = doctor("agram", made.doctor_cmd(), matches=3, players=3, cwd=str(tmp_path))
    assert rep.passed, rep.text()
    assert all(c.status == "pass" for c in rep.checks), rep.text()
    assert [c.name for c in rep.checks][-4:] == ["handshake", "matches", "timing", "exit on EOF"]
    # the bot's own ready names it
    assert "name 'student-1'" in [c for c in rep.checks if c.name == "handshake"][0].message


def test_the_cli_prints_the_lines_for_tournaments_yaml(tmp_path):
    out = arena("new", "bot", "alice", "--lang", "sh", cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "alice" / "bot.sh").exists() and (tmp_path / "alice" / "bot.yaml").exists()
    assert "arena doctor agram -- sh alice/bot.sh" in out.stdout
    block = out.stdout[out.stdout.index("bots:\n"):]
    doc = yaml.safe_load(block)
    assert doc["bots"]["alice"] == {"cmd": ["sh", "alice/bot.sh"]}
    assert doc["tournaments"][0]["bots"] == ["random", "alice"]
    again = arena("new", "bot", "alice", cwd=str(tmp_path))
    assert again.returncode == 2 and "already exists" in again.stderr


def test_bad_names_and_languages_are_refused(tmp_path):
    with pytest.raises(ArenaError, match="a bot name uses letters"):
        new_bot("my bot", "python", tmp_path)
    with pytest.raises(ArenaError, match="choose one of python, js, c, sh"):
        new_bot("ok", "rust", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_python_bots_play_line_parses_as_the_cli_expects(tmp_path):
    # the docstring's "Play it" line, split as a shell would: --vs takes the whole command
    import shlex

    from typer.testing import CliRunner

    from arena.cli import app

    made = new_bot("alice", "python", tmp_path)
    line = next(x for x in (made.folder / "bot.py").read_text().splitlines() if x.startswith("Play it:"))
    argv = shlex.split(line.split(":", 1)[1])
    assert argv[:4] == ["arena", "play", "agram", "--vs"] and len(argv) == 5, argv
    out = CliRunner().invoke(app, [*argv[1:], "--help"])
    assert out.exit_code == 0, out.output
