"""Audit (f) of the conformance suite: samples against the exact distribution over physical deals.

Used through :mod:`tests.conformance`; see docs/architecture.md "Exactness over physical deals".
"""

from __future__ import annotations

import json
import random
from collections import Counter
from math import prod

from engine.core import Game, State
from engine.errors import IllegalActionError, InconsistentObservationError

# ---------------------------------------------------------------- exactness over physical deals

class PhysicalDeals:
    """Explicit physical deals of the first hand of one match, dealt by the game's own code.

    Every game deals through :func:`engine.deal.shuffled`; under
    :func:`engine.deal.forced_orders` the first hand's deck order is chosen here, so a deal is
    a deck order and nothing game-specific is needed. The structure is learnt from the game:

    * **position classes**: two deck positions are in one class if swapping their cards
      leaves the dealt world (``world_key``) unchanged — an unordered location (a hand, the
      undealt pile); an ordered stock gives one class per position;
    * **faces**: two cards are one face if putting either at a position some seat sees gives
      the same observations for every seat (copies of a value or rank). Where that cannot be
      told apart, cards are kept apart, which is safe (a finer partition is only slower).

    A *pattern* gives each class a sorted tuple of faces; it stands for
    ``prod_f m_f! / prod_{class, f} k! `` physical deals (``m_f`` copies of face ``f``).
    """

    def __init__(self, game: Game, n: int, options: dict, seed: int) -> None:
        from engine.deal import forced_orders, shuffled

        self.game, self.n, self.options, self.seed = game, n, options, seed
        seen: list[list[int]] = []
        with forced_orders(lambda cards, s, h: seen.append(list(cards)) if h == 0 and not seen else None):
            game.new_match(n, seed, **options)
        assert seen, f"{game.name}: the first hand is not dealt through engine.deal.shuffled"
        self.order = shuffled(seen[0], seed, 0)
        base = self.start(self.order).world_key()
        self.classes: list[list[int]] = []
        for i in range(len(self.order)):
            for cl in self.classes:
                if self.start(self._swapped(self.order, i, cl[0])).world_key() == base:
                    cl.append(i)
                    break
            else:
                self.classes.append([i])
        self.face = self._faces()
        self.copies: dict[int, list[int]] = {}
        for c in sorted(self.order):
            self.copies.setdefault(self.face[c], []).append(c)

    @staticmethod
    def _swapped(order: list[int], i: int, j: int) -> list[int]:
        o = list(order)
        o[i], o[j] = o[j], o[i]
        return o

    def start(self, order: list[int]) -> State:
        """A new match whose first hand is dealt from the deck ``order``."""
        from engine.deal import forced_orders

        used = [False]

        def arrange(cards: list[int], s: int, h: int) -> list[int] | None:
            if h or used[0]:
                return None
            used[0] = True
            return order

        with forced_orders(arrange):
            return self.game.new_match(self.n, self.seed, **self.options)

    def _obs0(self, order: list[int]) -> str:
        return json.dumps(self.start(order).observation(0), sort_keys=True)

    def _faces(self) -> dict[int, int]:
        """Per card a face id (class docstring).

        ``V``: the class seat 0 sees best (most exchanges of its first card with another
        class's first card change seat 0's observation); ``p`` its first position. A card at
        a position outside ``V`` is put at ``p`` (exchanged with the card there): cards giving
        the same observation are one face. ``V``'s own cards are tried in a second order in
        which ``V``'s contents and those of a class seat 0 does not see are exchanged. Cards
        that sit where seat 0 also sees them (a turned-up card) stay faces of their own.
        """
        order, classes = self.order, self.classes
        heads = [cl[0] for cl in classes]
        base = self._obs0(order)
        changes = [sum(self._obs0(self._swapped(order, h, g)) != base for g in heads if g != h) for h in heads]
        v = max(range(len(classes)), key=lambda k: changes[k])
        parent = {c: c for c in order}

        def find(c: int) -> int:
            while parent[c] != c:
                parent[c] = parent[parent[c]]
                c = parent[c]
            return c

        def group(b: list[int]) -> None:
            p = classes[v][0]
            inside = {b[i] for i in classes[v]}
            first: dict[str, int] = {}
            for q, c in enumerate(b):
                if c in inside:
                    continue
                sig = self._obs0(self._swapped(b, p, q))
                if sig in first:
                    parent[find(c)] = find(first[sig])
                else:
                    first[sig] = c
            return None

        group(order)
        quiet = [k for k in range(len(classes)) if k != v and len(classes[k]) >= len(classes[v])]
        if quiet:
            k = min(quiet, key=lambda k: changes[k])
            other = list(order)
            for i, j in zip(classes[v], classes[k]):
                other[i], other[j] = other[j], other[i]
            group(other)
        ids: dict[int, int] = {}
        return {c: ids.setdefault(find(c), len(ids)) for c in order}

    def pattern(self, order: list[int], groups: list[list[int]]) -> tuple[tuple[int, ...], ...]:
        """The faces in each group of positions (classes, or unions of classes) of a deck order."""
        return tuple(tuple(sorted(self.face[order[i]] for i in cl)) for cl in groups)

    def order_of(self, pattern: tuple[tuple[int, ...], ...], groups: list[list[int]]) -> list[int]:
        """A deck order with this pattern (copies of a face taken in id order)."""
        pools = {f: list(cs) for f, cs in self.copies.items()}
        order = [0] * len(self.order)
        for cl, faces in zip(groups, pattern):
            for i, f in zip(cl, faces):
                order[i] = pools[f].pop()
        return order

    def weight(self, pattern: tuple[tuple[int, ...], ...]) -> int:
        """Number of physical deals with this pattern, up to a factor common to every pattern of
        the same groups (the orders within a group)."""
        from math import factorial

        w = prod(factorial(len(cs)) for cs in self.copies.values())
        for faces in pattern:
            for k in Counter(faces).values():
                w //= factorial(k)
        return w


