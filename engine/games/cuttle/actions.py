"""Cuttle card tables and action values (rules file ``docs/rules/cuttle.md`` §3.1, §3.4).

Cards are French ids (``engine.cards``: ``suit * 13 + rank``, rank 0 = 2 … 12 = A).
Every table below is built once at import and indexed by card id.

An action is a small ``int``: ``kind << 12 | card << 6 | target`` where ``kind`` is one
of the ``K_*`` constants, ``card`` the card played (the lower card of a discard) and
``target`` the target card (a stack's base card, a permanent, a top jack, or the higher
card of a discard; 0 when unused). Values never depend on the state, so they can key
search-tree edges across determinizations.
"""

from __future__ import annotations

from engine.cards import FRENCH_RANKS, cards_of, french_str, parse_french
from engine.errors import ActionParseError

# ---------------------------------------------------------------- card tables (§3.1)

#: rank index (engine.cards) of the royals and the ace
R_J, R_Q, R_K, R_A = 9, 10, 11, 12

#: point value of a number card (A = 1, 2..10 face value); 0 for royals
VALUE: tuple[int, ...] = tuple(
    1 if c % 13 == R_A else (c % 13 + 2 if c % 13 <= 8 else 0) for c in range(52))

#: Cuttle rank of every card: A = 1, 2..10, J = 11, Q = 12, K = 13
CRANK: tuple[int, ...] = tuple(
    VALUE[c] if VALUE[c] else {R_J: 11, R_Q: 12, R_K: 13}[c % 13] for c in range(52))

