"""A bot's code changed between runs of one tournament (a new user's trial: a class resubmits,
`arena run` said "0 matches played now, 300 already recorded" and silently rated the old code).
Real bot processes, inline runs through the CLI."""

from __future__ import annotations

import os
import textwrap

from typer.testing import CliRunner

from arena.cli import app

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_rerun_warns_when_a_bots_files_changed(tmp_path):
    mine = tmp_path / "mine.py"
    mine.write_text(f"import runpy\nrunpy.run_path({ROOT + '/bots/random_bot.py'!r}, run_name='__main__')\n")
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""
        bots:
          mine: {{cmd: [python, {mine}]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: c, game: agram, players: 2, bots: [mine, greedy], deals: 1}}
        """))
    args = ["run", str(path), "--all", "--inline", "--results", str(tmp_path / "res")]

    def run() -> str:
        out = CliRunner().invoke(app, args)
        assert out.exit_code == 0, out.output
        return " ".join(out.output.split())

    assert "files changed" not in run()
    assert "files changed" not in run()  # nothing edited: no warning
    mine.write_text(mine.read_text() + "# resubmitted\n")
    text = run()
    assert "bot 'mine': its files changed since the last run" in text, text[:800]
    assert "bot 'greedy'" not in text.split("files changed")[0][-40:]
    assert "files changed" not in run()  # said once: the new digest is recorded
