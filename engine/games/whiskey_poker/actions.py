"""Whiskey Poker actions: int codes, protocol strings and parsing (rules whiskey_poker.md §2.3).

Every action is a small ``int`` whose meaning does not depend on the state:

* ``CHECK`` … ``TAKE_ALL`` are the codes 0..9 (strings ``check``, ``bet``, ``call``,
  ``raise``, ``fold``, ``exchange``, ``knock``, ``pass``, ``stand``, ``take all``);
* ``TAKE_ONE(w, h)`` is ``TAKE_BASE + 52 * w + h`` for French card ids ``w`` (taken from
  the face-up widow) and ``h`` (given from the hand), written ``take 9d give 5s``.

Formatting is a table look-up; parsing is a dict look-up with a tolerant fallback
(``10d`` for ``Td``, extra spaces, upper case words).
"""

from __future__ import annotations

from engine.cards import cards_of, french_str, parse_french
from engine.errors import ActionParseError

CHECK, BET, CALL, RAISE, FOLD, EXCHANGE, KNOCK, PASS, STAND, TAKE_ALL = range(10)
TAKE_BASE = 16
WORDS = ("check", "bet", "call", "raise", "fold", "exchange", "knock", "pass", "stand", "take all")
BETTING_ACTIONS = frozenset((CHECK, BET, CALL, RAISE, FOLD))


def take_one(w: int, h: int) -> int:
    """The code of ``TAKE_ONE(w, h)``: take widow card ``w``, give hand card ``h`` (card ids 0..51)."""
    return TAKE_BASE + 52 * w + h


def take_parts(action: int) -> tuple[int, int]:
    """``(w, h)`` of a ``TAKE_ONE`` code (undefined for other codes)."""
    return divmod(action - TAKE_BASE, 52)


def is_take_one(action: object) -> bool:
    """True for a ``TAKE_ONE`` code."""
    return isinstance(action, int) and TAKE_BASE <= action < TAKE_BASE + 52 * 52


#: TAKE[w][h] = code, for the legal-move generator.
TAKE: tuple[tuple[int, ...], ...] = tuple(tuple(take_one(w, h) for h in range(52)) for w in range(52))

_STRINGS: dict[int, str] = {code: word for code, word in enumerate(WORDS)}
for _w in range(52):
    for _h in range(52):
        _STRINGS[take_one(_w, _h)] = f"take {french_str(_w)} give {french_str(_h)}"
_PARSE: dict[str, int] = {text: code for code, text in _STRINGS.items()}

NOTATION = ("check | bet | call | raise | fold | exchange | knock | pass | stand | take all | "
            "take <card> give <card> (e.g. 'take 9d give 5s')")


def format_action(action: int) -> str:
    """The protocol string of ``action``.

    :raises ActionParseError: if ``action`` is not a Whiskey Poker action code.
    """
    try:
        return _STRINGS[action]
    except (KeyError, TypeError):
        raise ActionParseError(f"whiskey_poker: {action!r} is not an action code") from None


def parse_action(text: str) -> int:
    """The action code written ``text``.

    :raises ActionParseError: naming the text and the expected notation.
    """
    if not isinstance(text, str):
        raise ActionParseError(f"whiskey_poker: {text!r} is not an action string; expected {NOTATION}")
    code = _PARSE.get(text)
    if code is not None:
        return code
    words = text.strip().lower().split()
    joined = " ".join(words)
    code = _PARSE.get(joined)
    if code is not None:
        return code
    if len(words) == 4 and words[0] == "take" and words[2] == "give":
        try:
            return take_one(parse_french(words[1]), parse_french(words[3]))
        except ActionParseError:
            pass
    raise ActionParseError(f"whiskey_poker: cannot parse {text!r}; expected {NOTATION}")


#: the betting and exchange phases of a hand (rules "Play"), in order
BET1, EX1, BET2, EX2, BET3, OVER = range(6)
PHASE_NAMES = ("bet1", "exchange1", "bet2", "exchange2", "bet3", "over")


def cards_text(mask: int) -> list[str]:
    """The cards of a 52-bit ``mask`` as French strings (``"TH"``), in card order."""
    return [french_str(c) for c in cards_of(mask)]
