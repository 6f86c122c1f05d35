"""Reading a tournaments file: YAML with unique keys, ``bots: {from: DIR}`` submissions, and
pydantic's validation errors in plain words (file, key, what is expected, "did you mean").

Used by :mod:`arena.config` (the schema and the checks); DESIGN "Configuration".
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from arena.errors import ConfigError
from arena.specs import BOT_NAME  # re-exported for arena.config


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe YAML loader that refuses a key given twice in one mapping (the last would win silently)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise ConfigError(f"{loader.name}: line {line}: key {key!r} is defined twice (lines {seen[key]} and {line})")
        seen[key] = line
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# what a null does, said after an error on a key that takes one
_NULL_MEANS = {
    "faults.disable_after": "null turns the rule off",
    "faults.disable_on_startup": "null turns the rule off",
    "limits.cpu_s": "null: no CPU limit",
}


def did_you_mean(word: str, choices: Any) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to ``word``, else ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fields_at(model: type[BaseModel] | None, loc: list) -> list[str]:
    """The keys the schema allows where ``loc`` (a path of keys) ends, or [] if unknown."""
    free = False  # the next part is a free key of a mapping (a bot's name)
    for part in loc:
        if model is None or isinstance(part, int) or free:
            free = False
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return []
        ann = field.annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if model is None:
            for arg in getattr(ann, "__args__", ()):  # dict[str, BotModel], X | None
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    model = arg
                    free = getattr(ann, "__origin__", None) is dict
    return list(model.model_fields) if model is not None else []


NAME_WORDS = "a name uses letters, digits, '_', '.', '-' and starts with a letter or digit"


def _plain(err: Any, model: type[BaseModel] | None) -> str:
    """A pydantic error in plain words: unknown keys with their closest known key."""
    kind = err.get("type")
    loc = list(err.get("loc", ()))
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        hint = did_you_mean(loc[-1], known) if known else ""
        return f"unknown key{hint}" + (f"; known keys here: {', '.join(known)}" if known and not hint else "")
    if kind == "string_pattern_mismatch":
        return f"{NAME_WORDS}, got {err.get('input')!r}"
    if kind == "missing":
        return "missing (this key is required)"
    msg = str(err["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):  # a validator's own sentence, without pydantic's label
        if msg.startswith(prefix):
            return msg[len(prefix):]
    return msg


def validation_errors(e: ValidationError, limit: int = 3, model: type[BaseModel] | None = None) -> str:
    """Up to ``limit`` validation errors as ``key 'a.b': message; ...`` (unknown keys first),
    in plain words (:func:`_plain`; ``model`` is the schema validated, for "did you mean")."""
    errs = sorted(e.errors(), key=lambda x: x.get("type") != "extra_forbidden")
    by_key: dict[str, list[str]] = {}  # a union's branches fail one by one: one entry per key
    got: dict[str, str] = {}
    for x in errs:
        loc = _loc(x)
        by_key.setdefault(loc, []).append(_plain(x, model))
        if isinstance(x.get("input"), bool) and x.get("type") != "extra_forbidden":  # YAML true/false where a number is expected
            got[loc] = f", got {str(x['input']).lower()}"
    keys = list(by_key.items())
    parts = []
    for loc, msgs in keys[:limit]:
        hint = _NULL_MEANS.get(loc)
        parts.append(f"key {loc!r}: {', or '.join(msgs)}{got.get(loc, '')}" + (f" ({hint})" if hint else ""))
    if len(keys) > limit:
        parts.append(f"and {len(keys) - limit} more")
    return "; ".join(parts)


def _loc(err: Any) -> str:
    loc = list(err.get("loc", ()))
    # a union's branch (``int``, ``literal['auto']``) ends the location of a bad value; it is not a key
    while (len(loc) > 1 and err.get("type") != "extra_forbidden" and isinstance(loc[-1], str)
           and ("[" in loc[-1] or loc[-1] in _TYPE_TAGS)):
        loc.pop()
    return ".".join(str(p) for p in loc)


_TYPE_TAGS = {"int", "float", "str", "bool", "none", "list", "dict", "constrained-int", "constrained-float"}


def merge(base: dict, over: dict) -> dict:
    """``over`` laid on ``base`` key by key, nested mappings merged the same way (a tournament's
    keys over ``defaults:``); neither input is changed."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = v
    return out


