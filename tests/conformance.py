"""The conformance suite every game plugs into (issue 2, item 4).

Functions here take a ``Game``, a player count and options and assert the engine
contract: random playouts never crash, the legal set is never empty before the end,
same seed + same actions = same match, ``public_action`` matches the observation, and
the determinization audit (a)-(e), and (f): samples against the exact distribution over
physical deals, enumerated through the game's own dealing code (:class:`PhysicalDeals`,
:func:`chi2_physical_deals`). ``tests/test_conformance.py`` runs them on every
registered game over ``Game.configs``; game test files may call them with more options.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations
from math import comb, prod

from engine.core import Game, State
from engine.errors import IllegalActionError, InconsistentObservationError

MAX_STEPS = 20000


def random_playout(game: Game, n: int, options: dict, seed: int, check_every_step: bool = True) -> State:
    """Play a whole match with uniformly random legal actions; assert the per-step invariants.

    :returns: the terminal state.
    """
    rng = random.Random(seed)
    state = game.new_match(n, seed, **options)
    steps = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        assert legal, f"{game.name}: empty legal set in a non-terminal state (step {steps})"
        p = state.current_player()
        assert 0 <= p < n, f"{game.name}: current_player {p} out of range"
        if check_every_step:
            assert len(set(legal)) == len(legal), f"{game.name}: duplicate legal actions {legal}"
            for a in legal:
                assert game.parse_action(game.format_action(a)) == a, f"{game.name}: notation round trip of {a!r}"
        a = legal[rng.randrange(len(legal))]
        state.apply(a)
        steps += 1
        assert steps < MAX_STEPS, f"{game.name}: playout did not end in {MAX_STEPS} steps"
    check_outcome(game, state)
    return state


def check_outcome(game: Game, state: State) -> None:
    """The outcome has one rank and one score per seat, ranks follow the rules' placing rule."""
    n = state.num_players
    out = state.outcome()
    assert len(out.ranks) == n and len(out.scores) == n
    assert min(out.ranks) == 0, f"{game.name}: nobody ranks first: {out.ranks}"
    teams = game.teams(n)
    for t in teams:
        assert len({out.ranks[s] for s in t}) == 1, f"{game.name}: partners {t} do not share a rank"
    side_ranks = [out.ranks[t[0]] for t in teams]
    for r in side_ranks:
        assert r == sum(1 for o in side_ranks if o < r), f"{game.name}: ranks {side_ranks} skip places wrongly"
    hr = state.hand_rewards()
    assert len(hr) == n and all(0.0 <= x <= 1.0 for x in hr)


def check_determinism(game: Game, n: int, options: dict, seed: int) -> None:
    """Same deal seed + same actions = same match (world and every observation)."""
    rng = random.Random(seed + 1)
    a = game.new_match(n, seed, **options)
    b = game.new_match(n, seed, **options)
    while not a.is_terminal():
        assert a.world_key() == b.world_key()
        assert a.legal_actions() == b.legal_actions()
        legal = a.legal_actions()
        act = legal[rng.randrange(len(legal))]
        a.apply(act)
        b.apply(act)
    assert b.is_terminal() and a.outcome() == b.outcome()
    for s in range(n):
        assert a.observation(s) == b.observation(s)


def check_public_actions(game: Game, n: int, options: dict, seed: int) -> None:
    """``public_action(a, s)`` equals the last entry of ``observation(s)["actions"]`` after ``apply(a)``."""
    rng = random.Random(seed)
    state = game.new_match(n, seed, **options)
    while not state.is_terminal():
        legal = state.legal_actions()
        act = legal[rng.randrange(len(legal))]
        p = state.current_player()
        seen = [state.public_action(act, s) for s in range(n)]
        assert seen[p] == game.format_action(act), f"{game.name}: the actor must see its own action in full"
        h = state.hand_index()
        state.apply(act)
        if state.hand_index() == h and not state.is_terminal():
            for s in range(n):
                obs = state.observation(s)
                assert obs["actions"][-1] == [p, seen[s]], (
                    f"{game.name}: seat {s} observes {obs['actions'][-1]} after {game.format_action(act)}, "
                    f"public_action says {seen[s]}")


def check_observation_shape(game: Game, state: State) -> None:
    """Observation is JSON-ready, holds the required keys and no seed."""
    for s in range(state.num_players):
        obs = state.observation(s)
        text = json.dumps(obs)
        assert json.loads(text) == obs, f"{game.name}: observation is not JSON-stable"
        for key in ("game", "players", "seat", "options", "hand_index", "actions"):
            assert key in obs, f"{game.name}: observation lacks {key!r}"
        assert "seed" not in text.lower(), f"{game.name}: an observation must never contain a seed"


