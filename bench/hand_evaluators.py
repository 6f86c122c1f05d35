"""Compare poker hand evaluators from PyPI for Whiskey Poker (issue 5; rules whiskey_poker.md §2.1).

Run: ``python bench/hand_evaluators.py [--hands N]``. Prints, per library, whether it is
installed, the correctness checks it passes (the wheel A-2-3-4-5, kickers, full flush
comparison, multi-way ties, the worked scenario W-S1, and agreement with a plain reference
implementation of §2.1 on random pairs) and its speed in five-card evaluations per second
(one core, cards pre-converted to the library's own representation, as the engine does).

Choice (engine/games/whiskey_poker/hands.py): **phevaluator** — correct on every check,
~1.4 M evaluations/s (a showdown needs at most 9), a C extension with no dependencies,
Apache-2.0, maintained. eval7 is about 2x faster but depends on ``future`` and
``pyparsing`` and emits deprecation warnings on import; treys and deuces are unmaintained
pure Python; pokerkit is well kept but ~14x slower.

Candidates: treys, deuces, phevaluator, eval7, pokerkit. Every one is optional; a missing
library is reported and skipped. Libraries return a strength where *lower is better*
(treys, deuces, phevaluator) or *higher is better* (eval7, pokerkit); each adapter below
returns a key where higher is better.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from itertools import combinations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = [r + s for s in SUITS for r in RANKS]


# ---------------------------------------------------------------- reference (§2.1 read literally)

def reference_key(cards: Sequence[str]) -> tuple:
    """Category and tie-break ranks of a 5-card hand, higher is better (rules §2.1)."""
    ranks = sorted((RANKS.index(c[0]) for c in cards), reverse=True)
    suits = {c[1] for c in cards}
    counts = {r: ranks.count(r) for r in set(ranks)}
    by_count = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    flush = len(suits) == 1
    distinct = sorted(set(ranks), reverse=True)
    straight_top = None
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            straight_top = distinct[0]
        elif distinct == [12, 3, 2, 1, 0]:  # A-2-3-4-5 counts 5-high; no wrap-around
            straight_top = 3
    shape = [c for _, c in by_count]
    order = [r for r, _ in by_count]
    if straight_top is not None and flush:
        return (8, straight_top)
    if shape == [4, 1]:
        return (7, *order)
    if shape == [3, 2]:
        return (6, *order)
    if flush:
        return (5, *ranks)
    if straight_top is not None:
        return (4, straight_top)
    if shape == [3, 1, 1]:
        return (3, *order)
    if shape == [2, 2, 1]:
        return (2, *order)
    if shape == [2, 1, 1, 1]:
        return (1, *order)
    return (0, *ranks)


# ---------------------------------------------------------------- adapters

def _treys() -> Callable[[Sequence[str]], Callable[[], int]]:
    from treys import Card, Evaluator
    ev = Evaluator()
    table = {c: Card.new(c) for c in DECK}
    five = ev._five  # noqa: SLF001 - the 5-card entry point, skips the 6/7-card dispatch

    def prep(cards):
        """Thunk giving the treys key of these 5 cards, converted once (negated rank, higher is better)."""
        ints = [table[c] for c in cards]
        return lambda: -five(ints)
    return prep


def _deuces() -> Callable[[Sequence[str]], Callable[[], int]]:
    from deuces import Card, Evaluator
    ev = Evaluator()
    table = {c: Card.new(c) for c in DECK}
    five = ev._five  # noqa: SLF001

    def prep(cards):
        """Thunk giving the deuces key of these 5 cards, converted once (negated rank, higher is better)."""
        ints = [table[c] for c in cards]
        return lambda: -five(ints)
    return prep


def _phevaluator() -> Callable[[Sequence[str]], Callable[[], int]]:
    from phevaluator import evaluate_cards
    # phevaluator's int ids: rank * 4 + suit with suits c d h s
    table = {c: RANKS.index(c[0]) * 4 + SUITS.index(c[1]) for c in DECK}

    def prep(cards):
        """Thunk giving the phevaluator key of these 5 cards (negated rank, higher is better)."""
        a, b, c, d, e = (table[x] for x in cards)
        return lambda: -evaluate_cards(a, b, c, d, e)
    return prep


def _eval7() -> Callable[[Sequence[str]], Callable[[], int]]:
    import eval7
    table = {c: eval7.Card(c) for c in DECK}
    evaluate = eval7.evaluate

    def prep(cards):
        """Thunk giving the eval7 strength of these 5 cards, converted once (higher is better)."""
        objs = [table[c] for c in cards]
        return lambda: evaluate(objs)
    return prep


def _pokerkit() -> Callable[[Sequence[str]], Callable[[], object]]:
    from pokerkit import StandardHighHand

    def prep(cards):
        """Thunk building the pokerkit ``StandardHighHand`` of these 5 cards (higher is better)."""
        text = "".join(cards)
        return lambda: StandardHighHand(text)
    return prep


ADAPTERS = {"treys": _treys, "deuces": _deuces, "phevaluator": _phevaluator, "eval7": _eval7,
            "pokerkit": _pokerkit}


# ---------------------------------------------------------------- checks

def h(text: str) -> list[str]:
    """The card strings of a space-separated hand (``'As Kd'`` -> ``['As', 'Kd']``)."""
    return text.split()


# (name, hand A, hand B, expected sign of A vs B: 1 = A wins, -1 = B wins, 0 = tie)
PAIRS = [
    ("wheel < 6-high straight (W-S1)", "As 2d 3c 4h 5s", "2c 3d 4s 5h 6c", -1),
    ("broadway > K-high straight (W-S1)", "As Kd Qc Jh Ts", "Ks Qd Jc Th 9c", 1),
    ("two pair kicker 4 > 3 (W-S1)", "Kh Kd 9s 9c 4d", "Ks Kc 9h 9d 3c", 1),
    ("kings full > twos full (W-S1)", "2h 2d 2s 7c 7d", "Ah Ad Ks Kc Kh", -1),
    ("flush > straight (W-S1)", "3h 7h 9h Jh Kh", "Ts Jd Qc Kc As", 1),
    ("high pair decides two pair (W-S1)", "Qs Qd 5c 5h 2s", "Js Jd Tc Th As", 1),
    ("steel wheel > quads (W-S1)", "Ah 2h 3h 4h 5h", "Ks Kd Kc Kh 2d", 1),
    ("Q-K-A-2-3 does not wrap (W-S1)", "Qd Kd Ad 2c 3d", "2s 2h 7c 9d Jc", -1),
    ("wheel > trips", "As 2d 3c 4h 5s", "Ks Kd Kc 4d 2h", 1),
    ("wheel < ace-high flush", "As 2d 3c 4h 5s", "Ah 9h 7h 4h 2h", -1),
    ("steel wheel < 6-high straight flush", "Ah 2h 3h 4h 5h", "2s 3s 4s 5s 6s", -1),
    ("one pair third kicker", "8s 8d Kc 9h 4s", "8h 8c Kd 9s 3c", 1),
    ("trips second kicker", "7s 7d 7c Ah 5s", "7h 7c 7s Ad 4c", 1),
    ("quads kicker", "9s 9d 9c 9h As", "9h 9c 9s 9d Kc", 1),
    ("full flush comparison: fifth card", "Ah Jh 9h 6h 4h", "As Js 9s 6s 3s", 1),
    ("full flush comparison: second card", "Ac Kc 4c 3c 2c", "Ad Qd Jd Td 8d", 1),
    ("high card fifth card", "Ah Jd 9c 6s 4h", "As Jh 9d 6c 3s", 1),
    ("equal straights tie across suits", "5s 6d 7c 8h 9s", "5h 6c 7d 8s 9c", 0),
    ("equal flush ranks tie (suits equal)", "Ah Jh 9h 6h 4h", "As Js 9s 6s 4s", 0),
    ("equal two pair tie", "Kh Kd 9s 9c 4d", "Ks Kc 9h 9d 4c", 0),
]

MULTIWAY = [
    # (name, hands, index set of the winners)
    ("three-way tie of wheels", ["As 2d 3c 4h 5s", "Ad 2h 3s 4c 5d", "Ac 2s 3d 4d 5h", "Ks Kd 7c 7h 2s"], {0, 1, 2}),
    ("two-way tie for best, distinct others", ["Qh Qd 8s 8c 3d", "Qs Qc 8h 8d 3c", "Js Jd Tc Th As", "Ah Kd 9c 7s 2h"], {0, 1}),
]

W_S10 = (["5c 5d 9s 7h 4c", "3h 3s Qc Td 6s", "Ks Jd 8c 5h 2s", "Kd Jc 8h 5s 2d"], {2, 3})


def sign(x) -> int:
    """``1``, ``0`` or ``-1``: the sign of ``x``."""
    return (x > 0) - (x < 0)


def check(prep) -> tuple[int, int, list[str]]:
    """``(passed, total, failures)`` of the crafted checks and the random agreement test."""
    failures = []
    passed = total = 0
    for name, a, b, want in PAIRS:
        ka, kb = prep(h(a))(), prep(h(b))()
        got = sign((ka > kb) - (ka < kb))
        total += 1
        if got == want:
            passed += 1
        else:
            failures.append(name)
    for name, hands, winners in MULTIWAY:
        keys = [prep(h(x))() for x in hands]
        best = max(keys)
        total += 1
        if {i for i, k in enumerate(keys) if k == best} == winners:
            passed += 1
        else:
            failures.append(name)
    keys = [prep(h(x))() for x in W_S10[0]]
    total += 1
    if {i for i, k in enumerate(keys) if k == min(keys)} == W_S10[1]:
        passed += 1
    else:
        failures.append("W-S10 lowest-hand tie")
    rng = random.Random(7)
    bad = 0
    for _ in range(3000):
        cards = rng.sample(DECK, 10)
        a, b = cards[:5], cards[5:]
        ra, rb = reference_key(a), reference_key(b)
        ka, kb = prep(a)(), prep(b)()
        if sign((ra > rb) - (ra < rb)) != sign((ka > kb) - (ka < kb)):
            bad += 1
    total += 1
    if bad == 0:
        passed += 1
    else:
        failures.append(f"random pairs vs reference: {bad}/3000 disagree")
    return passed, total, failures


def speed(prep, hands: list[list[str]]) -> float:
    """Evaluations per second over ``hands`` (conversion to the library's cards done first)."""
    calls = [prep(x) for x in hands]
    t = time.perf_counter()
    for f in calls:
        f()
    return len(calls) / (time.perf_counter() - t)


def all_hands_distinct_classes(prep, limit: int) -> int | None:
    """Number of distinct strengths over every 5-card hand (7462 expected), or None above ``limit``."""
    keys = set()
    for i, combo in enumerate(combinations(DECK, 5)):
        if i >= limit:
            return None
        keys.add(prep(list(combo))())
    return len(keys)


def main() -> None:
    """Check and time every library of ``ADAPTERS``; print one row per library (speed in evaluations/s)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=50_000, help="hands in the speed test")
    args = ap.parse_args()
    rng = random.Random(1)
    hands = [rng.sample(DECK, 5) for _ in range(args.hands)]
    print(f"{'library':<12} {'version':<9} {'checks':<8} {'evals/s':>10}  notes")
    ref_rate = speed(lambda c: (lambda: reference_key(c)), hands[:10_000])
    for name, make in ADAPTERS.items():
        try:
            prep = make()
            from importlib.metadata import version
            ver = version(name)
        except Exception as exc:  # noqa: BLE001 - any import failure means "not usable here"
            print(f"{name:<12} {'-':<9} {'-':<8} {'-':>10}  not usable: {type(exc).__name__}: {exc}")
            continue
        passed, total, failures = check(prep)
        rate = speed(prep, hands if name != "pokerkit" else hands[:5000])
        notes = "; ".join(failures) if failures else "all correct"
        print(f"{name:<12} {ver:<9} {passed:>2}/{total:<5} {rate:>10,.0f}  {notes}")
    print(f"{'reference':<12} {'(script)':<9} {'':<8} {ref_rate:>10,.0f}  plain Python reading of §2.1")


if __name__ == "__main__":
    main()
