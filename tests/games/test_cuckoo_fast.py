"""Cuckoo's fast paths (issue 19, fourth pass) give exactly the reference results.

* the lazy deal of the next hand and the lazily built hand-start snapshot equal an eager
  deal from ``engine.deal.shuffled`` (world, observations, snapshot);
* :func:`~engine.games.cuckoo.rollout.discard_knowers` equals the replayed trace's answer;
* sampled worlds (template clones, :func:`~engine.games.cuckoo.infoset.draw_deal`) equal
  the reference path (``Sampler.sample`` and the state built with the actions applied) with
  the same generator, and leave it in the same state;
* a digest of 60 searches pinned from the code before this pass (``main`` at 4d863f1, pure
  Python): no choice and no random stream changed.

Run compiled and with ``CARDARENA_PURE_PYTHON=1``: both must pass.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from engine import registry
from engine.deal import shuffled
from engine.games.cuckoo.actions import CUT, DECK, OVER
from engine.games.cuckoo.infoset import draw_deal
from engine.games.cuckoo.rollout import discard_knowers
from engine.sampling import Sampler, SamplingProblem
from engine.search.ismcts import ISMCTS

GAME: Any = registry.get_game("cuckoo")  # the Cuckoo object: its states' own attributes
SETTINGS = list(GAME.configs) + [(3, {"lives": 1})]


def random_positions(n, opts, count, seed, policy=False):
    """``count`` live states after a random number of moves (random, or the rollout policy)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = GAME.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 60)):
            if s.is_terminal():
                break
            if policy:
                s.apply(GAME.rollout_action(s, rng))
            else:
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal():
            out.append(s)
    return out


def test_lazy_deal_equals_an_eager_deal() -> None:
    """After a hand ends the next one is dealt on first use; it is exactly the deal of
    ``shuffled(DECK, deal_seed, hand)`` into the turn order, and the hand-start snapshot
    built later is the state right after that deal."""
    later = 0
    for ci, (n, opts) in enumerate(SETTINGS):
        for k, s in enumerate(random_positions(n, opts, 25, 40 + ci)):
            where = f"config {ci} position {k}"
            if s.hand_index() > 0:
                later += 1
            eager = s.clone()
            eager._deal(shuffled(DECK, eager.deal_seed, eager.hidx), order=s.order)
            assert s.dealt == eager.dealt and s.stock == eager.stock, where
            assert s.hand_start().world_key() == eager.world_key(), where
            for seat in range(n):
                assert s.hand_start().observation(seat) == eager.observation(seat), where
    assert later > 40   # most positions are in a later (lazily dealt) hand


def test_pending_hand_reads_deal_it() -> None:
    """Every read of a pending hand's cards deals it first: ``cards``, ``stock``, ``dealt``,
    ``world_key``, ``observation`` and ``apply`` see the same deal as an eager one."""
    s = GAME.new_match(4, 77)
    while s.hand_index() == 0:
        s.apply(s.legal_actions()[0])
    assert s.pending and s.hand_index() == 1
    deck = shuffled(DECK, s.deal_seed, 1)
    order = s.order
    assert order == (2, 3, 0, 1) and s.current_player() == 2   # the deal passed to seat 1
    for read in ("cards", "stock", "dealt", "world_key", "observation", "apply"):
        c = s.clone()
        assert c.pending
        if read == "observation":
            c.observation(0)
        elif read == "apply":
            c.apply(c.legal_actions()[0])
        elif read == "world_key":
            c.world_key()
        else:
            getattr(c, read)
        assert not c.pending, read
        assert [c.dealt[p] for p in order] == deck[:4], read
        assert c.stock == tuple(deck[4:]), read


def test_discard_knowers_equals_the_trace() -> None:
    """The typed trace follow finds the seats that know the dealer's discard exactly as the
    replayed :class:`~engine.games.cuckoo.actions.Trace` does, on 300 hands ended by a cut."""
    checked = nonzero = 0
    rng = random.Random(5)
    for ci, (n, opts) in enumerate(SETTINGS):
        for s in random_positions(n, opts, 120, 70 + ci, policy=True):
            while not s.is_terminal() and CUT not in s.legal_actions():   # to a dealer's turn
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
            if s.is_terminal():
                continue
            s._act(CUT)
            if s.discard < 0:
                continue
            t = s.trace()
            want = sum(1 << p for p in s.order if t.knows(p, t.discard))
            assert discard_knowers(n, s.order, s.history) == want
            s._end_hand()
            assert s.hands[-1][6] == want
            checked += 1
            nonzero += want != 1 << s.hands[-1][0]   # someone besides the dealer knows it
    assert checked >= 300 and nonzero > 20, (checked, nonzero)


def test_draw_deal_equals_the_sampler() -> None:
    """``draw_deal`` draws exactly what ``Sampler.sample`` draws for one-card hands and an
    ordered stock from one card class."""
    for nfree in (0, 1, 2, 5, 19):
        cards = list(range(52 - (20 - nfree)))[::-1]
        stock = len(cards) - nfree
        problem = SamplingProblem.build([(f"hand {i}", 1) for i in range(nfree)] + [("stock", stock)], cards)
        sampler = Sampler(problem)
        for seed in range(30):
            a, b = random.Random(seed), random.Random(seed)
            assignment, _ = sampler.sample(a)
            free, got = draw_deal(list(sampler.class_cards[0]), nfree, b.random)
            assert free == [x[0] for x in assignment[:-1]] and list(got) == assignment[-1]
            assert a.getstate() == b.getstate()


