"""Agram information sets (``docs/rules/agram.md`` §4.4): unseen cards, voids, sampling."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.cards import cards_of, parse_french
from engine.core import Game, InfoSet
from engine.errors import InconsistentObservationError
from engine.games.agram.actions import (
    DECK,
    DECK_MASK,
    HAND_SIZE,
    POWER,
    SUIT_MASK_OF,
    SUIT_OF,
    parse_play,
)
from engine.games.agram.state import AgramState, _Match
from engine.sampling import SamplingProblem
from engine.tricks import trick_winner


class AgramInfoSet(InfoSet):
    """The worlds consistent with one seat's Agram observation (§4.4).

    Unseen cards = the deck minus the seat's hand minus every card played in this deal.
    Hidden locations: each opponent's hand (capacity: its current size) and the
    undealt cards (``35 - 6n``). A seat that did not follow suit is void in the led suit
    for the rest of the deal, so no card of that suit may go to its hand.
    """

    __slots__ = ("game", "n", "opps", "own_start", "played", "plays", "voids", "unseen", "caps",
                 "_template", "_opts", "_match_wins")

    def __init__(self, game: Game, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        seat = self.seat
        self.n = n
        dealer = int(obs["dealer"])
        own = 0
        for text in obs["hand"]:
            own |= 1 << parse_french(text)
        played = [0] * n
        voids = [0] * n  # per seat, a mask of suit indices (bit s = void in suit s)
        plays: list[int] = []
        leader = (dealer + 1) % n
        trick: list[tuple[int, int]] = []
        seen = own
        for s, text in obs["actions"]:
            c = parse_play(text)
            s = int(s)
            if s != (leader + len(trick)) % n or (1 << c) & seen:
                raise InconsistentObservationError(f"agram: action {text!r} of seat {s} does not fit the deal")
            seen |= 1 << c
            played[s] |= 1 << c
            plays.append(c)
            trick.append((s, c))
            if len(trick) > 1 and not (1 << c) & SUIT_MASK_OF[trick[0][1]]:
                voids[s] |= 1 << (trick[0][1] // 13)
            if len(trick) == n:
                leader = trick[trick_winner([tc for _, tc in trick], SUIT_OF, POWER)][0]
                trick = []
        self.opps = [o for o in range(n) if o != seat]
        self.own_start = own | played[seat]
        self.played = played
        self.plays = plays
        self.voids = voids
        self.unseen = cards_of(DECK_MASK & ~seen)
        sizes = [int(x) for x in obs["hand_sizes"]]
        self.caps = [sizes[o] for o in self.opps] + [len(DECK) - HAND_SIZE * n]
        if own.bit_count() != sizes[seat]:
            raise InconsistentObservationError("agram: own hand does not match hand_sizes")
        self._opts = dict(obs["options"])
        self._match_wins = int(self._opts["match_wins"])
        self._template: AgramState | None = None

    def problem(self) -> SamplingProblem:
        """Locations ``hand <o>`` per opponent then ``undealt``; voids bar suits from hands."""
        nloc = len(self.opps) + 1
        und_bit = 1 << (nloc - 1)
        allowed = []
        for c in self.unseen:
            suit_bit = 1 << (c // 13)
            m = und_bit
            for j, o in enumerate(self.opps):
                if not self.voids[o] & suit_bit:
                    m |= 1 << j
            allowed.append(m)
        names = [f"hand {o}" for o in self.opps] + ["undealt"]
        # every location becomes a bitmask in world(): no shuffling within them
        return SamplingProblem(list(self.unseen), list(self.caps), allowed, names,
                               unordered=(1 << nloc) - 1)

    def _build_template(self) -> AgramState:
        """This deal replayed once with the opponents holding only the cards they played:
        the trick fields (seat to act, led suit, best card, counts, history) of every world."""
        obs = self.observation
        if obs.get("match_over"):
            raise InconsistentObservationError("agram: the match is over; there is no world to sample")
        m = _Match(self.game, self.n, self._match_wins, 0, self._opts)
        past = tuple((int(h["dealer"]), int(h["winner"])) for h in obs["history"])
        st = AgramState._blank(m, int(obs["dealer"]), [int(x) for x in obs["deals_won"]],
                               int(obs["hand_index"]), past)
        hands = list(self.played)
        hands[self.seat] = self.own_start
        st._begin_deal(hands, 0)
        for c in self.plays:
            st.apply(c)
        return st

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> AgramState:
        """The deal with the opponents' remaining cards (and the undealt ones) as assigned,
        after this deal's actions; later deals use a fresh key from ``rng``.

        The actions are replayed once per information set (:meth:`_build_template`); a
        world copies that state and its deal snapshot and sets the hands.
        """
        t = self._template
        if t is None:
            t = self._template = self._build_template()
        m = _Match(self.game, self.n, self._match_wins, rng.getrandbits(63), self._opts)
        assert t.start is not None
        start = t.start.clone()
        st = t.clone()
        start.m = st.m = m
        start.start = st.start = start
        now = st.hands
        dealt = start.hands
        played = self.played
        for j, o in enumerate(self.opps):
            h = 0
            for c in assignment[j]:
                h |= 1 << c
            now[o] = h
            dealt[o] = h | played[o]
        und = 0
        for c in assignment[-1]:
            und |= 1 << c
        st.undealt = start.undealt = und
        return st


