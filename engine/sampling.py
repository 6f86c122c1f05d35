"""The one exact determinization sampler (DESIGN "Information sets").

A :class:`SamplingProblem` says which physical cards are unseen, the hidden locations
they go to (opponents' hands, the stock or a position in it, undealt cards, a face-down
play ...) with their capacities, and for each card the set of locations that may hold
it (voids, could-not-beat, pinned cards, Gargon's public colours). A :class:`Sampler`
draws assignments **uniformly over physical deals**: every assignment of physical card
ids to locations that respects the constraints has the same probability.

Method: cards are grouped into classes by their allowed-location set; the number of
completions ``f(j, r)`` (ways to fill locations ``j..`` from remaining class counts
``r``) is counted exactly by dynamic programming, with
``f(j, r) = sum_k prod_c C(r_c, k_c) * f(j+1, r - k)`` over the class compositions ``k``
of location ``j``'s capacity. Sampling walks the locations drawing each composition
with probability proportional to its completions, then picks which cards of each class
uniformly. No rejection loop (cannot stall), no greedy dealing (cannot dead-end);
``total == 0`` raises :class:`InconsistentObservationError` up front.

Within a location the cards are returned in uniformly random order (a stock's order),
except in the locations marked ``unordered``. A location that takes every remaining card
of a class draws no random number for that class (issue 19: Agram's undealt cards).
Hidden non-card choices (Argute bids) are drawn uniformly from their values.

Random numbers: every index below ``n`` is ``int(rng.random() * n)`` (bias at most
``n / 2**53``, about twice as fast as ``rng.randrange``); a composition weight total of
``2**32`` or more is drawn exactly with :func:`randbelow` (``rng.randrange``'s own draws).

Compiled (issue 19): ``sampling.pxd`` beside this file makes :class:`Sampler` a C class and
types the walk of :meth:`Sampler.sample` (C indices, the pools as lists swapped in place);
the random numbers and the cards drawn are the same as interpreted.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any

from engine.errors import InconsistentObservationError


@dataclass
class SamplingProblem:
    """The hidden part of one information set.

    :ivar cards: unseen physical card ids, each placed exactly once.
    :ivar capacities: per hidden location, how many of ``cards`` it holds.
    :ivar allowed: per card (same order as ``cards``), a bitmask over location indices
        (bit ``j`` set = location ``j`` may hold it).
    :ivar names: per location, a label for messages (``"hand 2"``, ``"stock"``).
    :ivar choices: hidden non-card choices, each a sequence of equally likely values.
    :ivar unordered: bitmask of locations whose card order is irrelevant (a hand that the
        game turns into a bitmask): their cards are not shuffled (saves time; the set
        drawn is the same uniform one).
    """

    cards: list[int]
    capacities: list[int]
    allowed: list[int]
    names: list[str] = field(default_factory=list)
    choices: list[Sequence[Any]] = field(default_factory=list)
    unordered: int = 0

    @classmethod
    def build(cls, locations: Sequence[tuple[str, int]], cards: Sequence[int],
              allowed_names: Mapping[int, Sequence[str]] | None = None,
              choices: Sequence[Sequence[Any]] = ()) -> SamplingProblem:
        """Convenience constructor by location name.

        :param locations: ``(name, capacity)`` per location.
        :param cards: the unseen cards.
        :param allowed_names: per card, the names of locations that may hold it; a card
            absent from the dict may go anywhere.
        """
        index = {name: j for j, (name, _) in enumerate(locations)}
        full = (1 << len(locations)) - 1
        allowed = []
        for c in cards:
            if allowed_names and c in allowed_names:
                m = 0
                for name in allowed_names[c]:
                    m |= 1 << index[name]
                allowed.append(m)
            else:
                allowed.append(full)
        return cls(list(cards), [cap for _, cap in locations], allowed,
                   [name for name, _ in locations], [list(c) for c in choices])


def randbelow(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for an integer ``n >= 1``, drawing exactly what it draws.

    CPython's ``randrange(n)`` is ``_randbelow_with_getrandbits``: ``getrandbits(k)`` with
    ``k = n.bit_length()`` until the value is below ``n``; this skips its argument checks
    (most of its cost in a hot loop).

    :raises ValueError: if ``n < 1``.
    """
    if n < 1:
        raise ValueError(f"randbelow: n must be at least 1, got {n}")
    k = n.bit_length()
    getrandbits = rng.getrandbits
    r = getrandbits(k)
    while r >= n:
        r = getrandbits(k)
    return r


