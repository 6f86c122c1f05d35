"""Leaderboards, crosstables and reliability figures from journal records; rich tables and exports.

Exports per tournament folder: ``leaderboard.json``, ``leaderboard.csv``,
``leaderboard.md`` (ratings and scores), ``reliability.json`` (faults by class, move
latency p50/p99 and the first fault per bot), ``crosstable.json``. Timing never goes to
``leaderboard.json``.

A fault count alone does not say why a bot fails: the reliability table ends with one line
per faulting bot giving its first fault — class, detail, the last line of its stderr, and
whether it happened at start-up (:func:`fault_line`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import RenderableType
from rich.table import Table

from arena import stats
from arena.process import last_stderr_line
from arena.ratings import RatingResult, is_disabled, seat_rewards, side_ranks, sides_of

FAULT_CLASSES = ("timeout", "crash", "illegal", "protocol", "stall", "disabled")


def _block(rec: dict[str, Any]) -> tuple[str, int]:
    return (rec["match_id"].split("/")[1], rec["deal_index"])


def new_stats() -> dict[str, Any]:
    """Empty per-bot counters for :func:`tally`."""
    return {"matches": 0, "wins": 0, "rank_sum": 0.0, "score_sum": 0.0, "faults": 0, "forfeits": 0,
            "blocks": defaultdict(list)}


def credits(rec: dict[str, Any]) -> list[tuple[str, int, bool, int, float]]:
    """The entries one record adds to the bots' rows: ``(bot, seat, win, rank, score)`` per
    counted bot (partners: one entity per side, its first seat).

    * aborted matches (or no outcome): nothing;
    * ``ok``: every bot, its seat's rank and reward (:func:`arena.ratings.seat_rewards`);
    * ``forfeit``: likewise, but a bot that faulted never counts a win;
    * ``disabled`` (a match not played because a bot was disabled): only the disabled bots
      count it, as a loss (score 0, last place); the other seats never started, so they are
      credited with nothing — no match, no win, no score (a walkover included).
    """
    if rec.get("status") == "aborted" or not rec.get("outcome"):
        return []
    ranks = rec["outcome"]["ranks"]
    faults = rec.get("faults") or []
    faulty = {f.get("bot") for f in faults} if rec.get("status") == "forfeit" else set()
    disabled = {f.get("bot") for f in faults if f.get("class") == "disabled"} if is_disabled(rec) else set()
    last = len(sides_of(rec)) - 1
    rewards = seat_rewards(rec)
    out = []
    seen: set[str] = set()
    for seat, b in enumerate(rec["seats"]):
        if b in seen:
            continue
        seen.add(b)
        if disabled:
            if b in disabled:
                out.append((b, seat, False, last, 0.0))
            continue
        out.append((b, seat, ranks[seat] == 0 and b not in faulty, ranks[seat], rewards[seat]))
    return out


def tally(out: dict[str, dict[str, Any]], rec: dict[str, Any]) -> None:
    """Add one record to per-bot counters (``matches``, ``wins``, ``rank_sum``, ``score_sum``,
    ``faults``, ``forfeits``, ``blocks``); used by :func:`bot_stats` and the live board."""
    if rec.get("status") == "aborted" or not rec.get("outcome"):
        return
    for b, _seat, win, rank, score in credits(rec):
        st = out.setdefault(b, new_stats())
        st["matches"] += 1
        st["wins"] += win
        st["rank_sum"] += rank
        st["score_sum"] += score
        st["blocks"][_block(rec)].append(score)
    for f in rec.get("faults") or []:
        if f.get("bot") in out:
            out[f["bot"]]["faults"] += 1
    if rec.get("status") == "forfeit":
        for b in {f.get("bot") for f in rec.get("faults") or []}:
            if b in out:
                out[b]["forfeits"] += 1


def bot_stats(records: Sequence[dict[str, Any]], bots: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per bot: matches, wins, mean rank, mean score with bootstrap 95% interval, faults.

    A bot's score in a match is its seat's reward in [0, 1] (beating every other side = 1,
    ties count half). Aborted matches are not counted. A bot that faulted in a forfeited
    match never counts a win in it (when every side faulted, all share rank 0). A match not
    played because a bot was disabled counts only for the disabled bots, as a loss
    (:func:`credits`).
    """
    out: dict[str, dict[str, Any]] = {b: new_stats() for b in bots}
    for rec in records:
        tally(out, rec)
    for b, st in out.items():
        m, lo, hi = stats.bootstrap_ci(st["blocks"], seed=len(b))
        st["score"], st["score_low"], st["score_high"] = m, lo, hi
        st["mean_rank"] = st["rank_sum"] / st["matches"] if st["matches"] else float("nan")
        st["win_rate"] = st["wins"] / st["matches"] if st["matches"] else float("nan")
    return out


