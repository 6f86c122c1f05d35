"""Gargon card tables and notation (docs/rules/gargon.md §4.1, §4.3 "Protocol strings").

Cards: 102 physical ids, ``id = colour * 17 + k``; colours in the canonical order
W, B, V, R, Y, G (``COLOURS = "wbvryg"``, §4.1 and §4.3 "Canonical order"); ``k = 0, 1``
are the two zeros, ``k = v + 1`` is value ``v`` for ``v = 1..15``. Id order is therefore
the canonical selection order, and the two zeros of a colour are adjacent.

A *face* is a card's identity (colour, value): ``face = colour * 16 + value`` (0..95);
the two zeros of a colour share one face (rules §0.1: actions are defined by value).

Actions (small ints, state-independent): ``0..95`` = ``SELECT(face)``, then ``DONE``,
``PASS``, ``DRAW_A``, ``DRAW_B``, ``STOP`` (§4.3 "Protocol strings").
"""

from __future__ import annotations

from engine.errors import ActionParseError

COLOURS = "wbvryg"
NCOL = 6
PER_COLOUR = 17
NCARDS = NCOL * PER_COLOUR  # 102
NFACES = NCOL * 16  # 96

DONE = 96
PASS = 97
DRAW_A = 98
DRAW_B = 99
STOP = 100

#: the engine amulet table of §4.1 (value -> amulets); CONFIG ``amulets``.
DEFAULT_AMULETS: tuple[int, ...] = (0, 5, 4, 4, 3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0)

COLOUR_OF: tuple[int, ...] = tuple(i // PER_COLOUR for i in range(NCARDS))
VALUE_OF: tuple[int, ...] = tuple(max(0, i % PER_COLOUR - 1) for i in range(NCARDS))
FACE_OF: tuple[int, ...] = tuple(COLOUR_OF[i] * 16 + VALUE_OF[i] for i in range(NCARDS))
#: per colour, the mask of its 17 card ids.
COLOUR_MASK: tuple[int, ...] = tuple(((1 << PER_COLOUR) - 1) << (PER_COLOUR * c) for c in range(NCOL))
#: per face, the mask of its physical ids (two for a zero).
FACE_MASK: tuple[int, ...] = tuple(
    (0b11 << (17 * (f // 16))) if f % 16 == 0 else 1 << (17 * (f // 16) + f % 16 + 1) for f in range(NFACES))
#: per card id, the mask of the ids strictly after it in canonical order within its colour.
AFTER_MASK: tuple[int, ...] = tuple(COLOUR_MASK[COLOUR_OF[i]] & ~((1 << (i + 1)) - 1) for i in range(NCARDS))
FULL_DECK = (1 << NCARDS) - 1

FACE_STR: tuple[str, ...] = tuple(COLOURS[f // 16] + str(f % 16) for f in range(NFACES))
_FACE_INDEX = {s: f for f, s in enumerate(FACE_STR)}

ACTION_STR: tuple[str, ...] = tuple("select " + s for s in FACE_STR) + ("done", "pass", "draw a", "draw b", "stop")
_ACTION_INDEX = {s: a for a, s in enumerate(ACTION_STR)}


def face_str(face: int) -> str:
    """``'r11'`` for a face (colour letter + value)."""
    return FACE_STR[face]


def parse_face(text: str) -> int:
    """The face written ``text`` (``'r11'``, ``'w0'``).

    :raises ActionParseError: naming the text.
    """
    f = _FACE_INDEX.get(text.strip().lower())
    if f is None:
        raise ActionParseError(f"{text!r} is not a Gargon card (expected colour w b v r y g + value 0-15, e.g. 'r11')")
    return f


def format_action(action: int) -> str:
    """The protocol string of an action int (§4.3 "Protocol strings")."""
    return ACTION_STR[action]


def parse_action(text: str) -> int:
    """The action int of ``text``: ``select r11``, ``done``, ``pass``, ``draw a``, ``draw b``, ``stop``.

    :raises ActionParseError: naming the text and the notation.
    """
    a = _ACTION_INDEX.get(text)
    if a is None:
        a = _ACTION_INDEX.get(" ".join(text.lower().split()))
    if a is None:
        raise ActionParseError(
            f"gargon: {text!r} is not an action (expected 'select r11', 'done', 'pass', 'draw a', 'draw b' or 'stop')")
    return a


def colour_counts(mask: int) -> list[int]:
    """Per colour (W..G), the number of cards of ``mask``."""
    return [(mask & m).bit_count() for m in COLOUR_MASK]


def colour_string(mask: int) -> str:
    """The colours of ``mask`` as letters in canonical order (``'rrrrbbbggg'`` sorted W..G)."""
    return "".join(COLOURS[c] * (mask & COLOUR_MASK[c]).bit_count() for c in range(NCOL))


def faces_of(mask: int) -> list[str]:
    """The faces of ``mask`` as strings, in canonical order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(FACE_STR[FACE_OF[low.bit_length() - 1]])
        mask ^= low
    return out