SUBMISSION_FILES = ("bot.yaml", "bot.py")


def expand_submissions(raw: dict, path: Path, skipped: list[Path] | None = None) -> dict[str, Path]:
    """Expand ``bots: {from: DIR}`` (or a list of folders) in ``raw`` in place: every subfolder of
    DIR holding a ``bot.yaml`` (its ``cmd`` and other bot keys) or a ``bot.py`` (run as
    ``python bot.py``) becomes a bot named after the folder, run in that folder; the other
    subfolders (not starting with ``.``) are appended to ``skipped`` (the commands say so: a
    student's folder without a bot is not dropped without a word).

    :returns: ``bot name -> its folder`` (the bots' working folder for relative paths).
    :raises ConfigError: naming the file and folder for a missing DIR, a bad ``bot.yaml``, a
        folder name that is not a bot name, or a name declared twice.
    """
    bots = raw.get("bots")
    if not isinstance(bots, dict) or "from" not in bots:
        return {}
    bots = dict(bots)
    spec = bots.pop("from")
    dirs = spec if isinstance(spec, list) else [spec]
    found: dict[str, Path] = {}
    for d in dirs:
        if not isinstance(d, str):
            raise ConfigError(f"{path}: key 'bots.from': expected a folder (or a list of folders), got {d!r}")
        folder = (path.resolve().parent / d).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{path}: key 'bots.from': no folder {folder}")
        for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
            entry = _submission(sub, path)
            if entry is None:
                if skipped is not None and not sub.name.startswith("."):
                    skipped.append(sub)
                continue
            if sub.name in bots:
                raise ConfigError(f"{path}: key 'bots.from': bot {sub.name!r} ({sub}) is declared twice")
            bots[sub.name] = entry
            found[sub.name] = sub
    raw["bots"] = bots
    return found


def _submission(sub: Path, path: Path) -> dict | None:
    """The bot entry of one submission folder, or None when it holds no bot."""
    if (sub / "bot.yaml").exists():
        try:
            entry = yaml.safe_load((sub / "bot.yaml").read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"{sub / 'bot.yaml'}: cannot read it ({e})") from e
        if not isinstance(entry, dict) or "cmd" not in entry:
            near = next((k for k in entry if did_you_mean(k, ["cmd", "command"])), None) if isinstance(entry, dict) else None
            hint = f"; key {near!r} is not one (did you mean 'cmd'?)" if near is not None else ""
            raise ConfigError(f"{sub / 'bot.yaml'}: expected a mapping with the bot's 'cmd', "
                              f"e.g. cmd: [python, bot.py]{hint}")
    elif (sub / "bot.py").exists():
        entry = {"cmd": ["python", "bot.py"]}
    else:
        return None
    if not re.match(BOT_NAME, sub.name):
        raise ConfigError(f"{path}: key 'bots.from': folder {sub.name!r}: {NAME_WORDS.replace('a name', 'a bot name')}; "
                          "rename the folder")
    return entry


def read_yaml(path: Path) -> Any:
    """The YAML document of ``path`` (keys given twice refused).

    :raises ConfigError: naming the file (and line, column) for a file that cannot be read or parsed.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise ConfigError(f"{path}: cannot read the config file ({e.strerror}). Remedy: name your tournaments "
                          "file (`arena run path/to/tournaments.yaml`), or run from a folder that holds one "
                          "(the project's own has the demo); docs/config.md describes the format") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file ({e.strerror})") from e
    try:
        loader = _UniqueKeyLoader(text)
        loader.name = str(path)
        try:
            raw = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}:{where}: invalid YAML: {getattr(e, 'problem', e)}") from e
    return raw
