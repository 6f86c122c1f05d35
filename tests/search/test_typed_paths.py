"""The typed tree loop and sampler walks (issue 19, third pass) choose and draw exactly as the
code they replaced.

Each test keeps the replaced code here as the reference (written as it was before the change)
and runs both from the same generator: the same choices, the same cards, and the same
generator state afterwards. They run in whichever mode the engine loads (compiled when built,
pure with ``CARDARENA_PURE_PYTHON=1``), so the reference is checked against both.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from math import comb, log, sqrt

import pytest

from engine import registry
from engine.sampling import Sampler, SamplingProblem, randbelow
from engine.search.ismcts import Node, so_iterations
from engine.search.rollout import rollout_rewards

# ---------------------------------------------------------------- the tree loop


def reference_so(game, info, teams, rng, max_it, c, hand_rollouts):
    """SO-ISMCTS as before the single-pass change: untried list, then ``ucb_select`` (tree model)."""
    root = Node()
    for _ in range(max_it):
        state = info.sample(rng)
        hand0 = state.hand_index()
        node = root
        path = []
        while not state.is_terminal():
            if hand_rollouts and state.hand_index() != hand0:
                break
            children = node.children
            legal = state.legal_actions()
            untried = [a for a in legal if a not in children]
            if untried:
                for a in legal:
                    if a in children:
                        children[a].avail += 1
                a = untried[int(rng.random() * len(untried))] if len(untried) > 1 else untried[0]
                child = Node(state.current_player())
                child.avail = 1
                children[a] = child
                state.apply(a)
                path.append(child)
                break
            if len(legal) == 1:
                a = legal[0]
                children[a].avail += 1
            else:
                best, a = -1.0, legal[0]
                for k in legal:
                    ch = children[k]
                    ch.avail += 1
                    v = ch.reward / ch.visits + c * sqrt(log(ch.avail) / ch.visits)
                    if v > best:
                        best, a = v, k
            node = children[a]
            state.apply(a)
            path.append(node)
        rewards = rollout_rewards(game, state, rng, teams, hand0, hand_rollouts)
        for nd in path:
            nd.visits += 1
            nd.reward += rewards[nd.player]
    return root


def tree_stats(node, prefix=()):
    """Every edge's ``(path, player, visits, avail, reward)`` in a canonical order."""
    out = []
    for k in sorted(node.children, key=repr):
        ch = node.children[k]
        out.append((prefix + (repr(k),), ch.player, ch.visits, ch.avail, ch.reward))
        out.extend(tree_stats(ch, prefix + (repr(k),)))
    return out


SETTINGS = [("agram", 3, {}), ("sedma", 4, {}), ("guinote", 4, {}), ("cuckoo", 3, {"lives": 1}),
            ("argute", 3, {"target_score": 2, "max_hands": 12}), ("whiskey_poker", 3, {})]


def some_positions(game, n, opts, count, seed):
    """Observations of the seat to act at a random point of the first hand of ``count`` deals."""
    rng = random.Random(seed)
    out = []
    for d in range(count):
        s = game.new_match(n, 1000 + d, **opts)
        for _ in range(rng.randrange(6)):
            if s.is_terminal() or s.hand_index() > 0:
                break
            s.apply(game.rollout_action(s, rng))
        if not s.is_terminal() and s.hand_index() == 0:
            out.append(s.observation(s.current_player()))
    return out


@pytest.mark.parametrize("name,n,opts", SETTINGS)
def test_tree_loop_builds_the_reference_tree(name, n, opts):
    game = registry.get_game(name)
    teams = game.teams(n)
    positions = some_positions(game, n, opts, 3, 7)
    assert positions
    for i, obs in enumerate(positions):
        a, b = random.Random(i), random.Random(i)
        root, done = so_iterations(game, game.infoset(obs), teams, a, 120, None, 0.7, True, None)
        ref = reference_so(game, game.infoset(obs), teams, b, 120, 0.7, True)
        assert done == 120
        assert tree_stats(root) == tree_stats(ref)
        assert a.getstate() == b.getstate()


# ---------------------------------------------------------------- the sampler


def reference_sample(s: Sampler, rng):
    """``Sampler.sample`` as before the typed walk (zip over the classes, ``rng.randrange``)."""
    pools = [list(cards) for cards in s.class_cards]
    rem = tuple(len(p) for p in pools)
    out = []
    for j in range(s.nloc):
        cls = s.loc_classes[j]
        cum, ks = s._step(j, rem)
        if len(ks) == 1:
            k = ks[0]
        else:
            tot = cum[-1]
            r = int(rng.random() * tot) if tot < 4294967296 else rng.randrange(tot)
            k = ks[bisect_right(cum, r)]
        loc = []
        nxt = list(rem)
        for c, kc in zip(cls, k):
            if kc:
                pool = pools[c]
                n = len(pool)
                if kc == n:
                    loc.extend(pool)
                    pool.clear()
                    nxt[c] = 0
                    continue
                for t in range(kc):
                    i = int(rng.random() * (n - t))
                    pool[i], pool[n - 1 - t] = pool[n - 1 - t], pool[i]
                loc.extend(pool[n - kc:])
                del pool[n - kc:]
                nxt[c] -= kc
        if len(loc) > 1 and not s.problem.unordered >> j & 1:
            for t in range(len(loc) - 1, 0, -1):
                i = int(rng.random() * (t + 1))
                loc[i], loc[t] = loc[t], loc[i]
        out.append(loc)
        rem = tuple(nxt)
    return out, [values[int(rng.random() * len(values))] for values in s.problem.choices]


