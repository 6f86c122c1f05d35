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
therefore keeps a draw with probability ``1 / prod C(c + p, p)`` (:func:`copy_odds` in
``actions``, computed by :func:`held_odds`; an exact integer draw) and draws again otherwise: the kept worlds are uniform over physical
deals up to renaming copies of a value (which copy is where is never observable). The
acceptance rate measured over random first-hand positions is about 0.7 (2 players) to
0.3 (5–7 players) on average, 0.01 at the worst position found (7 players).
:meth:`ArguteInfoSet.problem` and :meth:`~engine.core.InfoSet.count` remain the unweighted
draw (every assignment of it is consistent).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from math import comb
from typing import TYPE_CHECKING, Any

from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.games.argute.actions import (
    BID,
    COPIES,
    DECK,
    HAND_SIZE,
    VALUES,
    parse_argute,
)
from engine.games.argute.state import ArguteState, _Match
from engine.sampling import SamplingProblem, randbelow

if TYPE_CHECKING:
    from engine.games.argute.game import Argute

ONE = 1


class ArguteInfoSet(InfoSet):
    """The worlds consistent with one seat's Argute observation (§1.4 "Notes for ISMCTS").

    Cards known by value (own hand, every card played this hand) are pinned to the
    lowest physical copies of their value; the other copies are unseen and go to the
    opponents' hands (their current sizes) and the undealt pile (``42 - 6n``), with no
    further constraint (no suits). Each opponent who has already bid this hand has a
    hidden choice, its bid, uniform over 0..3. :meth:`sample` weights the draws to be
    exact over physical deals (module docstring).
    """

    __slots__ = ("game", "n", "opps", "bidders", "start_hands", "moves", "unseen", "caps", "played", "_plain",
                 "_played_at", "_tmpl", "_bid_at", "_opts")

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
        self._plain = not any(any(c) for c in self.played)
        #: ``(location, played counts per value)`` of the locations whose seat played this hand
        self._played_at = [(j, list(c)) for j, c in enumerate(self.played) if any(c)]
        self._tmpl: ArguteState | None = None
        self._bid_at: list[int] = []
        self._opts: dict[str, Any] = {}

    def sample(self, rng: random.Random) -> ArguteState:
        """A world uniform over the physical deals consistent with the observation, up to renaming
        copies of a value: draws of the sampler kept with probability ``1 / copy_odds`` (module docstring).

        :raises InconsistentObservationError: if no world exists.
        """
        sampler = self.sampler
        played = self._played_at
        while True:
            assignment, choices = sampler.sample(rng)
            if self._plain:  # nobody has played yet: every draw has odds 1
                return self.world(assignment, choices, rng)
            odds = held_odds(assignment, played)
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
        actions; later hands use a fresh key from ``rng``.

        The replay does not depend on the assignment (a play removes the lowest copy of its
        value, always a pinned one) nor on the hidden bids' values, so it runs once per
        information set on a template (:meth:`_template`); a world is the template's clone with
        the assigned cards and sampled bids filled in (:func:`fill_world`), its hand-start
        snapshot built only if asked for (``ArguteState.dealt``).

        :raises InconsistentObservationError: if the match is over or the actions are out of turn.
        """
        tmpl = self._tmpl
        if tmpl is None:
            tmpl = self._template()
        m = _Match(self.game, self.n, self._opts, rng.getrandbits(63))
        return fill_world(tmpl, m, self.start_hands, self.opps, assignment, self.bidders, self._bid_at, choices)

    def _template(self) -> ArguteState:
        """This hand replayed from the pinned cards alone (hidden bids as ``bid 0``); kept."""
        obs = self.observation
        if obs.get("match_over"):
            raise InconsistentObservationError("argute: the match is over; there is no world to sample")
        self._opts = dict(obs["options"])
        past = tuple((int(h["dealer"]), tuple(h["bids"]), tuple(h["tricks_won"]), tuple(h["changes"]))
                     for h in obs["history"])
        hidx = int(obs["hand_index"])
        st = ArguteState._blank(_Match(self.game, self.n, self._opts, 0), int(obs["dealer"]),
                                [int(x) for x in obs["scores"]], hidx, past)
        st._reset_hand(list(self.start_hands), 0)
        bid_at = []
        for p, a in self.moves:
            if st.cur != p:
                raise InconsistentObservationError(f"argute: seat {p} acts out of turn in the observation")
            if a is None:
                bid_at.append(len(st.hist))
                a = BID
            st.apply(a)
        if st.hidx != hidx:
            raise InconsistentObservationError("argute: the observation's actions complete the hand")
        self._bid_at = bid_at
        self._tmpl = st
        return st


def held_odds(assignment: list[list[int]], played_at: list[tuple[int, list[int]]]) -> int:
    """:func:`~engine.games.argute.actions.copy_odds` of ``assignment`` (the same integer), over
    only the locations ``played_at`` lists (``(location, played count per value)``), on C counters."""
    odds = 1
    for j, done in played_at:
        held = [0, 0, 0, 0, 0, 0]
        for c in assignment[j]:
            held[c // COPIES] += 1
        for v in range(VALUES):
            p = done[v]
            if p and held[v]:
                odds *= comb(held[v] + p, p)
    return odds


def fill_world(tmpl: ArguteState, m: _Match, start_hands: list[int], opps: list[int], assignment: list[list[int]],
               bidders: list[int], bid_at: list[int], choices: list[Any]) -> ArguteState:
    """A clone of the replayed template ``tmpl`` with match constants ``m``, the assigned cards
    (per opponent in ``opps`` order, then the undealt pile) added to the hands and the dealt
    hands, and bid ``choices[i]`` for seat ``bidders[i]`` (its action at ``hist[bid_at[i]]``)."""
    st = tmpl.clone()
    st.m = m
    hands = st.hands
    dealt = start_hands[:]
    nopp = len(opps)
    for j in range(nopp):
        mask = 0
        for c in assignment[j]:
            mask |= ONE << c
        o = opps[j]
        hands[o] = hands[o] | mask
        dealt[o] = dealt[o] | mask
    mask = 0
    for c in assignment[nopp]:
        mask |= ONE << c
    st.undealt = mask
    st.dealt = dealt
    bids = st.bids
    hist = st.hist
    for i in range(len(choices)):
        b = choices[i]
        bids[bidders[i]] = b
        hist[bid_at[i]] = BID + b
    return st


__all__ = ["ArguteInfoSet", "fill_world", "held_odds"]
