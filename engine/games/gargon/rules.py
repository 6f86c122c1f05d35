"""Gargon play rules: patterns, the selection combinatorics, battles and scoring
(docs/rules/gargon.md §4.3–§4.6); the card tables are in :mod:`engine.games.gargon.actions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from engine.games.gargon.actions import COLOUR_MASK, NCOL, PER_COLOUR, VALUE_OF

#: the allowed patterns of §4.3 (sorted counts per colour, largest first).
ALLOWED_PATTERNS = frozenset({(1,), (2,), (1, 1), (2, 1), (1, 1, 1)})


def pattern_of(colour_counts: Sequence[int]) -> tuple[int, ...]:
    """The pattern of a play: its non-zero per-colour counts, largest first (§4.3 "Patterns")."""
    return tuple(sorted((x for x in colour_counts if x), reverse=True))


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


# ---------------------------------------------------------------- hot-path tables (state.py)

#: a selection (at most 3 cards, canonical order) is coded by its colour sequence:
#: ``code = code * 7 + colour + 1`` per selected card (0 = empty).
SEL_STEP = 7
#: per selection code: ``(colour counts, last colour or 0, pattern, colour bitmask)``;
#: every sequence of up to 3 colours (the engine only builds non-decreasing ones).
SEL_INFO: dict[int, tuple[tuple[int, ...], int, tuple[int, ...], int]] = {}


def _build_sel_info() -> None:
    seqs: list[tuple[int, ...]] = [()]
    for size in (1, 2, 3):
        seqs += [s + (c,) for s in seqs if len(s) == size - 1 for c in range(NCOL)]
    for s in seqs:
        code = 0
        counts = [0] * NCOL
        cols = 0
        for c in s:
            code = code * SEL_STEP + c + 1
            counts[c] += 1
            cols |= 1 << c
        SEL_INFO[code] = (tuple(counts), s[-1] if s else 0, pattern_of(counts), cols)


def _seg_faces(colour: int, first: int, bits: int) -> tuple[tuple[int, ...], ...]:
    """Per value of ``bits`` bits, the distinct faces of colour ``colour`` held in its ids
    ``17 * colour + first ...`` (canonical order; two zeros give one face)."""
    table: list[tuple[int, ...]] = [()]
    for k in range(first, first + bits):
        f = colour * 16 + max(0, k - 1)
        # the values with top bit k: the faces below, then f (a second zero adds nothing)
        table += [prev if prev and prev[-1] == f else prev + (f,) for prev in table]
    return tuple(table)


#: per colour, the faces of the ids ``17c + 0..8`` (9 bits, the two zeros merged) and of
#: ``17c + 9..16`` (8 bits), each as a tuple in canonical order, indexed by the bits.
SEG_LO: tuple[tuple[tuple[int, ...], ...], ...] = tuple(_seg_faces(c, 0, 9) for c in range(NCOL))
SEG_HI: tuple[tuple[tuple[int, ...], ...], ...] = tuple(_seg_faces(c, 9, 8) for c in range(NCOL))

#: ``(pattern, selection code, colour, caps of the later colours)`` -> the colour's ``need``
#: in :func:`select_plan` (3: no completion); a completion through colour ``c`` uses only
#: ``c``'s later cards and the later colours.
_NEED_CACHE: dict[tuple, int] = {}


def select_plan(pattern: tuple[int, ...] | None, code: int, caps: Sequence[int]
                ) -> tuple[tuple[tuple[int, int], ...], bool]:
    """Which next ``SELECT``s keep a selection completable, per colour.

    The legal next cards of colour ``c`` (``c`` at least the selection's last colour) are
    the hand cards after the last selected card whose number of same-colour hand cards
    after them is at least ``need``: :func:`completable` depends on the card only through
    its colour and that number (capped at 2), and is monotone in it.

    :param pattern: the start player's pattern (follower) or ``None`` (start player).
    :param code: the selection's code (:data:`SEL_INFO`).
    :param caps: per colour, ``min(2, hand count)`` for the colours the player may use, 0
        for the others (``()`` for the start player, who may use every colour); a colour
        with 0 is skipped.
    :returns: ``((colour, need), ...)`` in colour order for colours with some completion
        (``need`` in 0..2), and whether ``DONE`` is legal.
    """
    counts, last, sel_pat, _ = SEL_INFO[code]
    size = sum(counts) + 1
    entries: list[tuple[int, int]] = []
    if size > (3 if pattern is None else sum(pattern)):
        done = True  # nothing more to select
    elif pattern is None:
        entries = [(c, 0) for c in range(last, NCOL) if counts[c] < 2]
        done = size > 1
    else:
        for c in range(last, NCOL):
            if not caps[c]:
                continue  # not allowed, or no card of c in hand
            key = (pattern, code, c, tuple(caps[c + 1:]))
            need = _NEED_CACHE.get(key)
            if need is None:
                sc = list(counts)
                sc[c] += 1
                need = 3
                for k in (0, 1, 2):
                    if completable(sc, c, k, caps, 0b111111, pattern, size):
                        need = k
                        break
                _NEED_CACHE[key] = need
            if need < 3:
                entries.append((c, need))
        done = size > 1 and sel_pat == pattern
    return tuple(entries), done


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
    every = 0
    for m in played:
        every |= m
    for c in range(NCOL):
        cm = COLOUR_MASK[c]
        if not every & cm:
            continue
        battle1 = battle2 = 0  # masks of the cards in each battle (one per seat)
        for m in played:
            m &= cm
            if m:
                hi = 1 << (m.bit_length() - 1)
                battle1 |= hi
                m ^= hi
                if m:
                    battle2 |= 1 << (m.bit_length() - 1)
        for battle in (battle1, battle2):
            if not battle:
                continue
            top = battle.bit_length() - 1
            if battle & (battle - 1) and VALUE_OF[top] == 0:
                discarded |= battle  # only zeros: a tie at the top discards them all
                continue
            for s in range(n):
                if played[s] >> top & 1:
                    won[s] |= 1 << top
                    break
            discarded |= battle ^ (1 << top)
    return won, discarded


_build_sel_info()


#: per amulet table: the amulet sums of the 9 low and 8 high bits of a colour's 17-id segment.
_AMULET_SUMS: dict[tuple[int, ...], tuple[list[int], list[int]]] = {}


def _amulet_sums(amulets: Sequence[int]) -> tuple[list[int], list[int]]:
    key = tuple(amulets)
    sums = _AMULET_SUMS.get(key)
    if sums is None:
        seg = [amulets[VALUE_OF[k]] for k in range(PER_COLOUR)]  # per id within a colour
        lo = [sum(seg[j] for j in range(9) if b >> j & 1) for b in range(512)]
        hi = [sum(seg[9 + j] for j in range(8) if b >> j & 1) for b in range(256)]
        sums = _AMULET_SUMS[key] = (lo, hi)
    return sums


def scores(stashes: Sequence[int], amulets: Sequence[int]) -> list[int]:
    """Totals of §4.6: amulets × (1, 2, 4)[zeros] per colour, plus +10 / +5 colour bonuses.

    :param stashes: per seat, the stash mask.
    :param amulets: the amulet table (16 entries, by value).
    """
    n = len(stashes)
    total = [0] * n
    mult = (1, 2, 4)
    lo, hi = _amulet_sums(amulets)
    for c in range(NCOL):
        shift = PER_COLOUR * c
        counts = []
        for s in range(n):
            m = stashes[s] >> shift & 0x1FFFF
            counts.append(m.bit_count())
            if m:
                total[s] += (lo[m & 511] + hi[m >> 9]) * mult[(m & 3).bit_count()]
        top = max(counts)
        if top >= 1:
            leaders = [s for s in range(n) if counts[s] == top]
            bonus = 10 if len(leaders) == 1 else 5
            for s in leaders:
                total[s] += bonus
    return total
