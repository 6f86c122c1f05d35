"""The console says when bots run as root (arena root, no ``limits.bot_user``): a new user read
"sandboxed by default" as "cannot read the machine" (docs/security.md, open findings)."""

from __future__ import annotations

import os
import textwrap

from typer.testing import CliRunner

from arena.cli import app

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_run_says_whether_bots_run_as_root(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""
        bots:
          a: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          b: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: r, game: agram, players: 2, bots: [a, b], deals: 1}}
        """))
    out = CliRunner().invoke(app, ["run", str(path), "--all", "--inline", "--results", str(tmp_path / "res")])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert ("bots run as root (no limits.bot_user)" in text) == (os.geteuid() == 0), text[:600]
