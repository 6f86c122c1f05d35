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
