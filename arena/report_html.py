"""``report.html``: one self-contained page per tournament (issue "Ratings people can trust").

The page holds the leaderboard (with each bot's 95% score interval), the duplicate
efficiency, each bot's TrueSkill rating over the matches (μ with a ±σ band, from
:attr:`RatingResult.history` in replay order), the crosstable as a heatmap, the score
intervals, a team table for ``partners: mixed`` and the reliability table.

Everything is inline: CSS in a ``<style>`` element, plots drawn with matplotlib (Agg
canvas, no pyplot state) and embedded as base64 PNG ``data:`` URIs. The page loads no
script, font, stylesheet or image from anywhere else, so it can be mailed or archived.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from arena import tables
from arena.links import report_links
from arena.ratings import RatingResult
from arena.record import MatchRecord
from arena.tables import Standings

#: Colours of the first ten bots (matplotlib's tab10), then tab20's light shades.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94",
           "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5")
#: Colour map of the crosstable heatmap (score 0 red, 0.5 yellow, 1 green).
HEATMAP_CMAP = "RdYlGn"
#: Background of table headers (the screenshot test looks for it).
HEADER_BG = "#243b53"
DPI = 144


def bot_colours(order: Sequence[str]) -> dict[str, str]:
    """A stable colour per bot: the leaderboard order picks from :data:`PALETTE` (cycled)."""
    return {b: PALETTE[i % len(PALETTE)] for i, b in enumerate(order)}


def rating_series(history: Sequence[dict[str, tuple[float, float]]], bots: Sequence[str],
                  prior: tuple[float, float] = (25.0, 25.0 / 3)) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each bot's (μ, σ) after every rated match of the replay, starting at the prior.

    :param history: :attr:`RatingResult.history` — per rated match, the bots it moved.
    :returns: ``bot -> (mu, sigma)`` arrays of length ``len(history) + 1`` (index 0 is the
        prior; a bot that did not move in a match keeps its previous value).
    """
    n = len(history) + 1
    out = {}
    for b in bots:
        mu = np.empty(n)
        sg = np.empty(n)
        cur = prior
        mu[0], sg[0] = cur
        for i, moved in enumerate(history, start=1):
            if b in moved:
                cur = moved[b]
            mu[i], sg[i] = cur
        out[b] = (mu, sg)
    return out


