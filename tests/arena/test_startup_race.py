"""A bot that writes a line that is not JSON and exits at once: the fault is ``protocol`` (what
``arena doctor`` says), never ``crash`` — the arena used to notice the exit (its own seat's wait,
the write of ``start`` failing, or the other seat's housekeeping) before reading the line, about
in about one `arena run` of six matches out of two (new-user trial; reproduced with a
tournament of such a bot, not through ``play_batch`` alone, where the old code passed this test
three times: it guards the classification, the race itself was seen in the full run). Real
processes (a new one per match), both seat orders, twenty matches."""

from __future__ import annotations

import sys
import textwrap

from arena.batch import play_batch
from tests.arena.conftest import RANDOM, bot, leftovers, spec


def test_a_bot_that_writes_garbage_and_exits_is_a_protocol_fault_every_time(tmp_path):
    script = tmp_path / "garbage.py"
    script.write_text(textwrap.dedent("""
        import sys
        print("hello world", flush=True)
        sys.exit(1)
    """))
    bots = {"bad": bot("bad", sys.executable, str(script), fresh_process=True), "random": RANDOM}
    results = tmp_path / "results"
    results.mkdir()
    got = []
    for rotation, seats in enumerate((["bad", "random"], ["random", "bad"])):  # a batch is one seating
        got += play_batch([spec(seats, deal=d, rotation=rotation, game="agram", salt="race") for d in range(10)],
                          bots, str(results))
    classes = [(f.cls, f.detail) for r in got for f in r.faults if f.bot == "bad"]
    assert len(classes) == 20, classes
    assert all(c == "protocol" and "not JSON: 'hello world'" in d for c, d in classes), classes
    assert not leftovers()
