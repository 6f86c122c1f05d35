"""The replay viewer: one self-contained HTML page per recorded match.

The page steps through the match move by move (buttons |◀ ◀ ▶ ▶| and the ←/→/Home/End
keys) from the point of view it embeds: each seat's observations after every step
(:func:`arena.replay.frames`) and, when the match's deal is complete, "everyone" (every
seat side by side). Only the views passed to :func:`page` are in the file, so a page made
for one seat holds nothing that seat did not see. ``#view=S&step=K`` in the address opens
a view at a step.

Observations are stored as differences from the previous step of the same view (changed
keys; the public history as "keep the first k entries, append these"), which keeps a
match of a few hundred moves in a few hundred kilobytes.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.replay import Frame

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f1f5f9;color:#0f172a}
header{background:#243b53;color:#fff;padding:10px 18px}header h1{font-size:18px;margin:0}
header p{margin:2px 0 0;color:#cbd5e1;font-size:12px}
#bar{display:flex;gap:8px;align-items:center;padding:10px 18px;background:#e2e8f0;flex-wrap:wrap}
button{font-size:15px;padding:3px 12px;border:1px solid #94a3b8;border-radius:4px;background:#fff;cursor:pointer}
#stepinfo{font-weight:600;min-width:24em}#views{display:flex;gap:14px;padding:14px 18px;flex-wrap:wrap}
.seat{background:#fff;border:1px solid #cbd5e1;border-radius:6px;padding:10px 14px;min-width:320px;flex:1}
.seat h2{font-size:15px;margin:0 0 6px}.hand{font:600 18px ui-monospace,monospace;color:#1d4ed8}
.table td{padding:0 8px 0 0;vertical-align:top;font:12px ui-monospace,monospace}.table td:first-child{color:#64748b}
ol{margin:4px 0;padding-left:2.6em;font:12px ui-monospace,monospace}li.last{background:#fef08a}
.k{color:#64748b;font-size:12px}
"""

_JS = """
const D = JSON.parse(document.getElementById('data').textContent);
function build(diffs){ const out=[]; let cur={}; let acts=[];
  for (const d of diffs){ cur=Object.assign({},cur);
    for (const [k,v] of Object.entries(d.set||{})) cur[k]=v;
    for (const k of (d.del||[])) delete cur[k];
    if (d.keep!==undefined){ acts=acts.slice(0,d.keep).concat(d.add||[]); }
    const o=Object.assign({},cur); o.actions=acts; out.push(o);} return out; }
const V = {}; for (const [s,diffs] of Object.entries(D.views)) V[s]=build(diffs);
const seatsOf = v => v==='all' ? Object.keys(V) : [v];
let view = D.default_view, step = 0;
const esc = t => String(t).replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
const fmt = v => Array.isArray(v)&&v.every(x=>typeof x==='string') ? (v.length? v.join(' ') : '–') : JSON.stringify(v);
const name = s => 'seat '+s+' ('+D.seats[s]+')';
function seatHtml(s){ const o=V[s][step]; let h='<div class="seat" data-seat="'+s+'"><h2>'+esc(name(s))+'</h2>';
  if ('hand' in o) h+='<div class="k">hand</div><div class="hand">'+esc(fmt(o.hand))+'</div>';
  if ('trick' in o) h+='<div class="k">on the table</div><div class="trick">'+esc(fmt(o.trick))+'</div>';
  h+='<table class="table">'; for (const [k,v] of Object.entries(o)) if (!D.skip.includes(k))
    h+='<tr><td>'+esc(k)+'</td><td>'+esc(fmt(v))+'</td></tr>'; h+='</table>';
  h+='<div class="k">public history of this hand</div><ol>';
  o.actions.forEach((a,i)=>{ h+='<li'+(i===o.actions.length-1&&step>0?' class="last"':'')+'>'+esc(name(a[0])+': '+a[1])+'</li>'; });
  return h+'</ol></div>'; }
function show(){ step=Math.max(0,Math.min(step,D.steps.length-1)); const st=D.steps[step];
  document.getElementById('stepinfo').textContent = 'step '+step+' / '+(D.steps.length-1)+
    (st.actor===null ? ' — the deal' : ' — '+name(st.actor)+' played '+st.action);
  document.getElementById('views').innerHTML = seatsOf(view).map(seatHtml).join('');
  document.getElementById('view').value = view; location.replace('#view='+view+'&step='+step); }
function go(k){ step=k; show(); }
document.getElementById('first').onclick=()=>go(0);
document.getElementById('prev').onclick=()=>go(step-1);
document.getElementById('next').onclick=()=>go(step+1);
document.getElementById('last').onclick=()=>go(D.steps.length-1);
document.getElementById('view').onchange=e=>{view=e.target.value; show();};
document.addEventListener('keydown', e=>{ if (e.key==='ArrowRight') go(step+1); else if (e.key==='ArrowLeft') go(step-1);
  else if (e.key==='Home') go(0); else if (e.key==='End') go(D.steps.length-1); });
const h = new URLSearchParams(location.hash.slice(1));
if (h.get('view') && (h.get('view') in V || (h.get('view')==='all' && D.everyone))) view=h.get('view');
if (h.get('step')) step=parseInt(h.get('step'))||0;
show();
"""

