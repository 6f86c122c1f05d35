"""Text a bot controls (its ``ready`` version, its stderr) is printed as text, never as Rich markup.

Real ``arena run --inline`` / ``arena doctor`` processes and real bots. A version or a stderr
line holding ``[/]`` once crashed the driver with a MarkupError before the warning was
journaled, and the version is reloaded from the journal, so every later run crashed too.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tests.arena.test_rerun import ROOT, arena

MARKUP = "[/]x [bold]y[/bold] [link=http://127.0.0.1/]z"


def write_bots(tmp: Path) -> None:
    (tmp / "mine.py").write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from bots import sdk
        sdk.run(lambda obs, legal, ctx: legal[0], name="mine", version=os.environ["V"])
    """))
    (tmp / "crash.py").write_text(f"import sys\nsys.stderr.write({MARKUP!r} + '\\n')\nsys.exit(3)\n")


def config(tmp: Path, version: str, deals: int) -> Path:
    path = tmp / "t.yaml"
    path.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          mine: {{cmd: [python, mine.py], env: {{V: {version!r}}}}}
          crash: {{cmd: [python, crash.py]}}
        tournaments:
          - name: v
            game: agram
            players: 2
            bots: [random, mine, crash]
            deals: {deals}
    """))
    return path


def test_markup_in_a_version_and_in_stderr_is_printed_as_it_is(tmp_path):
    write_bots(tmp_path)
    res = tmp_path / "res"
    first = arena("run", str(config(tmp_path, "[bold]1", 2)), "-t", "v", "--inline", "--results", str(res))
    assert first.returncode == 0, first.stderr
    assert "MarkupError" not in first.stderr
    # the disabled bot's warning quotes its stderr verbatim
    assert "bot 'crash' disabled" in first.stderr_words and MARKUP in first.stderr_words
    # a new version with a closing tag: warned about (verbatim) on a run that reloads the old one
    second = arena("run", str(config(tmp_path, "[/]2", 3)), "-t", "v", "--inline", "--results", str(res))
    assert second.returncode == 0, second.stderr
    assert "'mine' now announces 'mine/[/]2'" in second.stderr_words
    assert "'mine/[bold]1'" in second.stderr_words
    # and the run after that (both versions in the journal) and the leaderboard still work
    third = arena("run", str(config(tmp_path, "[/]2", 4)), "-t", "v", "--inline", "--results", str(res))
    assert third.returncode == 0, third.stderr
    board = arena("leaderboard", str(res / "v"))
    assert board.returncode == 0, board.stderr
    assert "mine" in board.stdout


def test_doctor_prints_a_bots_stderr_as_it_is(tmp_path):
    write_bots(tmp_path)
    out = arena("doctor", "agram", "--", sys.executable, str(tmp_path / "crash.py"))
    assert out.returncode != 0
    assert "MarkupError" not in out.stderr + out.stdout
    assert MARKUP in out.stdout_words + out.stderr_words