def world_signature(state: State) -> str:
    """What every seat observes: the world in faces (copies renamed give the same signature)."""
    return json.dumps([state.observation(s) for s in range(state.num_players)], sort_keys=True)


class _OverBudget(Exception):
    """The exact enumeration would need more replays than its budget."""


class _Replayer:
    """Replays a deal through a hand's actions, branching over actions hidden from ``seat``."""

    def __init__(self, deals: PhysicalDeals, actions: list, seat: int, budget: int) -> None:
        self.deals, self.actions, self.seat, self.budget = deals, actions, seat, budget
        self.replays = 0

    def __call__(self, order: list[int]) -> list[State]:
        """The deal replayed; where another seat's action is hidden from ``seat``, every legal
        action that looks the same to it (one branch each). Illegal replays give no state."""
        seat, actions, fmt = self.seat, self.actions, self.deals.game.format_action
        ends = []
        todo = [(self.deals.start(order), 0)]
        while todo:
            self.replays += 1
            if self.replays > self.budget:
                raise _OverBudget
            st, i = todo.pop()
            try:
                while i < len(actions):
                    a = actions[i]
                    shown = st.public_action(a, seat)
                    if st.current_player() != seat and shown != fmt(a):
                        for alt in st.legal_actions():
                            if alt != a and st.public_action(alt, seat) == shown:
                                branch = st.clone()
                                branch.apply(alt)
                                todo.append((branch, i + 1))
                    st.apply(a)
                    i += 1
            except (IllegalActionError, InconsistentObservationError):
                continue
            ends.append(st)
        return ends


def _moves(pat: tuple, movable: list[tuple[int, int]], hidden: list[int]):
    """Patterns one exchange away: a movable (group, face) card against a card of another
    hidden group with another face."""
    for x, f in movable:
        if f not in pat[x]:
            continue
        for y in hidden:
            if y == x:
                continue
            for g in set(pat[y]):
                if g == f:
                    continue
                nxt = list(pat)
                a = list(pat[x])
                a.remove(f)
                b = list(pat[y])
                b.remove(g)
                nxt[x] = tuple(sorted(a + [g]))
                nxt[y] = tuple(sorted(b + [f]))
                yield tuple(nxt)


def _groups(deals: PhysicalDeals, replay: _Replayer, target: list) -> list[list[int]]:
    """The deal's classes, with classes merged whose exchange changes no seat's observation
    after the actions (the undrawn part of a stock: its order shows nowhere yet)."""
    base = deals.order
    groups: list[list[int]] = []
    for cl in deals.classes:
        for g in groups:
            q = next((i for i in g if deals.face[base[i]] != deals.face[base[cl[0]]]), None)
            if q is None:
                continue
            ends = replay(deals._swapped(base, cl[0], q))
            if ends and world_signature(ends[0]) == target[0]:
                g.extend(cl)
                break
        else:
            groups.append(list(cl))
    return groups


