"""The class pages next to ``report.html``: a page per bot and the replay viewers.

:func:`write_class_pages` writes, into a results folder,

* ``replays/<match file>.html`` — the viewer (:mod:`arena.replay_html`) of matches whose deal
  is complete (every lineup and rotation of the deal recorded, so showing it reveals nothing
  still to be played; ``docs/security.md``), every seat and "everyone": the first ones and
  each bot's first losses (:func:`chosen`); pages already written are kept (a record never
  changes);
* ``replays/index.html`` — the list of replays;
* ``bots/<bot>.html`` — a page a teacher can hand a student: the bot's leaderboard row, its
  crosstable row, its faults with the stderr excerpt, every match (seat, rank, status) and
  links to the replays of its losses, opened at its seat.

:func:`arena.links.report_links` is the section of ``report.html`` that links them.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from arena.links import replay_name
from arena.replay import complete_deals, journal_lines
from arena.replay_html import write_page
from arena.results_folder import make_dir, write_file
from arena.tables import elo_text, rank_text

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 18px 40px;color:#0f172a}
header{background:#243b53;color:#fff;padding:12px 18px;margin:0 -18px 14px}h1{font-size:20px;margin:0}
header p{margin:2px 0 0;color:#cbd5e1;font-size:12px}table{border-collapse:collapse;margin:6px 0 14px}
th{background:#243b53;color:#fff;font-weight:600}th,td{padding:3px 10px;border-bottom:1px solid #e2e8f0;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f8fafc;border:1px solid #e2e8f0;
padding:6px 10px;white-space:pre-wrap;font-size:12px;margin:2px 0 10px}.loss{color:#b91c1c}.muted{color:#64748b}"""

#: faults quoted on a bot page (the first ones), and characters of stderr per fault
MAX_FAULTS = 20
#: matches without a replay page listed by name on a bot's page (the rest are in its matches table)
UNPAGED_SHOWN = 10
#: replay pages the report writes: the first matches, each bot's first losses, none longer than this
FIRST_REPLAYS = 30
LOSSES_PER_BOT = 10
MAX_REPLAY_MOVES = 600
STDERR_CHARS = 1200


def _e(x: Any) -> str:
    return html.escape(str(x))


def _page(title: str, sub: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
            f"<style>{_CSS}</style></head><body><header><h1>{_e(title)}</h1><p>{sub}</p></header>{body}</body></html>\n")


def chosen(records: list[dict[str, Any]], done: set[int]) -> list[dict[str, Any]]:
    """The records whose replay the report publishes: of the complete deals ``done``, the first
    :data:`FIRST_REPLAYS` and up to :data:`LOSSES_PER_BOT` losses of every bot, each at most
    :data:`MAX_REPLAY_MOVES` moves long (a page costs the engine's observation of every seat
    after every move; the rest stay one ``arena replay DIR MATCH --html FILE`` away)."""
    ok = [r for r in records if r.get("deal_index") in done and r.get("actions")
          and len(r["actions"]) <= MAX_REPLAY_MOVES]
    pick = {r["match_id"] for r in ok[:FIRST_REPLAYS]}
    losses: dict[str, int] = {}
    for r in ok:
        for bot in _losers(r):
            if losses.get(bot, 0) < LOSSES_PER_BOT:
                losses[bot] = losses.get(bot, 0) + 1
                pick.add(r["match_id"])
    return [r for r in ok if r["match_id"] in pick]


def _losers(rec: dict[str, Any]) -> list[str]:
    """The bots of ``rec`` not ranked first (a loss, for their page)."""
    ranks = (rec.get("outcome") or {}).get("ranks") or []
    if not ranks:
        return []
    return sorted({b for b, r in zip(rec["seats"], ranks, strict=False) if r > min(ranks)})


