"""What changed between a journal's records and a new run's settings, in words (DESIGN "Journal").

:class:`arena.journal.Journal` refuses a rerun whose fingerprinted fields changed; these
functions name the changes (``key: old → new``, per bot its command and version) for that
message, and read the settings ``tournament.json`` recorded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.errors import JournalError


def _show_cmd(cmd: Any) -> str:
    if isinstance(cmd, list):
        return "[" + ", ".join(str(a) for a in cmd) + "]"
    return _show(cmd)


def _show_version(v: Any) -> str:
    return "unset" if v in (None, "", _UNSET) else _show(str(v))


def bot_changes(rec: dict[str, Any], new: dict[str, Any]) -> dict[str, list[str]]:
    """Per bot seated in both the record and the new fields, its changed command / version (old → new)."""
    out: dict[str, list[str]] = {}
    seats, cmds = rec.get("seats"), rec.get("bot_commands")
    if not (isinstance(seats, list) and isinstance(cmds, list)):
        return out
    for seat, bot in enumerate(new.get("seats", [])):
        if seat >= len(seats) or seat >= len(cmds) or seats[seat] != bot or bot in out:
            continue
        a, b = cmds[seat], new["bot_commands"][seat]
        if not isinstance(a, dict):
            continue
        parts = []
        if a.get("cmd") != b.get("cmd"):
            parts.append(f"cmd {_show_cmd(a.get('cmd'))} → {_show_cmd(b.get('cmd'))}")
        if (a.get("version") or "") != (b.get("version") or ""):
            parts.append(f"version {_show_version(a.get('version'))} → {_show_version(b.get('version'))}")
        if parts:
            out[bot] = parts
    return out


def field_changes(rec: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The fingerprinted fields that differ between a record and ``new``: ``key: old → new`` where the
    record holds the key (dicts per sub-key), else the key's name; ``bot_commands`` by name."""
    old = {k: rec[k] for k in new if k in rec}
    if isinstance(rec.get("seats"), list):
        old["players"] = len(rec["seats"])
    out = []
    for k in sorted(new):
        if k not in old:
            out.append(k)
        elif old[k] != new[k]:
            if k in ("bot_commands", "seats", "deal_seed"):
                out.append(k)
            else:
                out.extend(setting_changes({k: old[k]}, {k: new[k]}))
    return out


_UNSET = object()


def _show(v: Any) -> str:
    if v is _UNSET:
        return "unset"
    return v if isinstance(v, str) else json.dumps(v)


def setting_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``key: old → new`` for each setting present in both that differs (dicts: per sub-key, ``clock.move_ms``).

    When the game changed, its version and options are not listed (they belong to the game).
    """
    out = []
    other_game = "game" in old and old["game"] != new.get("game")
    for key, value in new.items():
        if key not in old or old[key] == value or (other_game and key in ("game_version", "options")):
            continue
        if isinstance(value, dict) and isinstance(old[key], dict):
            for sub in sorted(set(old[key]) | set(value)):
                a, b = old[key].get(sub, _UNSET), value.get(sub, _UNSET)
                if a != b:
                    out.append(f"{key}.{sub}: {_show(a)} → {_show(b)}")
        else:
            out.append(f"{key}: {_show(old[key])} → {_show(value)}")
    return out


def record_settings(rec: dict[str, Any]) -> dict[str, Any]:
    """The tournament settings one journal record shows (those it holds)."""
    out: dict[str, Any] = {k: rec[k] for k in ("game", "game_version", "options", "clock") if k in rec}
    if isinstance(rec.get("seats"), list):
        out["players"] = len(rec["seats"])
    return out


def recorded_settings(folder: str | Path) -> dict[str, Any] | None:
    """The settings recorded in ``folder/tournament.json``, or None (no file, or one written before they were).

    :raises JournalError: if the file is not valid JSON.
    """
    path = Path(folder) / "tournament.json"
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise JournalError(f"{path}: cannot read the recorded tournament ({e}); move the results folder "
                           "aside or delete this file") from e
    settings = meta.get("settings") if isinstance(meta, dict) else None
    return settings if isinstance(settings, dict) else None
