"""Replays: rebuilt from a real tournament's journal, driven in headless Chromium (keys and
buttons), checked against the engine's observation of the seat; the terminal replay; the
rule for when a replay may be shown."""

from __future__ import annotations

import json
import re
import textwrap

import numpy as np
import pytest
from PIL import Image

from arena.links import replay_name
from arena.replay import complete_deals, find_record, frames
from arena.replay_html import write_page
from engine import registry
from tests.classes.cdp import Browser
from tests.classes.test_frictions import arena
from tests.conftest import ROOT

CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A real 2-player Agram tournament (random, greedy; 3 deals x 2 rotations), played inline."""
    tmp = tmp_path_factory.mktemp("replay")
    cfg = tmp / "t.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
          greedy: {{cmd: [python, {ROOT}/bots/greedy_bot.py]}}
        tournaments:
          - {{name: cls, game: agram, players: 2, bots: [random, greedy], deals: 3, salt: replay-test, default: true}}
        """))
    out = arena("run", str(cfg), "--inline", "-q", "--results", str(tmp / "res"))
    assert out.returncode == 0, out.stderr
    return tmp / "res" / "cls"


def _engine_views(rec, seat):
    game = registry.get_game(rec["game"])
    state = game.new_match(len(rec["seats"]), rec["deal_seed"], **rec["options"])
    views, others = [state.observation(seat)], [[state.observation(s) for s in range(len(rec["seats"]))]]
    for a in rec["actions"]:
        state.apply(game.parse_action(a))
        views.append(state.observation(seat))
        others.append([state.observation(s) for s in range(len(rec["seats"]))])
    return views, others


def test_frames_are_the_engines_observations(results):
    rec = find_record(results, "d00001/r01")
    steps = frames(rec)
    for seat in (0, 1):
        views, _ = _engine_views(rec, seat)
        assert [f.views[seat] for f in steps] == views
    assert [f.action for f in steps[1:]] == rec["actions"]
    assert complete_deals(results) == {0, 1, 2}


@pytest.mark.slow
def test_the_replay_page_steps_by_keys_and_buttons_in_chromium(results, tmp_path):
    rec = find_record(results, "d00002/r00")
    page = results / "replays" / replay_name(rec["match_id"])
    assert page.exists(), "the report writes the replay of every match of a complete deal"
    report = (results / "report.html").read_text()
    assert 'href="replays/index.html"' in report and 'href="bots/greedy.html"' in report
    seat = 1
    views, everyone = _engine_views(rec, seat)
    browser = Browser(str(tmp_path / "profile"))
    try:
        browser.open(page.as_uri() + f"#view={seat}")
        assert browser.js("document.getElementById('stepinfo').textContent").startswith("step 0 / ")
        shots = {0: browser.screenshot()}
        for _ in range(1, 4):
            browser.key("ArrowRight", 39)
        assert browser.js("document.getElementById('stepinfo').textContent").startswith(f"step 3 / {len(rec['actions'])}")
        shots[3] = browser.screenshot()
        browser.click("next")
        browser.click("next")
        browser.key("ArrowLeft", 37)
        assert browser.js("location.hash") == f"#view={seat}&step=4"
        for step in range(len(views)):
            browser.js(f"go({step})")
            shown = browser.js("document.getElementById('views').innerText")
            assert browser.js("document.querySelectorAll('#views .seat').length") == 1
            hand = browser.js("document.querySelector('#views .hand').textContent").split()
            assert hand == (views[step]["hand"] or ["–"])
            # no hidden card of the other seat: cards it holds that this seat's observation never names
            seen = set(CARD.findall(json.dumps(views[step])))
            hidden = set(everyone[step][1 - seat]["hand"]) - seen
            if step == 0:
                assert hidden, "at the deal the other seat holds cards this seat has not seen"
            assert not hidden & set(CARD.findall(shown)), (step, hidden & set(CARD.findall(shown)))
            assert set(CARD.findall(shown)) <= seen
        browser.js("go(0)")
        browser.js("document.getElementById('view').value='all'; document.getElementById('view').onchange({target:{value:'all'}})")
        both = browser.js("document.getElementById('views').innerText")
        assert set(everyone[0][0]["hand"]) | set(everyone[0][1]["hand"]) <= set(CARD.findall(both))
    finally:
        browser.close()
    a, b = (np.asarray(Image.open(__import__("io").BytesIO(shots[k])).convert("RGB")) for k in (0, 3))
    assert a.shape == b.shape and (a != b).any(axis=-1).sum() > 500  # the two steps look different


