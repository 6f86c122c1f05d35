"""Whiskey Poker information sets (rules whiskey_poker.md §2.9).

The hidden part of a hand is its **deal**: which cards went to each dealt-in seat's
hand (a *block* of 5), to the widow (block ``widow``) and to the unused stub. Every later
move is either public (bets, ``exchange`` of whole blocks between a hand and the widow,
phase-2 moves of face-up cards) or a swap whose cards only the players who held them
have seen. So the observer knows, per block, a set of its cards:

* its own dealt block (``dealt``) and every block it received in a phase-1 ``exchange``
  (``received``; which block that was follows from the public order of exchanges);
* the block lying in the widow when it was turned up (``widow_exposed``);
* in phase 2, every card given face up (``take w give h``) or laid down by ``take all``
  (``shown``) that was not public before, pinned to the block its giver held at the
  start of phase 2.

Nothing else in the observation depends on hidden cards (no action's legality does),
so the consistent deals are exactly: known cards in their blocks, and the never-seen
cards spread over the blocks' unknown slots and the stub in any way. The sampler draws
them uniformly; :meth:`WhiskeyInfoSet.world` builds the deal and replays the hand.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.cards import parse_french
from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker.state import Rules, WhiskeyState
from engine.sampling import SamplingProblem


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_french(c)
    return m


class WhiskeyInfoSet(InfoSet):
    """The deals consistent with one seat's observation (see the module docstring).

    :ivar known: per block (dealt-in seats in seat order, then the widow), the mask of its
        cards the observer knows.
    :raises InconsistentObservationError: if the observation's cards contradict each other.
    """

    __slots__ = ("game", "rules", "seats", "known", "unknown", "stub_size", "_plan")

    def __init__(self, game, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        obs = observation
        n = int(obs["players"])
        self.game = game
        self._plan: tuple[WhiskeyState, list[tuple[int, int]]] | None = None
        self.rules = Rules(n, game.resolve_options(obs["options"]))
        self.seats = [int(p) for p in obs["dealt_in"]]
        if len(self.seats) < 2:
            raise InconsistentObservationError("whiskey_poker: no hand in progress (fewer than 2 players dealt in)")
        widx = len(self.seats)
        block_of_seat = {p: i for i, p in enumerate(self.seats)}
        known = [0] * (widx + 1)
        me = self.seat
        # phase 1: blocks move as wholes; origin[loc] = block now at seat loc (or the widow)
        origin: dict[int, int | None] = dict(block_of_seat)
        origin[-1] = widx
        if me in block_of_seat:
            known[block_of_seat[me]] |= _mask(obs["dealt"])
        received = [_mask(x) for x in obs["received"]]
        shown = [(int(p), _mask(x)) for p, x in obs["shown"]]
        n_rx = n_shown = 0
        pub: dict[int, int] | None = None   # phase 2: publicly known cards per location
        for seat, text in obs["actions"]:
            a = A.parse_action(text)
            if a == A.EXCHANGE:
                origin[seat], origin[-1] = origin[-1], origin[seat]
                if seat == me:
                    o = origin[seat]
                    if n_rx >= len(received) or o is None:
                        raise InconsistentObservationError("whiskey_poker: an own exchange without its received cards")
                    known[o] |= received[n_rx]
                    n_rx += 1
            elif a == A.TAKE_ALL or A.is_take_one(a):
                if pub is None:
                    pub = self._phase2_start(obs, origin, known)
                if a == A.TAKE_ALL:
                    if n_shown >= len(shown) or shown[n_shown][0] != seat:
                        raise InconsistentObservationError("whiskey_poker: a 'take all' without its shown hand")
                    old = shown[n_shown][1]
                    n_shown += 1
                    o = origin[seat]
                    if o is not None:
                        known[o] |= old & ~pub[seat]
                    pub[seat], pub[-1] = pub[-1], old
                    origin[seat] = None          # the whole hand is public now
                else:
                    w, h = A.take_parts(a)
                    if not pub[seat] >> h & 1:
                        o = origin[seat]
                        if o is None:
                            raise InconsistentObservationError(f"whiskey_poker: seat {seat} gave an untraceable card")
                        known[o] |= 1 << h
                    pub[seat] = (pub[seat] | 1 << w) & ~(1 << h)
                    pub[-1] = (pub[-1] & ~(1 << w)) | 1 << h
        if obs["widow_exposed"] is not None and pub is None:
            self._phase2_start(obs, origin, known)
        seen = 0
        for k in known:
            if k.bit_count() > 5 or k & seen:
                raise InconsistentObservationError("whiskey_poker: the observed cards contradict each other")
            seen |= k
        self.known = known
        self.unknown = [c for c in range(52) if not seen >> c & 1]
        self.stub_size = 52 - 5 * (widx + 1)

    @staticmethod
    def _phase2_start(obs: Mapping[str, Any], origin: dict, known: list[int]) -> dict[int, int]:
        """Pin the exposed widow to its block; public cards per location at the start of phase 2."""
        if obs["widow_exposed"] is None:
            raise InconsistentObservationError("whiskey_poker: a phase-2 move before the widow was turned up")
        exposed = _mask(obs["widow_exposed"])
        known[origin[-1]] |= exposed
        pub = {p: 0 for p in origin}
        pub[-1] = exposed
        return pub

    def problem(self) -> SamplingProblem:
        """Locations: one per block (dealt-in seats, then the widow) with its unknown slots, then the stub."""
        caps = [5 - k.bit_count() for k in self.known] + [self.stub_size]
        names = [f"hand {p}" for p in self.seats] + ["widow", "stub"]
        full = (1 << len(caps)) - 1
        return SamplingProblem(list(self.unknown), caps, [full] * len(self.unknown), names)

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> WhiskeyState:
        """The deal from ``assignment`` (plus the known cards), replayed through the hand's actions.

        The observation's parts that do not depend on the assignment (the hand-start state
        without its cards, the parsed actions) are made on the first call (:meth:`_plan`); the
        same world as building the deal with ``WhiskeyState.at_hand_start`` and replaying.

        :raises InconsistentObservationError, IllegalActionError: if the replay does not fit.
        """
        plan = self._plan
        if plan is None:
            plan = self._plan = self._make_plan()
        template, actions = plan
        blocks = _blocks(self.known, assignment)
        widow = blocks[-1]
        stub = _ALL
        hands = [0] * self.rules.n
        for i, p in enumerate(self.seats):
            hands[p] = blocks[i]
            stub ^= blocks[i]
        state = template.from_template(hands, widow, stub ^ widow, rng.getrandbits(63))
        for seat, a in actions:
            if state.turn != seat:
                raise InconsistentObservationError(
                    f"whiskey_poker: the observation says seat {seat} acted where seat {state.current_player()} was to act")
            state.apply(a)
        return state

    def _make_plan(self) -> tuple[WhiskeyState, list[tuple[int, int]]]:
        """``(hand-start state with empty hands, [(seat, action code), ...])`` of the observation."""
        obs = self.observation
        dealt_in = 0
        for p in self.seats:
            dealt_in |= 1 << p
        out = tuple(-1 if o is None else int(o) for o in obs["out"])
        template = WhiskeyState.at_hand_start(
            self.game, self.rules, 0, int(obs["hand_index"]), int(obs["dealer"]), dealt_in,
            [int(x) for x in obs["scores"]], out, tuple(obs["hands"]), [0] * self.rules.n, 0, 0)
        return template, [(int(seat), A.parse_action(text)) for seat, text in obs["actions"]]


_ALL = (1 << 52) - 1


def _blocks(known: list[int], assignment: list[list[int]]) -> list[int]:
    """Per block (dealt-in seats, then the widow) its known cards plus its cards in ``assignment``
    (the stub's, ``assignment[-1]``, are left out: they are the rest)."""
    out = list(known)
    for i in range(len(out)):
        m = out[i]
        for c in assignment[i]:
            m |= ONE << c
        out[i] = m
    return out


ONE = 1


__all__ = ["WhiskeyInfoSet"]
