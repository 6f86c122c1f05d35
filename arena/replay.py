"""Replays of recorded matches: rebuilt from the journal through the engine.

A record of ``matches.jsonl`` holds the deal seed, the options, the seats and every action
(the arena's replacement moves included), so the physical deal and each seat's view are
derived, not stored: ``game.new_match(players, deal_seed, **options)`` deals again, and
:func:`frames` applies the actions one by one, taking ``State.observation(seat)`` after each
— exactly what that seat was sent. A record whose actions do not replay (a changed game
version) is refused.

When a replay may be shown (``docs/security.md``): every seat view of a match reveals that
seat's cards, which other seatings of the same deal are dealt too. :func:`deal_complete`
says whether every scheduled match of the record's deal (every lineup and rotation) is
recorded; only then is the "everyone" view (all seats) offered, and only then does the
report publish the match's page.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import schedule_file
from arena.errors import ArenaError
from arena.journal import parse_lines
from engine import registry

_DEAL = re.compile(r"/d(\d+)/r\d+$")


@dataclass
class Frame:
    """One step of a replay.

    :ivar index: 0 before the first action, k after the k-th.
    :ivar actor: the seat that played the k-th action (None at step 0).
    :ivar action: the k-th action as recorded (the protocol string; None at step 0).
    :ivar views: per seat shown, its observation after the step.
    """

    index: int
    actor: int | None
    action: str | None
    views: dict[int, dict[str, Any]]


def journal_lines(folder: str | Path) -> list[dict[str, Any]]:
    """The complete lines of ``folder/matches.jsonl`` as dicts, actions included (a partial last
    line ignored, a repeated match id keeping its first record).

    :raises JournalError: naming the file and line of a corrupt record.
    """
    path = Path(folder) / "matches.jsonl"
    if not path.exists():
        return []
    data = path.read_bytes()
    data = data[: data.rfind(b"\n") + 1]
    out: dict[str, dict[str, Any]] = {}
    for _line, rec in parse_lines(path, data):
        out.setdefault(str(rec.get("match_id")), rec)
    return list(out.values())


def find_record(folder: str | Path, match: str) -> dict[str, Any]:
    """The record of ``match`` in a results folder: its full id, a unique end of it
    (``d00003/r01``), or its line number in ``matches.jsonl`` (from 1).

    :raises ArenaError: naming the folder, for no or several matches.
    """
    records = journal_lines(folder)
    if not records:
        raise ArenaError(f"{folder}: no recorded match (matches.jsonl is missing or empty)")
    if match.isdigit() and 1 <= int(match) <= len(records):
        return records[int(match) - 1]
    exact = [r for r in records if r["match_id"] == match]
    hits = exact or [r for r in records if r["match_id"].endswith(match)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ArenaError(f"{folder}: no match {match!r}; give a match id (e.g. {records[0]['match_id']}), "
                         f"its end (d00000/r00) or a number from 1 to {len(records)}")
    raise ArenaError(f"{folder}: {len(hits)} matches end with {match!r} (e.g. {hits[0]['match_id']}, "
                     f"{hits[1]['match_id']}); give more of the id")


def _check_shape(record: Any) -> None:
    """The fields :func:`frames` reads, of the types ``record_of`` writes.

    :raises ArenaError: naming the match, the field and what it holds.
    """
    mid = record.get("match_id", "?") if isinstance(record, dict) else "?"
    want = {"game": str, "seats": list, "deal_seed": int, "options": dict, "actions": list}
    for key, kind in want.items():
        v = record.get(key, {} if key == "options" else [] if key == "actions" else None)
        if isinstance(v, bool) or not isinstance(v, kind):
            raise ArenaError(f"match {mid}: its {key!r} is {str(v)[:60]!r}, not a {kind.__name__} as `arena run` "
                             "writes it; the record was edited or damaged and cannot be replayed")
    if not all(isinstance(a, str) for a in record.get("actions") or []):
        raise ArenaError(f"match {mid}: its actions are not all text as `arena run` writes them; the record was "
                         "edited or damaged and cannot be replayed")


def frames(record: dict[str, Any], seats: Sequence[int] | None = None) -> list[Frame]:
    """Every step of the recorded match, with the observation of each of ``seats`` (default all).

    :raises ArenaError: when the record's game version differs from the engine's, or its
        actions do not replay (naming the match and the move).
    """
    _check_shape(record)
    game = registry.get_game(record["game"])
    n = len(record["seats"])
    want = list(range(n)) if seats is None else list(seats)
    for s in want:
        if not 0 <= s < n:
            raise ArenaError(f"seat {s}: match {record['match_id']} has seats 0 to {n - 1}")
    recorded = record.get("game_version")
    if recorded is not None and recorded != game.version:
        raise ArenaError(f"match {record['match_id']} was played with {game.name} version {recorded}; this "
                         f"engine has version {game.version}, whose deals may differ: replay it with that version")
    state = game.new_match(n, record["deal_seed"], **record.get("options", {}))
    out = [Frame(0, None, None, {s: state.observation(s) for s in want})]
    for k, text in enumerate(record.get("actions") or [], 1):
        if state.is_terminal():
            raise ArenaError(f"match {record['match_id']}: move {k} ({text!r}) comes after the end of the match")
        actor = state.current_player()
        try:
            action = game.parse_action(text)
            legal = state.legal_actions()
        except Exception as e:  # noqa: BLE001 - any engine refusal means the record does not replay
            raise ArenaError(f"match {record['match_id']}: move {k} ({text!r}) does not replay: {e}") from e
        if action not in legal:
            raise ArenaError(f"match {record['match_id']}: move {k} ({text!r}) is not legal for seat {actor} "
                             "in the rebuilt deal")
        state.apply(action)
        out.append(Frame(k, actor, text, {s: state.observation(s) for s in want}))
    return out


def deal_of(match_id: str) -> int | None:
    """The deal index in a match id ``.../d00012/r01`` (None if it has none)."""
    m = _DEAL.search(match_id)
    return int(m.group(1)) if m else None


def complete_deals(folder: str | Path, records: list[dict[str, Any]] | None = None) -> set[int]:
    """The deals of a results folder whose every scheduled match (all lineups and rotations)
    is recorded: their replays reveal nothing that is still to be played."""
    path = Path(folder) / "tournament.json"
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        return set()  # no schedule: nothing can be shown as complete
    except (OSError, ValueError) as e:
        raise ArenaError(f"{path}: cannot read the recorded tournament ({e})") from e
    try:
        schedule = (schedule_file.schedule_of(meta) or {}) if isinstance(meta, dict) else {}
    except ValueError as e:
        raise ArenaError(f"{path}: cannot read the recorded schedule ({e})") from e
    records = journal_lines(folder) if records is None else records
    done = {r["match_id"] for r in records}
    by_deal: dict[int, list[str]] = {}
    for mid in schedule:
        d = deal_of(mid)
        if d is not None:
            by_deal.setdefault(d, []).append(mid)
    return {d for d, ids in by_deal.items() if all(i in done for i in ids)}


def deal_complete(folder: str | Path, record: dict[str, Any], records: list[dict[str, Any]] | None = None) -> bool:
    """True when every scheduled match of ``record``'s deal is recorded (see :func:`complete_deals`)."""
    return record.get("deal_index") in complete_deals(folder, records)


