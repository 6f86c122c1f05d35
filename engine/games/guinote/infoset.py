"""Guiñote information sets: who may hold each unseen card, and consistent worlds (rules §1.6).

The hidden part of a hand is its deal. Every deal position is a seat's initial hand, a
face-down stock position drawn by a known seat in a known round (the draw order is
public), or a stock position not yet drawn; the face-up card's position is known, and the
observer knows its own initial hand and draws. A world is drawn in two exact stages, both
through :class:`engine.sampling.Sampler`:

1. :meth:`GuinoteInfoSet.problem`: the cards nobody has shown go to the other seats'
   hidden hand cards (capacity: hand size minus the cards publicly known in it) or to the
   undrawn stock (ordered). A seat may not hold a card its strict-phase plays exclude
   (voids, could-not-beat, could-not-over-trump, no trumps:
   :func:`engine.games.guinote.rules.strict_forbidden`).
2. Per other seat, its dealt hand and its face-down draws are filled with the cards it
   has shown (played, called, swapped out; not those it received face up) and its hidden
   hand cards; a card shown after ``r`` draw rounds was dealt or drawn in one of its first
   ``r`` draws (:meth:`GuinoteInfoSet._arranger`). The number of such arrangements does
   not depend on which hidden cards the seat holds, so drawing stage 1 uniformly and then
   the arrangement uniformly is uniform over physical deals. ``count()`` counts stage 1
   (the number of physical deals is that times a constant).

Given both stages the deal is rebuilt and the hand's actions are replayed from it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.cards import parse_spanish
from engine.core import Game, InfoSet
from engine.errors import ActionParseError, InconsistentObservationError
from engine.games.guinote.actions import NCARDS
from engine.games.guinote.public import PublicHand, walk
from engine.games.guinote.state import GuinoteState
from engine.sampling import Sampler, SamplingProblem


class GuinoteInfoSet(InfoSet):
    """The information set of one Guiñote observation (see the module docstring).

    :raises InconsistentObservationError: if the observation is malformed or contradicts itself.
    """

    __slots__ = ("game", "n", "opts", "hand_no", "dealer", "trump_card", "actions", "pub", "dealt",
                 "drawn", "past", "start_scores", "nfd", "locs", "_problem", "_arrangers", "_base")

    def __init__(self, game: Game, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        try:
            if observation["game"] != "guinote":
                raise InconsistentObservationError(f"guinote: observation of game {observation['game']!r}")
            self.game = game
            n = int(observation["players"])
            game.check_players(n)
            self.n = n
            if not 0 <= self.seat < n:
                raise InconsistentObservationError(f"guinote: seat {self.seat} out of range for {n} players")
            self.opts = game.resolve_options(observation["options"])
            self.hand_no = int(observation["hand_index"])
            self.dealer = int(observation["dealer"])
            self.trump_card = parse_spanish(observation["trump_card"])
            seats = [int(s) for s, _ in observation["actions"]]
            self.actions = [game.parse_action(a) for _, a in observation["actions"]]
            self.dealt = [parse_spanish(c) for c in observation["dealt"]]
            self.drawn = [parse_spanish(c) for c in observation["drawn"]]
            self.past = tuple((int(h["dealer"]), int(h["points"][0]), int(h["points"][1]), int(h["last_trick"]))
                              for h in observation["past"])
        except (KeyError, TypeError, ValueError, ActionParseError) as exc:
            raise InconsistentObservationError(f"guinote: malformed observation ({exc!r})") from exc
        self.start_scores = [sum(h[1] for h in self.past), sum(h[2] for h in self.past)]
        self.pub: PublicHand = walk(n, self.dealer, self.trump_card, self.opts["must_undertrump"],
                                    self.actions, seats)
        self.nfd = NCARDS - 6 * n - 1
        self.locs: list[tuple] = []
        self._problem: SamplingProblem | None = None
        self._base: tuple[int, list[int]] | None = None
        self._arrangers: dict[int, tuple[list[tuple[int, int]], list[tuple[int, int]], Sampler]] = {}

    def _my_positions(self) -> list[int]:
        """Face-down stock positions of the observer's draws, in draw order."""
        n, me = self.n, self.seat
        out = []
        for r, w in enumerate(self.pub.rounds):
            k = r * n + (me - w) % n
            if k < self.nfd:
                out.append(k)
        return out

    def problem(self) -> SamplingProblem:
        """Stage 1 (module docstring): locations ``stock`` (undrawn face-down cards, ordered,
        omitted when empty) then ``hidden <seat>`` per other seat."""
        if self._problem is not None:
            return self._problem
        n, me, pub = self.n, self.seat, self.pub
        mine = 0
        for c in self.dealt + self.drawn:
            mine |= 1 << c
        if len(self.dealt) != 6 or mine.bit_count() != 6 + len(self.drawn) or mine >> self.trump_card & 1:
            raise InconsistentObservationError("guinote: the observer's dealt and drawn cards are inconsistent")
        if len(self.drawn) != len(self._my_positions()):
            raise InconsistentObservationError("guinote: the observer's draws do not match the draw rounds")
        held_by = pub.held_by
        for c, (p, _) in held_by.items():
            if p == me and not mine >> c & 1:
                raise InconsistentObservationError(f"guinote: seat {me} showed {c} but never held it")
        unseen = [c for c in range(NCARDS)
                  if not mine >> c & 1 and c != self.trump_card and c not in held_by]
        locs: list[tuple] = []
        caps: list[int] = []
        undrawn = list(range(len(pub.rounds) * n, self.nfd))
        if undrawn:
            locs.append(("stock", undrawn))
            caps.append(len(undrawn))
        for p in range(n):
            if p != me:
                hidden = pub.hand_sizes[p] - pub.shown[p].bit_count()
                if hidden < 0:
                    raise InconsistentObservationError(f"guinote: seat {p} shows more cards than it holds")
                locs.append(("hidden", p))
                caps.append(hidden)
        allowed = []
        for c in unseen:
            m = 1 if undrawn else 0
            for j, loc in enumerate(locs):
                if loc[0] == "hidden" and not pub.forbidden[loc[1]] >> c & 1:
                    m |= 1 << j
            allowed.append(m)
        self.locs = locs
        self._problem = SamplingProblem(unseen, caps, allowed,
                                        [" ".join(map(str, loc[:2])) if loc[0] == "hidden" else "stock"
                                         for loc in locs])
        self._arrangers = {}
        for j, loc in enumerate(locs):
            if loc[0] == "hidden":
                self._arrangers[loc[1]] = self._arranger(loc[1], caps[j])
        return self._problem

    def _arranger(self, p: int, hidden: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]], Sampler]:
        """Stage 2 for seat ``p`` (module docstring).

        Its face-down draws are filled latest first: the draw of round ``r`` takes one of the
        seat's cards not yet placed that it may have held by then (shown after ``r`` or more
        rounds, or hidden); the dealt hand takes the rest. The number of candidates at each
        draw depends on the observation only, so an arrangement is one independent uniform
        index per draw: the hidden choices of a card-less :class:`SamplingProblem`.

        :returns: ``(draws, pool, sampler)``: draws as ``(round, face-down position)`` latest
            first; the pool as ``(rounds, card)`` with hidden cards as ``(big, NCARDS + i)``;
            the sampler of the indices.
        :raises InconsistentObservationError: if no arrangement exists.
        """
        n, pub = self.n, self.pub
        draws: list[tuple[int, int]] = []
        for r in range(len(pub.rounds) - 1, -1, -1):
            k = r * n + (p - pub.rounds[r]) % n
            if k < self.nfd:
                draws.append((r + 1, k))
        pool = sorted((rounds, c) for c, (q, rounds) in pub.held_by.items() if q == p)
        pool += [(NCARDS, NCARDS + i) for i in range(hidden)]
        if len(pool) != 6 + len(draws):
            raise InconsistentObservationError(
                f"guinote: seat {p} has {len(pool)} cards for {6 + len(draws)} dealt and drawn positions")
        sizes: list[Sequence[int]] = []
        for placed, (r, _) in enumerate(draws):
            m = sum(1 for rounds, _ in pool if rounds >= r) - placed
            if m <= 0:
                raise InconsistentObservationError(f"guinote: seat {p} showed cards it cannot have held yet")
            sizes.append(range(m))
        return draws, pool, Sampler(SamplingProblem([], [], [], [], sizes))

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> GuinoteState:
        """The world whose hidden cards are ``assignment`` (stage 1), with each other seat's
        slots drawn from ``rng`` (stage 2) and the hand's actions replayed.

        :raises IllegalActionError: if the assignment makes an observed action illegal.
        :raises InconsistentObservationError: if a seat's shown cards fit no arrangement.
        """
        self.problem()
        n = self.n
        base = self._base
        if base is None:  # the observer's own hand mask and face-down draws: the same every world
            own = 0
            for c in self.dealt:
                own |= 1 << c
            fd0: list[int] = [-1] * self.nfd
            for k, c in zip(self._my_positions(), self.drawn):
                fd0[k] = c
            base = self._base = (own, fd0)
        hands = [0] * n
        hands[self.seat] = base[0]
        fd = list(base[1])
        for loc, cards in zip(self.locs, assignment):
            if loc[0] == "stock":
                for k, c in zip(loc[1], cards):
                    fd[k] = c
                continue
            p = loc[1]
            draws, pool, sampler = self._arrangers[p]
            # no draws to arrange (e.g. before the first draw): the empty problem draws nothing
            picks = sampler.sample(rng)[1] if draws else []
            left = [(rounds, c if c < NCARDS else cards[c - NCARDS]) for rounds, c in pool]
            for (r, k), pick in zip(draws, picks):
                for i, (rounds, c) in enumerate(left):
                    if rounds >= r:
                        if pick == 0:
                            fd[k] = c
                            del left[i]
                            break
                        pick -= 1
            for _, c in left:
                hands[p] |= 1 << c
        state = GuinoteState(self.game, n, dict(self.opts), rng.getrandbits(63))
        state.hand_no = self.hand_no
        state.dealer = self.dealer
        state.scores = list(self.start_scores)
        state.past = self.past
        state.set_deal(hands, [self.trump_card] + fd[::-1])
        for a in self.actions:
            state.apply(a)
        return state