def write_replays(folder: Path, records: list[dict[str, Any]]) -> dict[str, str]:
    """Write the viewers of the :func:`chosen` records (missing pages only).

    :returns: ``match id -> file name`` of every replay page present; a record that does not
        replay (changed game version) gets none.
    """
    done = complete_deals(folder, records)
    out: dict[str, str] = {}
    make_dir(folder / "replays")
    for rec in chosen(records, done):
        name = replay_name(rec["match_id"])
        if not _file_name_ok(name):
            continue  # a NUL, a name too long for the file system: the page stays one command away
        path = folder / "replays" / name
        if not os.path.lexists(path):
            try:
                write_page(path, rec, everyone=True, in_results=True)
            except ArenaError:
                continue
        out[rec["match_id"]] = name
    return out


def _file_name_ok(name: str) -> bool:
    """Whether ``name`` can be a file name of ``replays/`` (no NUL, at most 255 bytes, not hidden)."""
    return "\0" not in name and not name.startswith(".") and len(name.encode("utf-8", "surrogatepass")) <= 255


def _move_text(move: Any) -> str:
    """A fault's move as shown (1-based), or "–" when the record's ``move`` is no whole number."""
    return str(move + 1) if type(move) is int else "–"


def _index(name: str, records: list[dict[str, Any]], pages: dict[str, str], folder: str) -> str:
    rows = []
    for rec in records:
        mid = rec["match_id"]
        link = f'<a href="./{_e(pages[mid])}">{_e(mid)}</a>' if mid in pages else \
            f'{_e(mid)} <span class="muted">(no page in the report, which holds the first matches and the first losses of each bot: <code>arena replay {_e(folder)} {_e(mid)} --html FILE</code>)</span>'
        ranks = (rec.get("outcome") or {}).get("ranks") or []
        who = ", ".join(f"{_e(b)} {r + 1}" for b, r in zip(rec["seats"], ranks, strict=False))
        rows.append(f"<tr><td>{link}</td><td>{_e(rec.get('status'))}</td><td>{who}</td></tr>")
    body = "<table><tr><th>match</th><th>status</th><th>ranks</th></tr>" + "".join(rows) + "</table>"
    return _page(f"{name} — replays", f'{len(pages)} of {len(records)} matches viewable · '
                 '<a style="color:#fff" href="../report.html">report</a>', body)


