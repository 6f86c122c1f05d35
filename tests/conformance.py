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
from tests.conformance_physical import (  # noqa: F401 - audit (f), part of the suite's interface
    PhysicalDeals,
    chi2_physical_deals,
    exact_physical_distribution,
    world_signature,
)

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
