"""Bot protocol v1: message types, encoding and validation (DESIGN "Bot protocol v1").

JSON lines, UTF-8, one object per line. The arena sends ``start``, ``act`` and ``end``;
the bot answers ``start`` with ``ready`` and ``act`` with ``action``. Encoding uses
orjson; every encoder returns the line as ``bytes`` including the trailing newline.

Replies are validated here (shape, types, request id, size caps) and raise
:class:`arena.errors.ProtocolError` with a message a bot author can act on, naming the bot
when the caller passes its name (``bot 'x' sent ...``; else ``the bot sent ...``). A reply whose
``id`` differs from the pending request is *stale*: :func:`parse_action` returns ``None``
for it and the caller discards it.

Size caps (bytes, without the newline): :data:`MAX_LINE_BYTES` per bot line,
:data:`MAX_INFO_BYTES` for an encoded ``info`` object.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from arena.errors import ProtocolError

PROTOCOL_VERSION = 1
#: longest line a bot may write (an action plus a 4 KiB ``info`` fits easily).
MAX_LINE_BYTES = 64 * 1024
#: largest encoded ``info`` object (DESIGN: "info is at most 4 KiB").
MAX_INFO_BYTES = 4096
#: levels of nesting an ``info`` object may have (the info log wraps it two levels deeper, and
#: orjson writes at most 254: deeper would fail when the match is recorded, not here)
MAX_INFO_DEPTH = 64
#: a line a bot may write to stderr once it has handled ``end`` (the SDK does, after ``on_end``):
#: what it wrote before goes to the log of the match that ended, what follows to the next match's
#: (stdout and stderr are two pipes: without it an ``on_end`` log line lands in the next match's
#: log). The arena removes it from every capture.
END_OF_MATCH_MARK = b"\x1ecardarena: end of match\x1e\n"
#: longest ``name`` / ``version`` kept from ``ready``.
MAX_NAME_CHARS = 64

_NL = orjson.OPT_APPEND_NEWLINE
_orjson_dumps = orjson.dumps
_orjson_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError

ArenaMessageType = Literal["start", "act", "end"]
BotMessageType = Literal["ready", "action"]


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return orjson.dumps(obj, option=_NL)


# ---------------------------------------------------------------- arena -> bot

def encode_start(*, game: str, options: Mapping[str, Any], players: int, seat: int,
                 teams: Sequence[Sequence[int]], match: str, seed: int, move_ms: int,
                 bank_ms: int, resume: bool = False) -> bytes:
    """The ``start`` line.

    :param teams: sides as lists of seats (singletons in free-for-all games).
    :param match: the opaque match token (never the match id).
    :param seed: the bot's seed for its own randomness.
    :param move_ms, bank_ms: the clock, milliseconds.
    :param resume: true when a restarted bot rejoins a match in progress (``random`` policy).
    :returns: one encoded line ending in ``\\n``.
    """
    msg: dict[str, Any] = {"type": "start", "protocol": PROTOCOL_VERSION, "game": game,
                           "options": dict(options), "players": players, "seat": seat,
                           "teams": [list(t) for t in teams], "match": match, "seed": seed,
                           "clock": {"move_ms": move_ms, "bank_ms": bank_ms}}
    if resume:
        msg["resume"] = True
    return _dumps(msg)


def encode_act(request_id: int, observation: Mapping[str, Any], legal: Sequence[str],
               move_ms: int, bank_ms: int) -> bytes:
    """The ``act`` line: ``{"type":"act","id":..,"observation":..,"legal":[..],"clock":{..}}``.

    :param request_id: id the reply must echo.
    :param move_ms, bank_ms: time for this decision and the remaining bank, milliseconds.
    """
    # one orjson call over the whole message: the observation has to be encoded for every
    # decision anyway, and splicing pre-encoded parts measured no faster (bench/protocol_overhead.py)
    return _orjson_dumps({"type": "act", "id": request_id, "observation": observation,
                          "legal": legal if type(legal) is list else list(legal),
                          "clock": {"move_ms": move_ms, "bank_ms": bank_ms}}, option=_NL)


def encode_end(outcome: Mapping[str, Any], observation: Mapping[str, Any] | None) -> bytes:
    """The ``end`` line with the outcome ``{"ranks": [..], "scores": [..]}`` and the final observation."""
    return _dumps({"type": "end", "outcome": dict(outcome), "observation": observation or {}})


# ---------------------------------------------------------------- bot -> arena

@dataclass(frozen=True)
class Ready:
    """A validated ``ready`` reply. ``name``/``version`` are truncated to 64 characters."""

    name: str
    version: str

    def label(self) -> str:
        """``name/version`` (or just ``name``), as recorded in ``bot_versions``."""
        return f"{self.name}/{self.version}" if self.version else self.name


@dataclass(frozen=True)
class ActionReply:
    """A validated ``action`` reply for the pending request.

    :ivar info: the optional ``info`` object (a dict, at most 4 KiB encoded) or None.
    """

    request_id: int
    action: str
    info: dict[str, Any] | None


def _who(bot: str | None) -> str:
    return f"bot {bot!r}" if bot else "the bot"


def _loads(line: bytes, bot: str | None = None) -> dict[str, Any]:
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"{_who(bot)} sent a line of {len(line)} bytes; the cap is {MAX_LINE_BYTES}")
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise ProtocolError(f"{_who(bot)} sent a line that is not JSON: {_show(line)} ({e})") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"{_who(bot)} sent {_show(line)} where a JSON object was expected")
    return obj


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0)]}


def printable(text: str) -> str:
    """``text`` from a bot (stderr, ``ready`` name/version) with every C0/C1 control character
    except newline and tab written as ``\\xNN``, so it cannot drive the organiser's terminal
    (escape sequences that clear the screen, retitle the window, write the clipboard)."""
    return text.replace("\r\n", "\n").translate(_CONTROL)


def _show(line: bytes, limit: int = 120) -> str:
    text = line[:limit].decode("utf-8", "replace")
    return repr(text) + ("..." if len(line) > limit else "")


def parse_ready(line: bytes, bot: str | None = None) -> Ready:
    """Validate the reply to ``start``.

    :param bot: the bot's name, for the error message.
    :raises ProtocolError: if it is not ``{"type":"ready","protocol":1,...}``.
    """
    obj = _loads(line, bot)
    if obj.get("type") != "ready":
        raise ProtocolError(f"{_who(bot)} sent {_show(line)} where a 'ready' reply to 'start' was expected")
    proto = obj.get("protocol")
    if proto != PROTOCOL_VERSION or isinstance(proto, bool):
        raise ProtocolError(f"{_who(bot)} sent a 'ready' for protocol {proto!r}; the arena speaks "
                            f"{PROTOCOL_VERSION}")
    name = obj.get("name", "")
    version = obj.get("version", "")
    if not isinstance(name, str) or not isinstance(version, str):
        raise ProtocolError(f"{_who(bot)} sent a 'ready' whose name and version are not both strings: "
                            f"{_show(line)}")
    return Ready(printable(name[:MAX_NAME_CHARS]), printable(version[:MAX_NAME_CHARS]))


_new = object.__new__


def _action_reply(rid: int, action: str, info: dict[str, Any] | None) -> ActionReply:
    # the frozen dataclass's __init__ goes through object.__setattr__ per field (~0.4 µs);
    # filling the instance dict directly builds the same object
    r = _new(ActionReply)
    d = r.__dict__
    d["request_id"] = rid
    d["action"] = action
    d["info"] = info
    return r


def parse_action(line: bytes, request_id: int, bot: str | None = None) -> ActionReply | None:
    """Validate a reply to ``act`` number ``request_id`` (``bot``: the bot's name, for messages).

    The common reply (a JSON object with ``"type": "action"``, the pending integer ``id``, a
    string ``action`` and no ``info`` key) is decoded once and checked with exact type tests;
    anything else goes through the full validation below, which gives the error messages.

    :returns: the reply, or ``None`` if it is a well-formed ``action`` with another id (stale:
        discard it).
    :raises ProtocolError: malformed JSON, wrong type, missing/ill-typed fields, ``info`` not
        an object or larger than 4 KiB.
    """
    if len(line) <= MAX_LINE_BYTES:
        try:
            obj = _orjson_loads(line)
        except _JSONDecodeError:
            obj = None
        # orjson makes exact dicts, ints and strs (``type(True) is int`` is false)
        if type(obj) is dict and obj.get("type") == "action" and "info" not in obj:
            rid = obj.get("id")
            action = obj.get("action")
            if type(rid) is int and rid == request_id and type(action) is str:
                return _action_reply(rid, action, None)
    return _parse_action_full(line, request_id, bot)


def _parse_action_full(line: bytes, request_id: int, bot: str | None = None) -> ActionReply | None:
    obj = _loads(line, bot)
    if obj.get("type") != "action":
        raise ProtocolError(f"{_who(bot)} sent {_show(line)} where an 'action' reply to act {request_id} "
                            "was expected")
    rid = obj.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        raise ProtocolError(f"{_who(bot)} sent an 'action' reply without an integer id: {_show(line)}")
    if rid != request_id:
        return None
    action = obj.get("action")
    if not isinstance(action, str):
        raise ProtocolError(f"{_who(bot)} sent an 'action' reply whose 'action' is not a string: {_show(line)}")
    info = obj.get("info")
    if info is not None:
        if not isinstance(info, dict):
            raise ProtocolError(f"{_who(bot)} sent an 'info' that is not an object ({type(info).__name__})")
        deep = ProtocolError(f"{_who(bot)} sent an 'info' nested more than {MAX_INFO_DEPTH} levels deep")
        try:
            size = len(orjson.dumps(info))
        except orjson.JSONEncodeError:  # deeper than orjson writes (254 levels)
            raise deep from None
        if size > MAX_INFO_BYTES:
            raise ProtocolError(f"{_who(bot)} sent an 'info' of {size} bytes; the cap is {MAX_INFO_BYTES}")
        if _depth(info) > MAX_INFO_DEPTH:
            raise deep
    return _action_reply(rid, action, info)


def _depth(obj: Any) -> int:
    """Levels of nesting of a decoded JSON value (a scalar is 0); only called on values orjson
    could write, so at most 254 levels (the recursion stays shallow)."""
    if isinstance(obj, dict):
        return 1 + max(map(_depth, obj.values()), default=0)
    if isinstance(obj, list):
        return 1 + max(map(_depth, obj), default=0)
    return 0


def action_id(line: bytes) -> int | None:
    """The ``id`` of an ``action`` reply (for messages about stale or wrong ids), or None
    if the line has no integer id."""
    try:
        rid = orjson.loads(line).get("id")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return rid if isinstance(rid, int) and not isinstance(rid, bool) else None


# ---------------------------------------------------------------- bot side (SDK)

def decode_request(line: bytes | str) -> dict[str, Any]:
    """Decode an arena message on the bot side.

    :returns: the object (``type`` in start | act | end; unknown fields kept).
    :raises ValueError: if the line is not a JSON object with a string ``type``.
    """
    obj = orjson.loads(line)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ValueError(f"not an arena message: {line[:120]!r}")
    return obj


def encode_ready(name: str, version: str) -> bytes:
    """The bot's ``ready`` line."""
    return _dumps({"type": "ready", "protocol": PROTOCOL_VERSION, "name": name, "version": version})


def encode_action(request_id: int, action: str, info: Mapping[str, Any] | None = None) -> bytes:
    """The bot's ``action`` line (``info`` omitted when None)."""
    msg: dict[str, Any] = {"type": "action", "id": request_id, "action": action}
    if info is not None:
        msg["info"] = info
    return _dumps(msg)
