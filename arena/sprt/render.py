"""How an SPRT is shown: the live progress line, the final markdown block, the JSON object."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from arena.sprt.runner import SprtResult, Tracker

VERDICTS = {"H1": "H1 accepted — the candidate is stronger", "H0": "H0 accepted — not stronger",
            "inconclusive": "inconclusive at the cap", "error": "could not run"}


def _num(x: float, fmt: str = ".1f") -> str:
    return format(x, fmt) if isinstance(x, (int, float)) and math.isfinite(x) else "—"


def _bounds_text(kind: str, h0: float, h1: float) -> str:
    return f"nElo [{h0:g}, {h1:g}]" if kind == "nelo" else f"score [{h0:g}, {h1:g}]"


def progress_line(tr: Tracker) -> str:
    """One line: LLR with its bounds, blocks, score and nElo with 95 % intervals, faults."""
    from arena.gsprt import estimate

    book, test = tr.book, tr.book.test
    used = test.stopped_at if test.stopped_at is not None else len(book.scores)
    e = estimate(book.scores[:used])
    llr = test.last_llr if test.n else 0.0
    faults = ", ".join(f"{b} {n}" for b, n in sorted(book.faults.items())) or "none"
    verdict = f" → {test.verdict}" if test.verdict else ""
    return (f"LLR {llr:+.2f} [{test.lower:.2f}, {test.upper:.2f}]{verdict} · blocks {used}/{book.cap} · "
            f"score {_num(e.score, '.3f')} ± {_num((e.score_ci[1] - e.score_ci[0]) / 2, '.3f')} · "
            f"nElo {_num(e.nelo)} ± {_num((e.nelo_ci[1] - e.nelo_ci[0]) / 2)} · "
            f"lost to candidate faults {book.lost} · faults: {faults} · played now {tr.played}")


def markdown(r: SprtResult) -> str:
    """The block to paste into a pull request."""
    s = r.settings
    e = r.est
    opp = ", ".join(s.get("opponents") or []) or f"{s['baseline']} (the baseline)"
    design = ("duplicate replacement" if s["design"] == "replace" else "game pairs (both seatings)")
    opts = ", ".join(f"{k}={v}" for k, v in s["options"].items()) or "defaults"
    lines = [
        f"### SPRT `{s['candidate']}` vs `{s['baseline']}` — {VERDICTS[r.verdict]}",
        "",
        "| | |",
        "|---|---|",
        f"| game | {s['game']}, {s['players']} players, options: {opts} |",
        f"| design | {design}; other seats: {opp} |",
        f"| hypotheses | {_bounds_text(s['kind'], *(_h(s)))}, α = {s['alpha']:g}, β = {s['beta']:g} |",
        f"| LLR | {r.llr:+.2f} (bounds {r.lower:.2f}, {r.upper:.2f}) |",
        f"| blocks | {r.blocks} ({r.matches} matches; cap {s['blocks_cap']} blocks) |",
        f"| score | {_num(e.score, '.4f')} (95 %: {_num(e.score_ci[0], '.4f')} – {_num(e.score_ci[1], '.4f')}) |",
        f"| normalized Elo | {_num(e.nelo)} (95 %: {_num(e.nelo_ci[0])} – {_num(e.nelo_ci[1])}) |",
        f"| faults | blocks lost to candidate faults: {r.lost}; void blocks: {r.void}; "
        f"matches with faults: {', '.join(f'{b} {n}' for b, n in sorted(r.faults.items())) or 'none'} |",
        f"| clock | move {s['clock']['move_ms']} ms, bank {s['clock']['bank_ms']} ms |",
        *(f"| {b['role']} `{b['name']}` | `{_cell(b['cmd'])}` · files {b['files']}"
          + (f" · announced `{_cell(b['announced'])}`" if b["announced"] else "") + " |" for b in s.get("bots", [])),
    ]
    if sw := s.get("software"):
        lines.append(f"| software | cardarena {sw['cardarena']}, engine {sw['engine']}, sandbox {sw['sandbox']} |")
    if r.reason:
        lines.append(f"| note | {r.reason} |")
    if r.blocks and e.score_ci[0] == e.score_ci[1]:
        lines.append(f"| note | {_same_blocks_note(r.lost, r.blocks, e.score)} |")
    lines += ["", f"`arena sprt` exit code {r.code} ({r.verdict}); results in `{r.folder}/`."]
    if r.verdict == "inconclusive":
        lines.append("To go on, run the same command with a larger `--max-matches`: the recorded blocks count.")
    return "\n".join(lines) + "\n"


def _same_blocks_note(lost: int, blocks: int, score: float) -> str:
    """Why no Elo difference can be estimated when every block scored the same."""
    if lost >= blocks:
        return ("the candidate lost every block to its own faults (crashes, timeouts or illegal moves: the "
                "faults row; `arena doctor` and the bot's page in the results folder show why), so no Elo "
                "difference can be estimated")
    if score == 0.5:
        return "every block scored the same: the two versions played alike, so no Elo difference can be estimated"
    return (f"the candidate {'won' if score > 0.5 else 'lost'} every block, so the Elo difference has no finite "
            "estimate (only its sign)")


def _cell(text: str) -> str:
    """``text`` safe inside a markdown table cell and code span."""
    return text.replace("|", "\\|").replace("`", "'")


def _h(s: dict[str, Any]) -> tuple[float, float]:
    return (s["score0"], s["score1"]) if s["kind"] == "score" else (s["elo0"], s["elo1"])


def as_json(r: SprtResult) -> dict[str, Any]:
    """The result as JSON values (``--format json``); non-finite numbers become null."""
    d = asdict(r)
    d["folder"] = str(r.folder)

    def clean(v):
        """``v`` as plain JSON (NaN and infinities to None, tuples to lists, recursively)."""
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    return clean(d)
