"""Argute information sets: :class:`ArguteInfoSet` (``docs/rules/argute.md`` §1.4, ruling CA-R4).

**Exact over physical deals.** Copies of a value are distinct physical cards. The one
sampler (:mod:`engine.sampling`) draws the unseen copies uniformly into the opponents'
*current* hands and the undealt pile. A world in which opponent ``o`` now holds ``c``
further copies of a value ``v`` it has played ``p`` times this hand stands for
``C(c + p, p)`` times fewer physical deals than that draw gives it: ``o`` was dealt
``c + p`` copies of ``v``, and any ``p`` of them may be the ones it played, while the
sampler pins the played copies and counts only the ``c`` held ones. (Copies A1 A2 B1 B2,
the opponent dealt two, it plays an A: five deals fit, one with A A, so P(it still holds
an A) = 1/5; the uniform draw over the unseen A2 B1 B2 gives 1/3.) :meth:`ArguteInfoSet.sample`
therefore keeps a draw with probability ``1 / prod C(c + p, p)`` (:func:`copy_odds`, an
exact integer draw) and draws again otherwise: the kept worlds are uniform over physical
deals up to renaming copies of a value (which copy is where is never observable). The
acceptance rate measured over random first-hand positions is about 0.7 (2 players) to
0.3 (5–7 players) on average, 0.01 at the worst position found (7 players).
:meth:`ArguteInfoSet.problem` and :meth:`~engine.core.InfoSet.count` remain the unweighted
draw (every assignment of it is consistent).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.games.argute.actions import (
    BID,
    COPIES,
    DECK,
    HAND_SIZE,
    VALUES,
    copy_odds,
    parse_argute,
)
from engine.games.argute.state import ArguteState, _Match
from engine.sampling import SamplingProblem, randbelow

if TYPE_CHECKING:
    from engine.games.argute.game import Argute


class ArguteInfoSet(InfoSet):
    """The worlds consistent with one seat's Argute observation (§1.4 "Notes for ISMCTS").

    Cards known by value (own hand, every card played this hand) are pinned to the
    lowest physical copies of their value; the other copies are unseen and go to the
    opponents' hands (their current sizes) and the undealt pile (``42 - 6n``), with no
    further constraint (no suits). Each opponent who has already bid this hand has a
    hidden choice, its bid, uniform over 0..3. :meth:`sample` weights the draws to be
    exact over physical deals (module docstring).
    """

    __slots__ = ("game", "n", "opps", "bidders", "start_hands", "moves", "unseen", "caps", "played")

    def __init__(self, game: Argute, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        seat = self.seat
        self.n = n
        ptr = [0] * VALUES
        start = [0] * n

        def pin(p: int, v: int) -> None:
            """Pin value ``v``'s next copy to seat ``p``'s deal; InconsistentObservationError if none."""
            if not 0 <= v < VALUES or ptr[v] >= COPIES:
                raise InconsistentObservationError(f"argute: more than {COPIES} cards of value {v} are known")
            start[p] |= 1 << (COPIES * v + ptr[v])
            ptr[v] += 1

        for v in obs["hand"]:
            pin(seat, int(v))
        moves: list[tuple[int, Any]] = []  # (seat, action or None for a hidden bid)
        bidders = []
        for p, text in obs["actions"]:
            p = int(p)
            if text == "bid ?":
                if p == seat:
                    raise InconsistentObservationError("argute: own bid shown masked")
                bidders.append(p)
                moves.append((p, None))
                continue
            a = parse_argute(text)
            if a >= BID and p != seat:
                raise InconsistentObservationError(f"argute: seat {p}'s bid is visible to seat {seat}")
            if a < BID:
                pin(p, a)
            moves.append((p, a))
        self.opps = [o for o in range(n) if o != seat]
        self.bidders = bidders
        self.start_hands = start
        self.moves = moves
        self.unseen = [COPIES * v + k for v in range(VALUES) for k in range(ptr[v], COPIES)]
        sizes = [int(x) for x in obs["hand_sizes"]]
        self.caps = [sizes[o] for o in self.opps] + [len(DECK) - HAND_SIZE * n]
        counts = [[0] * VALUES for _ in range(n)]
        for p, a in moves:
            if a is not None and a < BID:
                counts[p][a] += 1
        #: per location of :meth:`problem` (opponents, then undealt: none), the values its seat played this hand
        self.played = [counts[o] for o in self.opps] + [[0] * VALUES]

    def sample(self, rng: random.Random) -> ArguteState:
        """A world uniform over the physical deals consistent with the observation, up to renaming
        copies of a value: draws of the sampler kept with probability ``1 / copy_odds`` (module docstring).

        :raises InconsistentObservationError: if no world exists.
        """
        sampler = self.sampler
        played = self.played
        while True:
            assignment, choices = sampler.sample(rng)
            odds = copy_odds(assignment, played)
            if odds == 1 or randbelow(rng, odds) == 0:  # rng.randrange(odds), the same draws
                return self.world(assignment, choices, rng)

    def problem(self) -> SamplingProblem:
        """Locations ``hand <o>`` per opponent then ``undealt``; one bid choice per opponent who bid."""
        nloc = len(self.opps) + 1
        full = (1 << nloc) - 1
        names = [f"hand {o}" for o in self.opps] + ["undealt"]
        return SamplingProblem(list(self.unseen), list(self.caps), [full] * len(self.unseen), names,
                               [list(range(4)) for _ in self.bidders])

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> ArguteState:
        """The hand dealt as assigned, with the sampled bids, replayed through this hand's
        actions; later hands use a fresh key from ``rng``."""
        obs = self.observation
        if obs.get("match_over"):
            raise InconsistentObservationError("argute: the match is over; there is no world to sample")
        n = self.n
        opts = dict(obs["options"])
        m = _Match(self.game, n, opts, rng.getrandbits(63))
        past = tuple((int(h["dealer"]), tuple(h["bids"]), tuple(h["tricks_won"]), tuple(h["changes"]))
                     for h in obs["history"])
        st = ArguteState._blank(m, int(obs["dealer"]), [int(x) for x in obs["scores"]],
                                int(obs["hand_index"]), past)
        hands = list(self.start_hands)
        for j, o in enumerate(self.opps):
            for c in assignment[j]:
                hands[o] |= 1 << c
        und = 0
        for c in assignment[-1]:
            und |= 1 << c
        st._begin_hand(hands, und)
        hidden = dict(zip(self.bidders, choices, strict=True))
        for p, a in self.moves:
            if st.cur != p:
                raise InconsistentObservationError(f"argute: seat {p} acts out of turn in the observation")
            st.apply(BID + hidden[p] if a is None else a)
        return st


__all__ = ["ArguteInfoSet"]