#: scuttle order key: rank (A low … 10, then J Q K for the discard notation), suit c<d<h<s
ORDER: tuple[int, ...] = tuple(CRANK[c] * 4 + c // 13 for c in range(52))


def _mask_rank(crank: int) -> int:
    m = 0
    for c in range(52):
        if CRANK[c] == crank:
            m |= 1 << c
    return m


RANK_MASK: tuple[int, ...] = tuple(_mask_rank(r) if r else 0 for r in range(14))
ACES, TWOS, THREES, FOURS, FIVES, SIXES, SEVENS, EIGHTS, NINES, TENS = (RANK_MASK[r] for r in range(1, 11))
JACKS, QUEENS, KINGS = RANK_MASK[11], RANK_MASK[12], RANK_MASK[13]
ALL_CARDS = (1 << 52) - 1
#: number cards A..10 (can be points and scuttle)
NUMBERS = ALL_CARDS & ~(JACKS | QUEENS | KINGS)
#: one-off ranks without a target / with a target (§3.4)
ONEOFF_PLAIN = ACES | THREES | FOURS | FIVES | SIXES | SEVENS
ONEOFF_TARGETED = TWOS | NINES

#: BEATS[c]: the number cards that number card ``c`` may scuttle (§3.1 scuttle order)
BEATS: tuple[int, ...] = tuple(
    sum(1 << t for t in range(52) if (NUMBERS >> t & 1) and ORDER[t] < ORDER[c]) if (NUMBERS >> c & 1) else 0
    for c in range(52))

#: points needed by number of kings controlled (§3.1, ruling C-8)
THRESHOLD = (21, 14, 10, 7, 5)

#: the phases of a turn (§3.4-§3.7) and their names in observations
MAIN, COUNTER, TAKE, DISCARD, SEVEN, OVER = range(6)
PHASE_NAMES = ("main", "counter", "take", "discard", "seven", "over")
#: draw event kinds: a Draw, a 5's draws, a 7's card
DRAW_KINDS = ("draw", "five", "seven")


def points_of(ctrl_mask: int) -> int:
    """Sum of the base values of the stacks in ``ctrl_mask`` (§3.2 ``points(p)``)."""
    total = 0
    while ctrl_mask:
        low = ctrl_mask & -ctrl_mask
        total += VALUE[low.bit_length() - 1]
        ctrl_mask ^= low
    return total


# ---------------------------------------------------------------- action values

K_DRAW, K_PASS, K_POINTS, K_SCUTTLE, K_GLASSES, K_QUEEN, K_KING, K_JACK = range(8)
K_ONEOFF, K_ONEOFF_T, K_COUNTER, K_DECLINE, K_TAKE, K_DISCARD = range(8, 14)

DRAW = K_DRAW << 12
PASS = K_PASS << 12
DECLINE = K_DECLINE << 12


def make(kind: int, card: int = 0, target: int = 0) -> int:
    """The action value of ``kind`` with ``card`` and ``target`` (see module docstring)."""
    return kind << 12 | card << 6 | target


def discard_action(c1: int, c2: int) -> int:
    """``discard c1 c2`` with the two cards put in scuttle order (lower first)."""
    if ORDER[c1] > ORDER[c2]:
        c1, c2 = c2, c1
    return K_DISCARD << 12 | c1 << 6 | c2


_WORD = {K_POINTS: "points", K_GLASSES: "glasses", K_QUEEN: "queen", K_KING: "king",
         K_ONEOFF: "oneoff", K_COUNTER: "counter", K_TAKE: "take"}
_KIND_OF_WORD = {w: k for k, w in _WORD.items()}

NOTATION = ("draw | pass | points C | scuttle T with C | glasses C | queen C | king C | "
            "jack C on T | oneoff C | oneoff C on T | counter C | decline | take C | discard C1 C2")


def format_action(a: int) -> str:
    """The protocol string of action ``a`` (rules §3.4 "Protocol strings")."""
    kind, card, tgt = a >> 12, a >> 6 & 63, a & 63
    if kind == K_DRAW:
        return "draw"
    if kind == K_PASS:
        return "pass"
    if kind == K_DECLINE:
        return "decline"
    if kind == K_SCUTTLE:
        return f"scuttle {french_str(tgt)} with {french_str(card)}"
    if kind == K_JACK:
        return f"jack {french_str(card)} on {french_str(tgt)}"
    if kind == K_ONEOFF_T:
        return f"oneoff {french_str(card)} on {french_str(tgt)}"
    if kind == K_DISCARD:
        return f"discard {french_str(card)} {french_str(tgt)}"
    return f"{_WORD[kind]} {french_str(card)}"


def _card(text: str, whole: str) -> int:
    try:
        return parse_french(text)
    except ActionParseError:
        raise ActionParseError(f"cuttle: {whole!r}: {text!r} is not a card; expected {NOTATION}") from None


def parse_action(text: str) -> int:
    """The action value written ``text``.

    :raises ActionParseError: naming the text and the notation.
    """
    if not isinstance(text, str):
        raise ActionParseError(f"cuttle: {text!r} is not an action string; expected {NOTATION}")
    w = text.split()
    n = len(w)
    if n == 1 and w[0] in ("draw", "pass", "decline"):
        return {"draw": DRAW, "pass": PASS, "decline": DECLINE}[w[0]]
    if n == 2 and w[0] in _KIND_OF_WORD:
        c = _card(w[1], text)
        kind = _KIND_OF_WORD[w[0]]
        if kind == K_ONEOFF and ONEOFF_TARGETED >> c & 1:
            raise ActionParseError(f"cuttle: {text!r}: a {FRENCH_RANKS[c % 13]} one-off needs a target: 'oneoff C on T'")
        return make(kind, c)
    if n == 4 and w[0] == "scuttle" and w[2] == "with":
        return make(K_SCUTTLE, _card(w[3], text), _card(w[1], text))
    if n == 4 and w[0] == "jack" and w[2] == "on":
        return make(K_JACK, _card(w[1], text), _card(w[3], text))
    if n == 4 and w[0] == "oneoff" and w[2] == "on":
        return make(K_ONEOFF_T, _card(w[1], text), _card(w[3], text))
    if n == 3 and w[0] == "discard":
        c1, c2 = _card(w[1], text), _card(w[2], text)
        if c1 == c2:
            raise ActionParseError(f"cuttle: {text!r}: the two discarded cards must differ")
        return discard_action(c1, c2)
    raise ActionParseError(f"cuttle: {text!r} is not a Cuttle action; expected {NOTATION}")


def card_list(mask: int) -> list[str]:
    """The cards of ``mask`` as strings, in scuttle order (for observations)."""
    out = cards_of(mask)
    out.sort(key=ORDER.__getitem__)
    return [french_str(c) for c in out]