def crosstable_matrix(cross: dict[str, dict[str, dict[str, float]]], order: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The crosstable as arrays in ``order``: scores (``nan`` where no match) and match counts."""
    n = len(order)
    score = np.full((n, n), np.nan)
    matches = np.zeros((n, n), dtype=int)
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            c = cross.get(a, {}).get(b)
            if c is not None and a != b:
                score[i, j] = c["score"]
                matches[i, j] = c["matches"]
    return score, matches


def team_stats(records: Sequence[MatchRecord], ratings: RatingResult) -> list[dict[str, Any]]:
    """Per team of two distinct bots (``partners: mixed``): matches, wins, mean score, team rating.

    The team rating is TrueSkill's team performance: ``μ = μa + μb``, ``σ = sqrt(σa² + σb²)``.
    Rows are sorted by mean score (best first), then name. Empty for other tournaments.
    """
    acc: dict[str, dict[str, Any]] = defaultdict(lambda: {"matches": 0, "wins": 0, "score_sum": 0.0})
    members: dict[str, tuple[str, ...]] = {}
    for rec in records:
        if not rec.played:
            continue
        sides = rec.sides
        if not any(len(s) > 1 for s in sides):
            continue
        ranks = rec.side_ranks
        rewards = rec.rewards
        for side, rank in zip(sides, ranks):
            if len(side) < 2:
                continue
            key = "+".join(sorted(side))
            members[key] = tuple(sorted(side))
            seat = rec.seats.index(side[0])
            t = acc[key]
            t["matches"] += 1
            t["wins"] += rank == 0
            t["score_sum"] += rewards[seat]
    rows = []
    for key, t in acc.items():
        mus = [ratings.ratings.get(b, (25.0, 25.0 / 3)) for b in members[key]]
        rows.append({"team": key, "bots": list(members[key]), "matches": t["matches"], "wins": t["wins"],
                     "score": t["score_sum"] / t["matches"], "mu": sum(m for m, _ in mus),
                     "sigma": math.sqrt(sum(s * s for _, s in mus))})
    rows.sort(key=lambda r: (-r["score"], r["team"]))
    return rows


# ------------------------------------------------------------------ plots

def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _style(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(True, color="#e5e7eb", linewidth=0.8)
    ax.set_axisbelow(True)
    ax.tick_params(colors="#334155", labelsize=9)


def rating_plot(series: dict[str, tuple[np.ndarray, np.ndarray]], colours: dict[str, str],
                title: str = "") -> bytes:
    """PNG of each bot's μ (line) with a ±σ band against the rated match number."""
    fig = Figure(figsize=(10.6, 4.2), layout="constrained")
    ax = fig.add_subplot()
    for b, (mu, sg) in series.items():
        x = np.arange(len(mu))
        ax.fill_between(x, mu - sg, mu + sg, color=colours[b], alpha=0.16, linewidth=0, step="post")
        ax.step(x, mu, where="post", color=colours[b], linewidth=2.0, label=b)
    ax.set_xlabel("rated matches (replay order: deal, rotation, lineup)", color="#334155")
    ax.set_ylabel("μ  (band: μ ± σ)", color="#334155")
    if title:
        ax.set_title(title, loc="left", fontsize=11, color="#0f172a")
    n = max((len(m) for m, _ in series.values()), default=1)
    ax.set_xlim(0, max(1, n - 1))
    _style(ax)
    if series:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    return _png(fig)


def heatmap_plot(score: np.ndarray, matches: np.ndarray, order: Sequence[str]) -> bytes:
    """PNG of the crosstable: row's score against column, coloured by :data:`HEATMAP_CMAP`."""
    n = len(order)
    size = min(7.0, 2.0 + 0.55 * n)
    fig = Figure(figsize=(size + 0.8, size), layout="constrained")
    ax = fig.add_subplot()
    masked = np.ma.masked_invalid(score)
    cmap = colormaps[HEATMAP_CMAP].with_extremes(bad="#f1f5f9")
    im = ax.imshow(masked, cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), labels=list(order), rotation=40, ha="right", fontsize=9)
    ax.set_yticks(range(n), labels=list(order), fontsize=9)
    ax.set_xlabel("opponent (column)", color="#334155")
    ax.set_ylabel("bot (row)", color="#334155")
    if n <= 14:
        for i in range(n):
            for j in range(n):
                if i == j or np.isnan(score[i, j]):
                    continue
                s = score[i, j]
                colour = "white" if s < 0.18 or s > 0.82 else "#0f172a"
                ax.text(j, i, f"{s:.2f}\nn={matches[i, j]}", ha="center", va="center", fontsize=9 if n <= 6 else 7,
                        color=colour)
    cb = fig.colorbar(im, ax=ax, shrink=0.8)
    cb.ax.tick_params(labelsize=8)
    return _png(fig)


def score_plot(rows: Sequence[dict[str, Any]], colours: dict[str, str]) -> bytes:
    """PNG of each bot's mean score with its bootstrap 95% interval, in leaderboard order."""
    n = len(rows)
    fig = Figure(figsize=(4.8, max(2.4, 1.0 + 0.36 * n)), layout="constrained")
    ax = fig.add_subplot()
    for i, r in enumerate(rows):
        s, lo, hi = r.get("score"), r.get("score_low"), r.get("score_high")
        if s is None or s != s or lo is None or hi is None:
            continue
        ax.plot([lo, hi], [i, i], color=colours[r["bot"]], linewidth=4, solid_capstyle="round", alpha=0.55)
        ax.plot([s], [i], "o", color=colours[r["bot"]], markersize=8)
    ax.axvline(0.5, color="#94a3b8", linewidth=1, linestyle="--")
    ax.set_yticks(range(n), labels=[r["bot"] for r in rows], fontsize=9)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel("mean score (1 = beat every other side), 95% interval", color="#334155")
    _style(ax)
    return _png(fig)