def exact_physical_distribution(deals: PhysicalDeals, actions: list, seat: int,
                                budget: int = 6000) -> Counter | None:
    """The world signatures of every physical deal consistent with ``seat``'s observation after
    ``actions`` (from the first hand's start), weighted by their number of physical deals.

    Independent of the game's information set and sampler. Positions are grouped
    (:func:`_groups`); a flood fill over patterns from the true deal, one exchange of cards
    between two groups that ``seat`` does not see at the start at a time (a card whose every
    exchange at the true deal is inconsistent stays in its group: a card that was played
    from there); a pattern counts if its deal, replayed through ``State.apply``, gives
    ``seat``'s observation. A region the fill misses would show as sampled worlds outside
    the result, never as a pass. :returns: ``None`` past ``budget`` replays.
    """
    replay = _Replayer(deals, actions, seat, budget)
    try:
        true = replay(deals.order)
        assert true, f"{deals.game.name}: the hand does not replay from its own deal"
        target = true[0].observation(seat)
        groups = _groups(deals, replay, [world_signature(true[0])])
        start_obs = deals.start(deals.order).observation(seat)
        face, order = deals.face, deals.order
        hidden = []
        for k, g in enumerate(groups):
            others = [m[0] for j, m in enumerate(groups) if j != k and face[order[m[0]]] != face[order[g[0]]]]
            if any(deals.start(deals._swapped(order, g[0], q)).observation(seat) == start_obs for q in others):
                hidden.append(k)  # else every exchange shows: seat sees this group at the start
        root = deals.pattern(order, groups)
        movable = []
        for x in hidden:
            for f in set(root[x]):
                for nxt in _moves(root, [(x, f)], hidden):
                    if any(st.observation(seat) == target for st in replay(deals.order_of(nxt, groups))):
                        movable.append((x, f))
                        break
        out: Counter = Counter()
        seen = {root}
        queue = [root]
        while queue:
            pat = queue.pop()
            ends = [st for st in replay(deals.order_of(pat, groups)) if st.observation(seat) == target]
            for st in ends:
                out[world_signature(st)] += deals.weight(pat)
            if ends:
                for nxt in _moves(pat, movable, hidden):
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
                if len(seen) > budget:
                    raise _OverBudget
        return out
    except _OverBudget:
        return None


def chi2_physical_deals(game: Game, n: int, options: dict, seed: int, budget: int = 2500,
                        tries: int = 3, max_categories: int = 150) -> bool:
    """Audit (f): the sampler's worlds against the exact distribution over physical deals.

    A first hand is played at random; from its last positions backwards, for a random seat,
    the exact distribution (:func:`exact_physical_distribution`) is enumerated if it fits in
    ``budget`` replays; then ``game.infoset(observation).sample`` is drawn and the world
    signatures compared by χ² (categories expecting fewer than 5 pooled, α = 0.001).

    :returns: False if no position of the hand was small enough (nothing tested).
    """
    from scipy.stats import chisquare

    rng = random.Random(seed)
    deals = PhysicalDeals(game, n, options, rng.getrandbits(40))
    st = deals.start(deals.order)
    actions: list = []
    prefixes = []
    while not st.is_terminal() and st.hand_index() == 0:
        prefixes.append(list(actions))
        legal = st.legal_actions()
        a = legal[rng.randrange(len(legal))]
        st.apply(a)
        actions.append(a)
    for prefix in prefixes[::-1][:tries]:
        seat = rng.randrange(n)
        exact = exact_physical_distribution(deals, prefix, seat, budget)
        if exact is None or len(exact) < 2 or len(exact) > max_categories:
            continue
        state = deals.start(deals.order)
        for a in prefix:
            state.apply(a)
        info = game.infoset(json.loads(json.dumps(state.observation(seat))))
        samples = max(800, 20 * len(exact))
        got: Counter = Counter(world_signature(info.sample(rng)) for _ in range(samples))
        stray = set(got) - set(exact)
        assert not stray, f"{game.name}: the sampler gave {len(stray)} world(s) no physical deal gives"
        total = sum(exact.values())
        f_obs, f_exp, po, pe = [], [], 0, 0.0
        for key, w in exact.items():
            e = samples * w / total
            if e < 5:
                po, pe = po + got[key], pe + e
            else:
                f_obs.append(got[key])
                f_exp.append(e)
        if pe:
            f_obs.append(po)
            f_exp.append(pe)
        if len(f_obs) < 2:
            continue
        p = chisquare(f_obs, f_exp).pvalue
        assert p > 0.001, (
            f"{game.name}: χ² rejects the sampler against the exact distribution over physical deals "
            f"(p = {p:.2g}, {len(exact)} worlds, seat {seat}, {len(prefix)} actions into the first hand)")
        return True
    return False
