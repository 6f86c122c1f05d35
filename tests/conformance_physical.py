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


#: consistent patterns per round from which the single exchanges are tried again
#: (:func:`exact_physical_distribution`)
CLOSURE_STARTS = 6


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


class _Situation:
    """One seat's view after some actions: the grouped positions, which groups the seat does
    not see at the start (``hidden``), and a test of a face pattern against the observation."""

    def __init__(self, deals: PhysicalDeals, actions: list, seat: int, budget: int) -> None:
        self.deals, self.seat = deals, seat
        self.replay = _Replayer(deals, actions, seat, budget)
        true = self.replay(deals.order)
        assert true, f"{deals.game.name}: the hand does not replay from its own deal"
        self.target = true[0].observation(seat)
        self.groups = _groups(deals, self.replay, [world_signature(true[0])])
        face, order = deals.face, deals.order
        start_obs = deals.start(order).observation(seat)
        self.hidden = []
        for k, g in enumerate(self.groups):
            others = [m[0] for j, m in enumerate(self.groups) if j != k and face[order[m[0]]] != face[order[g[0]]]]
            if any(deals.start(deals._swapped(order, g[0], q)).observation(seat) == start_obs for q in others):
                self.hidden.append(k)  # else every exchange shows: seat sees this group at the start
        self.root = deals.pattern(order, self.groups)

    def ends(self, pat: tuple) -> list[State]:
        """The end states of the pattern's deal that give the seat's observation."""
        return [st for st in self.replay(self.deals.order_of(pat, self.groups))
                if st.observation(self.seat) == self.target]

    def ranges(self, starts: list[tuple], up: set, down: set) -> dict[tuple[int, int], tuple[int, int]]:
        """Per (hidden group, face) the count range a candidate may give it: a face that some
        single exchange of cards between two hidden groups, made at one of the consistent
        patterns ``starts``, moves into (out of) a group keeping the observation may fill
        (leave) it freely; otherwise its count stays the true one. ``up``/``down`` (the
        (group, face) pairs seen to move so far) are updated in place."""
        hidden = self.hidden
        for pat in starts:
            for i, x in enumerate(hidden):
                for y in hidden[i + 1:]:
                    for f in set(pat[y]):
                        for g in set(pat[x]):
                            if f == g or {(x, f), (y, g)} <= up and {(x, g), (y, f)} <= down:
                                continue
                            nxt = list(pat)
                            a, b = list(pat[x]), list(pat[y])
                            a.remove(g)
                            b.remove(f)
                            nxt[x], nxt[y] = tuple(sorted(a + [f])), tuple(sorted(b + [g]))
                            if self.ends(tuple(nxt)):
                                up |= {(x, f), (y, g)}
                                down |= {(x, g), (y, f)}
        copies = {f: len(cs) for f, cs in self.deals.copies.items()}
        out = {}
        root = self.root
        for x in hidden:
            for f in copies:
                c = root[x].count(f)
                out[x, f] = (0 if (x, f) in down else c, min(len(root[x]), copies[f]) if (x, f) in up else c)
        return out


def _compositions(left: int, slots: list[tuple[int, int]]):
    """Every split of ``left`` over ``slots`` (per slot its inclusive (lo, hi) count range)."""
    if not slots:
        if left == 0:
            yield ()
        return
    lo, hi = slots[0]
    rest_lo = sum(s[0] for s in slots[1:])
    rest_hi = sum(s[1] for s in slots[1:])
    for k in range(max(lo, left - rest_hi), min(hi, left - rest_lo) + 1):
        for tail in _compositions(left - k, slots[1:]):
            yield (k, *tail)


def _candidates(sit: _Situation, ranges: dict, budget: int) -> list[tuple] | None:
    """Every face pattern within ``ranges`` (the hidden groups' cards redistributed over them,
    each filled to its size; the other groups as dealt), or ``None`` past ``budget`` patterns."""
    root, hidden = sit.root, sit.hidden
    pool = Counter(f for x in hidden for f in root[x])
    faces = sorted(pool)
    out: list[tuple] = []
    room = {x: len(root[x]) for x in hidden}
    picks: dict[int, list[int]] = {x: [] for x in hidden}

    def fill(i: int) -> None:
        if len(out) > budget:
            return
        if i == len(faces):
            if not any(room.values()):
                pat = list(root)
                for x in hidden:
                    pat[x] = tuple(sorted(picks[x]))
                out.append(tuple(pat))
            return
        f = faces[i]
        slots = [(ranges[x, f][0], min(ranges[x, f][1], room[x])) for x in hidden]
        if any(lo > hi for lo, hi in slots):
            return
        for split in _compositions(pool[f], slots):
            for x, k in zip(hidden, split):
                room[x] -= k
                picks[x].extend([f] * k)
            fill(i + 1)
            for x, k in zip(hidden, split):
                del picks[x][len(picks[x]) - k:]
                room[x] += k
            if len(out) > budget:
                return

    fill(0)
    return None if len(out) > budget else out