def _img(png: bytes, alt: str, cls: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img class="{cls}" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


# ------------------------------------------------------------------ page

CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f4f6f9;color:#0f172a;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,
"DejaVu Sans",Helvetica,Arial,sans-serif}
main{max-width:1160px;margin:0 auto;padding:22px 20px 40px}
header h1{margin:0;font-size:26px;letter-spacing:-.01em}
header p{margin:4px 0 0;color:#475569}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0 18px}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:10px 14px;min-width:150px;flex:1}
.card .k{font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:#64748b}
.card .v{font-size:20px;font-weight:650;margin-top:2px}
.card .s{font-size:12px;color:#64748b}
section{background:#fff;border:1px solid #e2e8f0;border-radius:12px;padding:16px 18px;margin:0 0 16px}
section h2{margin:0 0 10px;font-size:17px}
section h2 small{font-weight:400;color:#64748b;font-size:13px;margin-left:6px}
.note{color:#475569;font-size:13px;margin:10px 2px 0}
.alert{background:#fee2e2;border:2px solid #b91c1c;color:#7f1d1d;border-radius:10px;padding:10px 14px;font-size:15px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th{background:HEADER_BG;color:#fff;font-weight:600;font-size:12.5px;padding:8px 9px;text-align:right;
white-space:nowrap}
th:first-child{border-top-left-radius:8px}th:last-child{border-top-right-radius:8px}
td{padding:7px 9px;border-bottom:1px solid #e9eef4;text-align:right;white-space:nowrap}
tbody tr:nth-child(even) td{background:#f8fafc}
th.l,td.l{text-align:left}
td.bot{font-weight:600}
.sw{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:7px;vertical-align:-1px}
.ci{display:inline-block;position:relative;width:110px;height:10px;background:#eef2f7;border-radius:5px;
margin-left:8px;vertical-align:0}
.ci i{position:absolute;top:0;bottom:0;border-radius:5px;opacity:.55}
.ci b{position:absolute;top:-2px;width:3px;height:14px;border-radius:1px;margin-left:-1px}
.muted{color:#94a3b8}
.plot{width:100%;height:auto;display:block}
.grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}
.grid section{margin:0}
.bad{color:#b91c1c;font-weight:600}
footer{color:#94a3b8;font-size:12px;text-align:center;margin-top:10px}
""".replace("HEADER_BG", HEADER_BG)


def _e(x: Any) -> str:
    return html.escape(str(x))


def _num(x: Any, fmt: str = ".2f") -> str:
    if x is None or (isinstance(x, float) and (x != x or math.isinf(x))):
        return '<span class="muted">–</span>'
    return format(x, fmt)


def _ci_bar(r: dict[str, Any], colour: str) -> str:
    s, lo, hi = r.get("score"), r.get("score_low"), r.get("score_high")
    if s is None or s != s or lo is None or hi is None:
        return ""
    return (f'<span class="ci" title="95% interval {lo:.3f}–{hi:.3f}"><i style="left:{lo * 100:.1f}%;'
            f'width:{max(1.0, (hi - lo) * 100):.1f}%;background:{colour}"></i>'
            f'<b style="left:{s * 100:.1f}%;background:{colour}"></b></span>')


def leaderboard_html(rows: Sequence[dict[str, Any]], colours: dict[str, str]) -> str:
    """The leaderboard as an HTML table (one ``<tr data-bot=…>`` per bot)."""
    head = ("<tr><th>#</th><th class=l>bot</th><th>rank</th><th>strength [95%]</th><th>P(&gt;next)</th>"
            "<th>μ</th><th>σ</th><th>matches</th><th>wins</th><th>win rate</th><th>mean rank</th>"
            "<th class=l>score [95% CI]</th><th>faults</th></tr>")
    body = []
    for r in rows:
        c = colours[r["bot"]]
        faults = f'<span class="bad">{r["faults"]}</span>' if r["faults"] else "0"
        strength = ('<span class="muted">–</span>' if r.get("strength") is None else
                    f'{r["strength"]:+.0f} [{r["strength_low"]:+.0f}, {r["strength_high"]:+.0f}]')
        body.append(
            f'<tr data-bot="{_e(r["bot"])}"><td>{r["rank"]}</td>'
            f'<td class="l bot"><span class="sw" style="background:{c}"></span>{_e(r["bot"])}</td>'
            f'<td>{_e(tables.rank_text(r))}</td><td>{strength}</td><td>{_num(r.get("p_above_next"))}</td>'
            f'<td>{_num(r["mu"])}</td><td>{_num(r["sigma"])}</td>'
            f'<td>{r["matches"]}</td><td>{r["wins"]}</td><td>{_num(r["win_rate"], ".1%")}</td>'
            f'<td>{_num(r["mean_rank"])}</td>'
            f'<td class=l>{_num(r["score"], ".3f")} [{_num(r["score_low"], ".3f")}, {_num(r["score_high"], ".3f")}]'
            f'{_ci_bar(r, c)}</td><td>{faults}</td></tr>')
    return f'<table id="leaderboard"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def how_to_read_html(rows: Sequence[dict[str, Any]], players: Any) -> str:
    """The "How to read this table" section: each column in plain words, with one example
    taken from the table itself (the first two rows)."""
    example = ""
    if len(rows) >= 2 and rows[0].get("strength") is not None and rows[1].get("strength") is not None:
        a, b = rows[0], rows[1]
        p = a.get("p_above_next")
        same = tables.rank_text(a) != str(a["rank"])
        example = (f"<p><b>Example.</b> {_e(a['bot'])} is first with strength {a['strength']:+.0f}; "
                   f"{_e(b['bot'])} follows with {b['strength']:+.0f}. P(&gt;next) = {_num(p)}: "
                   + ("the results do not settle which of the two is stronger, so both show the rank range "
                      f"{_e(tables.rank_text(a))}." if same else
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
    head = ("<tr><th class=l>bot</th>" + "".join(f"<th>{c}</th>" for c in tables.FAULT_CLASSES)
            + "<th>moves</th><th>p50</th><th>p99</th></tr>")
    body = []
    for b in [*order, *(x for x in rel if x not in order)]:
        r = rel.get(b)
        if r is None:
            continue
        cells = "".join(f'<td>{f"<span class=bad>{n}</span>" if n else "0"}</td>'
                        for n in (r["faults"].get(c, 0) for c in tables.FAULT_CLASSES))
        body.append(f'<tr data-bot="{_e(b)}"><td class="l bot">{_e(b)}</td>{cells}<td>{r["moves"]}</td>'
                    f'<td>{_e(tables.latency_text(r["p50_ms"]))}</td><td>{_e(tables.latency_text(r["p99_ms"]))}</td>'
                    '</tr>')
    lines = tables.fault_lines(rel)
    notes = ('<ul id="first-faults">' + "".join(f"<li>{_e(x)}</li>" for x in lines) + "</ul>") if lines else ""
    return f'<table id="reliability"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>{notes}'


def teams_html(teams: Sequence[dict[str, Any]]) -> str:
    """The ``partners: mixed`` team table as HTML."""
    head = ("<tr><th class=l>team</th><th>matches</th><th>wins</th><th>win rate</th><th>score</th>"
            "<th>team μ</th><th>team σ</th></tr>")
    body = "".join(
        f'<tr data-team="{_e(t["team"])}"><td class="l bot">{_e(t["team"])}</td><td>{t["matches"]}</td>'
        f'<td>{t["wins"]}</td><td>{_num(t["wins"] / t["matches"], ".1%")}</td><td>{_num(t["score"], ".3f")}</td>'
        f'<td>{_num(t["mu"])}</td><td>{_num(t["sigma"])}</td></tr>' for t in teams)
    return f'<table id="teams"><thead>{head}</thead><tbody>{body}</tbody></table>'


def _card(k: str, v: str, s: str = "") -> str:
    return f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{v}</div><div class="s">{s}</div></div>'


def _cards(st: Standings, eff: dict[str, Any]) -> str:
    """The summary cards at the top of the page (game, matches, bots, efficiency, design mixing, sandbox)."""
    meta = st.meta
    counts = {s: sum(1 for r in st.records if r.status == s) for s in ("ok", "forfeit", "aborted")}
    f = eff.get("factor")
    if f is None or f != f:
        eff_v, eff_s = '<span class="muted">–</span>', f"{eff.get('blocks', 0)} complete blocks"
    else:
        eff_v = "∞" if math.isinf(f) else f"{f:.2f}×"
        eff_s = f"{eff['blocks']} blocks of {eff['block_size']}"
    partners = meta.get("partners", "self")
    sandbox = meta.get("sandbox")
    return "".join([
        _card("game", _e(meta.get("game", "?")), f"{meta.get('players', '?')} players"
              + (f", partners: {_e(partners)}" if partners == "mixed" else "")),
        _card("matches", str(len(st.records)), f"{counts['ok']} ok · {counts['forfeit']} forfeit · "
              f"{counts['aborted']} aborted"),
        _card("bots", str(len(st.rows)), f"{len(st.ratings.history)} rated matches"),
        _card("duplicate efficiency", eff_v, eff_s),
        _card("design mixing", _e(f"{st.mixing['min']}–{st.mixing['max']}") if st.mixing.get("possible") else "–",
              f"distinct opponents per bot (median {st.mixing.get('median', 0):g}) of "
              f"{st.mixing.get('possible', 0)}" if st.mixing.get("possible") else ""),
        _card("sandbox", _e(str(sandbox or "unknown")),
              "bots were NOT sandboxed" if sandbox == "none" else "what the bots ran in"),
    ])


def render(st: Standings, generated: str | None = None) -> str:
    """The whole page for the standings ``st`` of one tournament folder."""
    rows = st.rows
    order = [r["bot"] for r in rows]
    colours = bot_colours(order)
    meta = st.meta
    r_cfg = meta.get("ratings") or {}
    prior = (float(r_cfg.get("mu", 25.0)), float(r_cfg.get("sigma", 25.0 / 3)))
    eff = st.efficiency or tables.duplicate_efficiency(st.records)
    generated = generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    partners = meta.get("partners", "self")
    cards = _cards(st, eff)
    unsandboxed = (
        '<p class="alert" id="sandbox-none"><b>sandbox: none</b> — the bots of this tournament ran without a '
        "sandbox: each could read the results folder (the deal secret), other processes and the network, so "
        "its results cannot be trusted as a competition's (docs/security.md).</p>"
        if meta.get("sandbox") == "none" else "")

    series = rating_series(st.ratings.history, order, prior)
    score, matches = crosstable_matrix(st.cross, order)
    rating_png = rating_plot(series, colours)
    heat_png = heatmap_plot(score, matches, order)
    score_png = score_plot(rows, colours)
    teams = team_stats(st.records, st.ratings) if partners == "mixed" else []
    fixed = r_cfg.get("fixed") or []

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(st.name)} — cardarena report</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<header><h1>{_e(st.name)}</h1><p>cardarena tournament report · "
        f"generated {_e(generated)}</p></header>",
        unsandboxed,
        f'<div class="cards">{cards}</div>',
        '<section id="leaderboard-section"><h2>Leaderboard</h2>',
        leaderboard_html(rows, colours),
        f'<p class="note" id="efficiency">{_e(tables.efficiency_line(eff))}</p>',
        (f'<p class="note" id="mixing">{_e(tables.mixing_line(st.mixing))}</p>' if st.mixing else ""),
        "".join(f'<p class="note order-note">{_e(n)}</p>' for n in tables.order_notes(rows)),
        '<p class="note">Sorted by strength (a Plackett–Luce fit of all results; the ranges come from a '
        'bootstrap over duplicate deals). Score: the seat reward in [0, 1] (beating every other side = 1, ties '
        'half), with a bootstrap 95% interval over duplicate blocks.'
        + (f" Anchors held at the prior: {_e(', '.join(fixed))}." if fixed else "") + "</p>",
        how_to_read_html(rows, meta.get("players", "?")) + "</section>",
        '<section id="rating-section"><h2>TrueSkill rating over the matches <small>μ with a ±σ band, in replay order</small></h2>',
        _img(rating_png, "TrueSkill rating of each bot over the matches, mu with a band of plus or minus sigma",
             "plot rating"),
        "</section>",
        '<div class="grid"><section id="crosstable-section"><h2>Crosstable <small>score of row vs column</small></h2>',
        _img(heat_png, "crosstable heatmap: score of row against column", "plot heatmap"),
        '</section><section id="scores-section"><h2>Scores <small>mean with 95% interval</small></h2>',
        _img(score_png, "mean score of each bot with its 95% interval", "plot scores"),
        "</section></div>",
    ]
    if teams:
        parts += ['<section id="teams-section" style="margin-top:16px"><h2>Teams (partners: mixed)</h2>',
                  teams_html(teams),
                  '<p class="note">Team μ/σ: TrueSkill team performance of the two members (μa+μb, '
                  '√(σa²+σb²)).</p></section>']
    parts += [
        f'<section id="reliability-section" style="margin-top:16px"><h2>Reliability</h2>'
        f"{reliability_html(st.rel, order)}"
        '<p class="note">Faults by class; move latency over every decision the bot made (forced moves '
        "excluded, as `arena doctor` measures; a warm bot often answers in microseconds). p50: the median "
        "decision, p99: the slowest 1%.</p></section>",
        report_links([r["bot"] for r in rows]),
        "<footer>cardarena · self-contained report: no scripts, no external resources</footer>",
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(folder: str | Path, st: Standings) -> Path:
    """Write ``report.html`` for ``st`` into ``folder`` (atomically) and return its path."""
    path = Path(folder) / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render(st), encoding="utf-8")
    tmp.replace(path)
    return path


__all__ = ["bot_colours", "crosstable_matrix", "heatmap_plot", "leaderboard_html", "rating_plot", "rating_series",
           "reliability_html", "render", "score_plot", "team_stats", "teams_html", "write_report"]
