"""Five-card poker hand strength for Whiskey Poker (rules whiskey_poker.md §2.1).

The strength comes from the ``phevaluator`` library (perfect-hash evaluator in C,
Apache-2.0, no dependencies; chosen with ``bench/hand_evaluators.py``: correct on the
wheel, kickers, full flush comparison and multi-way ties, ~1.4 M evaluations/s; eval7 is
2x faster but pulls in ``future`` and ``pyparsing`` and warns on import, treys/deuces
are unmaintained pure Python, pokerkit is 14x slower). Without it a plain Python
reading of §2.1 is used, which orders hands identically
(``tests/games/test_whiskey_poker.py`` checks both agree).

Strengths are ints, **higher is better**, equal exactly when §2.1 says the hands tie.
"""

from __future__ import annotations

from engine.cards import cards_of

CATEGORIES = ("high card", "one pair", "two pair", "three of a kind", "straight", "flush",
              "full house", "four of a kind", "straight flush")


def reference_strength(cards: list[int]) -> int:
    """Strength of 5 French card ids by §2.1 read literally (higher is better).

    Encodes ``(category, tie-break ranks...)`` base 16: category 0 = high card … 8 =
    straight flush; A-2-3-4-5 is a 5-high straight; no wrap-around.
    """
    ranks = sorted((c % 13 for c in cards), reverse=True)
    flush = len({c // 13 for c in cards}) == 1
    counts: dict[int, int] = {}
    for r in ranks:
        counts[r] = counts.get(r, 0) + 1
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    order = [r for r, _ in groups]
    top = -1
    if len(counts) == 5:
        if ranks[0] - ranks[4] == 4:
            top = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:
            top = 3
    if top >= 0 and flush:
        key = [8, top]
    elif shape == (4, 1):
        key = [7, *order]
    elif shape == (3, 2):
        key = [6, *order]
    elif flush:
        key = [5, *ranks]
    elif top >= 0:
        key = [4, top]
    elif shape == (3, 1, 1):
        key = [3, *order]
    elif shape == (2, 2, 1):
        key = [2, *order]
    elif shape == (2, 1, 1, 1):
        key = [1, *order]
    else:
        key = [0, *ranks]
    key += [0] * (6 - len(key))
    value = 0
    for k in key:
        value = value * 16 + k
    return value


def reference_category(cards: list[int]) -> int:
    """Category index (0 = high card … 8 = straight flush) of 5 card ids."""
    return reference_strength(cards) >> 20


try:  # pragma: no branch - which backend depends on the installation
    try:  # the native 5-card evaluator itself: the public wrapper re-checks every card id (5x the cost)
        from phevaluator._pheval import evaluate_5cards as _evaluate
    except ImportError:  # pragma: no cover - a phevaluator without the private module
        from phevaluator import evaluate_cards as _evaluate

    # phevaluator's card ids are rank * 4 + suit (ranks 2..A, suits c d h s); lower = stronger
    _PH = tuple((c % 13) * 4 + c // 13 for c in range(52))
    BACKEND = "phevaluator"

    def strength(mask: int) -> int:
        """Strength of the 5-card hand ``mask`` (higher is better; equal = tie, §2.1)."""
        ph = _PH
        a, b, c, d, e = cards_of(mask)
        return -_evaluate(ph[a], ph[b], ph[c], ph[d], ph[e])
except ImportError:  # pragma: no cover - exercised only where phevaluator is missing
    BACKEND = "reference"

    def strength(mask: int) -> int:
        """Strength of the 5-card hand ``mask`` (higher is better; equal = tie, §2.1)."""
        return reference_strength(cards_of(mask))


def category_name(mask: int) -> str:
    """``'two pair'`` etc. for the 5-card hand ``mask`` (§2.1 categories)."""
    return CATEGORIES[reference_category(cards_of(mask))]
