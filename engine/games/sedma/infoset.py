"""Sedma information sets (``docs/rules/sedma.md`` §2.4).

There is no inference constraint in Sedma (any held rank may always be played and
continuing is optional), so the hidden part is: the unseen physical cards dealt to the
other seats' current hands and to the rest of the stock, with their public sizes.

Physical copies are pinned canonically from the observation alone: the cards played
this hand take the lowest copies of their rank in play order, the observer's hand the
next ones, and the unseen cards are the remaining ids. A world is built by giving each
seat its cards in the order they were received: the observer's as dealt and drawn
(``dealt``, ``drawn``); another seat's as its played cards in play order followed by
its current hand (every play was then of a card already received, because the real
play was legal). The first four are the dealt hand, the rest fill that seat's draws in
the public draw schedule (from each trick's winner round the table), the sampled stock
rest follows; replaying the hand's actions from that deal gives the world.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.sampling import SamplingProblem

from .actions import END, deck_for, parse_action, parse_rank
from .state import SedmaState, hand_rewards_from_points


class SedmaInfoSet(InfoSet):
    """The information set of one seat's observation (§2.4).

    Locations: ``hand s`` for every other seat (capacity = its hand size), then
    ``stock`` (capacity = stock size; its cards come back in draw order).

    :raises InconsistentObservationError: if the observation does not fit the deck
        (more copies of a rank than exist, sizes that do not add up, a terminal match).
    """

    __slots__ = ("game", "n", "opts", "actions", "others", "played_ids", "own_recv", "schedule",
                 "unseen", "capacities", "past", "vp", "dealer", "hidx")

    def __init__(self, game, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        obs = observation
        self.game = game
        n = int(obs["players"])
        game.check_players(n)
        self.n = n
        seat = self.seat
        if obs.get("phase") == "over":
            raise InconsistentObservationError("sedma: the match is over; there is nothing hidden to sample")
        self.opts = game.resolve_options(obs["options"])
        self.hidx = int(obs["hand_index"])
        self.dealer = int(obs["dealer"])
        self.vp = [int(v) for v in obs["vp"]]
        self.past = tuple({"dealer": e["dealer"], "points": list(e["points"]), "winners": list(e["winners"]),
                           "win": e["win"], "vp": list(e["vp"])} for e in obs["past_hands"])
        self.actions = [parse_action(a) for _, a in obs["actions"]]
        deck = deck_for(n)
        copies: list[list[int]] = [[] for _ in range(8)]
        for c in deck:
            copies[c >> 2].append(c)
        nxt = [0] * 8

        def pin(rank: int) -> int:
            if nxt[rank] >= len(copies[rank]):
                raise InconsistentObservationError(
                    f"sedma: the observation shows more than {len(copies[rank])} cards of rank {'789TJQKA'[rank]}")
            c = copies[rank][nxt[rank]]
            nxt[rank] += 1
            return c

        played_ids: list[list[int]] = [[] for _ in range(n)]
        for p, a in zip((int(p) for p, _ in obs["actions"]), self.actions, strict=True):
            if a != END:
                played_ids[p].append(pin(a & 7))
        self.played_ids = played_ids
        hand_ids: list[list[int]] = [[] for _ in range(8)]
        for r in obs["hand"]:
            x = parse_rank(r)
            hand_ids[x].append(pin(x))
        pinned = {c for lst in played_ids for c in lst} | {c for lst in hand_ids for c in lst}
        self.unseen = [c for c in deck if c not in pinned]
        # the observer's cards in the order received (dealt, then drawn)
        own_by_rank: list[list[int]] = [[c for c in played_ids[seat] if c >> 2 == x] + hand_ids[x] for x in range(8)]
        used = [0] * 8
        own_recv = []
        for r in list(obs["dealt"]) + list(obs["drawn"]):
            x = parse_rank(r)
            if used[x] >= len(own_by_rank[x]):
                raise InconsistentObservationError(f"sedma: seat {seat} received a {r} it neither played nor holds")
            own_recv.append(own_by_rank[x][used[x]])
            used[x] += 1
        if any(used[x] != len(own_by_rank[x]) for x in range(8)):
            raise InconsistentObservationError(f"sedma: seat {seat}'s dealt and drawn cards do not match its plays and hand")
        self.own_recv = own_recv
        # the public draw schedule: after each trick, from the winner round the table
        left = len(deck) - 4 * n
        schedule = []
        sizes = [4] * n
        for t in obs["tricks"]:
            rounds = len(t["cards"]) // n
            for i in range(n):
                sizes[i] -= rounds
            if left:
                need = min(rounds * n, left)
                w = int(t["winner"])
                for i in range(need):
                    s = (w + i) % n
                    schedule.append(s)
                    sizes[s] += 1
                left -= need
        self.schedule = schedule
        if left != int(obs["stock"]):
            raise InconsistentObservationError(f"sedma: stock of {obs['stock']} cards, the tricks leave {left}")
        self.others = [s for s in range(n) if s != seat]
        hand_sizes = [int(h) for h in obs["hand_sizes"]]
        self.capacities = [hand_sizes[s] for s in self.others] + [left]

    def problem(self) -> SamplingProblem:
        """Unseen ids -> the other seats' hands and the stock rest; no constraints (§2.4)."""
        names = [f"hand {s}" for s in self.others] + ["stock"]
        return SamplingProblem.build(list(zip(names, self.capacities, strict=True)), self.unseen)

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> SedmaState:
        """Build the hand's deal from one assignment and replay the hand's actions.

        Later hands of a VP match are dealt from a fresh key ``rng.getrandbits(63)``.

        :raises InconsistentObservationError: if the assignment does not fill the schedule.
        :raises IllegalActionError: if the replay fails (an inconsistent assignment).
        """
        n = self.n
        seat = self.seat
        recv: list[list[int]] = [[] for _ in range(n)]
        recv[seat] = self.own_recv
        for j, s in enumerate(self.others):
            recv[s] = self.played_ids[s] + list(assignment[j])
        hands = []
        for s in range(n):
            if len(recv[s]) < 4:
                raise InconsistentObservationError(f"sedma: seat {s} would receive fewer than 4 cards")
            m = 0
            for c in recv[s][:4]:
                m |= 1 << c
            hands.append(m)
        ptr = [4] * n
        stock = []
        for s in self.schedule:
            if ptr[s] >= len(recv[s]):
                raise InconsistentObservationError(f"sedma: seat {s} draws more cards than it received")
            stock.append(recv[s][ptr[s]])
            ptr[s] += 1
        if any(ptr[s] != len(recv[s]) for s in range(n)):
            raise InconsistentObservationError("sedma: the cards received do not fill the draw schedule")
        stock.extend(assignment[-1])
        st = SedmaState(self.game, n, self.opts, rng.getrandbits(63))
        st.dealer = self.dealer
        st.hidx = self.hidx
        st.vp = list(self.vp)
        st.past = self.past
        if self.past:
            st.last_rewards = hand_rewards_from_points(n, self.past[-1]["points"])
        st._set_hand(hands, stock)
        for a in self.actions:
            st.apply(a)
        return st