def random_positions(game: Game, n: int, options: dict, seed: int, count: int) -> list[State]:
    """``count`` non-terminal positions reached by random play at random depths."""
    rng = random.Random(seed)
    out: list[State] = []
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        state = game.new_match(n, rng.getrandbits(62), **options)
        stops: list[State] = []
        while not state.is_terminal():
            stops.append(state.clone())
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
        if stops:
            out.append(stops[rng.randrange(len(stops))])
    return out


def replay_world(sample: State) -> State:
    """Replay the sample's current-hand history from its hand start (raises if illegal)."""
    s = sample.hand_start()
    for a in sample.hand_history():
        s.apply(a)
    return s


def audit_position(game: Game, state: State, seat: int, samples: int = 8, seed: int = 0) -> None:
    """Determinization audit (a)-(d) of DESIGN/issue 2 for one position and seat."""
    obs = state.observation(seat)
    obs_rt = json.loads(json.dumps(obs))
    info = game.infoset(obs_rt)
    keys = set()
    for i in range(samples):
        world = info.sample(random.Random(seed * 1000 + i))
        # (a) the sample is consistent with the observation
        assert world.observation(seat) == obs_rt, f"{game.name}: sample's observation differs for seat {seat}"
        # (b) replaying the hand's actions from the sample's deal is legal and reproduces it
        again = replay_world(world)
        assert again.world_key() == world.world_key(), f"{game.name}: replay does not reproduce the sample"
        assert again.observation(seat) == obs_rt
        assert world.current_player() == state.current_player()
        assert sorted(map(repr, world.legal_actions())) == sorted(map(repr, state.legal_actions())) or \
            world.current_player() != seat, f"{game.name}: the searcher's legal actions differ in a sample"
        keys.add(world.world_key())
        # (c) a different true state with the same observation gives the identical sample
        twin = game.infoset(json.loads(json.dumps(world.observation(seat))))
        w1 = twin.sample(random.Random(77 + i))
        w2 = info.sample(random.Random(77 + i))
        assert w1.world_key() == w2.world_key(), f"{game.name}: samples depend on more than the observation"
    # (d) samples vary when several worlds are consistent
    if info.count() >= 2 and samples >= 8:
        more = {info.sample(random.Random(10_000 + seed * 100 + i)).world_key() for i in range(40)}
        assert len(keys | more) >= 2, f"{game.name}: {info.count()} consistent worlds but samples never vary"


def enumerate_consistent(game: Game, state: State, seat: int, limit: int) -> dict | None:
    """Exact enumeration of the worlds consistent with ``seat``'s observation.

    Brute force over every way to fill the hidden locations of the infoset's problem
    (by capacity only, ignoring its who-may-hold constraints), times every hidden-choice
    combination; an assignment counts if building the world and replaying its history
    is legal and gives the same observation. Each consistent assignment is one physical
    deal, so each has weight 1.

    :returns: ``{key: 1}`` over consistent assignments, or ``None`` if more than ``limit``
        assignments would have to be tried.
    """
    obs = json.loads(json.dumps(state.observation(seat)))
    info = game.infoset(obs)
    prob = info.problem()
    caps = prob.capacities
    total_n = len(prob.cards)
    size = 1
    left = total_n
    for c in caps:
        size *= comb(left, c)
        left -= c
    size *= prod(len(v) for v in prob.choices) if prob.choices else 1
    if size > limit:
        return None
    rng = random.Random(0)
    found: dict = {}

    def choice_combos(i: int, acc: list):
        if i == len(prob.choices):
            yield list(acc)
            return
        for v in prob.choices[i]:
            acc.append(v)
            yield from choice_combos(i + 1, acc)
            acc.pop()

    def fill(j: int, remaining: list[int], acc: list[list[int]]):
        if j == len(caps):
            yield [list(x) for x in acc]
            return
        for combo in combinations(remaining, caps[j]):
            rest = [c for c in remaining if c not in combo]
            acc.append(sorted(combo))
            yield from fill(j + 1, rest, acc)
            acc.pop()

    for assignment in fill(0, sorted(prob.cards), []):
        for ch in choice_combos(0, []):
            try:
                world = info.world([list(x) for x in assignment], ch, rng)
                again = replay_world(world)
            except (IllegalActionError, InconsistentObservationError):
                continue
            if again.observation(seat) != obs or world.observation(seat) != obs:
                continue
            key = (tuple(tuple(x) for x in assignment), tuple(map(repr, ch)))
            found[key] = found.get(key, 0) + 1
    return found