def _bot_page(st: Any, records: list[dict[str, Any]], bot: str, pages: dict[str, str], folder: str) -> str:
    row: dict[str, Any] = next((r for r in st.rows if r["bot"] == bot), {})
    if row:  # the columns that order the main table (new-user finding: the page had only μ, σ)
        row = {**row, "rank range": rank_text(row),
               "strength": "–" if row.get("strength") is None else elo_text(row["strength"])}
    keys = [("rank", "#"), ("rank range", "rank"), ("strength", "strength"), ("mu", "μ"), ("sigma", "σ"),
            ("matches", "matches"), ("wins", "wins"), ("score", "score"), ("faults", "faults")]
    cells = "".join(f'<td class="n">{row[k]:.3f}</td>' if isinstance(row.get(k), float) else
                    f'<td class="n">{_e(row.get(k, "–"))}</td>' for k, _ in keys)
    parts = ["<h2>Leaderboard row</h2><table><tr>" + "".join(f"<th>{h}</th>" for _, h in keys) + f"</tr><tr>{cells}</tr></table>"]
    cross = st.cross.get(bot) or {}
    parts.append("<h2>Crosstable row <small class=muted>score against each opponent</small></h2><table><tr>"
                 "<th>opponent</th><th>score</th><th>matches</th></tr>"
                 + "".join(f'<tr><td>{_e(o)}</td><td class="n">{c.get("score", float("nan")):.3f}</td>'
                           f'<td class="n">{_e(c.get("matches", 0))}</td></tr>' for o, c in sorted(cross.items()))
                 + "</table>")
    faults, matches, losses, unpaged = [], [], [], []
    for rec in records:
        seats = [s for s, b in enumerate(rec["seats"]) if b == bot]
        if not seats:
            continue
        ranks = (rec.get("outcome") or {}).get("ranks") or []
        mine = [ranks[s] for s in seats] if ranks else []
        lost = bool(mine) and min(mine) > min(ranks)
        link = pages.get(rec["match_id"])
        ref = f'<a href="../replays/{_e(link)}#view={seats[0]}">{_e(rec["match_id"])}</a>' if link else _e(rec["match_id"])
        cls = ' class="loss"' if lost else ""
        matches.append(f"<tr{cls}><td>{ref}</td><td>{_e(', '.join(map(str, seats)))}</td>"
                       f"<td>{_e(', '.join(str(r + 1) for r in mine) or '–')}</td><td>{_e(rec.get('status'))}</td></tr>")
        if lost and link:
            losses.append(f"<li>{ref}</li>")
        elif lost:
            unpaged.append(f'<li>{_e(rec["match_id"])} <span class="muted"><code>arena replay {_e(folder)} '
                           f'{_e(rec["match_id"])} --seat {seats[0]} --html FILE</code></span></li>')
        faults += [(rec["match_id"], f) for f in rec.get("faults") or [] if isinstance(f, dict) and f.get("bot") == bot]
    parts.append(f"<h2>Faults <small class=muted>{len(faults)}</small></h2>")
    if not faults:
        parts.append('<p class="muted">none: every reply was legal and on time</p>')
    for mid, f in faults[:MAX_FAULTS]:
        parts.append(f"<p><b>{_e(f.get('class'))}</b> in {_e(mid)} at move {_e(_move_text(f.get('move', 0)))} "
                     f"(seat {_e(f.get('seat'))}): {_e(f.get('detail', ''))}</p>")
        tail = (f.get("stderr_tail") or "")[-STDERR_CHARS:]
        if tail:
            parts.append(f"<pre>{_e(tail)}</pre>")
    parts.append(f"<h2>Replays of matches it did not win <small class=muted>{len(losses) + len(unpaged)}</small></h2>"
                 '<p class="muted">a lower place than the best, a shared second included; the report holds pages '
                 "for the first of them, the others are one command away</p>"
                 f"<ul>{''.join(losses)}{''.join(unpaged[:UNPAGED_SHOWN])}</ul>"
                 + (f'<p class="muted">… and {len(unpaged) - UNPAGED_SHOWN} more in the matches below</p>'
                    if len(unpaged) > UNPAGED_SHOWN else ""))
    parts.append(f"<h2>Matches <small class=muted>{len(matches)}</small></h2><table><tr><th>match</th><th>seat</th>"
                 f"<th>rank</th><th>status</th></tr>{''.join(matches)}</table>")
    sub = (f"{_e(st.name)} · {_e(st.meta.get('game', '?'))}, {_e(st.meta.get('players', '?'))} players · "
           '<a style="color:#fff" href="../report.html">the whole report</a>')
    return _page(f"{bot} — {st.name}", sub, "".join(parts))


def write_class_pages(folder: str | Path, st: Any) -> None:
    """Write ``replays/`` and ``bots/<bot>.html`` into ``folder``.

    :param st: the folder's standings (:class:`arena.results.Standings`: ``name``, ``meta``,
        ``rows``, ``cross`` and the rated ``records``); the pages read the journal's lines
        themselves (they need the actions and the stderr of faults).
    """
    folder = Path(folder)
    rated = {r["match_id"] if isinstance(r, dict) else r.match_id for r in st.records}
    records = [r for r in journal_lines(folder) if r["match_id"] in rated]
    pages = write_replays(folder, records)
    write_file(make_dir(folder / "replays") / "index.html", _index(st.name, records, pages, str(folder)))
    make_dir(folder / "bots")
    for r in st.rows:
        write_file(folder / "bots" / f"{r['bot']}.html", _bot_page(st, records, r["bot"], pages, str(folder)))
