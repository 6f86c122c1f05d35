"""Protocol v1: encoders, validation, size caps, fuzzing of bot replies."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import protocol as p
from arena.errors import ProtocolError


def test_start_act_end_shapes():
    start = orjson.loads(p.encode_start(game="toy", options={"a": 1}, players=3, seat=1,
                                        teams=[[0], [1], [2]], match="tok", seed=7, move_ms=1000,
                                        bank_ms=10000))
    assert start == {"type": "start", "protocol": 1, "game": "toy", "options": {"a": 1}, "players": 3,
                     "seat": 1, "teams": [[0], [1], [2]], "match": "tok", "seed": 7,
                     "clock": {"move_ms": 1000, "bank_ms": 10000}}
    assert "resume" not in start
    resumed = orjson.loads(p.encode_start(game="toy", options={}, players=2, seat=0, teams=[[0], [1]],
                                          match="t", seed=1, move_ms=5, bank_ms=6, resume=True))
    assert resumed["resume"] is True
    line = p.encode_act(17, {"x": [1]}, ["play 1", "play 2"], 1000, 8730)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert orjson.loads(line) == {"type": "act", "id": 17, "observation": {"x": [1]},
                                  "legal": ["play 1", "play 2"], "clock": {"move_ms": 1000, "bank_ms": 8730}}
    end = orjson.loads(p.encode_end({"ranks": [0, 1], "scores": [1, 0]}, {"o": 1}))
    assert end["type"] == "end" and end["outcome"]["ranks"] == [0, 1]


def test_ready_and_action_round_trip():
    r = p.parse_ready(p.encode_ready("me", "2").rstrip(b"\n"))
    assert r.label() == "me/2"
    a = p.parse_action(p.encode_action(5, "play 7", {"k": 1}).rstrip(b"\n"), 5)
    assert a.action == "play 7" and a.info == {"k": 1} and a.request_id == 5


def test_stale_reply_is_none():
    assert p.parse_action(b'{"type":"action","id":4,"action":"play 1"}', 5) is None


def test_unknown_fields_ignored():
    a = p.parse_action(b'{"type":"action","id":1,"action":"x","extra":[1,2]}', 1)
    assert a.action == "x"
    assert p.parse_ready(b'{"type":"ready","protocol":1,"whatever":true}').name == ""


@pytest.mark.parametrize("line", [
    b"", b"hello", b"[1,2]", b'"ready"', b'{"type":"ready"}', b'{"type":"ready","protocol":2}',
    b'{"type":"ready","protocol":true}', b'{"type":"ready","protocol":1,"name":5}',
    b'DEBUG {"type":"ready","protocol":1}',
])
def test_bad_ready(line):
    with pytest.raises(ProtocolError):
        p.parse_ready(line)


@pytest.mark.parametrize("line", [
    b'{"type":"ready","protocol":1}', b'{"type":"action","action":"x"}',
    b'{"type":"action","id":"1","action":"x"}', b'{"type":"action","id":true,"action":"x"}',
    b'{"type":"action","id":1,"action":7}', b'{"type":"action","id":1,"action":"x","info":[1]}',
    b'{"type":"action","id":1,"action":"x","info":{"pad":"' + b"x" * 5000 + b'"}}',
    b"x" * (p.MAX_LINE_BYTES + 1), b'{"type":"action","id":1,"action":"x"} trailing',
])
def test_bad_action(line):
    with pytest.raises(ProtocolError):
        p.parse_action(line, 1)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_never_crashes(data):
    for fn in (p.parse_ready, lambda b: p.parse_action(b, 3)):
        try:
            fn(data)
        except ProtocolError:
            pass


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**60, 2**60) | st.text(max_size=10),
                           lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
                           max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6), st.integers(0, 2**31))
def test_fuzz_json_objects(obj, rid):
    line = orjson.dumps(obj)
    try:
        r = p.parse_action(line, rid)
    except ProtocolError:
        return
    if r is not None:
        assert isinstance(r.action, str) and r.request_id == rid


def test_decode_request():
    assert p.decode_request(b'{"type":"end","outcome":{}}')["type"] == "end"
    with pytest.raises(ValueError):
        p.decode_request(b"[1]")


# ---------------------------------------------------------------- fast paths (issue 8)

def _outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except ProtocolError as e:
        return ("error", str(e))


def test_encode_act_same_bytes_as_a_plain_dump():
    obs = {"hand": ["6h", "Th"], "n": 3, "nested": {"a": [1, None, True]}}
    expected = orjson.dumps({"type": "act", "id": 9, "observation": obs, "legal": ["a", "b"],
                             "clock": {"move_ms": 1000, "bank_ms": 250}}, option=orjson.OPT_APPEND_NEWLINE)
    assert p.encode_act(9, obs, ["a", "b"], 1000, 250) == expected
    assert p.encode_act(9, obs, ("a", "b"), 1000, 250) == expected  # any sequence of strings


@pytest.mark.parametrize("line", [
    b'{"type":"action","id":3,"action":"play 1"}',
    b'{"action":"play 1","id":3,"type":"action"}',
    b'{"type":"action","id":3,"action":"play 1","info":{"v":1}}',
    b'{"type":"action","id":3,"action":"play 1","info":null}',
    b'{"type":"action","id":2,"action":"play 1"}',
    b'{"type":"action","id":3,"action":"x","type":"ready"}',
    b'{"type":"action","id":3.0,"action":"x"}',
    b'{"type":"action","id":true,"action":"x"}',
    b'{"type":"action","id":3,"action":null}',
    b'{"type":"action","id":3}',
    b'{"type":"act","id":3,"action":"x"}',
    b'{"type":"action","id":3,"action":"x"} {}',
    b'["type","action"]',
])
def test_parse_action_fast_path_agrees_with_full_validation(line):
    assert _outcome(p.parse_action, line, 3) == _outcome(p._parse_action_full, line, 3)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["type", "id", "action", "info", "x"]),
                       st.sampled_from(["action", "ready", 3, 4, True, None, 3.0, "play 1", {}, {"k": 1}, [1]]),
                       max_size=5))
def test_fuzz_fast_path_agrees(obj):
    line = orjson.dumps(obj)
    assert _outcome(p.parse_action, line, 3) == _outcome(p._parse_action_full, line, 3)


def test_action_reply_is_a_normal_frozen_reply():
    import dataclasses
    a = p.parse_action(b'{"type":"action","id":5,"action":"play 7"}', 5)
    assert a == p.ActionReply(5, "play 7", None) and hash(a) == hash(p.ActionReply(5, "play 7", None))
    assert repr(a) == repr(p.ActionReply(5, "play 7", None))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.action = "play 8"  # type: ignore[misc]


FRAMING_BOT = r'''
import os, sys, time
replies = [b"A\r\n", b"B\nC\n", b"D", b"E\n", b"x" * 70000 + b"\n"]
for line in sys.stdin.buffer:
    n = int(line)
    if n == 2:
        os.write(1, replies[2]); time.sleep(0.05); os.write(1, replies[3])
    elif n == 4:
        sys.exit(0)
    else:
        os.write(1, replies[n if n < 2 else n + 1])
'''


def test_line_framing_through_the_hub():
    """Lines from the pipe: CRLF, two lines in one read, a line in two reads, a line longer
    than one read, EOF (the fast paths of ``BotProcess._on_stdout`` and ``Hub.wait_line``)."""
    import sys
    import time

    from arena.errors import BotCrashed
    from arena.process import BotProcess, Hub, new_workdir
    from arena.specs import BotSpec, Limits

    proc = BotProcess(BotSpec("framing", (sys.executable, "-c", FRAMING_BOT)), Limits(), new_workdir("framing"), 0)
    hub = Hub()
    hub.add(proc)
    try:
        def ask(n):
            t0 = time.perf_counter()
            proc.send(b"%d\n" % n)
            line, t1 = hub.wait_line(proc, t0 + 10)
            assert t1 >= t0
            return line
        assert ask(0) == b"A"
        assert ask(1) == b"B"
        assert hub.wait_line(proc, time.perf_counter() + 10)[0] == b"C"
        assert ask(2) == b"DE"
        assert ask(3) == b"x" * 70000
        with pytest.raises(BotCrashed):
            ask(4)
    finally:
        proc.kill()
        hub.close()


def test_errors_say_which_bot_sent_what():
    with pytest.raises(ProtocolError, match=r"^bot 'x' sent a line that is not JSON: 'hello world' \("):
        p.parse_ready(b"hello world", "x")
    with pytest.raises(ProtocolError, match=r"^bot 'x' sent '\{\"type\":\"action\"\}' where a 'ready' reply"):
        p.parse_ready(b'{"type":"action"}', "x")
    with pytest.raises(ProtocolError, match=r"^bot 'x' sent an 'info' of 50\d\d bytes; the cap is 4096$"):
        p.parse_action(b'{"type":"action","id":1,"action":"x","info":{"pad":"' + b"x" * 5000 + b'"}}', 1, "x")
    with pytest.raises(ProtocolError, match=r"^the bot sent '\[1\]' where a JSON object was expected$"):
        p.parse_action(b"[1]", 1)