def row_order(row: dict[str, Any]) -> tuple:
    """Sort key of a table row (``bot``, ``mu``, ``sigma``, ``score``, ``faults``): μ−3σ, then μ,
    then score, then fewer faults, then name — a bot with more faults never wins a name tie.
    A missing score (no match counted) sorts below every score."""
    score = row.get("score")
    score = score if isinstance(score, (int, float)) and math.isfinite(score) else -math.inf
    return (-(row["mu"] - 3 * row["sigma"]), -row["mu"], -score, row.get("faults", 0), row["bot"])


def skill_above(a: dict[str, Any], b: dict[str, Any]) -> float:
    """P(skill of a > skill of b) under the TrueSkill posteriors: ``Φ((μa − μb) / sqrt(σa² + σb²))``.

    It agrees with the table's order (sorted by μ−3σ), unlike a test on raw scores, which
    weighs every match alike whoever the opponents were.
    """
    d = math.sqrt(a["sigma"] ** 2 + b["sigma"] ** 2)
    if d == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((a["mu"] - b["mu"]) / (d * math.sqrt(2.0))))


def leaderboard(records: Sequence[dict[str, Any]], bots: Sequence[str], ratings: RatingResult) -> list[dict[str, Any]]:
    """Rows sorted by μ−3σ (ties by μ, score, fewer faults, then name, :func:`row_order`): rank, bot, mu, sigma, conservative, matches,
    wins, win_rate, mean_rank, score, score_low, score_high, faults, p_above_next."""
    st = bot_stats(records, bots)
    rows = []
    for b in bots:
        mu, sigma = ratings.ratings.get(b, (25.0, 25.0 / 3))
        s = st[b]
        rows.append({"bot": b, "mu": mu, "sigma": sigma, "conservative": mu - 3 * sigma,
                     "matches": s["matches"], "wins": s["wins"], "win_rate": s["win_rate"],
                     "mean_rank": s["mean_rank"], "score": s["score"], "score_low": s["score_low"],
                     "score_high": s["score_high"], "faults": s["faults"], "forfeits": s["forfeits"]})
    rows.sort(key=row_order)
    for i, r in enumerate(rows):
        r["rank"] = i + 1
    for i, r in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        r["p_above_next"] = skill_above(r, nxt) if nxt else None
    return rows


