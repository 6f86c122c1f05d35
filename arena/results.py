"""Turn a results folder into ratings, tables and exports (used after a run and by ``arena leaderboard``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena import report
from arena.errors import ArenaError
from arena.journal import read_records
from arena.ratings import RatingResult, rate


@dataclass
class Standings:
    """Everything the tables show for one tournament folder."""

    name: str
    meta: dict[str, Any]
    records: list[dict[str, Any]]
    ratings: RatingResult
    rows: list[dict[str, Any]]
    cross: dict
    rel: dict
    efficiency: dict[str, Any] = field(default_factory=dict)


def load_meta(folder: str | Path) -> dict[str, Any]:
    """``tournament.json`` of a results folder.

    :raises ArenaError: if the folder is not a tournament's results folder.
    """
    path = Path(folder) / "tournament.json"
    if not path.exists():
        raise ArenaError(f"{folder}: not a results folder (no tournament.json); "
                         "give results/<tournament> as written by `arena run`")
    return json.loads(path.read_text())


def standings(folder: str | Path) -> Standings:
    """Replay the ratings of ``folder`` (ordered replay) and compute every table."""
    meta = load_meta(folder)
    bots = meta["bots"]
    current = set(bots)
    # a bot removed from the tournament takes its matches with it (they stay in matches.jsonl)
    records = [rec for rec in read_records(folder) if current.issuperset(rec["seats"])]
    r = meta.get("ratings", {})
    ratings = rate(records, bots, draw_probability=r.get("draw_probability", "auto"), tau=r.get("tau", "default"),
                   fixed=r.get("fixed", []), mu=r.get("mu", 25.0), sigma=r.get("sigma", 25.0 / 3),
                   rate_forfeits=meta.get("rate_forfeits", False))
    rows = report.leaderboard(records, bots, ratings)
    return Standings(meta["name"], meta, records, ratings, rows, report.crosstable(records),
                     report.reliability(records, bots), report.duplicate_efficiency(records))


def export(folder: str | Path, st: Standings) -> None:
    """Write the leaderboard, crosstable and reliability exports and ``report.html`` of ``st`` into ``folder``."""
    from arena import report_html  # matplotlib: imported only when a report is written

    counts = {"matches": len(st.records),
              "ok": sum(1 for r in st.records if r.get("status") == "ok"),
              "forfeit": sum(1 for r in st.records if r.get("status") == "forfeit"),
              "aborted": sum(1 for r in st.records if r.get("status") == "aborted")}
    meta = {"game": st.meta["game"], "players": st.meta["players"], **counts,
            "duplicate_efficiency": st.efficiency or report.duplicate_efficiency(st.records)}
    report.write_exports(folder, st.name, st.rows, st.cross, st.rel, st.ratings, meta)
    report_html.write_report(folder, st)