def show_terminal(record: dict[str, Any], seat: int | None, console: Any, ask: Any = None,
                  everyone: bool = False) -> None:
    """Step through ``record`` in the terminal from ``seat``'s point of view (or every seat's
    when ``everyone``): Enter or ``n`` next, ``p`` previous, a number jumps to that step,
    ``q`` quits. Without ``ask`` (not a terminal) every step is printed in turn.

    :raises ArenaError: as :func:`frames`.
    """
    from arena.terminal import observation_view, outcome_view

    n = len(record["seats"])
    seats = list(range(n)) if everyone or seat is None else [seat]
    steps = frames(record, seats)
    names = record["seats"]

    def render(k: int) -> None:
        """Draw step ``k`` of the replay (every shown seat's view) on the terminal."""
        f = steps[k]
        what = "the deal" if f.actor is None else f"seat {f.actor} ({names[f.actor]}) played {f.action}"
        console.rule(f"step {k} / {len(steps) - 1} — {what}")
        for s in seats:
            console.print(observation_view(f.views[s], names, None))
        if k == len(steps) - 1:
            console.print(outcome_view(record.get("outcome"), names, None, record.get("status", "ok")))

    if ask is None:
        for k in range(len(steps)):
            render(k)
        return
    k = 0
    while True:
        render(k)
        try:
            answer = ask(f"[Enter] next, p previous, 0-{len(steps) - 1} jump, q quit: ").strip().lower()
        except EOFError:
            return
        if answer == "q":
            return
        if answer == "p":
            k = max(0, k - 1)
        elif answer.isdigit():
            k = min(int(answer), len(steps) - 1)
        elif k == len(steps) - 1:
            return
        else:
            k += 1