def test_sampled_worlds_equal_the_reference_path() -> None:
    """Worlds from ``CuckooInfoSet.sample`` (template clones, typed draws) equal the
    reference (``Sampler.sample``, a new state with the observed actions applied) drawn from
    the same generator: the same world, observations, legal actions and generator state.
    Mid-hand observations include trades and blocks (and ``automatic``'s non-king origins,
    where the generic sampler runs)."""
    checked = fast = restricted = 0
    for ci, (n, opts) in enumerate(SETTINGS):
        for k, s in enumerate(random_positions(n, opts, 12, 300 + ci, policy=True)):
            obs = s.observation(s.current_player())
            info = GAME.infoset(obs)
            for i in range(6):
                a, b = random.Random(1000 * k + i), random.Random(1000 * k + i)
                got = info.sample(a)
                ref_info = GAME.infoset(obs)
                assignment, choices = ref_info.sampler.sample(b)
                want = ref_info._first_world(assignment, b)
                where = f"config {ci} position {k} sample {i}"
                assert got.world_key() == want.world_key(), where
                assert got.legal_actions() == want.legal_actions(), where
                assert got.observation(obs["seat"]) == obs, where
                for seat in range(n):
                    assert got.observation(seat) == want.observation(seat), where
                assert a.getstate() == b.getstate(), where
                checked += 1
            fast += info._pool is not None
            restricted += len(info.sampler.class_cards) > 1
    assert checked == 6 * 12 * len(SETTINGS) and fast > 30 and restricted > 0, (fast, restricted)


#: 60 searches from main before this pass (4d863f1, pure Python): see the module docstring
PINNED = "b883c31c9b316b55"


def test_searches_unchanged() -> None:
    """SO (tree and rollout opponent models, hand and full rollouts) and MO searches from
    positions at random points of matches, every config: the digest of the chosen actions,
    visit counts and values is the one the code before this pass gave."""
    h = hashlib.sha256()
    count = 0
    for ci, (n, opts) in enumerate(SETTINGS):
        rng = random.Random(ci)
        obs = []
        for d in range(4):
            s = GAME.new_match(n, 500 + d, **opts)
            for _ in range(rng.randrange(0, 40)):
                if s.is_terminal():
                    break
                s.apply(GAME.rollout_action(s, rng))
            if not s.is_terminal():
                obs.append(s.observation(s.current_player()))
        for variant, om, hr in (("so", "tree", True), ("so", "rollout", True), ("so", "tree", False),
                                ("mo", "tree", True)):
            srch = ISMCTS(GAME, 0.7, variant, hr, om)
            for i, o in enumerate(obs):
                r = srch.search(o, random.Random(i), 120)
                h.update(repr((r.action, sorted(r.visits.items(), key=repr), r.value)).encode())
                count += 1
    assert count == 60
    assert h.hexdigest()[:16] == PINNED


def test_match_over_snapshot() -> None:
    """At the end of the match the state's snapshot is the final state itself (no hand)."""
    s = GAME.new_match(3, 9, lives=1)
    rng = random.Random(3)
    while not s.is_terminal():
        legal = s.legal_actions()
        s.apply(legal[rng.randrange(len(legal))])
    assert s.phase == OVER and not s.pending
    assert s.hand_start().world_key() == s.world_key()
    assert s.dealt == (-1, -1, -1)


def test_next_dealer_and_order_after_eliminations() -> None:
    """The next hand's dealer is the first seat clockwise after the last dealer still in
    and its order the active seats from the dealer's left (§3.2), computed from the last
    hand's order: checked against the definition after every hand of 150 random matches."""
    hands = outs = 0
    rng = random.Random(8)
    for ci, (n, opts) in enumerate(SETTINGS):
        for m in range(25):
            s = GAME.new_match(n, 9000 + 31 * ci + m, **opts)
            while not s.is_terminal():
                d, h, alive = s.dealer, s.hand_index(), sum(e < 0 for e in s.elim)
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
                if s.is_terminal() or s.hand_index() == h:
                    continue
                want = next((d + k) % n for k in range(1, n + 1) if s.elim[(d + k) % n] < 0)
                assert s.dealer == want and s.order == s._turn_order() and s.order[-1] == want
                hands += 1
                outs += sum(e < 0 for e in s.elim) < alive
    assert hands > 300 and outs > 50, (hands, outs)


def test_match_rewards_equal_the_outcome() -> None:
    """``match_rewards`` (cached by the elimination pattern) is ``outcome().rewards(teams)``
    for finished matches, seats alone and in sides."""
    rng = random.Random(4)
    for n, opts in SETTINGS:
        sides = [[[i] for i in range(n)], [list(range(0, n, 2)), list(range(1, n, 2))]]
        for m in range(20):
            s = GAME.new_match(n, 700 + m, **opts)
            while not s.is_terminal():
                legal = s.legal_actions()
                s.apply(legal[rng.randrange(len(legal))])
            for teams in sides:
                assert s.match_rewards(teams) == s.outcome().rewards(teams)
                assert s.match_rewards(teams) == s.outcome().rewards(teams)   # from the cache