def _compositions(total: int, limits: Sequence[int]) -> list[tuple[int, ...]]:
    """Every vector ``k`` with ``0 <= k_i <= limits[i]`` and ``sum(k) == total``."""
    out: list[tuple[int, ...]] = []
    m = len(limits)
    if m == 0:
        return [()] if total == 0 else []
    suffix = [0] * (m + 1)
    for i in range(m - 1, -1, -1):
        suffix[i] = suffix[i + 1] + limits[i]
    cur = [0] * m

    def rec(i: int, left: int) -> None:
        """Append to ``out`` every completion of ``cur[i:]`` within ``limits`` that sums to ``left``."""
        if i == m - 1:
            if left <= limits[i]:
                cur[i] = left
                out.append(tuple(cur))
            return
        lo = max(0, left - suffix[i + 1])
        for k in range(lo, min(limits[i], left) + 1):
            cur[i] = k
            rec(i + 1, left - k)

    if total <= suffix[0]:
        rec(0, total)
    return out


class Sampler:
    """Exact uniform sampler for one :class:`SamplingProblem`.

    Build once per information set (the counting is done here, ``O(states)``), then
    call :meth:`sample` as often as needed (a walk over the locations with cached
    cumulative weights).

    :ivar total: number of physical assignments of cards (as sets per location) times
        the number of hidden-choice combinations.
    :raises InconsistentObservationError: if no assignment respects the constraints.
    """

    __slots__ = ("problem", "classes", "class_cards", "loc_classes", "nloc", "_memo", "_steps",
                 "total", "card_total")

    def __init__(self, problem: SamplingProblem) -> None:
        self.problem = problem
        caps = problem.capacities
        if len(problem.allowed) != len(problem.cards):
            raise ValueError("SamplingProblem: allowed must give one mask per card")
        if sum(caps) != len(problem.cards):
            raise InconsistentObservationError(
                f"sampler: {len(problem.cards)} unseen cards but the hidden locations hold {sum(caps)} "
                f"({', '.join(f'{n}={c}' for n, c in zip(problem.names or range(len(caps)), caps))})")
        groups: dict[int, list[int]] = {}
        for card, mask in zip(problem.cards, problem.allowed):
            groups.setdefault(mask, []).append(card)
        self.classes = list(groups)
        self.class_cards = [groups[m] for m in self.classes]
        self.nloc = len(caps)
        self.loc_classes = [[ci for ci, m in enumerate(self.classes) if m >> j & 1] for j in range(self.nloc)]
        for ci, m in enumerate(self.classes):
            if m >> self.nloc:
                raise ValueError("SamplingProblem: an allowed mask names a location that does not exist")
            if m == 0:
                raise InconsistentObservationError(
                    f"sampler: card {self.class_cards[ci][0]} may be held by no hidden location")
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._steps: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[tuple[int, ...]]]] = {}
        start = tuple(len(c) for c in self.class_cards)
        self.card_total = self._count(0, start)
        total = self.card_total
        for values in problem.choices:
            total *= len(values)
        self.total = total
        if total == 0:
            names = problem.names or [str(j) for j in range(self.nloc)]
            raise InconsistentObservationError(
                "sampler: no deal of the unseen cards satisfies the constraints "
                f"(locations: {', '.join(f'{n}={c}' for n, c in zip(names, caps))})")

    def _count(self, j: int, rem: tuple[int, ...]) -> int:
        # iterative deepening over locations with memoisation; depth = number of locations
        key = (j, rem)
        memo = self._memo
        if key in memo:
            return memo[key]
        if j == self.nloc:
            val = 1 if not any(rem) else 0
            memo[key] = val
            return val
        total = 0
        for _k, w, nxt in self._branches(j, rem):
            total += w * self._count(j + 1, nxt)
        memo[key] = total
        return total

    def _branches(self, j: int, rem: tuple[int, ...]) -> list[tuple[tuple[int, ...], int, tuple[int, ...]]]:
        """The ways location ``j`` can be filled from the remaining class counts ``rem``.

        :returns: per composition ``k`` of the location's capacity over the classes it may
            hold, ``(k, ways, rem_after)``: the number of ways to choose those cards
            (product of binomials, never 0) and the class counts left for later locations.
        """
        cls = self.loc_classes[j]
        out = []
        for k in _compositions(self.problem.capacities[j], [rem[c] for c in cls]):
            w = 1
            nxt = list(rem)
            for c, kc in zip(cls, k):
                if kc:
                    w *= comb(rem[c], kc)
                    nxt[c] -= kc
            out.append((k, w, tuple(nxt)))
        return out

    def _step(self, j: int, rem: tuple[int, ...]) -> tuple[list[int], list[tuple[int, ...]]]:
        key = (j, rem)
        got = self._steps.get(key)
        if got is not None:
            return got
        cum: list[int] = []
        ks: list[tuple[int, ...]] = []
        acc = 0
        for k, w, nxt in self._branches(j, rem):
            w *= self._count(j + 1, nxt)
            if w:
                acc += w
                cum.append(acc)
                ks.append(k)
        got = (cum, ks)
        self._steps[key] = got
        return got

    def sample(self, rng: random.Random) -> tuple[list[list[int]], list[Any]]:
        """One uniform assignment.

        :returns: ``(assignment, choices)``: per location its cards in random order, and
            one value per hidden choice.
        """
        pools = [list(cards) for cards in self.class_cards]
        rem = tuple([len(p) for p in pools])
        out: list[list[int]] = []
        random_ = rng.random
        unordered = self.problem.unordered
        steps = self._steps
        loc_classes = self.loc_classes
        for j in range(self.nloc):
            cls = loc_classes[j]
            got = steps.get((j, rem))
            if got is None:
                got = self._step(j, rem)
            cum, ks = got
            if len(ks) == 1:
                k = ks[0]
            else:
                tot = cum[len(cum) - 1]
                r = int(random_() * tot) if tot < 4294967296 else randbelow(rng, tot)
                k = ks[bisect_right(cum, r)]
            loc: list[int] = []
            nxt = list(rem)
            for ci in range(len(cls)):
                kc = k[ci]
                if not kc:
                    continue
                c = cls[ci]
                pool = pools[c]
                n = len(pool)
                if kc == n:  # the whole class: no choice to draw (the order is shuffled below)
                    loc.extend(pool)
                    pool.clear()
                    nxt[c] = 0
                    continue
                # partial Fisher-Yates: move kc random cards to the end and take them
                for t in range(kc):
                    x = random_()
                    i = int(x * (n - t))
                    e = n - 1 - t
                    pool[i], pool[e] = pool[e], pool[i]
                loc.extend(pool[n - kc:])
                del pool[n - kc:]
                nxt[c] = nxt[c] - kc
            m = len(loc)
            if m > 1 and not unordered >> j & 1:
                for t in range(m - 1, 0, -1):  # Fisher-Yates
                    x = random_()
                    i = int(x * (t + 1))
                    loc[i], loc[t] = loc[t], loc[i]
            out.append(loc)
            rem = tuple(nxt)
        choices = [values[int(random_() * len(values))] for values in self.problem.choices]
        return out, choices
