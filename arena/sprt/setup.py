"""``arena sprt`` options → one validated ``mode: sprt`` tournament (:class:`arena.config.Tournament`).

The candidate and the baseline are commands (split like a shell would) or the names of bots
of the config file; ``--opponents`` names reference bots of the config file (default: the
project's ``tournaments.yaml``). The entry goes through the same validation as a
``tournaments.yaml`` entry (:func:`arena.config.load_data`), so errors read the same.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from arena.config import Tournament, load, load_data
from arena.errors import ConfigError
from arena.specs import files_digest

PROJECT = Path(__file__).resolve().parent.parent.parent


def reference_bots(config: Path | None) -> dict[str, Any]:
    """The ``bots:`` of ``config`` (default: ``./tournaments.yaml`` if present, else the project's)
    as ``name -> BotSpec`` (their ``cwd`` is the config's directory)."""
    path = config or (Path("tournaments.yaml") if Path("tournaments.yaml").exists() else PROJECT / "tournaments.yaml")
    if not path.exists():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    root = path.resolve().parent
    out = {}
    for name, b in (raw.get("bots") or {}).items():
        if isinstance(b, dict) and isinstance(b.get("cmd"), list):
            out[name] = (b, str(root))
    return out


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``-o KEY=VALUE`` (YAML values) → options. :raises ConfigError: for an item without ``=``."""
    out: dict[str, Any] = {}
    for o in items or []:
        key, sep, value = o.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"arena sprt: -o expects KEY=VALUE, got {o!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def build(game: str, candidate: str, baseline: str, *, opponents: list[str], players: int | None,
          options: dict[str, Any], sprt: dict[str, Any], clock: dict[str, Any], name: str,
          salt: str | None, config: Path | None, workers: int | None) -> Tournament:
    """The test as a validated tournament.

    :param candidate, baseline: a command line, or a bot name of the config.
    :raises ConfigError: for bad input (unknown opponent, same candidate and baseline, game options...).
    """
    from engine import registry

    refs = reference_bots(config)
    bots: dict[str, dict] = {}
    roots: dict[str, str] = {}
    names = []
    for role, text in (("candidate", candidate), ("baseline", baseline)):
        if text in refs:
            bots[text], roots[text] = refs[text]
            names.append(text)
            continue
        cmd = shlex.split(text)
        if not cmd:
            raise ConfigError(f"arena sprt: --{role} is empty; give the bot's command, e.g. "
                              f"--{role} 'python bots/greedy_bot.py'")
        bots[role] = {"cmd": cmd, "version": files_digest(cmd)}
        names.append(role)
    if names[0] == names[1]:
        raise ConfigError(f"arena sprt: the candidate and the baseline are the same bot {names[0]!r}; to test a bot "
                          "against a copy of itself give the command twice (they are named candidate and baseline)")
    for o in opponents:
        if o not in refs:
            raise ConfigError(f"arena sprt: --opponents: unknown bot {o!r}; reference bots: {', '.join(sorted(refs))}")
        if o not in bots:
            bots[o], roots[o] = refs[o]
    n = players
    if n is None:
        n = max(2, registry.get_game(game).min_players) if game in registry.names() else 2
    entry = {"name": name, "game": game, "players": n, "options": options, "mode": "sprt", "salt": salt,
             "sprt": {"candidate": names[0], "baseline": names[1], "opponents": opponents, **sprt},
             "clock": clock}
    if workers:
        entry["execution"] = {"workers": workers}
    [t] = load_data({"bots": {k: {kk: vv for kk, vv in v.items()} for k, v in bots.items()},
                     "tournaments": [entry]}, Path("arena sprt"), Path.cwd())
    t.bots = {k: replace(v, cwd=roots.get(k, v.cwd)) for k, v in t.bots.items()}
    return t


def from_config(config: Path, name: str, max_matches: int | None = None) -> Tournament:
    """The ``mode: sprt`` entry ``name`` of ``config``; ``max_matches`` (the command line's
    ``--max-matches``) overrides the entry's ``sprt.max_matches``.

    :raises ConfigError: if there is no such entry or it is not an SPRT.
    """
    if max_matches is None:
        by = {t.name: t for t in load(config)}
    else:
        from arena.config import load_data, read_yaml

        raw = read_yaml(config)
        for entry in raw.get("tournaments") or [] if isinstance(raw, dict) else []:
            if isinstance(entry, dict) and entry.get("name") == name and isinstance(entry.get("sprt"), dict):
                entry["sprt"] = {**entry["sprt"], "max_matches": max_matches}
                entry.pop("deals", None)
        by = {t.name: t for t in load_data(raw, config, config.resolve().parent)}
    if name not in by:
        raise ConfigError(f"{config}: unknown tournament {name!r}; known: {', '.join(by)}")
    t = by[name]
    if t.model.mode != "sprt":
        raise ConfigError(f"{config}: tournament {name!r} is not an SPRT (mode: sprt); run it with `arena run -t {name}`")
    return t
