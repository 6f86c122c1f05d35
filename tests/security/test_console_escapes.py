"""A bot's stderr and ``ready`` text cannot drive the organiser's terminal (adversarial trial,
2026-12-01: a crash message of ``ESC[2J ESC]0;owned ESC]52;c;...`` cleared the screen, retitled
the window and wrote the clipboard through ``arena run``/``arena leaderboard``'s fault lines).

Real bot processes, inline run, then the real ``arena leaderboard`` command in a subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from arena import config as cfg
from arena.driver import run_tournament
from arena.journal import read_records
from arena.protocol import printable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTACK = "\x1b[2J\x1b[H\x1b]0;owned\x1b\\\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[8mCONCEALED\x9b1m"

ESCAPER = f'''
import json, sys
sys.stdout.write(json.dumps({{"type": "ready", "protocol": 1, "name": "esc\\x1b]0;t\\x07", "version": "1"}}) + "\\n")
sys.stdout.flush()
sys.stdin.readline()
sys.stderr.write({ATTACK!r} + "\\n")
sys.exit(3)
'''


def test_printable_escapes_every_control_character_but_newline_and_tab():
    assert printable("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert printable("\x1b[2J\x07\x9b\rx") == "\\x1b[2J\\x07\\x9b\\x0dx"
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7f <= ord(c) < 0xa0 for c in printable(ATTACK))


def test_a_crash_message_full_of_escape_sequences_reaches_the_console_escaped(tmp_path):
    bot = tmp_path / "escaper.py"
    bot.write_text(ESCAPER)
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          escaper: {{cmd: [python, {bot}]}}
        tournaments:
          - {{name: esc, game: agram, players: 2, bots: [random, escaper], deals: 1, salt: s}}
        """))
    (t,) = cfg.load(path)
    run_tournament(t, tmp_path / "res", inline=True)
    recs = read_records(tmp_path / "res" / "esc")
    faults = [f for r in recs for f in r.faults]
    assert faults and all(f.bot == "escaper" for f in faults)
    assert all("\x1b" not in f.stderr_tail and "\\x1b]0;owned" in f.stderr_tail for f in faults)
    out = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", str(tmp_path / "res" / "esc")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "COLUMNS": "300", "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    assert "First fault of each faulting bot:" in out.stdout
    assert "\\x1b]0;owned" in out.stdout  # the bot's message is shown, escaped
    assert "\x1b]" not in out.stdout and "\x9b" not in out.stdout and "\x07" not in out.stdout
