"""Information-set Monte Carlo tree search (Cowling, Powley & Whitehouse, IEEE TCIAIG 2012).

* **SO-ISMCTS** (``variant="so"``): one tree over the searching seat's information set.
  Every iteration draws a fresh determinization ``game.infoset(observation).sample(rng)``
  (the information set is built once per decision), descends the tree choosing only among
  actions legal in that determinization with the availability-count UCB
  ``mean + c * sqrt(ln(n_available) / n)``, expands one untried action, rolls out with
  ``game.rollout_action`` and backpropagates a reward vector: each edge's statistics hold
  the reward of the seat that took it (partners share their side's reward).
* **MO-ISMCTS** (``variant="mo"``): one tree per seat; an action descends seat ``j``'s tree
  by the edge ``public_action(action, j)``, so a hidden move (an Argute bid, a Gargon
  face-down card) is one edge for the seats that cannot see it. The mover selects in its
  own tree.
* Rewards in [0, 1] from ``Outcome.rewards(teams)``; with ``hand_rollouts`` a rollout stops
  at the end of the current hand and uses ``State.hand_rewards()``.
* Opponent model (``opponent_model``): ``"tree"`` (the default, the algorithm of the paper):
  the opponents' moves are chosen in the tree like the searcher's, by UCB on statistics
  shared by every determinization, so the tree models opponents who cannot see their own
  cards. ``"rollout"``: an opponent (a seat not on the searcher's side) plays
  ``game.rollout_action`` on the iteration's determinization, i.e. the game's rollout
  policy acting on the cards the determinization gives it (partners still search in the
  tree). The edges it takes still enter the tree (they key the nodes below) but no UCB
  choice is made there. Honest: the determinization is drawn from the searcher's
  information set, so the policy sees sampled cards, never the true ones.
* Budget: ``iterations`` (reproducible with a seeded ``rng``) and/or ``time_ms``.
* Final move: the most visited root edge (ties: higher mean).
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from math import log, sqrt
from typing import Any

from engine.core import Game, InfoSet, State
from engine.search.rollout import rollout_rewards


class Node:
    """A tree node; the statistics of the edge leading to it live in the child.

    :ivar children: ``edge key -> Node``.
    :ivar visits: times the edge was taken (``n``).
    :ivar avail: times the edge was available when its parent was visited (``n_available``).
    :ivar reward: summed reward of ``player`` (the seat that took the edge).
    :ivar player: the seat that took the edge (``-1`` at the root).
    """

    __slots__ = ("children", "visits", "avail", "reward", "player")

    def __init__(self, player: int = -1) -> None:
        self.children: dict[Hashable, Node] = {}
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.player = player

    def mean(self) -> float:
        """Mean reward of the edge into this node (0 if never visited)."""
        return self.reward / self.visits if self.visits else 0.0


def ucb_select(node: Node, keys: list[Hashable], c: float) -> Hashable:
    """The child key maximising ``mean + c * sqrt(ln(avail) / visits)`` among ``keys``.

    Every key must be an existing, visited child (``KeyError`` otherwise). Availability
    counts of all ``keys`` are incremented first (they were available in this
    determinization). Ties go to the first key in ``keys`` order.
    """
    children = node.children
    best_key = keys[0]
    best = -1.0
    for k in keys:
        ch = children[k]
        ch.avail += 1
        n = ch.visits
        v = ch.reward / n + c * sqrt(log(ch.avail) / n)
        if v > best:
            best, best_key = v, k
    return best_key


@dataclass
class SearchResult:
    """The outcome of one search.

    :ivar action: the chosen action (most visited root edge).
    :ivar iterations: iterations run.
    :ivar value: mean reward of the chosen edge for the searching seat, in [0, 1].
    :ivar visits: per root action, its visit count.
    :ivar elapsed_ms: wall time of the search.
    :ivar tree: the searched tree: the root :class:`Node` (SO), or one root per seat (MO);
        ``None`` when no iteration ran. For tests and analysis.
    """

    action: Any
    iterations: int
    value: float
    visits: dict[Any, int] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    tree: Node | list[Node] | None = None


class ISMCTS:
    """ISMCTS for any game of the registry.

    :param game: the game.
    :param c: exploration constant (default 0.7, rewards in [0, 1]).
    :param variant: ``"so"`` (single observer) or ``"mo"`` (multiple observer).
    :param hand_rollouts: stop rollouts at the end of the current hand (``hand_rewards``).
    :param opponent_model: ``"tree"`` (UCB at every node) or ``"rollout"`` (opponents play
        ``game.rollout_action`` on the determinization; see the module docstring).
    :raises ValueError: for an unknown ``variant`` or ``opponent_model``.
    """

    def __init__(self, game: Game, c: float = 0.7, variant: str = "so", hand_rollouts: bool = False,
                 opponent_model: str = "tree") -> None:
        if variant not in ("so", "mo"):
            raise ValueError(f"variant must be 'so' or 'mo', got {variant!r}")
        if opponent_model not in ("tree", "rollout"):
            raise ValueError(f"opponent_model must be 'tree' or 'rollout', got {opponent_model!r}")
        self.game = game
        self.c = c
        self.variant = variant
        self.hand_rollouts = hand_rollouts
        self.opponent_model = opponent_model

    def _opponents(self, seat: int, teams: list[list[int]], n: int) -> list[bool] | None:
        """Per seat, whether its moves follow the rollout policy (None with the tree model)."""
        if self.opponent_model == "tree":
            return None
        mine = next(t for t in teams if seat in t)
        return [p not in mine for p in range(n)]

    # ------------------------------------------------------------------ rollouts

    def _rewards(self, state: State, teams: list[list[int]], hand0: int) -> list[float]:
        """Play ``state`` out with ``game.rollout_action`` and return the reward per seat.

        With ``hand_rollouts`` the rollout stops when the hand ``hand0`` ends
        (``State.hand_rewards()``); otherwise at the end of the match (``Outcome.rewards``).
        """
        return rollout_rewards(self.game, state, self._rng, teams, hand0, self.hand_rollouts)

    # ------------------------------------------------------------------ search

    def search(self, observation: Mapping[str, Any], rng: random.Random, iterations: int | None = 1000,
               time_ms: float | None = None) -> SearchResult:
        """Search from ``observation`` (the searching seat's) and choose an action.

        :param rng: the only source of randomness (reproducible for a seed with an
            iteration budget).
        :param iterations: maximum iterations (None: time only).
        :param time_ms: maximum wall time in ms (None: iterations only).
        :raises ValueError: if neither budget is given.
        :raises InconsistentObservationError: if the observation admits no world.
        """
        if iterations is None and time_ms is None:
            raise ValueError("give an iteration or a time budget")
        t0 = time.perf_counter()
        deadline = t0 + time_ms / 1000.0 if time_ms is not None else None
        self._rng = rng
        info = self.game.infoset(observation)
        seat = info.seat
        n = int(observation["players"])
        teams = self.game.teams(n)
        max_it = iterations if iterations is not None else 1 << 62
        self._policy_seats = self._opponents(seat, teams, n)
        if self.variant == "so":
            root, done = self._run_so(info, seat, teams, rng, max_it, deadline)
            tree: Node | list[Node] = root
        else:
            roots, done = self._run_mo(info, seat, teams, n, rng, max_it, deadline)
            root = roots[seat]
            tree = roots
        if not root.children:
            # no iteration ran (tiny time budget): fall back to a legal action of one world
            world = info.sample(rng)
            legal = world.legal_actions()
            return SearchResult(legal[0], 0, 0.0, {}, (time.perf_counter() - t0) * 1000)
        best_key = max(root.children, key=lambda k: (root.children[k].visits, root.children[k].mean()))
        best = root.children[best_key]
        visits = {k: ch.visits for k, ch in root.children.items()}
        return SearchResult(best_key, done, best.mean(), visits, (time.perf_counter() - t0) * 1000, tree)

    def _run_so(self, info: InfoSet, seat: int, teams: list[list[int]], rng: random.Random, max_it: int,
                deadline: float | None) -> tuple[Node, int]:
        """SO-ISMCTS iterations on one tree; returns ``(root, iterations done)``."""
        return so_iterations(self.game, info, teams, rng, max_it, deadline, self.c, self.hand_rollouts,
                             self._policy_seats)

    def _run_mo(self, info: InfoSet, seat: int, teams: list[list[int]], n: int, rng: random.Random, max_it: int,
                deadline: float | None) -> tuple[list[Node], int]:
        """MO-ISMCTS iterations on one tree per seat; returns ``(roots, iterations done)``."""
        c = self.c
        roots = [Node() for _ in range(n)]
        done = 0
        while done < max_it:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            state = info.sample(rng)
            hand0 = state.hand_index()
            nodes = list(roots)
            paths: list[list[Node]] = [[] for _ in range(n)]
            expanded = False
            while not state.is_terminal() and not expanded:
                if self.hand_rollouts and state.hand_index() != hand0:
                    break
                legal = state.legal_actions()
                player = state.current_player()
                own = nodes[player]
                children = own.children
                untried = [a for a in legal if a not in children]
                if self._policy_seats is not None and self._policy_seats[player]:
                    a = self.game.rollout_action(state, rng)
                    if a in children:
                        children[a].avail += 1
                elif untried:
                    for a in legal:
                        if a in children:
                            children[a].avail += 1
                    a = untried[int(rng.random() * len(untried))]
                    expanded = True
                elif len(legal) == 1:
                    a = legal[0]
                    children[a].avail += 1
                else:
                    a = ucb_select(own, legal, c)
                for j in range(n):
                    key = a if j == player else state.public_action(a, j)
                    ch = nodes[j].children.get(key)
                    if ch is None:
                        ch = Node(player)
                        ch.avail = 1
                        nodes[j].children[key] = ch
                    nodes[j] = ch
                    paths[j].append(ch)
                state.apply(a)
            rewards = self._rewards(state, teams, hand0)
            for j in range(n):
                for nd in paths[j]:
                    nd.visits += 1
                    nd.reward += rewards[nd.player]
            done += 1
        return roots, done


def so_iterations(game: Game, info: InfoSet, teams: list[list[int]], rng: random.Random, max_it: int,
                  deadline: float | None, c: float, hand_rollouts: bool,
                  policy_seats: list[bool] | None) -> tuple[Node, int]:
    """The SO-ISMCTS loop of :meth:`ISMCTS._run_so` (module level so ``ismcts.pxd`` can type it).

    :returns: ``(root, iterations done)``.
    """
    sample = info.sample
    random_ = rng.random
    clock = time.perf_counter
    roll = game.rollout_action
    root = Node()
    done = 0
    while done < max_it:
        if deadline is not None and clock() >= deadline:
            break
        state = sample(rng)
        hand0 = state.hand_index()
        node = root
        path = []
        while not state.is_terminal():
            if hand_rollouts and state.hand_index() != hand0:
                break
            children = node.children
            if policy_seats is not None:
                player = state.current_player()
                if policy_seats[player]:
                    # an opponent moves by the rollout policy on this determinization's cards
                    a = roll(state, rng)
                    child = children.get(a)
                    if child is None:
                        child = children[a] = Node(player)
                    child.avail += 1
                    node = child
                    state.apply(a)
                    path.append(node)
                    continue
            # one pass over the legal actions: count availability, collect the untried ones and
            # score the tried ones by UCB as ucb_select does (same ties: the first best)
            legal = state.legal_actions()
            nlegal = len(legal)
            untried = []
            best = -1.0
            best_a = None
            best_ch = node  # replaced by the first tried child (every UCB value is >= 0)
            for a in legal:
                ch = children.get(a)
                if ch is None:
                    untried.append(a)
                    continue
                ch.avail += 1
                if nlegal > 1 and not untried:
                    n = ch.visits
                    v = ch.reward / n + c * sqrt(log(ch.avail) / n)
                    if v > best:
                        best = v
                        best_a = a
                        best_ch = ch
            nuntried = len(untried)
            if nuntried:
                a = untried[int(random_() * nuntried)] if nuntried > 1 else untried[0]
                child = Node(state.current_player())
                child.avail = 1
                children[a] = child
                state.apply(a)
                path.append(child)
                break
            if nlegal == 1:
                a = legal[0]
                node = children[a]
            else:
                a = best_a
                node = best_ch
            state.apply(a)
            path.append(node)
        rewards = rollout_rewards(game, state, rng, teams, hand0, hand_rollouts)
        for nd in path:
            nd.visits += 1
            nd.reward += rewards[nd.player]
        done += 1
    return root, done
