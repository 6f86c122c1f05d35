"""``report.html``'s layout: one self-contained page per tournament, readable at 3, 60 and 1,000 bots.

Sections: summary cards, a search box (finds a bot: its table rows, its rating line, its
crosstable row), the leaderboard (sortable; a field shows its top rows and the ones searched
or picked), the TrueSkill rating over the matches (the top five and the picked bots, drawn as
SVG by the page's script), the crosstable (every cell with its score up to 30 bots; beyond,
the top 12 labelled, a heatmap of the field without cell labels and the picked bot's row),
the teams of ``partners: mixed``, reliability, and links to the per-bot pages and replays.

Everything is inline — the stylesheet, the script (:file:`script.js`), the data
(:mod:`arena.report_html.data`, bounded by the number of bots, not of matches) — so the page
loads nothing from anywhere else and works opened from disk.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from arena import tables
from arena.adaptive import design_line
from arena.report_html import data
from arena.report_html.tables_html import (
    bot_href,
    how_to_read_html,
    leaderboard_html,
    reliability_html,
    team_stats,
    teams_html,
)
from arena.results_folder import write_file
from arena.tables import Standings

#: Background of table headers (the screenshot test looks for it).
HEADER_BG = "#243b53"


def _asset(name: str) -> str:
    return resources.files("arena.report_html").joinpath(name).read_text(encoding="utf-8")


def _e(x: Any) -> str:
    return html.escape(str(x))


def _card(k: str, v: str, s: str = "") -> str:
    return f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{v}</div><div class="s">{s}</div></div>'


def _cards(st: Standings) -> str:
    meta = st.meta
    eff = st.efficiency or tables.duplicate_efficiency(st.records)
    counts = {s: sum(1 for r in st.records if r.status == s) for s in ("ok", "forfeit", "aborted")}
    f = eff.get("factor")
    if f is None or f != f:
        eff_v, eff_s = '<span class="muted">–</span>', f"{eff.get('blocks', 0)} complete blocks"
    else:
        eff_v = "∞" if math.isinf(f) else f"{f:.2f}×"
        eff_s = f"{eff['blocks']} blocks of {eff['block_size']}"
    partners = meta.get("partners", "self")
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
        _card("sandbox", _e(str(meta.get("sandbox") or "unknown")),
              "bots were NOT sandboxed" if meta.get("sandbox") == "none" else "what the bots ran in"),
    ])


def _unsandboxed(meta: dict[str, Any]) -> str:
    """The alert of a tournament whose bots ran without a sandbox ("" otherwise)."""
    if meta.get("sandbox") != "none":
        return ""
    return ('<p class="alert" id="sandbox-none"><b>sandbox: none</b> — the bots of this tournament ran without a '
            "sandbox: each could read the results folder (the deal secret), other processes and the network, so "
            "its results cannot be trusted as a competition's (docs/security.md).</p>")


def _json_script(obj: Any) -> str:
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return '<script type="application/json" id="report-data">' + text.replace("<", "\\u003c") + "</script>"


def _rating_section(n: int) -> str:
    top = min(5, n)
    return ('<section id="rating-section"><h2>TrueSkill rating over the matches '
            f'<small>μ with a ±σ band · the top {top} and the bots you pick</small></h2>'
            '<div id="rating-plot"></div><ul id="rating-legend"></ul>'
            '<p class="note">Pick a bot by searching for it or clicking its row in a table; click × to drop it. '
            f'The history is sampled at up to {data.HISTORY_POINTS} points.</p></section>')


def _cross_section(n: int) -> str:
    if n <= 30:
        inner = '<div class="scroll" id="cross-grid-box"></div>'
        sub = "score of row vs column; columns by table rank"
    else:
        inner = ('<h3>The top 12 (and the picked bot)</h3><div class="scroll" id="cross-grid-box"></div>'
                 '<div class="heat-wrap"><div id="cross-heat"></div><div id="cross-row"></div></div>'
                 '<p class="note" id="heat-caption">Every pair, rows and columns in table order '
                 f'(the first {min(n, data.MATRIX_BOTS)}); grey: never met. Point at a cell to read it, '
                 'click to pick its row.</p>')
        sub = "score of row vs column"
    return f'<section id="crosstable-section"><h2>Crosstable <small>{sub}</small></h2>{inner}</section>'


def _links_section(st: Standings, links: dict[str, str]) -> str:
    if not links:
        return ""
    parts = []
    if links.get("bot"):
        first = st.rows[0]["bot"] if st.rows else None
        ex = f' (e.g. <a href="{_e(bot_href(links, first))}">{_e(first)}</a>)' if first else ""
        parts.append(f"<p>Each bot's name in the leaderboard links to its page{ex}: its matches, faults with "
                     "the stderr excerpt, its crosstable row, replays of its losses.</p>")
    if links.get("replays"):
        parts.append(f'<p><a href="{_e(links["replays"])}">Replays</a> of recorded matches, move by move, from any '
                     "seat's point of view.</p>")
    return '<section id="links-section"><h2>Bots and replays</h2>' + "".join(parts) + "</section>"


def render(st: Standings, generated: str | None = None, links: dict[str, str] | None = None) -> str:
    """The whole page for the standings ``st`` of one tournament folder.

    :param links: ``{"bot": "bots/{bot}.html", "replays": "replays/index.html"}`` — relative
        addresses of the per-bot pages and the replay index (either may be absent: not linked).
    """
    links = links or {}
    rows = st.rows
    order = [r["bot"] for r in rows]
    meta = st.meta
    r_cfg = meta.get("ratings") or {}
    prior = (float(r_cfg.get("mu", 25.0)), float(r_cfg.get("sigma", 25.0 / 3)))
    generated = generated or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    partners = meta.get("partners", "self")
    teams = team_stats(st.records, st.ratings) if partners == "mixed" else []
    fixed = r_cfg.get("fixed") or []
    eff = st.efficiency or tables.duplicate_efficiency(st.records)
    n = len(order)
    names = "".join(f'<option value="{_e(b)}">' for b in order)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(st.name)} — cardarena report</title>",
        f"<style>{_asset('report.css').replace('HEADER_BG', HEADER_BG)}</style></head><body><main>",
        f"<header><h1>{_e(st.name)}</h1><p>cardarena tournament report · "
        f"generated {_e(generated)}</p></header>",
        _unsandboxed(meta),
        f'<div class="cards">{_cards(st)}</div>',
        '<div class="finder"><input id="search" type="search" list="bot-names" autocomplete="off" '
        f'placeholder="find a bot by name" aria-label="find a bot">'
        f'<datalist id="bot-names">{names}</datalist>'
        + ('<button type="button" id="show-all">show all</button>' if n > 40 else "")
        + '<span id="search-count"></span></div>',
        '<section id="leaderboard-section"><h2>Leaderboard <small>click a header to sort, a row to pick '
        "the bot</small></h2>",
        f'<div class="scroll">{leaderboard_html(rows, links)}</div>',
        f'<p class="note" id="efficiency">{_e(tables.efficiency_line(eff))}</p>',
        (f'<p class="note" id="mixing">{_e(tables.mixing_line(st.mixing))}</p>' if st.mixing else ""),
        (f'<p class="note" id="design">{_e(design_line(meta.get("design"), rows))}</p>'
         if design_line(meta.get("design")) else ""),
        "".join(f'<p class="note order-note">{_e(x)}</p>' for x in tables.order_notes(rows)),
        '<p class="note">Sorted by strength (a Plackett–Luce fit of all results; the ranges come from a '
        'bootstrap over duplicate deals). Score: the seat reward in [0, 1] (beating every other side = 1, ties '
        'half), with a bootstrap 95% interval over duplicate blocks.'
        + (f" Anchors held at the prior: {_e(', '.join(fixed))}." if fixed else "") + "</p>",
        how_to_read_html(rows, meta.get("players", "?")) + "</section>",
        _rating_section(n),
        _cross_section(n),
    ]
    if teams:
        parts += ['<section id="teams-section"><h2>Teams (partners: mixed)</h2>',
                  f'<div class="scroll">{teams_html(teams)}</div>',
                  '<p class="note">Team μ/σ: TrueSkill team performance of the two members (μa+μb, '
                  '√(σa²+σb²)).</p></section>']
    parts += [
        f'<section id="reliability-section"><h2>Reliability</h2><div class="scroll">{reliability_html(st.rel, order)}'
        '</div><p class="note">Faults by class; move latency over every decision the bot made (forced moves '
        "excluded, as `arena doctor` measures; a warm bot often answers in microseconds). p50: the median "
        "decision, p99: the slowest 1%.</p></section>",
        _links_section(st, links),
        "<footer>cardarena · self-contained report: nothing is loaded from elsewhere</footer>",
        "</main>",
        _json_script(data.payload(rows, st.rel, st.ratings.history, st.cross, prior, links)),
        f"<script>{_asset('script.js')}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def default_links(folder: str | Path) -> dict[str, str]:
    """The links of ``folder``'s report: per-bot pages if ``bots/`` exists, replays if
    ``replays/index.html`` does."""
    folder = Path(folder)
    out = {}
    if (folder / "bots").is_dir():
        out["bot"] = "bots/{bot}.html"
    if (folder / "replays" / "index.html").exists():
        out["replays"] = "replays/index.html"
    return out


def write_report(folder: str | Path, st: Standings, links: dict[str, str] | None = None) -> Path:
    """Write ``report.html`` for ``st`` into ``folder`` (atomically) and return its path.

    :param links: as in :func:`render`; default :func:`default_links` of ``folder``.
    """
    path = Path(folder) / "report.html"
    tmp = path.with_suffix(".html.tmp")
    write_file(tmp, render(st, links=default_links(folder) if links is None else links))  # never through a link
    tmp.replace(path)
    return path


__all__ = ["HEADER_BG", "default_links", "render", "write_report"]
