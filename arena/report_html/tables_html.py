"""The static HTML of ``report.html``: leaderboard, "How to read this table", reliability, teams.

Every row carries ``data-bot`` (or ``data-team``) so the page's script can search, sort and
page them; the numbers are in the HTML itself, so the tables read without the script too.
"""

from __future__ import annotations

import html
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from arena import tables
from arena.ratings import RatingResult
from arena.record import MatchRecord


def _e(x: Any) -> str:
    return html.escape(str(x))


def num(x: Any, fmt: str = ".2f") -> str:
    """``x`` formatted with ``fmt``, or a muted dash for None / nan / inf."""
    if x is None or (isinstance(x, float) and (x != x or math.isinf(x))):
        return '<span class="muted">–</span>'
    return format(x, fmt)


def bot_href(links: dict[str, str], bot: str) -> str | None:
    """The per-bot page of ``bot`` from ``links["bot"]`` (a pattern with ``{bot}``), or None."""
    pattern = links.get("bot")
    return pattern.replace("{bot}", quote(bot, safe="")) if pattern else None


def _name(bot: str, links: dict[str, str]) -> str:
    href = bot_href(links, bot)
    return f'<a href="{_e(href)}">{_e(bot)}</a>' if href else _e(bot)


def _ci_bar(r: dict[str, Any]) -> str:
    s, lo, hi = r.get("score"), r.get("score_low"), r.get("score_high")
    if s is None or s != s or lo is None or hi is None:
        return ""
    return (f'<span class="ci" title="95% interval {lo:.3f}–{hi:.3f}"><i style="left:{lo * 100:.1f}%;'
            f'width:{max(1.0, (hi - lo) * 100):.1f}%"></i><b style="left:{s * 100:.1f}%"></b></span>')


#: Leaderboard columns: (row key the script sorts by, header, css class).
LEADERBOARD_COLUMNS = (("rank", "#", ""), ("bot", "bot", "l"), ("rank_low", "rank", ""),
                       ("strength", "strength [95%]", ""), ("p_above_next", "P(&gt;next)", ""), ("mu", "μ", ""),
                       ("sigma", "σ", ""), ("matches", "matches", ""), ("wins", "wins", ""),
                       ("win_rate", "win rate", ""), ("mean_rank", "mean rank", ""),
                       ("score", "score [95% CI]", "l"), ("faults", "faults", ""))


def _head(columns: Sequence[tuple[str, str, str]]) -> str:
    return "<tr>" + "".join(f'<th data-key="{k}"{" class=l" if c else ""}>{h}</th>' for k, h, c in columns) + "</tr>"


