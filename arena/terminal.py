"""Terminal views of one seat's observation, shared by ``arena play`` and ``arena replay``.

Every game's observation is a dict with the common keys (``game``, ``seat``, ``hand_index``,
``actions`` — the hand's public history as ``[seat, action]`` pairs) and its own fields
(``arena rules GAME`` lists them). :func:`observation_view` shows the seat's hand, the
cards on the table, the public history and every other field, in rich renderables; nothing
is shown that the observation does not hold.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

#: observation keys shown by their own lines (not in the table of other fields)
_SHOWN = {"game", "players", "seat", "options", "hand_index", "actions", "hand", "trick"}
#: the most recent public actions shown
HISTORY_LINES = 24
_VALUE_CHARS = 110


def seat_name(seat: int, names: Sequence[str], you: int | None) -> str:
    """``seat 1 (greedy)``, or ``you (seat 0)`` for the person's seat."""
    if you is not None and seat == you:
        return f"you (seat {seat})"
    who = names[seat] if 0 <= seat < len(names) else "?"
    return f"seat {seat} ({who})"


def _compact(value: Any) -> str:
    """A field's value on one line: card lists as space-separated cards, else compact JSON."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = " ".join(value) if value else "–"
    else:
        text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _trick(trick: Any, names: Sequence[str], you: int | None) -> str:
    """The cards on the table: ``[[seat, card], ...]`` or ``{"cards": [...], ...}``."""
    cards = trick.get("cards") if isinstance(trick, dict) else trick
    if isinstance(cards, list) and all(isinstance(c, list) and len(c) == 2 for c in cards):
        return "  ".join(f"{seat_name(s, names, you)}: {c}" for s, c in cards) if cards else "(empty)"
    return _compact(trick)


def history_lines(actions: Sequence[Sequence[Any]], names: Sequence[str], you: int | None,
                  limit: int = HISTORY_LINES) -> list[str]:
    """The last ``limit`` public actions of the hand, one line each, numbered from 1."""
    start = max(0, len(actions) - limit)
    lines = [f"… {start} earlier actions"] if start else []
    for i, (seat, action) in enumerate(actions[start:], start + 1):
        lines.append(f"{i:3}. {seat_name(seat, names, you)}: {action}")
    return lines


def observation_view(obs: dict[str, Any], names: Sequence[str], you: int | None = None,
                     title: str | None = None) -> RenderableType:
    """What ``obs`` (one seat's observation) shows, as a rich renderable.

    :param names: the bot (or person) of each seat, for the history.
    :param you: the person's seat (named "you"), or None (a replay: the observing seat).
    """
    seat = obs.get("seat", you)
    head = title or (f"{obs.get('game', '?')} — hand {int(obs.get('hand_index', 0)) + 1} — "
                     f"the view of {seat_name(seat, names, you) if seat is not None else '?'}")
    parts: list[RenderableType] = [Text(head, style="bold")]
    if "hand" in obs:
        parts.append(Text.assemble(("hand: ", "bold cyan"), _compact(obs["hand"])))
    if "trick" in obs:
        parts.append(Text.assemble(("on the table: ", "bold cyan"), _trick(obs["trick"], names, you)))
    rest = Table(show_header=False, box=None, pad_edge=False, padding=(0, 1))
    rest.add_column(style="dim")
    rest.add_column(overflow="fold")
    for key, value in obs.items():
        if key not in _SHOWN:
            rest.add_row(key, _compact(value))
    parts.append(rest)
    actions = obs.get("actions") or []
    parts.append(Text("public history of this hand:" if actions else "public history: (no action yet)",
                      style="bold cyan"))
    parts += [Text(line) for line in history_lines(actions, names, you)]
    return Group(*parts)


def legal_view(legal: Sequence[str]) -> RenderableType:
    """The legal moves numbered from 1, several per line."""
    width = max(len(a) for a in legal) + 6
    per_line = max(1, 96 // width)
    lines = []
    for i in range(0, len(legal), per_line):
        lines.append("".join(f"{j + 1:>3}) {legal[j]:<{width - 5}}" for j in range(i, min(i + per_line, len(legal)))))
    return Group(Text("your legal moves:", style="bold green"), *[Text(line) for line in lines])


def outcome_view(outcome: dict[str, list] | None, names: Sequence[str], you: int | None,
                 status: str = "ok") -> RenderableType:
    """The match's result: each seat's place and game points; the person's place first (a
    partnership's seats share their place: "you ranked 2 with seat 3 (…)")."""
    if not outcome:
        return Text(f"the match ended without a result ({status})", style="bold red")
    ranks, scores = outcome["ranks"], outcome.get("scores") or [None] * len(outcome["ranks"])
    lines: list[RenderableType] = []
    if you is not None:
        best = min(ranks)
        mates = [seat_name(s, names, you) for s, r in enumerate(ranks) if r == ranks[you] and s != you]
        verdict = "you won" if ranks[you] == best and ranks.count(best) == 1 else (
            "you shared first place" if ranks[you] == best else  # a partnership's seats share their place
            f"you ranked {ranks[you] + 1} with {', '.join(mates)}" if mates else
            f"you ranked {ranks[you] + 1} of {len(ranks)}")
        lines.append(Text(verdict + (" (a forfeit)" if status == "forfeit" else ""), style="bold magenta"))
    table = Table(title="outcome", show_lines=False)
    for col in ("seat", "place", "points"):  # the game's own points (the tables' score is a reward in [0, 1])
        table.add_column(col)
    for s, (r, sc) in enumerate(zip(ranks, scores, strict=True)):
        table.add_row(seat_name(s, names, you), str(r + 1), "" if sc is None else str(sc))
    lines.append(table)
    return Group(*lines)
