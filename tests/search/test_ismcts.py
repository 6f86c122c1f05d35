"""Tree statistics of ISMCTS (engine/search/ismcts.py) and legality of the search bots' moves.

The statistics are checked exactly against an independent recount: a toy game with hidden
cards logs every world the search samples and every action applied to it (marking those
played by ``rollout_action``), so each node's visits, rewards and availability counts can
be recomputed from the logs alone.
"""

from __future__ import annotations

import random

import pytest

from bots import sdk
from bots.ismcts_bot import hard_cap_ms, time_budget_ms
from bots.ismcts_bot import make_act as ismcts_act
from bots.pimc_bot import PIMC
from bots.pimc_bot import make_act as pimc_act
from engine import registry
from engine.core import Game, Outcome, State, rank_rewards, ranks_from_results
from engine.search.ismcts import ISMCTS, Node, ucb_select

# ---------------------------------------------------------------- a toy game with hidden cards

DECK = 6  # card values 0..5, one card per player


class Pick(Game):
    """Each seat in turn plays a value from 0 to its hidden card; the highest side total wins.

    2 players: free-for-all; 4 players: sides {0, 2} and {1, 3}. With ``hidden`` the others
    see a play as ``play ?``.
    """

    name = "pick"
    min_players = 2
    max_players = 4

    def __init__(self, hidden: bool = False) -> None:
        self.hidden = hidden

    def teams(self, n):
        return [[0, 2], [1, 3]] if n == 4 else [[i] for i in range(n)]

    def new_match(self, n, deal_seed, **options):
        cards = random.Random(deal_seed).sample(range(DECK), n)
        return PickState(self, cards)

    def infoset(self, observation):
        return PickInfo(self, observation)

    def rollout_action(self, state, rng):
        state.rolling = True
        return super().rollout_action(state, rng)

    def parse_action(self, text):
        return int(text.split()[1])

    def format_action(self, action):
        return f"play {action}"


class PickState(State):
    __slots__ = ("game", "cards", "plays", "log", "rolling")

    def __init__(self, game, cards):
        self.game = game
        self.cards = list(cards)
        self.plays: list[int] = []
        self.log: list[tuple[int, int, bool]] = []  # (seat, action, played by rollout_action)
        self.rolling = False

    @property
    def num_players(self):
        return len(self.cards)

    def current_player(self):
        return -1 if self.is_terminal() else len(self.plays)

    def legal_actions(self):
        return [] if self.is_terminal() else list(range(self.cards[len(self.plays)] + 1))

    def apply(self, action):
        self._require_live()
        if action not in self.legal_actions():
            raise self._illegal(action)
        self.log.append((len(self.plays), action, self.rolling))
        self.plays.append(action)

    def is_terminal(self):
        return len(self.plays) == len(self.cards)

    def outcome(self):
        teams = self.game.teams(len(self.cards))
        side = [sum(self.plays[s] for s in t) for t in teams]
        ranks = [0] * len(self.cards)
        for r, t in zip(ranks_from_results(side), teams):
            for s in t:
                ranks[s] = r
        return Outcome(tuple(ranks), tuple(float(p) for p in self.plays))

    def _seen(self, actor, action, seat):
        return f"play {action}" if actor == seat or not self.game.hidden else "play ?"

    def observation(self, seat):
        acts = [[s, self._seen(s, a, seat)] for s, a in enumerate(self.plays)]
        return {"game": "pick", "players": len(self.cards), "seat": seat, "options": {},
                "hand_index": 0, "actions": acts, "card": self.cards[seat]}

    def clone(self):
        c = PickState(self.game, self.cards)
        c.plays, c.log = list(self.plays), list(self.log)
        return c

    def hand_index(self):
        return 1 if self.is_terminal() else 0

    def hand_rewards(self):
        return self.outcome().rewards(self.game.teams(len(self.cards)))

    def public_action(self, action, seat):
        """As ``seat`` observes the current mover playing ``action`` (called before ``apply``)."""
        return self._seen(len(self.plays), action, seat)

    def hand_start(self):
        return PickState(self.game, self.cards)

    def hand_history(self):
        return list(self.plays)

    def world_key(self):
        return tuple(self.cards), tuple(self.plays)


