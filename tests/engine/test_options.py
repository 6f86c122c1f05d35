"""The shared seat-or-``"random"`` option (``first_dealer``, ``first_start``) of engine/core.py."""

from __future__ import annotations

import pytest

from engine.core import seat_option
from engine.errors import OptionError
from engine.registry import all_games
from engine.seeds import hand_rng

SEAT_KEYS = ("first_dealer", "first_start")


def _seat_options():
    for g in all_games():
        for key in SEAT_KEYS:
            if key in g.options:
                yield g, key


def test_seat_option_accepts_seats_below_the_bound_and_random():
    opt = seat_option("first_dealer", "doc", expected="a seat number 0..4 or 'random'", below=5)
    assert opt.default == 0
    for ok in (0, 4, "random"):
        assert opt.validate("g", ok) == ok
    for bad in (5, -1, True, 1.0, "x", None):
        with pytest.raises(OptionError, match=r"g: option 'first_dealer' got .*; expected a seat number 0\.\.4"):
            opt.validate("g", bad)
    unbounded = seat_option("first_dealer", "doc", expected="a seat number or 'random'")
    assert unbounded.validate("g", 1000) == 1000


@pytest.mark.parametrize("game,key", list(_seat_options()), ids=lambda x: getattr(x, "name", x))
def test_every_game_resolves_its_seat_option_the_same_way(game, key):
    n = game.max_players
    purpose = "dealer" if game.name == "cuttle" else key
    assert game.seat_from_option({key: n - 1}, key, n, 7) == n - 1
    for seed in range(5):
        want = hand_rng(seed, 0, purpose).randrange(n)
        assert game.seat_from_option({key: "random"}, key, n, seed, purpose if game.name == "cuttle" else None) == want
    if game.min_players < game.max_players:
        with pytest.raises(OptionError) as e:
            game.new_match(game.min_players, 1, **{key: game.max_players - 1})
        text = str(e.value)
        assert game.name in text and key in text and repr(game.max_players - 1) in text and "random" in text


def test_an_unknown_option_suggests_the_closest_key():
    """New-user trial (session 13): ``-o mach=single`` named the known keys but not the typo's."""
    from engine import registry

    with pytest.raises(OptionError, match=r"sedma: unknown option 'mach' \(did you mean 'match'\?\); known options: "):
        registry.get_game("sedma").resolve_options({"mach": "single"})
    with pytest.raises(OptionError) as e:
        registry.get_game("sedma").resolve_options({"zzzz": 1})
    assert "did you mean" not in str(e.value)
