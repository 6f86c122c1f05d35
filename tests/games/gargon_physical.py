"""Audit (f) for Gargon: the exact distribution over physical deals, enumerated per colour.

Gargon's colours are public (coloured backs), so a physical deal differs from the true one only
in which values of each colour sit at the colour's deal positions the seat does not see. The
generic exchange closure of :mod:`tests.conformance_physical` replays too much here (see
docs/architecture.md "Exactness over physical deals"); this module enumerates those values
combinatorially instead, deals each candidate through the game's own ``new_match`` (via
``engine.deal.forced_orders``), replays the hand's actions through ``State.apply`` and keeps it
if ``observation(seat)`` is reproduced. Nothing here uses the game's information set or sampler.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from itertools import permutations, product
from math import factorial

from engine.core import Game, State
from engine.errors import IllegalActionError
from engine.games.gargon import actions as A
from tests.conformance_physical import PhysicalDeals, _compare, world_signature

#: a location of the deal: ``("h", seat)`` (a dealt hand, unordered) or ``("a"|"b", index)``
Loc = tuple


class GargonDeals:
    """The first hand of one Gargon match as explicit deck orders dealt by ``new_match``.

    ``order`` is the true deck order; ``loc[i]`` the location deck position ``i`` deals to.
    """

    def start(self, order: list[int]) -> State:
        """A new match whose first hand is dealt from the deck ``order`` (the game's own dealing)."""
        return PhysicalDeals.start(self, order)  # type: ignore[arg-type]  # uses game, n, seed, options only

    def __init__(self, game: Game, n: int, options: dict, seed: int) -> None:
        from engine.deal import forced_orders, shuffled

        self.game, self.n, self.options, self.seed = game, n, options, seed
        seen: list[list[int]] = []
        with forced_orders(lambda cards, s, h: seen.append(list(cards)) if h == 0 and not seen else None):
            game.new_match(n, seed, **options)
        self.order = shuffled(seen[0], seed, 0)
        st = self.start(self.order)
        where: dict[int, Loc] = {}
        for p in range(n):
            for c in range(A.NCARDS):
                if st.dealt[p] >> c & 1:  # type: ignore[attr-defined]
                    where[c] = ("h", p)
        for k, pile in zip("ab", st.dealt_piles):  # type: ignore[attr-defined]
            for i, c in enumerate(pile):
                where[c] = (k, i)
        self.loc = [where[c] for c in self.order]
        self.where = where

    def order_of(self, values: dict[tuple[Loc, int], list[int]]) -> list[int]:
        """A deck order putting at location ``loc`` the faces ``values[loc, colour]`` (each
        ``colour * 16 + value``, as many as the location holds cards of that colour), every other
        (location, colour) as dealt; the copies of a zero are taken in id order."""
        free: dict[int, list[int]] = {}
        for c in range(A.NCARDS):
            free.setdefault(A.FACE_OF[c], []).append(c)
        want = {key: list(fs) for key, fs in values.items()}
        order = []
        for i, c in enumerate(self.order):
            fs = want.get((self.loc[i], A.COLOUR_OF[c]))
            f = fs.pop() if fs is not None else A.FACE_OF[c]
            order.append(free[f].pop(0))
        return order


FACE = {s: f for f, s in enumerate(A.FACE_STR)}


def _replay(deals: GargonDeals, order: list[int], actions: list) -> State | None:
    st = deals.start(order)
    try:
        for a in actions:
            st.apply(a)
    except IllegalActionError:
        return None
    return st


def _sub_multisets(pool: Counter, k: int) -> Iterator[Counter]:
    """Every sub-multiset of ``pool`` with ``k`` elements."""
    keys = sorted(pool)

    def rec(i: int, left: int, acc: list) -> Iterator[Counter]:
        if left == 0:
            yield Counter(acc)
            return
        if i == len(keys):
            return
        for m in range(min(left, pool[keys[i]]), -1, -1):
            yield from rec(i + 1, left - m, acc + [keys[i]] * m)

    yield from rec(0, k, [])


def _zeros_weight(groups: list[Counter], colour: int) -> int:
    """Physical orders of the colour's two zeros over these groups: 2 if they lie apart, 1 if
    together in one unordered group (``prod m_f! / prod k!`` for the zero face)."""
    return 2 // max(factorial(g[colour * 16]) for g in groups)


class _Colour:
    """One colour's hidden part of the deal for ``seat`` after the actions: its options, each a
    ``(values, weight)`` with ``values[(loc, colour)]`` the faces at each hidden location."""

    def __init__(self, deals: GargonDeals, end: State, seat: int, colour: int) -> None:
        obs = end.observation(seat)
        self.colour, n = colour, deals.n
        mine = Counter(FACE[f] for f in obs["dealt"] + obs["drawn"] if FACE[f] // 16 == colour)
        pool = Counter(A.FACE_OF[c] for c in range(A.NCARDS) if A.COLOUR_OF[c] == colour) - mine
        drawn_by = {deals.where[c]: p for p in range(n) for c in end.draws[p]}  # type: ignore[attr-defined]
        self.hands = [p for p in range(n) if p != seat and obs["dealt_colours"][p][colour]]
        self.dealt = {p: obs["dealt_colours"][p][colour] for p in self.hands}
        self.drawn: dict[int, list[Loc]] = {p: [] for p in range(n) if p != seat}
        self.lump: list[Loc] = []
        for k in "ab":
            for i, col in enumerate(obs["dealt_piles"][k]):
                if A.COLOURS.index(col) != colour:
                    continue
                p = drawn_by.get((k, i))
                if p is None:
                    self.lump.append((k, i))
                elif p != seat:
                    self.drawn[p].append((k, i))
        self.shown: dict[int, Counter] = {p: Counter() for p in self.drawn}
        for rnd in obs["rounds"]:
            for p, faces in enumerate(rnd["plays"]):
                if p != seat and faces:
                    self.shown[p].update(FACE[f] for f in faces if FACE[f] // 16 == colour)
        self.pool = pool - sum(self.shown.values(), Counter())

    def options(self) -> Iterator[tuple[dict, int]]:
        """Every assignment of the colour's unseen values: each other seat's shown values and some
        unshown ones over its dealt slots and drawn positions, the rest in the undrawn piles."""
        seats = sorted(self.drawn)
        room = {p: self.dealt.get(p, 0) + len(self.drawn[p]) - sum(self.shown[p].values()) for p in seats}
        if any(r < 0 for r in room.values()):
            return

        def split(i: int, pool: Counter) -> Iterator[dict[int, Counter]]:
            if i == len(seats):
                if sum(pool.values()) == len(self.lump):
                    yield {-1: pool}
                return
            p = seats[i]
            for sub in _sub_multisets(pool, room[p]):
                for rest in split(i + 1, pool - sub):
                    yield {p: sub + self.shown[p], **rest}

        for held in split(0, self.pool):
            per_seat = []
            for p in seats:
                per_seat.append(list(self._arrangements(p, held[p])))
            for combo in product(*per_seat):
                values: dict = {}
                groups = [held[-1]]
                for p, (dealt, drawn) in zip(seats, combo):
                    if self.dealt.get(p):
                        values[("h", p), self.colour] = sorted(dealt.elements())
                        groups.append(dealt)
                    for loc, f in zip(self.drawn[p], drawn):
                        values[loc, self.colour] = [f]
                if self.lump:
                    lump = sorted(held[-1].elements())
                    for loc, f in zip(self.lump, lump):
                        values[loc, self.colour] = [f]
                yield values, _zeros_weight(groups, self.colour)

    def _arrangements(self, p: int, held: Counter) -> Iterator[tuple[Counter, tuple]]:
        """The seat's held values split into its dealt slots (unordered) and its drawn positions."""
        k = len(self.drawn[p])
        seen = set()
        for drawn in permutations(sorted(held.elements()), k):
            if drawn in seen:
                continue
            seen.add(drawn)
            yield held - Counter(drawn), drawn


def exact_distribution(deals: GargonDeals, actions: list, seat: int, budget: int = 3000) -> Counter | None:
    """The world signatures of every physical deal consistent with ``seat``'s observation after
    ``actions``, weighted by their number of physical deals (up to a common factor).

    Per colour, every option of :meth:`_Colour.options` is dealt with the other colours as
    dealt and replayed; the options that reproduce the observation are combined over the
    colours, and every combination is dealt and replayed again (a combination failing there is
    dropped; a consistent world the per-colour screen missed would show as a sampled world
    outside the result, which fails the audit). :returns: ``None`` past ``budget`` replays.
    """
    end = _replay(deals, deals.order, actions)
    assert end is not None, "gargon: the hand does not replay from its own deal"
    target = end.observation(seat)
    replays = 0
    kept = []
    for colour in range(A.NCOL):
        good = []
        for values, w in _Colour(deals, end, seat, colour).options():
            replays += 1
            if replays > budget:
                return None
            st = _replay(deals, deals.order_of(values), actions)
            if st is not None and st.observation(seat) == target:
                good.append((values, w))
        kept.append(good)
    total = 1
    for good in kept:
        total *= len(good)
    if replays + total > budget:
        return None
    out: Counter = Counter()
    for combo in product(*kept):
        values, w = {}, 1
        for v, wc in combo:
            values.update(v)
            w *= wc
        st = _replay(deals, deals.order_of(values), actions)
        if st is not None and st.observation(seat) == target:
            out[world_signature(st)] += w
    return out


def _play(deals: GargonDeals, rng: random.Random) -> list:
    """A first hand played at random, a follower passing only when it must and a passer drawing
    one card (so the other hands shrink towards the end of the hand)."""
    st = deals.start(deals.order)
    actions: list = []
    while not st.is_terminal():
        legal = st.legal_actions()
        pick = [a for a in legal if a not in (A.PASS, A.DONE)] or legal
        if A.STOP in legal:
            pick = [A.STOP]
        a = pick[rng.randrange(len(pick))]
        st.apply(a)
        actions.append(a)
    return actions


def chi2_gargon(game: Game, n: int, options: dict, seed: int, budget: int = 3000, tries: int = 12,
                max_categories: int = 30, samples: int = 3000, infoset=None) -> dict | None:
    """Audit (f) for Gargon: a first hand is played (:func:`_play`); from its last position back,
    at up to ``tries`` positions where a seat starts a round (nothing on the table), the exact
    distribution (:func:`exact_distribution`) is enumerated if it fits in ``budget`` replays;
    the first with two worlds or more is compared with ``infoset(observation).sample`` by χ²
    as in :func:`tests.conformance_physical.chi2_physical_deals` (α = 0.001), with at most
    ``max_categories`` categories and at least ``samples`` samples (fewer, fuller categories:
    a sampler ignoring the zeros' weights is rejected, see tests/test_conformance.py).

    :returns: ``None`` if no position fitted, else ``actions``, ``seat``, ``worlds``, ``deals``,
        ``samples``, ``p``.
    """
    found = situation(game, n, options, seed, budget, tries)
    if found is None:
        return None
    return compare(game, found, infoset or game.infoset, max_categories, samples)


def compare(game: Game, found: tuple, infoset, max_categories: int = 30, samples: int = 3000) -> dict:
    """χ² of ``infoset(observation).sample`` at a :func:`situation` against its exact
    distribution (:func:`tests.conformance_physical._compare`). :raises AssertionError: if
    rejected (α = 0.001) or a sampled world is outside the exact set."""
    deals, prefix, seat, exact, rng = found
    return _compare(game, deals, prefix, seat, exact, rng, max_categories,
                    infoset, samples)


def situation(game: Game, n: int, options: dict, seed: int, budget: int = 3000,
              tries: int = 12) -> tuple[GargonDeals, list, int, Counter, random.Random] | None:
    """The position :func:`chi2_gargon` tests: ``(deals, actions into the hand, seat, exact
    distribution, the random stream left for sampling)``, or ``None``."""
    rng = random.Random(seed)
    deals = GargonDeals(game, n, options, rng.getrandbits(40))
    actions = _play(deals, rng)
    st = deals.start(deals.order)
    spots = []
    for k, a in enumerate(actions):
        obs = st.observation(st.current_player())
        if obs["phase"] == "play" and obs["to_act"] == obs["start_player"] and not any(obs["table"]):
            spots.append((k, st.current_player()))
        st.apply(a)
    for k, seat in spots[::-1][:tries]:
        exact = exact_distribution(deals, actions[:k], seat, budget)
        if exact is not None and len(exact) >= 2:
            return deals, actions[:k], seat, exact, rng
    return None

