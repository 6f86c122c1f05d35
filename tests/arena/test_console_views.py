"""The console's tables at class and field size (new-user finding, session 7: a 150-bot crosstable
was a wall of borders 480 characters wide; a partial table did not say it was partial)."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console
from rich.table import Table

from arena import render


def _text(renderable) -> str:
    c = Console(width=200, record=True)
    c.print(renderable)
    return c.export_text()


def _rel(n: int, faulty: set[int]) -> dict:
    return {f"b{i:03d}": {"faults": {"crash": 1} if i in faulty else {}, "moves": 10, "p50_ms": 1.0, "p99_ms": 2.0,
                          "first_fault": None}
            for i in range(n)}


def test_a_small_crosstable_is_a_table_a_large_one_a_pointer() -> None:
    bots = [f"b{i}" for i in range(render.CONSOLE_CROSSTABLE_MAX)]
    cross = {a: {b: {"score": 0.5, "matches": 2} for b in bots if b != a} for a in bots}
    assert isinstance(render.crosstable_table(cross, bots), Table)
    big = [*bots, "extra"]
    out = _text(render.crosstable_table(cross, big))
    assert f"{len(big)} bots, too wide for a terminal" in out and "crosstable.json" in out
    assert max(len(line) for line in out.splitlines()) < 200


def test_the_reliability_table_lists_the_faulting_bots_first_and_says_how_many_more() -> None:
    rel = _rel(150, {120, 149})
    out = _text(render.reliability_table(rel))
    listed = [line.split()[1] for line in out.splitlines() if line.startswith("│ b")]
    assert len(listed) == render.CONSOLE_RELIABILITY_MAX
    assert listed[:2] == ["b120", "b149"] and listed[2] == "b000"
    assert f"{150 - render.CONSOLE_RELIABILITY_MAX} more bots" in out
    small = _text(render.reliability_table(_rel(5, set())))
    assert "more bots" not in small and small.count("│ b") == 5


def test_a_partial_table_says_so() -> None:
    st = SimpleNamespace(records=[None] * 106, meta={"scheduled": 1200})
    assert render.matches_text(st) == "106 of 1,200 scheduled matches (the run is not finished: a partial table)"
    st.meta["scheduled"] = 106
    assert render.matches_text(st) == "106 matches"
    st.meta.pop("scheduled")
    assert render.matches_text(st) == "106 matches"