def leaderboard_html(rows: Sequence[dict[str, Any]], links: dict[str, str] | None = None) -> str:
    """The leaderboard as an HTML table (one ``<tr data-bot=…>`` per bot, in ``rows`` order);
    bot names link to their pages when ``links["bot"]`` is given."""
    links = links or {}
    body = []
    for r in rows:
        faults = f'<span class="bad">{r["faults"]}</span>' if r["faults"] else "0"
        strength = ('<span class="muted">–</span>' if r.get("strength") is None else
                    f'{tables.elo_text(r["strength"])} [{tables.elo_text(r["strength_low"])}, '
                    f'{tables.elo_text(r["strength_high"])}]')
        body.append(
            f'<tr data-bot="{_e(r["bot"])}"><td>{r["rank"]}</td>'
            f'<td class="l bot"><span class="sw"></span>{_name(r["bot"], links)}</td>'
            f'<td>{_e(tables.rank_text(r))}</td><td>{strength}</td><td>{num(r.get("p_above_next"))}</td>'
            f'<td>{num(r["mu"])}</td><td>{num(r["sigma"])}</td>'
            f'<td>{r["matches"]}</td><td>{r["wins"]}</td><td>{num(r["win_rate"], ".1%")}</td>'
            f'<td>{num(r["mean_rank"])}</td>'
            f'<td class=l>{num(r["score"], ".3f")} [{num(r["score_low"], ".3f")}, {num(r["score_high"], ".3f")}]'
            f'{_ci_bar(r)}</td><td>{faults}</td></tr>')
    return (f'<table id="leaderboard"><thead>{_head(LEADERBOARD_COLUMNS)}</thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def how_to_read_html(rows: Sequence[dict[str, Any]], players: Any) -> str:
    """The "How to read this table" section: each column in plain words, with one example
    taken from the table itself (the first two rows)."""
    example = ""
    if len(rows) >= 2 and rows[0].get("strength") is not None and rows[1].get("strength") is not None:
        a, b = rows[0], rows[1]
        p = a.get("p_above_next")
        same = tables.rank_text(a) != str(a["rank"])
        example = (f"<p><b>Example.</b> {_e(a['bot'])} is first with strength {tables.elo_text(a['strength'])}; "
                   f"{_e(b['bot'])} follows with {tables.elo_text(b['strength'])}. P(&gt;next) = {num(p)}: "
                   + (("the results do not settle which of the two is stronger, so both show the rank range "
                       f"{_e(tables.rank_text(a))}." if tables.rank_text(a) == tables.rank_text(b) else
                       "the results do not settle which of the two is stronger, so their rank ranges overlap: "
                       f"{_e(tables.rank_text(a))} and {_e(tables.rank_text(b))}.") if same else
                      f"{_e(a['bot'])} is very likely the stronger, and its rank is {_e(tables.rank_text(a))} "
                      "for sure.")
                   + "</p>")
    return (
        '<section id="how-to-read"><h2>How to read this table</h2>'
        "<ul>"
        "<li><b>#</b> — the place in the table. The order comes from all results fitted together, whoever "
        "played whom and in whatever order the matches finished.</li>"
        "<li><b>rank</b> — the places the bot could really hold: “3” means surely third; “2–4” means the "
        "results cannot tell it apart from its neighbours (95% confidence).</li>"
        "<li><b>strength</b> — how strong the bot plays, in Elo points; 0 is the average of this field. A bot "
        "100 points above another wins about 64% of their head-to-head decisions, 200 points about 76%. "
        "The brackets hold the 95% range.</li>"
        "<li><b>P(&gt;next)</b> — the chance that the bot really is stronger than the one in the next row.</li>"
        "<li><b>μ, σ</b> — the TrueSkill rating (μ the estimate, σ its uncertainty), kept as the published "
        "rating.</li>"
        f"<li><b>mean rank</b> — the bot's average finishing place in its matches: 1 = first, "
        f"{_e(players)} = last.</li>"
        "<li><b>score</b> — the share of the other sides the bot beat per match (a tie counts half), with "
        "its 95% range. It does not look at who the opponents were, so when bots met different opponents "
        "it can disagree with the order; a note under the table says where.</li>"
        "</ul>" + example + "</section>")


def reliability_html(rel: dict[str, dict[str, Any]], order: Sequence[str]) -> str:
    """The reliability table (faults by class, moves, move latency p50/p99) as HTML, followed by
    one line per faulting bot explaining its first fault (:func:`arena.tables.fault_lines`)."""
    cols = [("bot", "bot", "l"), *((f"fault_{c}", c, "") for c in tables.FAULT_CLASSES), ("moves", "moves", ""),
            ("p50_ms", "p50", ""), ("p99_ms", "p99", "")]
    body = []
    for b in [*order, *(x for x in rel if x not in order)]:
        r = rel.get(b)
        if r is None:
            continue
        cells = "".join(f'<td>{f"<span class=bad>{n}</span>" if n else "0"}</td>'
                        for n in (r["faults"].get(c, 0) for c in tables.FAULT_CLASSES))
        body.append(f'<tr data-bot="{_e(b)}"><td class="l bot">{_e(b)}</td>{cells}<td>{r["moves"]}</td>'
                    f'<td>{_e(tables.latency_text(r["p50_ms"]))}</td><td>{_e(tables.latency_text(r["p99_ms"]))}</td></tr>')
    lines = tables.fault_lines(rel)
    notes = ('<ul id="first-faults">' + "".join(f"<li>{_e(x)}</li>" for x in lines) + "</ul>") if lines else ""
    return f'<table id="reliability"><thead>{_head(cols)}</thead><tbody>{"".join(body)}</tbody></table>{notes}'


def team_stats(records: Sequence[MatchRecord], ratings: RatingResult) -> list[dict[str, Any]]:
    """Per team of two distinct bots (``partners: mixed``): matches, wins, mean score, team rating.

    The team rating is TrueSkill's team performance: ``μ = μa + μb``, ``σ = sqrt(σa² + σb²)``.
    Rows are sorted by mean score (best first), then name. Empty for other tournaments.
    """
    acc: dict[str, dict[str, Any]] = defaultdict(lambda: {"matches": 0, "wins": 0, "score_sum": 0.0})
    members: dict[str, tuple[str, ...]] = {}
    for rec in records:
        if not rec.played or not any(len(s) > 1 for s in rec.sides):
            continue
        rewards = rec.rewards
        for side, rank in zip(rec.sides, rec.side_ranks):
            if len(side) < 2:
                continue
            key = "+".join(sorted(side))
            members[key] = tuple(sorted(side))
            t = acc[key]
            t["matches"] += 1
            t["wins"] += rank == 0
            t["score_sum"] += rewards[rec.seats.index(side[0])]
    rows = []
    for key, t in acc.items():
        mus = [ratings.ratings.get(b, (25.0, 25.0 / 3)) for b in members[key]]
        rows.append({"team": key, "bots": list(members[key]), "matches": t["matches"], "wins": t["wins"],
                     "score": t["score_sum"] / t["matches"], "mu": sum(m for m, _ in mus),
                     "sigma": math.sqrt(sum(s * s for _, s in mus))})
    rows.sort(key=lambda r: (-r["score"], r["team"]))
    return rows


def teams_html(teams: Sequence[dict[str, Any]]) -> str:
    """The ``partners: mixed`` team table as HTML."""
    head = ("<tr><th class=l>team</th><th>matches</th><th>wins</th><th>win rate</th><th>score</th>"
            "<th>team μ</th><th>team σ</th></tr>")
    body = "".join(
        f'<tr data-team="{_e(t["team"])}"><td class="l bot">{_e(t["team"])}</td><td>{t["matches"]}</td>'
        f'<td>{t["wins"]}</td><td>{num(t["wins"] / t["matches"], ".1%")}</td><td>{num(t["score"], ".3f")}</td>'
        f'<td>{num(t["mu"])}</td><td>{num(t["sigma"])}</td></tr>' for t in teams)
    return f'<table id="teams"><thead>{head}</thead><tbody>{body}</tbody></table>'


__all__ = ["LEADERBOARD_COLUMNS", "bot_href", "how_to_read_html", "leaderboard_html", "num", "reliability_html", "team_stats",
           "teams_html"]
