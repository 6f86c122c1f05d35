"""``lineups: {adaptive: ...}`` in tournaments.yaml: accepted, defaults, and errors naming file and key."""

from __future__ import annotations

import textwrap

import pytest

from arena import config as cfg
from arena.adaptive import is_adaptive
from arena.errors import ConfigError


def _load(tmp_path, lineups: str, game: str = "agram", players: int = 3, extra: str = ""):
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(f"""\
        bots:
          a: {{cmd: [python, bot.py]}}
          b: {{cmd: [python, bot.py]}}
          c: {{cmd: [python, bot.py]}}
          d: {{cmd: [python, bot.py]}}
        tournaments:
          - name: big
            game: {game}
            players: {players}
            bots: [a, b, c, d]
            deals: 1
            lineups: {lineups}
            {extra}
        """))
    return path, cfg.load(path)


def test_adaptive_is_accepted_with_its_defaults(tmp_path):
    _, (t,) = _load(tmp_path, "{adaptive: {max_matches: 300}}")
    assert is_adaptive(t.model)
    a = t.model.lineups.adaptive
    assert (a.max_matches, a.per_round, a.first, a.explore, a.width) == (300, 2, 4, 0.2, None)
    _, (s,) = _load(tmp_path, "{sample: {per_bot: 2}}")
    assert not is_adaptive(s.model)


@pytest.mark.parametrize("lineups, words", [
    ("{adaptive: {max_matchs: 300}}", ["key 'lineups.adaptive.max_matchs'", "did you mean 'max_matches'"]),
    ("{adaptive: {per_round: 2}}", ["key 'lineups.adaptive.max_matches'", "missing"]),
    ("{adaptive: {max_matches: 300, explore: 1.5}}", ["key 'lineups.adaptive.explore'", "less than or equal to 1"]),
    ("{adaptive: {max_matches: true}}", ["key 'lineups.adaptive.max_matches'", "got true"]),
    ("{adaptive: {max_matches: 300, width: -1}}", ["key 'lineups.adaptive.width'"]),
])
def test_bad_adaptive_keys_name_file_key_and_remedy(tmp_path, lineups, words):
    with pytest.raises(ConfigError) as e:
        _load(tmp_path, lineups)
    msg = str(e.value)
    assert str(tmp_path / "t.yaml") in msg and "tournament 'big'" in msg and "docs/config.md" in msg
    for w in words:
        assert w in msg, msg
    assert "Traceback" not in msg and "\n" not in msg


def test_adaptive_with_mixed_partners_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"key 'lineups': adaptive works with free-for-all games and partners: self"):
        _load(tmp_path, "{adaptive: {max_matches: 300}}", game="sedma", players=4, extra="partners: mixed")