def chi2_uniformity(game: Game, state: State, seat: int, limit: int = 4000, max_categories: int = 60,
                    seed: int = 1) -> bool:
    """Audit (e): χ² of the sampler's assignments against exact enumeration (α = 0.001).

    :returns: False if the position is not suitable (too big, or fewer than 2 worlds);
        raises AssertionError if the sampler's support differs from the consistent worlds
        or the χ² test rejects uniformity.
    """
    from scipy.stats import chisquare

    exact = enumerate_consistent(game, state, seat, limit)
    if exact is None or len(exact) < 2 or len(exact) > max_categories:
        return False
    obs = json.loads(json.dumps(state.observation(seat)))
    info = game.infoset(obs)
    assert info.count() == sum(exact.values()), (
        f"{game.name}: the infoset counts {info.count()} worlds, exact enumeration finds {sum(exact.values())}")
    n_samples = 40 * len(exact)
    rng = random.Random(seed)
    counts: Counter = Counter()
    for _ in range(n_samples):
        assignment, ch = info.sampler.sample(rng)
        key = (tuple(tuple(sorted(x)) for x in assignment), tuple(map(repr, ch)))
        assert key in exact, f"{game.name}: sampled an inconsistent world {key}"
        counts[key] += 1
    keys = sorted(exact)
    total_w = sum(exact.values())
    f_obs = [counts[k] for k in keys]
    f_exp = [n_samples * exact[k] / total_w for k in keys]
    p = chisquare(f_obs, f_exp).pvalue
    assert p > 0.001, f"{game.name}: χ² rejects uniformity (p = {p:.2g}, {len(keys)} categories)"
    return True


def chi2_conditioned(game: Game, state: State, seat: int, free: int = 5, limit: int = 3000,
                     seed: int = 1) -> bool:
    """Audit (e) for large information sets: χ² against exact enumeration on a conditioned slice.

    A reference world is drawn from the sampler; all unseen cards but ``free`` of them are
    pinned where the reference put them; the free cards are then enumerated over the
    locations they came from (by capacity only) and kept if the built world replays to the
    same observation. The sampler restricted to the same pins must count exactly those
    worlds and draw them uniformly (α = 0.001). This checks the game's inference
    constraints and the sampler on every game, however many cards are hidden.

    :returns: False if the slice has fewer than 2 consistent worlds (nothing to test).
    """
    from scipy.stats import chisquare

    from engine.sampling import Sampler, SamplingProblem

    obs = json.loads(json.dumps(state.observation(seat)))
    info = game.infoset(obs)
    prob = info.problem()
    rng = random.Random(seed)
    ref, ref_choices = info.sampler.sample(rng)
    cards = list(prob.cards)
    rng.shuffle(cards)
    chosen = sorted(cards[:free])
    free_set = set(chosen)
    caps = [sum(1 for c in loc if c in free_set) for loc in ref]
    pinned = [[c for c in loc if c not in free_set] for loc in ref]
    allowed = {c: m for c, m in zip(prob.cards, prob.allowed)}
    cond = SamplingProblem(chosen, caps, [allowed[c] for c in chosen], list(prob.names))
    live = [j for j, cap in enumerate(caps) if cap]

    def fill(k: int, remaining: list[int], acc: dict[int, list[int]]):
        if k == len(live):
            yield {j: list(v) for j, v in acc.items()}
            return
        j = live[k]
        for combo in combinations(remaining, caps[j]):
            rest = [c for c in remaining if c not in combo]
            acc[j] = list(combo)
            yield from fill(k + 1, rest, acc)
        acc.pop(j, None)

    exact: dict = {}
    tried = 0
    for part in fill(0, chosen, {}):
        tried += 1
        if tried > limit:
            return False
        assignment = [sorted(pinned[j] + part.get(j, [])) for j in range(len(ref))]
        try:
            world = info.world([list(x) for x in assignment], list(ref_choices), random.Random(0))
            again = replay_world(world)
        except (IllegalActionError, InconsistentObservationError):
            continue
        if again.observation(seat) != obs or world.observation(seat) != obs:
            continue
        key = tuple(tuple(sorted(part.get(j, []))) for j in range(len(ref)))
        exact[key] = 1
    assert exact, f"{game.name}: the sampler's own reference world is not consistent with the observation"
    try:
        sub = Sampler(cond)
    except InconsistentObservationError:
        raise AssertionError(f"{game.name}: the constraints exclude the reference world they produced") from None
    assert sub.card_total == len(exact), (
        f"{game.name}: the constraints admit {sub.card_total} placements of the free cards, "
        f"exact enumeration finds {len(exact)} consistent ones")
    if len(exact) < 2:
        return False
    n_samples = 200 * len(exact)
    counts: Counter = Counter()
    for _ in range(n_samples):
        a, _ = sub.sample(rng)
        key = tuple(tuple(sorted(x)) for x in a)
        assert key in exact, f"{game.name}: sampled an inconsistent placement {key}"
        counts[key] += 1
    keys = sorted(exact)
    p = chisquare([counts[k] for k in keys]).pvalue
    assert p > 0.001, f"{game.name}: χ² rejects uniformity on a conditioned slice (p = {p:.2g})"
    return True


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