#: observation keys the page shows in their own places (not in the table of fields)
SKIP = ["game", "players", "seat", "options", "hand_index", "actions", "hand", "trick"]


def _diffs(observations: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One view's observations as differences from the previous step (see the module doc)."""
    out: list[dict[str, Any]] = []
    prev: dict[str, Any] = {}
    prev_acts: list = []
    for obs in observations:
        body = {k: v for k, v in obs.items() if k != "actions"}
        acts = list(obs.get("actions") or [])
        d: dict[str, Any] = {}
        changed = {k: v for k, v in body.items() if k not in prev or prev[k] != v}
        if changed:
            d["set"] = changed
        gone = [k for k in prev if k not in body]
        if gone:
            d["del"] = gone
        keep = 0
        while keep < min(len(acts), len(prev_acts)) and acts[keep] == prev_acts[keep]:
            keep += 1
        if keep != len(prev_acts) or len(acts) != keep or not out:
            d["keep"], d["add"] = keep, acts[keep:]
        out.append(d)
        prev, prev_acts = body, acts
    return out


def page(record: dict[str, Any], steps: Sequence[Frame], seats: Sequence[int], everyone: bool,
         title: str | None = None) -> str:
    """The viewer page of one match.

    :param steps: the match's frames (:func:`arena.replay.frames`) holding at least ``seats``.
    :param seats: the seats whose views the page holds (nothing of the others is written).
    :param everyone: offer the "everyone" view (all of ``seats`` side by side); pass True
        only for a match whose deal is complete (``docs/security.md``).
    """
    views = {str(s): _diffs([f.views[s] for f in steps]) for s in seats}
    names = list(record["seats"])
    data = {"seats": names, "views": views, "everyone": everyone, "skip": SKIP,
            "default_view": "all" if everyone else str(seats[0]),
            "steps": [{"actor": f.actor, "action": f.action} for f in steps]}
    options = [f'<option value="{s}">seat {s} ({html.escape(names[s])})</option>' for s in seats]
    if everyone:
        options.append('<option value="all">everyone</option>')
    outcome = record.get("outcome") or {}
    ranks = outcome.get("ranks")
    result = ", ".join(f"{names[s]} rank {r + 1}" for s, r in enumerate(ranks)) if ranks else record.get("status", "")
    head = title or record["match_id"]
    blob = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(head)} — replay</title>"
            f"<style>{_CSS}</style></head><body><header><h1>{html.escape(head)}</h1>"
            f"<p>{html.escape(record['game'])} · deal {record.get('deal_index', '?')} · rotation "
            f"{record.get('rotation', '?')} · {html.escape(str(result))} · ←/→ step, Home/End</p></header>"
            '<div id="bar"><button id="first" title="first (Home)">&#124;◀</button>'
            '<button id="prev" title="previous (←)">◀</button><button id="next" title="next (→)">▶</button>'
            '<button id="last" title="last (End)">▶&#124;</button><label>view <select id="view">'
            + "".join(options) + '</select></label><span id="stepinfo"></span></div><div id="views"></div>'
            f'<script id="data" type="application/json">{blob}</script><script>{_JS}</script></body></html>')


def write_page(path: str | Path, record: dict[str, Any], seats: Sequence[int] | None = None,
               everyone: bool = False, in_results: bool = False) -> Path:
    """Rebuild ``record``'s match and write its viewer to ``path`` (seats default: all).

    :param in_results: ``path`` is inside a results folder: written without following a link
        (:func:`arena.results_folder.write_file`); otherwise (a file the user named) as asked.

    :raises ArenaError: when the record does not replay (:func:`arena.replay.frames`).
    """
    from arena.replay import frames

    seats = list(range(len(record["seats"]))) if seats is None else list(seats)
    steps = frames(record, seats)
    path = Path(path)
    if in_results:
        from arena.results_folder import make_dir, write_file

        make_dir(path.parent)
        write_file(path, page(record, steps, seats, everyone))
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(record, steps, seats, everyone), encoding="utf-8")
    return path
