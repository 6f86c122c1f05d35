"""The tables drawn and exported: rich tables for the console, CSV / Markdown / JSON files.

Exports per tournament folder (:func:`write_exports`): ``leaderboard.json``,
``leaderboard.csv``, ``leaderboard.md`` (ratings and scores), ``reliability.json`` (faults
by class, move latency p50/p99 and the first fault per bot), ``crosstable.json``. Timing
never goes to ``leaderboard.json``. The numbers come from :mod:`arena.tables`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from rich.console import RenderableType
from rich.table import Table

from arena.results_folder import write_file
from arena.tables import (
    FAULT_CLASSES,
    efficiency_line,
    elo_text,
    fault_lines,
    latency_text,
    mixing_line,
    order_notes,
    rank_text,
)


def _f(x: Any, fmt: str = ".2f") -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    return format(x, fmt)


def _strength(r: dict[str, Any]) -> str:
    if r.get("strength") is None:
        return "–"
    return f"{elo_text(r['strength'])} [{elo_text(r['strength_low'])}, {elo_text(r['strength_high'])}]"


def leaderboard_table(rows: Sequence[dict[str, Any]], title: str = "Leaderboard") -> Table:
    """A rich table: #, bot, rank (interval), strength [95%], P(>next), μ, σ, matches, wins,
    mean rank (1 = first), score [95% CI], faults."""
    t = Table(title=title, title_justify="left")
    cols: tuple[tuple[str, Literal["left", "right"]], ...] = (
        ("#", "right"), ("bot", "left"), ("rank", "right"), ("strength [95%]", "right"), ("P(>next)", "right"),
        ("μ", "right"), ("σ", "right"), ("matches", "right"), ("wins", "right"), ("mean rank", "right"),
        ("score [95% CI]", "right"), ("faults", "right"))
    for col, just in cols:
        t.add_column(col, justify=just, no_wrap=col in ("bot", "score [95% CI]", "strength [95%]", "rank"))
    for r in rows:
        t.add_row(str(r["rank"]), r["bot"], rank_text(r), _strength(r), _f(r.get("p_above_next"), ".2f"),
                  _f(r["mu"]), _f(r["sigma"]), str(r["matches"]), str(r["wins"]), _f(r["mean_rank"]),
                  f"{_f(r['score'], '.3f')} [{_f(r['score_low'], '.3f')}, {_f(r['score_high'], '.3f')}]",
                  str(r["faults"]))
    return t


def matches_text(st: Any) -> str:
    """``"106 of 1,200 scheduled matches (the run is not finished)"`` while the journal holds fewer
    matches than ``tournament.json`` schedules, else ``"1200 matches"``; an SPRT's folder (its
    settings hold ``sprt``) is never called partial: it stops at its verdict."""
    n, planned = len(st.records), st.meta.get("scheduled")
    if planned and n < planned and (st.meta.get("settings") or {}).get("sprt"):  # stops at its verdict
        return f"{n} matches (an SPRT: it plays until its verdict, at most {planned:,})"
    if planned and n < planned:
        return f"{n} of {planned:,} scheduled matches (the run is not finished: a partial table)"
    return f"{n} matches"


def notes_lines(st: Any) -> list[str]:
    """The lines printed under the leaderboard (console and Markdown): how it is ordered, the
    order notes (:func:`arena.tables.order_notes`), fixed ratings, the duplicate efficiency and
    the design's mixing."""
    out = []
    if st.strength is not None:
        out.append("Ordered by strength (Plackett–Luce fit over all results; Elo points, 0 = field average). "
                   "rank: the ranks the bot could hold (95%); P(>next): probability it is stronger than the "
                   "next row. μ, σ: TrueSkill.")
    out += order_notes(st.rows)
    fixed = [b for b in (st.meta.get("ratings") or {}).get("fixed") or [] if isinstance(b, str)]
    if fixed:
        out.append(f"Fixed TrueSkill ratings ({', '.join(fixed)}): their μ, σ stay at the prior as anchors of the "
                   "TrueSkill columns (σ here is not their uncertainty); their strength is the batch fit's, as for "
                   "every bot.")
    out.append(efficiency_line(st.efficiency))
    mix = mixing_line(st.mixing)
    if mix:
        out.append(mix)
    if _design_line(st.meta.get("design")):
        out.append(_design_line(st.meta["design"], st.rows))
    return out



def _design_line(status: Any, rows: Sequence[dict[str, Any]] = ()) -> str:
    """:func:`arena.adaptive.design_line`, imported only for an adaptive design (the planner
    brings scipy and pydantic: 0.5 s of a table's start-up)."""
    if not status:
        return ""
    from arena.adaptive import design_line

    return design_line(status, rows)

#: the largest field whose crosstable the console prints (wider ones: crosstable.json, report.html)
CONSOLE_CROSSTABLE_MAX = 16
#: the most bots the console's reliability table lists (the faulting ones first)
CONSOLE_RELIABILITY_MAX = 40