def exact_physical_distribution(deals: PhysicalDeals, actions: list, seat: int,
                                budget: int = 6000) -> Counter | None:
    """The world signatures of every physical deal consistent with ``seat``'s observation after
    ``actions`` (from the first hand's start), weighted by their number of physical deals.

    Independent of the game's information set and sampler. Positions are grouped
    (:func:`_groups`); the groups ``seat`` does not see at the start are hidden; single
    exchanges of cards between hidden groups at the true deal tell which faces may move
    where (:meth:`_Situation.ranges`), tried again from up to ``CLOSURE_STARTS`` new
    consistent patterns a round until the ranges stop growing; every face pattern within
    those ranges is dealt,
    replayed through ``State.apply`` and kept if it gives ``seat``'s observation, weighted
    by its number of physical deals. A consistent region the ranges miss would show as
    sampled worlds outside the result, never as a pass. :returns: ``None`` past ``budget``
    replays or candidate patterns.
    """
    try:
        sit = _Situation(deals, actions, seat, 8 * budget)
        pick = random.Random(len(actions) * 131 + seat)
        up: set = set()
        down: set = set()
        starts, expanded = [sit.root], {sit.root}
        while True:
            ranges = sit.ranges(starts, up, down)
            cands = _candidates(sit, ranges, budget)
            if cands is None:
                return None
            found = {pat: sit.ends(pat) for pat in cands}
            fresh = [pat for pat, ends in found.items() if ends and pat not in expanded]
            starts = pick.sample(fresh, min(CLOSURE_STARTS, len(fresh)))
            expanded.update(starts)
            if not starts or sit.ranges(starts, up, down) == ranges:
                break
            starts = []
        out: Counter = Counter()
        for pat, ends in found.items():
            for st in ends:
                out[world_signature(st)] += deals.weight(pat)
        return out
    except _OverBudget:
        return None


def _first_hand(deals: PhysicalDeals, rng: random.Random) -> list:
    """The actions of the first hand played at random from the deal (up to its end)."""
    st = deals.start(deals.order)
    actions: list = []
    while not st.is_terminal() and st.hand_index() == 0:
        legal = st.legal_actions()
        a = legal[rng.randrange(len(legal))]
        st.apply(a)
        actions.append(a)
    return actions


def _buckets(exact: Counter, max_categories: int) -> dict[str, int]:
    """Per world signature its χ² category: the worlds in sorted order, cut into at most
    ``max_categories`` runs (a function of the world, so exactness carries over to it)."""
    keys = sorted(exact)
    cut = min(max_categories, len(keys))
    return {k: i * cut // len(keys) for i, k in enumerate(keys)}


def chi2_physical_deals(game: Game, n: int, options: dict, seed: int, budget: int = 2500,
                        tries: int = 3, max_categories: int = 150, early: bool = False,
                        infoset=None) -> dict | None:
    """Audit (f): the sampler's worlds against the exact distribution over physical deals.

    A first hand is played at random; at up to ``tries`` of its positions (the last ones
    first, or if ``early`` the first ones after the opening action, then the deal itself), for every seat, the exact distribution
    (:func:`exact_physical_distribution`) is enumerated if it fits in ``budget``; the first
    with two worlds or more is tested: ``infoset(observation).sample`` (``game.infoset`` by
    default) is drawn and compared by χ² (worlds cut into at most ``max_categories`` runs,
    ``max(600, 10 · categories)`` samples, categories expecting fewer than 5 pooled, α = 0.001). A sampled world outside the exact
    set fails at once.

    :returns: ``None`` if no position was small enough (nothing tested), else what was
        tested: ``actions`` into the hand, ``seat``, ``worlds``, ``deals`` (physical deals,
        up to a common factor), ``samples``, ``p``.
    """

    rng = random.Random(seed)
    deals = PhysicalDeals(game, n, options, rng.getrandbits(40))
    actions = _first_hand(deals, rng)
    spots = list(range(len(actions)))
    for k in (spots[1:] + spots[:1] if early else spots[::-1])[:tries]:
        seats = list(range(n))
        rng.shuffle(seats)
        for seat in seats:
            exact = exact_physical_distribution(deals, actions[:k], seat, budget)
            if exact is None or len(exact) < 2:
                continue
            return _compare(game, deals, actions[:k], seat, exact, rng, max_categories, infoset or game.infoset)
    return None


def _compare(game: Game, deals: PhysicalDeals, prefix: list, seat: int, exact: Counter,
             rng: random.Random, max_categories: int, infoset, min_samples: int = 600) -> dict:
    """χ² of sampled worlds against ``exact`` (see :func:`chi2_physical_deals`; at least
    ``min_samples`` samples)."""
    from scipy.stats import chisquare

    state = deals.start(deals.order)
    for a in prefix:
        state.apply(a)
    info = infoset(json.loads(json.dumps(state.observation(seat))))
    bucket = _buckets(exact, max_categories)
    cats = max(bucket.values()) + 1
    samples = max(min_samples, 10 * cats)
    got: Counter = Counter()
    for _ in range(samples):
        key = world_signature(info.sample(rng))
        assert key in bucket, f"{game.name}: the sampler gave a world no physical deal gives (seat {seat}, {len(prefix)} actions into the first hand)"
        got[bucket[key]] += 1
    total = sum(exact.values())
    want: Counter = Counter()
    for key, w in exact.items():
        want[bucket[key]] += w
    f_obs, f_exp, po, pe = [], [], 0, 0.0
    for c in range(cats):
        e = samples * want[c] / total
        if e < 5:
            po, pe = po + got[c], pe + e
        else:
            f_obs.append(got[c])
            f_exp.append(e)
    if pe:
        f_obs.append(po)
        f_exp.append(pe)
    assert len(f_obs) >= 2, f"{game.name}: the worlds pool into one χ² category"
    p = chisquare(f_obs, f_exp).pvalue
    assert p > 0.001, (
        f"{game.name}: χ² rejects the sampler against the exact distribution over physical deals "
        f"(p = {p:.2g}, {len(exact)} worlds, seat {seat}, {len(prefix)} actions into the first hand)")
    return {"actions": len(prefix), "seat": seat, "worlds": len(exact), "deals": total,
            "samples": samples, "p": p}
