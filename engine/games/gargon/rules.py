"""Gargon tables, notation, patterns, battles and scoring (docs/rules/gargon.md §4.1–§4.6).

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

from collections.abc import Sequence
from itertools import combinations

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

#: the allowed patterns of §4.3 (sorted counts per colour, largest first).
ALLOWED_PATTERNS = frozenset({(1,), (2,), (1, 1), (2, 1), (1, 1, 1)})

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


def pattern_of(colour_counts: Sequence[int]) -> tuple[int, ...]:
    """The pattern of a play: its non-zero per-colour counts, largest first (§4.3 "Patterns")."""
    return tuple(sorted((x for x in colour_counts if x), reverse=True))


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


def completable(sel_counts: Sequence[int], last_colour: int, same_after: int, hand_counts: Sequence[int],
                allowed_colours: int, pattern: tuple[int, ...] | None, size: int) -> bool:
    """Whether a selection can be completed to a legal play (§4.3 "Action model").

    :param sel_counts: per colour, the selection's counts (including its last card).
    :param last_colour: colour of the selection's last card (extras come only from colours
        ``>= last_colour``; canonical order).
    :param same_after: how many hand cards of ``last_colour`` lie after the last card.
    :param hand_counts: per colour, the hand's counts (unselected cards).
    :param allowed_colours: bitmask of colours a follower may use (all six, or the colours
        already played this round for the last player).
    :param pattern: the start player's pattern for a follower, ``None`` for the start player.
    :param size: the number of cards selected.
    :returns: True if the selection is itself complete or some completion exists.
    """
    if pattern is None:
        # the start player: any 1-3 cards but three of one colour; every prefix is complete
        return size <= 3 and max(sel_counts) < 3
    m = sum(pattern)
    rem = m - size
    if rem < 0:
        return False
    if rem == 0:
        return pattern_of(sel_counts) == pattern
    sc = list(sel_counts)
    avail = [0] * NCOL
    avail[last_colour] = same_after
    for c in range(last_colour + 1, NCOL):
        if allowed_colours >> c & 1:
            avail[c] = hand_counts[c]
    cols = [c for c in range(last_colour, NCOL) if avail[c]]
    if rem == 1:
        for c in cols:
            sc[c] += 1
            ok = pattern_of(sc) == pattern
            sc[c] -= 1
            if ok:
                return True
        return False
    for i, c1 in enumerate(cols):
        for c2 in cols[i:]:
            if c1 == c2 and avail[c1] < 2:
                continue
            sc[c1] += 1
            sc[c2] += 1
            ok = pattern_of(sc) == pattern
            sc[c1] -= 1
            sc[c2] -= 1
            if ok:
                return True
    return False


def legal_plays(hand_faces: Sequence[int], pattern: tuple[int, ...] | None, allowed_colours: int = 0b111111
                ) -> list[tuple[int, ...]]:
    """Every complete legal play from a hand, as canonical face tuples (§4.3).

    :param hand_faces: the hand's faces (a zero twice if both are held).
    :param pattern: the start player's pattern (follower) or ``None`` (start player).
    :param allowed_colours: colour bitmask for the last player's limit.
    :returns: distinct plays (zeros merged), in canonical order.
    """
    faces = sorted(hand_faces)
    out: set[tuple[int, ...]] = set()
    sizes = (1, 2, 3) if pattern is None else (sum(pattern),)
    for size in sizes:
        for play in combinations(faces, size):
            counts = [0] * NCOL
            for f in play:
                counts[f // 16] += 1
            pat = pattern_of(counts)
            if pattern is None:
                if pat in ALLOWED_PATTERNS:
                    out.add(play)
            elif pat == pattern and all(allowed_colours >> (f // 16) & 1 for f in play):
                out.add(play)
    return sorted(out)


def resolve_battles(played: Sequence[int]) -> tuple[list[int], int]:
    """Step 2, the battles of one round (§4.3 "Step 2").

    :param played: per seat, the mask of cards it played this round (0 = passed).
    :returns: ``(won, discarded)``: per seat the mask of cards won (to its stash), and
        the mask of discarded cards. Ties at the top of a battle discard every tied card.
    """
    n = len(played)
    won = [0] * n
    discarded = 0
    for c in range(NCOL):
        cm = COLOUR_MASK[c]
        battle1: list[tuple[int, int]] = []  # (value, card id)
        battle2: list[tuple[int, int]] = []
        owner: dict[int, int] = {}
        for s in range(n):
            m = played[s] & cm
            if not m:
                continue
            hi = m.bit_length() - 1
            battle1.append((VALUE_OF[hi], hi))
            owner[hi] = s
            rest = m ^ (1 << hi)
            if rest:
                lo = rest.bit_length() - 1
                battle2.append((VALUE_OF[lo], lo))
                owner[lo] = s
        for battle in (battle1, battle2):
            if not battle:
                continue
            top = max(v for v, _ in battle)
            winners = [card for v, card in battle if v == top]
            if len(winners) == 1:
                w = winners[0]
                won[owner[w]] |= 1 << w
                for _, card in battle:
                    if card != w:
                        discarded |= 1 << card
            else:
                for _, card in battle:
                    discarded |= 1 << card
    return won, discarded


def scores(stashes: Sequence[int], amulets: Sequence[int]) -> list[int]:
    """Totals of §4.6: amulets × (1, 2, 4)[zeros] per colour, plus +10 / +5 colour bonuses.

    :param stashes: per seat, the stash mask.
    :param amulets: the amulet table (16 entries, by value).
    """
    n = len(stashes)
    total = [0] * n
    mult = (1, 2, 4)
    for c in range(NCOL):
        cm = COLOUR_MASK[c]
        zero_mask = 0b11 << (17 * c)
        counts = []
        for s in range(n):
            m = stashes[s] & cm
            counts.append(m.bit_count())
            if m:
                am = 0
                mm = m
                while mm:
                    low = mm & -mm
                    am += amulets[VALUE_OF[low.bit_length() - 1]]
                    mm ^= low
                total[s] += am * mult[(m & zero_mask).bit_count()]
        top = max(counts)
        if top >= 1:
            leaders = [s for s in range(n) if counts[s] == top]
            bonus = 10 if len(leaders) == 1 else 5
            for s in leaders:
                total[s] += bonus
    return total