def crosstable_table(cross: dict[str, dict[str, dict[str, float]]], order: Sequence[str]) -> RenderableType:
    """Rich crosstable: score of row against column (matches in brackets); for more than
    :data:`CONSOLE_CROSSTABLE_MAX` bots a line saying where it is (no terminal is that wide)."""
    from rich.text import Text

    if len(order) > CONSOLE_CROSSTABLE_MAX:
        return Text(f"Crosstable: {len(order)} bots, too wide for a terminal — see crosstable.json and report.html "
                    "(written by `arena run` and `arena leaderboard DIR --write`)")
    t = Table(title="Crosstable (score of row vs column)", title_justify="left")
    t.add_column("")
    for b in order:
        t.add_column(b, justify="right")
    for a in order:
        cells = []
        for b in order:
            c = cross.get(a, {}).get(b)
            cells.append("" if a == b or c is None else f"{c['score']:.2f} ({c['matches']})")
        t.add_row(a, *cells)
    return t


def reliability_table(rel: dict[str, dict[str, Any]]) -> RenderableType:
    """The reliability section: a rich table of faults by class and move latency p50/p99 per
    bot and, under it (console width, not the table's), one line per faulting bot on its
    first fault (:func:`fault_lines`). Stderr text is never read as rich markup."""
    from rich.console import Group
    from rich.text import Text

    t = Table(title="Reliability", title_justify="left")
    t.add_column("bot")
    for c in FAULT_CLASSES:
        t.add_column(c, justify="right")
    t.add_column("moves", justify="right")
    t.add_column("p50", justify="right")
    t.add_column("p99", justify="right")
    shown = list(rel)
    if len(shown) > CONSOLE_RELIABILITY_MAX:  # the faulting bots first, then the table's order
        shown = sorted(shown, key=lambda b: not any(rel[b]["faults"].values()))[:CONSOLE_RELIABILITY_MAX]
    for b in shown:
        r = rel[b]
        t.add_row(b, *(str(r["faults"].get(c, 0)) for c in FAULT_CLASSES), str(r["moves"]),
                  latency_text(r["p50_ms"]), latency_text(r["p99_ms"]))
    parts: list[RenderableType] = [t]
    if len(shown) < len(rel):
        parts.append(Text(f"{len(rel) - len(shown)} more bots (without faults, or beyond the first "
                          f"{CONSOLE_RELIABILITY_MAX}) in reliability.json and report.html"))
    lines = fault_lines(rel)
    if lines:
        parts.append(Text("\n".join(["First fault of each faulting bot:", *lines])))
    return parts[0] if len(parts) == 1 else Group(*parts)


COLUMNS = ("rank", "bot", "rank_low", "rank_high", "strength", "strength_low", "strength_high", "p_above_next",
           "mu", "sigma", "conservative", "matches", "wins", "win_rate", "mean_rank",
           "score", "score_low", "score_high", "faults", "forfeits")


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """The leaderboard as CSV (header = :data:`COLUMNS`)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def to_markdown(rows: Sequence[dict[str, Any]], title: str, notes: Sequence[str] = ()) -> str:
    """The leaderboard as a Markdown table; ``notes`` are paragraphs under it."""
    lines = [f"# {title}", "",
             "| # | bot | rank | strength [95%] | P(>next) | μ | σ | matches | wins | mean rank | score [95% CI] "
             "| faults |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rank']} | {r['bot']} | {rank_text(r)} | {_strength(r)} | {_f(r.get('p_above_next'))} | "
                     f"{_f(r['mu'])} | {_f(r['sigma'])} | {r['matches']} | {r['wins']} | {_f(r['mean_rank'])} | "
                     f"{_f(r['score'], '.3f')} [{_f(r['score_low'], '.3f')}, {_f(r['score_high'], '.3f')}] | "
                     f"{r['faults']} |")
    for n in notes:
        lines += ["", n]
    return "\n".join(lines) + "\n"


def clean(x: Any) -> Any:
    """``x`` for JSON: non-finite floats become None (in dicts and lists too)."""
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def write_exports(folder: str | Path, doc: dict[str, Any], notes: Sequence[str], rows: Sequence[dict[str, Any]],
                  cross: dict, rel: dict) -> None:
    """Write leaderboard.json (``doc``: :func:`arena.results.leaderboard_doc`), leaderboard.csv,
    leaderboard.md (the rows with ``notes`` under them: what the console prints,
    :func:`notes_lines`), crosstable.json and reliability.json into ``folder``."""
    folder = Path(folder)
    write_file(folder / "leaderboard.json", json.dumps(doc, indent=2) + "\n")  # never through a link
    write_file(folder / "leaderboard.csv", to_csv(rows))
    write_file(folder / "leaderboard.md", to_markdown(rows, f"{doc['tournament']} — leaderboard", list(notes)))
    write_file(folder / "crosstable.json", json.dumps(clean(cross), indent=2) + "\n")
    write_file(folder / "reliability.json", json.dumps(clean(rel), indent=2) + "\n")