def _decode(diffs):
    """The observations a view's differences stand for (the page's ``build`` in Python)."""
    out, cur, acts = [], {}, []
    for d in diffs:
        cur = {**cur, **d.get("set", {})}
        for k in d.get("del", []):
            cur.pop(k)
        if "keep" in d:
            acts = acts[:d["keep"]] + d["add"]
        out.append({**cur, "actions": acts})
    return out


def test_a_one_seat_page_holds_exactly_what_the_seat_saw(results, tmp_path):
    rec = find_record(results, "d00000/r01")
    path = write_page(tmp_path / "seat0.html", rec, [0], everyone=False)
    text = path.read_text()
    data = json.loads(text.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert list(data["views"]) == ["0"] and data["everyone"] is False
    views, everyone = _engine_views(rec, 0)
    decoded = _decode(data["views"]["0"])
    assert [{k: v for k, v in o.items()} for o in decoded] == [dict(v, actions=v["actions"]) for v in views]
    # the other seat's hand at the deal is in no step of the page before the seat could see it
    unseen = set(everyone[0][1]["hand"]) - set(views[0]["hand"])
    assert unseen and not unseen & set(CARD.findall(json.dumps(decoded[0])))
    assert '"all"' not in text.split('id="view"', 1)[1].split("</select>", 1)[0]


def test_the_terminal_replay_and_the_rule_for_showing_it(results, tmp_path):
    out = arena("replay", str(results), "d00000/r00", "--seat", "1")
    assert out.returncode == 0, out.stderr
    rec = find_record(results, "d00000/r00")
    n = len(rec["actions"])
    assert len(re.findall(rf"step \d+ / {n} ", out.stdout)) == n + 1
    views, _ = _engine_views(rec, 1)
    first = out.stdout.split(f"step 1 / {n}", 1)[0]
    assert f"hand: {' '.join(views[0]['hand'])}" in first
    # a deal still being played (one of its matches missing): only one seat's view is offered
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in ("tournament.json", "secret.json"):
        (partial / name).write_text((results / name).read_text())
    lines = (results / "matches.jsonl").read_text().splitlines(keepends=True)
    kept = [x for x in lines if not json.loads(x)["match_id"].endswith("d00000/r01")]
    (partial / "matches.jsonl").write_text("".join(kept))
    assert complete_deals(partial) == {1, 2}
    refused = arena("replay", str(partial), "d00000/r00")
    assert refused.returncode == 2 and "still being played by other seatings" in refused.stderr
    assert arena("replay", str(partial), "d00000/r00", "--seat", "0").returncode == 0
    missing = arena("replay", str(results), "d00009/r00")
    assert missing.returncode == 2 and "no match 'd00009/r00'" in missing.stderr


def test_the_cli_writes_a_viewer_for_any_match(results, tmp_path):
    out = arena("replay", str(results), "d00001/r00", "--seat", "0", "--html", str(tmp_path / "one.html"))
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "one.html").read_text()
    data = json.loads(text.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
    rec = find_record(results, "d00001/r00")
    assert list(data["views"]) == ["0"] and not data["everyone"]
    assert _decode(data["views"]["0"]) == _engine_views(rec, 0)[0]
    both = arena("replay", str(results), "d00001/r00", "--html", str(tmp_path / "all.html"))
    assert both.returncode == 0, both.stderr
    data = json.loads((tmp_path / "all.html").read_text().split('type="application/json">', 1)[1].split("</script>", 1)[0])
    assert list(data["views"]) == ["0", "1"] and data["everyone"] is True