def random_problem(rng):
    """A random satisfiable-or-not problem: up to 24 cards, 1–4 locations, random masks."""
    n_loc = rng.randint(1, 4)
    n_cards = rng.randint(1, 24)
    caps = [0] * n_loc
    for _ in range(n_cards):
        caps[rng.randrange(n_loc)] += 1
    full = (1 << n_loc) - 1
    allowed = [full if rng.random() < 0.6 else rng.randint(1, full) for _ in range(n_cards)]
    choices = [list(range(rng.randint(1, 5))) for _ in range(rng.randrange(3))]
    return SamplingProblem(list(range(100, 100 + n_cards)), caps, allowed, choices=choices,
                           unordered=rng.randint(0, full))


def test_sampler_walk_draws_as_the_reference():
    rng = random.Random(11)
    checked = 0
    while checked < 60:
        p = random_problem(rng)
        try:
            s = Sampler(p)
        except Exception:
            continue
        a, b = random.Random(checked), random.Random(checked)
        for _ in range(15):
            assert s.sample(a) == reference_sample(s, b)
        assert a.getstate() == b.getstate()
        checked += 1


def test_huge_composition_totals_draw_with_randrange():
    # 64 interchangeable cards over 3 locations: totals beyond 2**32 take the exact branch
    p = SamplingProblem(list(range(64)), [20, 20, 24], [0b111] * 64)
    s = Sampler(p)
    assert s.total > 2**32
    a, b = random.Random(5), random.Random(5)
    for _ in range(5):
        assert s.sample(a) == reference_sample(s, b)
    assert a.getstate() == b.getstate()


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1000, 2**31 + 1, 2**40 - 3, 10**30])
def test_randbelow_is_randrange(n):
    a, b = random.Random(n), random.Random(n)
    assert [randbelow(a, n) for _ in range(200)] == [b.randrange(n) for _ in range(200)]
    assert a.getstate() == b.getstate()


def test_randbelow_refuses_an_empty_range():
    with pytest.raises(ValueError, match="at least 1"):
        randbelow(random.Random(0), 0)


# ---------------------------------------------------------------- Sedma's κ walk


def reference_draw_hands(info, rng):
    """``SedmaInfoSet._draw_hands`` as before (weights summed per sample, ``rng.randrange``)."""
    left = list(info._unseen_by_rank)
    tracked = info._tracked
    rem = tuple(left[x] for x in tracked[0])
    out = []
    for j, s in enumerate(info._order):
        cum, opts = info._joint_steps[(j, rem)]
        k = 0 if len(opts) == 1 else bisect_right(cum, rng.randrange(cum[-1]))
        kappa, nxt = opts[k]
        model = info.models[s]
        comp = [0] * 8
        for x, c in zip(model.ranks, kappa):
            comp[x] = c
        here = tracked[j]
        for x, after in zip(tracked[j + 1], nxt):
            if x not in model.ranks:
                comp[x] = rem[here.index(x)] - after
        rest = model.size - sum(comp)
        if rest:
            lump = [x for x in range(8) if x not in here and left[x]]
            total = sum(left[x] for x in lump)
            for x in lump:
                c = left[x]
                total -= c
                lo = rest - total if rest > total else 0
                hi = c if c < rest else rest
                k = lo
                if hi > lo:
                    ws = [comb(c, i) * comb(total, rest - i) for i in range(lo, hi + 1)]
                    r = rng.randrange(sum(ws))
                    while r >= ws[k - lo]:
                        r -= ws[k - lo]
                        k += 1
                comp[x] += k
                rest -= k
                if not rest:
                    break
        for x in range(8):
            left[x] -= comp[x]
        out.append(comp)
        rem = nxt
    return out


@pytest.mark.parametrize("n", [2, 3, 4])
def test_sedma_kappa_walk_draws_as_the_reference(n):
    game = registry.get_game("sedma")
    rng = random.Random(n)
    checked = 0
    for d in range(40):
        s = game.new_match(n, 500 + d)
        for _ in range(rng.randrange(4 * n + 8)):
            if s.is_terminal() or s.hand_index() > 0:
                break
            s.apply(game.rollout_action(s, rng))
        if s.is_terminal() or s.hand_index() > 0:
            continue
        info = game.infoset(s.observation(s.current_player()))
        a, b = random.Random(d), random.Random(d)
        for _ in range(10):
            assert info._draw_hands(a) == reference_draw_hands(info, b)
        assert a.getstate() == b.getstate()
        checked += 1
    assert checked >= 20
