"""Seeds (keyed BLAKE2b) and card notation."""

from __future__ import annotations

import pytest

from engine import cards
from engine.deal import deal_hands, shuffled
from engine.errors import ActionParseError
from engine.seeds import bot_seed, deal_seed, h64


def test_salt_changes_the_deal_for_the_same_match():
    # a bot that knows the match id, its seat, its seed and the game cannot rebuild the deal:
    # the deal seed is keyed by the secret salt
    a = deal_seed("salt-a", "agram", 0)
    b = deal_seed("salt-b", "agram", 0)
    assert a != b
    assert shuffled(range(35), a, 0) != shuffled(range(35), b, 0)
    assert bot_seed("salt-a", "t/x+y/d00000/r00", 1) != bot_seed("salt-b", "t/x+y/d00000/r00", 1)
    assert 0 <= a < 2**64 and h64("k", 1, 2) == h64("k", 1, 2)


def test_deal_seed_independent_of_rotation_and_lineup():
    assert deal_seed("s", "agram", 3) == deal_seed("s", "agram", 3)
    assert deal_seed("s", "agram", 3) != deal_seed("s", "agram", 4)
    assert deal_seed("s", "agram", 3) != deal_seed("s", "sedma", 3)


def test_hands_are_separate_shuffles():
    assert shuffled(range(52), 7, 0) != shuffled(range(52), 7, 1)
    assert sorted(shuffled(range(52), 7, 1)) == list(range(52))


def test_deal_hands():
    hands, rest = deal_hands(list(range(10)), 3, 2, first=1)
    assert hands == [[4, 5], [0, 1], [2, 3]] and rest == [6, 7, 8, 9]
    with pytest.raises(ValueError):
        deal_hands(list(range(5)), 3, 2)


def test_french_notation_round_trip():
    for c in range(52):
        assert cards.parse_french(cards.french_str(c)) == c
    assert cards.french_str(cards.parse_french("10d")) == "Td"
    with pytest.raises(ActionParseError, match="'Xh'"):
        cards.parse_french("Xh")


def test_spanish_notation_round_trip():
    for c in range(40):
        assert cards.parse_spanish(cards.spanish_str(c)) == c
    assert cards.spanish_str(cards.parse_spanish("12o")) == "12o"
    with pytest.raises(ActionParseError):
        cards.parse_spanish("8o")


def test_masks():
    m = cards.mask_of([3, 0, 9])
    assert cards.cards_of(m) == [0, 3, 9] and cards.count(m) == 3
    assert cards.lowest(m) == 0 and cards.highest(m) == 9
    cs = cards.CardSet.of([1, 2]) | cards.CardSet.of([5])
    assert list(cs) == [1, 2, 5] and 5 in cs and 4 not in cs and len(cs) == 3


def test_option_choices_require_the_same_type():
    from engine import registry
    from engine.errors import OptionError

    game = registry.get_game("cuttle")
    assert game.resolve_options({"first_dealer": 1})["first_dealer"] == 1
    for bad in (True, 1.0, "1"):
        with pytest.raises(OptionError, match="first_dealer"):
            game.resolve_options({"first_dealer": bad})