class PickInfo:
    """The worlds consistent with one seat's observation (rejection sampling; keeps every world drawn)."""

    def __init__(self, game, observation):
        self.game = game
        self.seat = observation["seat"]
        self.n = observation["players"]
        self.card = observation["card"]
        self.seen = [text for _, text in observation["actions"]]
        self.worlds: list[PickState] = []

    def sample(self, rng):
        others = [c for c in range(DECK) if c != self.card]
        while True:
            drawn = rng.sample(others, self.n - 1)
            cards = drawn[:self.seat] + [self.card] + drawn[self.seat:]
            plays = [None if t == "play ?" else int(t.split()[1]) for t in self.seen]
            if all(p is None or p <= cards[i] for i, p in enumerate(plays)):
                break
        plays = [p if p is not None else rng.randint(0, cards[i]) for i, p in enumerate(plays)]
        w = PickState(self.game, cards)
        for p in plays:
            w.apply(p)
        w.log = []
        self.worlds.append(w)
        return w


def search_seat0(game: Pick, state: PickState, iterations: int, seed: int, **kwargs):
    """Search seat 0's decision in ``state``; returns ``(result, infoset with its worlds)``."""
    holder = {}
    orig = game.infoset

    def infoset(o):
        holder["info"] = orig(o)
        return holder["info"]

    game.infoset = infoset
    res = ISMCTS(game, **kwargs).search(state.observation(0), random.Random(seed), iterations=iterations)
    return res, holder["info"]


def run_toy(n: int, iterations: int, seed: int, variant: str = "so", hidden: bool = False):
    """Search seat 0's first decision of a toy deal; returns ``(result, infoset with its worlds)``."""
    game = Pick(hidden)
    return search_seat0(game, game.new_match(n, 7), iterations, seed, c=0.7, variant=variant)


def recount(worlds: list[PickState]):
    """Visits, reward sums and availability counts per tree edge, recomputed from the world logs.

    :returns: ``{path tuple: [visits, reward, avail]}`` where a path is the in-tree actions
        from the root up to and including the edge.
    """
    stats: dict[tuple, list] = {}
    for w in worlds:
        teams = w.game.teams(len(w.cards))
        rewards = rank_rewards(w.outcome().ranks, teams)
        tree = [(s, a) for s, a, rolled in w.log if not rolled]
        replay = w.hand_start()
        for depth, (seat, a) in enumerate(tree):
            prefix = tuple(x for _, x in tree[:depth])
            legal = replay.legal_actions()
            # availability: every existing sibling legal here, and the edge taken (new or not)
            for x in legal:
                key = prefix + (x,)
                if key in stats or x == a:
                    stats.setdefault(key, [0, 0.0, 0])[2] += 1
            edge = stats[prefix + (a,)]
            edge[0] += 1
            edge[1] += rewards[seat]
            replay.apply(a)
    return stats


def tree_stats(root: Node) -> dict[tuple, list]:
    """``{path: [visits, reward, avail]}`` of every edge of a tree."""
    out = {}
    stack = [((), root)]
    while stack:
        path, node = stack.pop()
        for k, ch in node.children.items():
            out[path + (k,)] = [ch.visits, ch.reward, ch.avail]
            stack.append((path + (k,), ch))
    return out


# ---------------------------------------------------------------- tree statistics

@pytest.mark.parametrize("n", [2, 3, 4])
def test_visits_rewards_and_availability_match_an_independent_recount(n):
    res, info = run_toy(n, 300, seed=5)
    assert res.iterations == 300
    assert len(info.worlds) == 300
    got = tree_stats(res.tree)
    want = recount(info.worlds)
    assert set(got) == set(want)
    for path, (v, r, a) in want.items():
        gv, gr, ga = got[path]
        assert (gv, ga) == (v, a), path
        assert gr == pytest.approx(r), path
    # root: the mover's own actions are always legal, so availability is "iterations since creation"
    root_avail = sorted(ch.avail for ch in res.tree.children.values())
    k = len(res.tree.children)
    assert root_avail == list(range(300 - k + 1, 301))
    assert sum(ch.visits for ch in res.tree.children.values()) == 300


def test_hidden_cards_make_availability_smaller_than_parent_visits():
    res, info = run_toy(2, 400, seed=1)
    # seat 1 holds one of the five cards seat 0 does not; its action 5 (or its highest) is legal
    # only in the worlds where it holds that card
    card0 = info.card
    top = max(c for c in range(DECK) if c != card0)
    node = res.tree.children[0]
    assert top in node.children
    in_tree = [[a for _, a, rolled in w.log if not rolled] for w in info.worlds]
    worlds_through = sum(1 for path in in_tree if len(path) >= 2 and path[0] == 0)
    ch_top = node.children[top]
    ch_zero = node.children[0]
    assert ch_top.avail < ch_zero.avail <= worlds_through
    assert ch_top.visits <= ch_top.avail