def crosstable(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Pairwise results: ``table[a][b] = {"score": mean score of a against b, "matches": n}``.

    In each match, every pair of bots on different sides scores 1 / 0.5 / 0 by their sides' ranks.
    A match not played because a bot was disabled counts only in the disabled bots' rows, as
    a 0 against every other bot of the lineup (the others never started: no credit for them).
    """
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        if rec.get("status") == "aborted" or not rec.get("outcome"):
            continue
        sides = sides_of(rec)
        ranks = side_ranks(rec)
        if is_disabled(rec):
            disabled = {f.get("bot") for f in rec.get("faults") or [] if f.get("class") == "disabled"}
            for i, si in enumerate(sides):
                for j, sj in enumerate(sides):
                    if i != j:
                        for a in si:
                            for b in sj:
                                if a != b and a in disabled:
                                    acc[a][b].append(0.0)
            continue
        for i, si in enumerate(sides):
            for j, sj in enumerate(sides):
                if i == j:
                    continue
                s = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                for a in si:
                    for b in sj:
                        if a != b:
                            acc[a][b].append(s)
    return {a: {b: {"score": sum(v) / len(v), "matches": len(v)} for b, v in row.items()} for a, row in acc.items()}


def at_startup(rec: dict[str, Any], fault: dict[str, Any]) -> bool:
    """Whether ``fault`` (of ``rec``) happened at start-up: its seat never answered ``start``
    with ``ready`` in that match (``bot_versions`` empty for it) and no move was made."""
    versions = rec.get("bot_versions") or []
    seat = fault.get("seat")
    return (fault.get("class") != "disabled" and fault.get("move") == 0 and isinstance(seat, int)
            and 0 <= seat < len(versions) == len(rec.get("seats", [])) and not versions[seat])


def first_fault(rec: dict[str, Any], fault: dict[str, Any]) -> dict[str, Any]:
    """The summary of one fault kept as a bot's ``first_fault``: class, detail, match, move,
    start-up or not, and the last line of the stderr tail."""
    return {"class": fault.get("class", "protocol"), "detail": fault.get("detail", ""),
            "match_id": rec.get("match_id", ""), "move": fault.get("move"), "at_startup": at_startup(rec, fault),
            "stderr_last": last_stderr_line(fault.get("stderr_tail") or "")}


def fault_line(bot: str, first: dict[str, Any], count: int | None = None) -> str:
    """One line explaining a bot's faults from its first one, e.g.
    ``ism-bad: crash at start-up — bot 'ism-bad' exited with code 2; stderr: ...: error: ...
    (first of 6 faults)``."""
    when = " at start-up" if first.get("at_startup") else ""
    line = f"{bot}: {first['class']}{when} — {first['detail']}"
    if first.get("stderr_last"):
        line += f"; stderr: {first['stderr_last']}"
    if count and count > 1:
        line += f" (first of {count} faults)"
    return line


class StartupWatch:
    """Bots that cannot start: each of their first ``n`` matches failed at start-up (the bot
    never answered ``start`` with ``ready``, :func:`at_startup`) with the same fault class
    and detail, e.g. a command-line error that makes the bot exit with code 2 every time.

    Fed the journal's records in arrival order (:meth:`add`), it tells the driver which
    bots to disable and why. A bot that answers ``ready`` once, or whose first ``n`` start-up
    failures differ, is never condemned. Records of matches not played (fault ``disabled``)
    and aborted matches are not counted.

    :param n: matches to watch per bot (None or 0: condemn nobody).
    """

    def __init__(self, n: int | None) -> None:
        self.n = n or 0
        self.failures: dict[str, list[dict[str, Any]]] = {}
        self.settled: set[str] = set()

    def add(self, rec: dict[str, Any]) -> list[tuple[str, str]]:
        """Account one record; ``(bot, reason)`` for each bot it condemns (once per bot)."""
        if not self.n or rec.get("status") == "aborted":
            return []
        faults = rec.get("faults") or []
        if any(f.get("class") == "disabled" for f in faults):
            return []
        versions = rec.get("bot_versions") or []
        seats = rec.get("seats") or []
        out = []
        for b in dict.fromkeys(seats):
            if b in self.settled:
                continue
            mine = [i for i, x in enumerate(seats) if x == b]
            startup = [f for f in faults if f.get("bot") == b and at_startup(rec, f)]
            if len(versions) == len(seats) and any(versions[i] for i in mine):
                self.settled.add(b)  # it started
                continue
            if not startup:
                continue  # not its fault (another seat's forfeit) or unknown: not counted
            seen = self.failures.setdefault(b, [])
            seen.append(first_fault(rec, startup[0]))
            if len(seen) < self.n:
                continue
            self.settled.add(b)
            if len({(x["class"], x["detail"]) for x in seen}) == 1:
                first = seen[0]
                why = f"{first['class']} — {first['detail']}"
                if first["stderr_last"]:
                    why += f"; stderr: {first['stderr_last']}"
                out.append((b, f"it failed at start-up in each of its first {self.n} matches: {why}"))
        return out


def reliability(records: Sequence[dict[str, Any]], bots: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per bot: faults by class, move latency p50/p99 (ms) over all its decisions, and its
    ``first_fault`` in journal order (:func:`first_fault`; a ``disabled`` one only if it
    has no other; None without faults)."""
    faults = {b: dict.fromkeys(FAULT_CLASSES, 0) for b in bots}
    first: dict[str, dict[str, Any]] = {}
    lat: dict[str, list[float]] = {b: [] for b in bots}
    for rec in records:
        for f in rec.get("faults", []):
            b = f.get("bot")
            if b in faults:
                faults[b][f.get("class", "protocol")] = faults[b].get(f.get("class", "protocol"), 0) + 1
                if b not in first or (first[b]["class"] == "disabled" and f.get("class") != "disabled"):
                    first[b] = first_fault(rec, f)
        for seat, times in enumerate(rec.get("move_ms") or []):
            b = rec["seats"][seat]
            if b in lat and times:
                lat[b].extend(times)
    out = {}
    for b in bots:
        xs = np.array(lat[b]) if lat[b] else None
        out[b] = {"faults": faults[b], "moves": len(lat[b]),
                  "p50_ms": float(np.percentile(xs, 50)) if xs is not None else None,
                  "p99_ms": float(np.percentile(xs, 99)) if xs is not None else None,
                  "first_fault": first.get(b)}
    return out


def fault_lines(rel: dict[str, dict[str, Any]]) -> list[str]:
    """:func:`fault_line` for every bot of ``rel`` with faults, in ``rel``'s order."""
    out = []
    for b, r in rel.items():
        first = r.get("first_fault")
        if first:
            out.append(fault_line(b, first, sum(r["faults"].values())))
    return out


def duplicate_efficiency(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The duplicate efficiency a tournament achieved: the "games saved" factor.

    Each bot's seat rewards in ``ok`` matches are grouped into duplicate blocks (one deal
    of one lineup, every rotation). Within each (bot, lineup) group the variance of a
    single result and the variance of a block mean are pooled over all groups, with
    the degrees of freedom each group's own mean uses up, and compared as in
    :func:`arena.stats.duplicate_efficiency`: ``factor = Var(single) / (k Var(block mean))``
    for blocks of ``k`` matches. With one group the factor equals
    ``stats.duplicate_efficiency`` of its blocks.

    ``factor`` > 1 means the tournament's N matches measured the bots as precisely as
    ``factor · N`` unpaired matches would; 1 means the pairing did not help. Only complete
    blocks (as many matches as the largest block) count, so a running tournament's
    unfinished deals are left out.

    :returns: ``{"factor", "blocks", "bot_blocks", "block_size", "var_single", "var_block_mean"}``
        (``blocks``: complete duplicate blocks; ``bot_blocks``: the per-bot samples of them);
        ``factor`` is ``nan`` when undefined (blocks of one match, fewer than 2 blocks
        beyond the groups' means, or no variance at all) and ``inf`` when every block
        mean equals its group's mean while single results vary.
    """
    groups: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for rec in records:
        if rec.get("status") != "ok" or not rec.get("outcome"):
            continue
        rewards = seat_rewards(rec)
        lineup, deal = _block(rec)
        seen: set[str] = set()
        for seat, b in enumerate(rec["seats"]):
            if b not in seen:
                seen.add(b)
                groups[(b, lineup)][deal].append(rewards[seat])
    k = max((len(v) for g in groups.values() for v in g.values()), default=0)
    ss_single = ss_block = 0.0
    n_block = df_single = df_block = 0
    complete: set[tuple[str, int]] = set()
    for (_, lineup), g in groups.items():
        blocks = [v for v in g.values() if len(v) == k]
        if len(blocks) < 2:
            continue
        complete.update((lineup, d) for d, v in g.items() if len(v) == k)
        xs = np.array(blocks, dtype=float)
        means = xs.mean(axis=1)
        ss_single += float(((xs - xs.mean()) ** 2).sum())
        ss_block += float(((means - means.mean()) ** 2).sum())
        n_block += len(blocks)
        df_single += xs.size - 1
        df_block += len(blocks) - 1
    out: dict[str, Any] = {"factor": float("nan"), "blocks": len(complete), "bot_blocks": n_block, "block_size": k,
                           "var_single": float("nan"), "var_block_mean": float("nan")}
    if k < 2 or df_block < 2:
        return out
    var_single, var_block = ss_single / df_single, ss_block / df_block
    out["var_single"], out["var_block_mean"] = var_single, var_block
    if var_block <= 1e-12:
        out["factor"] = float("inf") if var_single > 0 else float("nan")
    else:
        out["factor"] = var_single / (k * var_block)
    return out


def efficiency_line(eff: dict[str, Any]) -> str:
    """One line for under the leaderboard table, e.g. ``Duplicate efficiency: 2.14× ...``."""
    f = eff.get("factor")
    if f is None or f != f:
        return (f"Duplicate efficiency: – (not enough complete duplicate blocks of 2 or more matches: "
                f"{eff.get('blocks', 0)})")
    if f == float("inf"):
        return (f"Duplicate efficiency: ∞ — duplicate deals removed all the luck of the deal "
                f"({eff['blocks']} blocks of {eff['block_size']} matches)")
    return (f"Duplicate efficiency: {f:.2f}× — each match was worth {f:.2f} unpaired ones "
            f"(variance of block-paired vs unpaired results; {eff['blocks']} blocks of {eff['block_size']} matches)")


# ------------------------------------------------------------------ rendering

def _f(x: Any, fmt: str = ".2f") -> str:
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    return format(x, fmt)


def leaderboard_table(rows: Sequence[dict[str, Any]], title: str = "Leaderboard") -> Table:
    """A rich table: rank, bot, μ, σ, μ−3σ, matches, wins, mean rank, score [95% CI], faults."""
    t = Table(title=title, title_justify="left")
    for col, just in (("#", "right"), ("bot", "left"), ("μ", "right"), ("σ", "right"), ("μ−3σ", "right"),
                      ("matches", "right"), ("wins", "right"), ("mean rank", "right"),
                      ("score [95% CI]", "right"), ("P(>next)", "right"), ("faults", "right")):
        t.add_column(col, justify=just, no_wrap=col in ("bot", "score [95% CI]"))
    for r in rows:
        t.add_row(str(r["rank"]), r["bot"], _f(r["mu"]), _f(r["sigma"]), _f(r["conservative"]),
                  str(r["matches"]), str(r["wins"]), _f(r["mean_rank"]),
                  f"{_f(r['score'], '.3f')} [{_f(r['score_low'], '.3f')}, {_f(r['score_high'], '.3f')}]",
                  _f(r.get("p_above_next"), ".2f"), str(r["faults"]))
    return t


def crosstable_table(cross: dict[str, dict[str, dict[str, float]]], order: Sequence[str]) -> Table:
    """Rich crosstable: score of row against column (matches in brackets)."""
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
    t.add_column("p50 ms", justify="right")
    t.add_column("p99 ms", justify="right")
    for b, r in rel.items():
        t.add_row(b, *(str(r["faults"].get(c, 0)) for c in FAULT_CLASSES), str(r["moves"]),
                  _f(r["p50_ms"], ".1f"), _f(r["p99_ms"], ".1f"))
    lines = fault_lines(rel)
    if not lines:
        return t
    return Group(t, Text("\n".join(["First fault of each faulting bot:", *lines])))


COLUMNS = ("rank", "bot", "mu", "sigma", "conservative", "matches", "wins", "win_rate", "mean_rank",
           "score", "score_low", "score_high", "p_above_next", "faults", "forfeits")


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
             "| # | bot | μ | σ | μ−3σ | matches | wins | mean rank | score [95% CI] | P(>next) | faults |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rank']} | {r['bot']} | {_f(r['mu'])} | {_f(r['sigma'])} | {_f(r['conservative'])} | "
                     f"{r['matches']} | {r['wins']} | {_f(r['mean_rank'])} | {_f(r['score'], '.3f')} "
                     f"[{_f(r['score_low'], '.3f')}, {_f(r['score_high'], '.3f')}] | "
                     f"{_f(r.get('p_above_next'))} | {r['faults']} |")
    for n in notes:
        lines += ["", n]
    return "\n".join(lines) + "\n"


def _clean(x: Any) -> Any:
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def write_exports(folder: str | Path, tournament: str, rows: Sequence[dict[str, Any]], cross: dict,
                  rel: dict, ratings: RatingResult, meta: dict[str, Any]) -> None:
    """Write leaderboard.json/.csv/.md, crosstable.json and reliability.json into ``folder``.

    ``meta`` goes into leaderboard.json as is (non-finite numbers become ``null``); a
    ``duplicate_efficiency`` entry (:func:`duplicate_efficiency`) is also printed under the
    Markdown table.
    """
    folder = Path(folder)
    doc = _clean({"tournament": tournament, **meta, "draw_probability": ratings.draw_probability,
                  "rows": [dict(r) for r in rows]})
    (folder / "leaderboard.json").write_text(json.dumps(doc, indent=2) + "\n")
    (folder / "leaderboard.csv").write_text(to_csv(rows))
    notes = [efficiency_line(meta["duplicate_efficiency"])] if "duplicate_efficiency" in meta else []
    (folder / "leaderboard.md").write_text(to_markdown(rows, f"{tournament} — leaderboard", notes))
    (folder / "crosstable.json").write_text(json.dumps(_clean(cross), indent=2) + "\n")
    (folder / "reliability.json").write_text(json.dumps(_clean(rel), indent=2) + "\n")
