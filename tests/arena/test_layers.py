"""The arena's layer rules (docs/architecture.md, "Arena layers"), checked on the source.

Every module of ``arena/`` has a floor; a module imports only modules of lower floors (any
import, at the top or inside a function, ``TYPE_CHECKING`` ones included) — on the ground
floor, where ``protocol`` uses ``errors``, also of its own — and the import graph has no cycle. ``arena/process/`` counts as one module (its own inside is its own).
A new module must be given a floor here, so the picture stays complete.
"""

from __future__ import annotations

import ast
from pathlib import Path

ARENA = Path(__file__).resolve().parents[2] / "arena"

#: floor -> modules. Two columns meet at the top: execution (process -> faults -> match ->
#: batch -> executors/ray_setup -> driver) and tables (record -> journal -> ratings/stats ->
#: tables -> render/report_html -> results -> progress); cli on the roof.
FLOORS: dict[int, set[str]] = {
    0: {"errors", "specs", "protocol", "record", "stats", "terminal", "links", "gsprt", "schedule_file", "config_read",
        "latency", "int_index", "results_folder", "leverage", "heap", "twoside", "design_matrix", "fit_summary",
        "journal_changes", "interrupts"},
    1: {"config", "schedule", "process", "journal", "scaffold", "batchfit", "columns", "trueskill_fast", "times_checkpoint",
        "tallies_events", "fit_cache"},
    2: {"faults", "deferred_columns", "journal_chunks", "ratings", "replay", "strength", "tallies", "lazy_schedule", "seat_pool",
        "record_view"},
    3: {"match", "tables", "replay_html", "replay_columns", "adaptive", "tallies_checkpoint", "journal_cache"},
    4: {"batch", "render", "report_html", "bot_pages", "adaptive_sim", "checkpoint"},
    5: {"executors", "ray_setup", "results", "doctor"},
    6: {"driver", "progress", "play"},
    7: {"sprt"},  # arena sprt: runs a test through the driver, reads its blocks (docs/regression.md)
    8: {"cli"},
}
FLOOR = {m: f for f, ms in FLOORS.items() for m in ms}


def arena_modules() -> dict[str, list[Path]]:
    """Module name -> its source files (``process`` -> every file of the subpackage)."""
    out: dict[str, list[Path]] = {}
    for path in sorted(ARENA.rglob("*.py")):
        rel = path.relative_to(ARENA)
        if rel.parts[0] == "__init__.py":
            continue
        out.setdefault(rel.parts[0].removesuffix(".py"), []).append(path)
    return out


def imports_of(paths: list[Path], me: str) -> dict[str, int]:
    """The arena modules imported by ``paths`` (other than ``me``) -> the first line importing each."""
    found: dict[str, int] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        pkg = ["arena", *path.relative_to(ARENA).parts[:-1]]
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against the file's package
                    base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names] if base == "arena" else [base]
            for name in names:
                parts = name.split(".")
                if parts[0] == "arena" and len(parts) > 1 and parts[1] != me:
                    found.setdefault(parts[1], node.lineno)
    return found


def graph() -> dict[str, dict[str, int]]:
    mods = arena_modules()
    return {m: {d: ln for d, ln in imports_of(paths, m).items() if d in mods} for m, paths in mods.items()}


def test_every_arena_module_has_a_floor():
    missing = sorted(set(arena_modules()) - set(FLOOR))
    assert not missing, f"give these modules a floor in FLOORS (and docs/architecture.md): {missing}"
    assert not sorted(set(FLOOR) - set(arena_modules())), "FLOORS names a module that does not exist"


def test_no_module_imports_its_own_floor_or_a_higher_one():
    bad = [f"arena.{m} (floor {FLOOR[m]}) imports arena.{d} (floor {FLOOR[d]}) at line {ln}"
           for m, deps in graph().items() for d, ln in deps.items()
           if FLOOR[d] > FLOOR[m] or (FLOOR[d] == FLOOR[m] and FLOOR[m] > 0)]
    assert not bad, "\n".join(bad)


def test_the_import_graph_has_no_cycle():
    g = graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for d in g[m]:
            if state.get(d) == 1:
                cycles.append(path[path.index(d):] + [d] if d in path else [m, d])
            elif d not in state:
                visit(d, [*path, d])
        state[m] = 2

    for m in g:
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import cycles: {cycles}"


def test_the_checker_sees_imports_inside_functions_and_type_checking_blocks(tmp_path):
    """The parser is not blind: a lazy import and a TYPE_CHECKING one both count."""
    src = tmp_path / "x.py"
    src.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from arena.results import S\n"
                   "def f():\n    from arena import driver\n    import arena.cli\n")
    global ARENA
    saved, ARENA = ARENA, tmp_path
    try:
        assert imports_of([src], "x") == {"results": 3, "driver": 5, "cli": 6}
    finally:
        ARENA = saved