def test_selection_is_restricted_to_legal_actions():
    node = Node()
    for k, (visits, reward) in {"a": (10, 9.0), "b": (10, 1.0), "c": (10, 2.0)}.items():
        ch = Node(0)
        ch.visits, ch.reward, ch.avail = visits, reward, 10
        node.children[k] = ch
    # "a" has the best mean but is not legal in this determinization
    assert ucb_select(node, ["b", "c"], 0.7) == "c"
    assert [node.children[k].avail for k in "abc"] == [10, 11, 11]
    # with c = 0 the choice is the best mean among the legal keys
    assert ucb_select(node, ["a", "b"], 0.0) == "a"
    assert [node.children[k].avail for k in "abc"] == [11, 12, 11]


def test_ucb_uses_availability_not_parent_visits():
    node = Node()
    for k, (visits, avail) in {"x": (5, 100), "y": (5, 6)}.items():
        ch = Node(0)
        ch.visits, ch.reward, ch.avail = visits, 2.5, avail
        node.children[k] = ch
    # equal means: the edge that was available more often (and so under-explored) wins
    assert ucb_select(node, ["y", "x"], 1.0) == "x"


def test_partners_share_their_sides_reward():
    res, info = run_toy(4, 200, seed=3)
    for w in info.worlds:
        r = rank_rewards(w.outcome().ranks, [[0, 2], [1, 3]])
        assert r[0] == r[2] and r[1] == r[3] and r[0] + r[1] == 1.0
    # an edge taken by seat 2 holds seat 0's (its partner's) reward sum
    want = recount(info.worlds)
    for path, (_, rew, _) in want.items():
        if len(path) == 3:
            worlds = [w for w in info.worlds if tuple(a for _, a, rolled in w.log if not rolled)[:3] == path]
            team0 = sum(rank_rewards(w.outcome().ranks, [[0, 2], [1, 3]])[0] for w in worlds)
            assert rew == pytest.approx(team0)
    assert tree_stats(res.tree).keys() == want.keys()


def test_mo_edges_are_keyed_by_what_each_seat_observes():
    res, info = run_toy(2, 200, seed=2, variant="mo", hidden=True)
    roots = res.tree
    assert isinstance(roots, list) and len(roots) == 2
    # seat 0 sees its own plays: one edge per value it may play
    assert sorted(roots[0].children) == list(range(info.card + 1))
    # seat 1 cannot see seat 0's play: a single edge "play ?" taken in every iteration
    assert list(roots[1].children) == ["play ?"]
    assert roots[1].children["play ?"].visits == 200
    assert sum(ch.visits for ch in roots[0].children.values()) == 200
    # below it, seat 1's own plays are keyed by value
    below = roots[1].children["play ?"].children
    assert below and all(isinstance(k, int) for k in below)


def test_search_is_reproducible_for_a_seed():
    game = registry.get_game("agram")
    state = game.new_match(3, 99)
    obs = state.observation(state.current_player())
    for variant in ("so", "mo"):
        a = ISMCTS(game, variant=variant).search(obs, random.Random(11), iterations=300)
        b = ISMCTS(game, variant=variant).search(obs, random.Random(11), iterations=300)
        assert (a.action, a.visits, a.value, a.iterations) == (b.action, b.visits, b.value, b.iterations)
        assert sum(a.visits.values()) == 300
    p1 = PIMC(game).search(obs, random.Random(4), iterations=300)
    p2 = PIMC(game).search(obs, random.Random(4), iterations=300)
    assert (p1.action, p1.visits, p1.value, p1.iterations) == (p2.action, p2.visits, p2.value, p2.iterations)


def test_pimc_spends_its_budget_as_rollouts():
    game = registry.get_game("agram")
    state = game.new_match(3, 5)
    obs = state.observation(state.current_player())
    k = len(state.legal_actions())
    res = PIMC(game, determinizations=10).search(obs, random.Random(1), iterations=1000)
    per = 1000 // (10 * k)
    assert res.iterations == 10 * k * per
    assert sum(res.visits.values()) == 10  # one vote per determinization


def test_ismcts_prefers_the_obvious_move_in_the_toy():
    # seat 0 holds the 5 in a 2-player toy: playing 5 always wins (or ties) -> it is chosen
    game = Pick()
    state = PickState(game, [5, 2])
    res = ISMCTS(game).search(state.observation(0), random.Random(0), iterations=600)
    assert res.action == 5
    assert res.value > 0.9


class PickMax(Pick):
    """The toy with a card-aware rollout policy: a seat always plays its hidden card's value."""

    def rollout_action(self, state, rng):
        return max(state.legal_actions())


@pytest.mark.parametrize("variant", ["so", "mo"])
def test_rollout_opponent_model_plays_the_policy_on_each_determinization(variant):
    game = PickMax()
    res, info = search_seat0(game, PickState(game, [3, 5]), 400, 8, variant=variant, opponent_model="rollout")
    worlds = info.worlds
    assert res.iterations == 400 and len(worlds) == 400
    root = res.tree if variant == "so" else res.tree[0]
    # seat 1 (the opponent) played its determinized card in every world: under each of seat 0's
    # edges its children are keyed by the cards it was dealt, visited once per such world (but
    # the first world through an edge, which expanded it and left the rest to the rollout)
    key = (lambda v: v) if variant == "so" else (lambda v: f"play {v}")
    for a0, node in root.children.items():
        through = [w for w in worlds if w.plays[0] == a0]
        assert all(w.plays[1] == w.cards[1] for w in through)
        want: dict = {}
        for w in through[1:]:
            want[key(w.cards[1])] = want.get(key(w.cards[1]), 0) + 1
        assert {k: ch.visits for k, ch in node.children.items()} == want
        assert set(node.children) <= {key(v) for v in (0, 1, 2, 4, 5)}
        # the edge's value is seat 0's exact win rate against that opponent in those worlds
        wins = sum(1.0 if a0 > w.cards[1] else 0.5 if a0 == w.cards[1] else 0.0 for w in through)
        assert node.mean() == pytest.approx(wins / len(through))
    # playing 3 beats the opponent holding 0, 1 or 2 of the five unseen cards: 3/5
    assert res.action == 3
    assert abs(res.value - 0.6) < 0.1


def test_tree_opponent_model_branches_on_every_value_a_determinization_allows():
    # the same position with the paper's tree model: the opponent's edges are UCB choices over
    # every value legal in some determinization (a 3 or lower is legal when it holds a 4 or a 5)
    game = PickMax()
    state = PickState(game, [3, 5])
    res = ISMCTS(game).search(state.observation(0), random.Random(8), iterations=400)
    assert set(res.tree.children[3].children) == {0, 1, 2, 3, 4, 5}


def test_unknown_opponent_model_is_refused():
    with pytest.raises(ValueError, match="opponent_model"):
        ISMCTS(Pick(), opponent_model="oracle")


# ---------------------------------------------------------------- clock arithmetic of the bots

def test_time_budget_stays_inside_the_clock():
    clock = {"move_ms": 1000, "bank_ms": 10000}
    # min(T, move + bank/20 - (60 + 0.1 move)) = min(T, 1000 + 500 - 160)
    assert time_budget_ms(5000, clock) == 1340
    assert time_budget_ms(200, clock) == 200
    assert time_budget_ms(200, clock, started_ms=15) == 185
    assert time_budget_ms(None, clock) == 1340
    assert time_budget_ms(300, None) == 300
    assert time_budget_ms(None, None) is None
    assert time_budget_ms(300, {"move_ms": 10, "bank_ms": 0}) == 1.0
    assert hard_cap_ms(clock) == 1000 + 10000 - 160
    assert hard_cap_ms(None) is None


# ---------------------------------------------------------------- legal moves in every game

def _positions(game, n, opts, count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count * 3):
        if len(out) >= count:
            break
        s = game.new_match(n, rng.getrandbits(40), **opts)
        for _ in range(rng.randrange(0, 40)):
            if s.is_terminal():
                break
            s.apply(game.rollout_action(s, rng))
        if not s.is_terminal():
            out.append(s)
    return out


@pytest.mark.parametrize("name", registry.names())
def test_bots_never_play_an_illegal_move(name):
    game = registry.get_game(name)
    acts = [("ismcts-so", ismcts_act(20, None, 0.7, "so", True)),
            ("ismcts-mo", ismcts_act(12, None, 0.7, "mo", False)),
            ("pimc", pimc_act(20, None, 4, True))]
    checked = 0
    for ci, (n, opts) in enumerate(game.configs[:2]):
        for s in _positions(game, n, opts, 5, seed=ci):
            seat = s.current_player()
            obs = s.observation(seat)
            legal = s.legal_strings()
            for label, act in acts:
                ctx = sdk.Context(game=name, options=obs["options"], players=n, seat=seat,
                                  rng=random.Random(checked), clock={"move_ms": 60000, "bank_ms": 60000})
                action, info = act(obs, legal, ctx)
                assert action in legal, (name, label, action, legal)
                if len(legal) > 1:
                    assert info["iterations"] > 0
                    assert 0.0 <= info["value"] <= 1.0
            checked += 1
    assert checked >= 5
