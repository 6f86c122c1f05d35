"""Cuckoo information sets (cuckoo.md §3.5 "Constraints for determinization").

Every action is public, so the hidden part of a hand is only its deal: the cards dealt
to the other active seats and the stock order. Cards are followed by origin
(:class:`~.actions.Trace`): a value the seat knows (its own card, a card seen in its
own accepted trade, a blocked king) pins the card to the origin it came from (the
dealer's cut ends the hand, so the stock is never seen during one); under ``king_block = automatic`` an accepted trade shows the
neighbour's card was not a king, so no king may come from that origin.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.cards import parse_french
from engine.core import InfoSet
from engine.errors import InconsistentObservationError, RulesError
from engine.games.cuckoo.actions import CUT, DECK, KINGS, Trace, parse_action
from engine.games.cuckoo.state import CuckooState
from engine.sampling import SamplingProblem


class CuckooInfoSet(InfoSet):
    """The deals of the current hand consistent with one seat's observation.

    Hidden locations: ``hand s`` (capacity 1) for each active seat ``s`` whose dealt card
    this seat does not know, then ``stock`` (the undealt cards in order, top first).

    :raises InconsistentObservationError: if the observation is malformed or two
        facts contradict each other (a card pinned to two origins, or an origin to two cards).
    """

    __slots__ = ("game", "n", "opts", "order", "actions", "pins", "free", "nonking", "hands", "_public",
                 "_tmpl", "_holder", "_pool")

    def __init__(self, game: Any, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self._public: tuple[list[int], list[int], int, int] | None = None
        #: the first world after its replay: later worlds are its clones with their own cards
        self._tmpl: CuckooState | None = None
        #: the sampler's one card class when :func:`draw_deal` can stand in for it, else None
        self._pool: list[int] | None = None
        self.game = game
        try:
            self._read(observation)
        except (KeyError, TypeError, ValueError, RulesError) as exc:
            if isinstance(exc, InconsistentObservationError):
                raise
            raise InconsistentObservationError(f"cuckoo: malformed observation: {exc}") from exc

    def _read(self, obs: Mapping[str, Any]) -> None:
        n = int(obs["players"])
        self.n = n
        self.opts = self.game.resolve_options(obs["options"])
        self.order = [int(s) for s in obs["turn_order"]]
        order = self.order
        self.actions = [parse_action(a) for _, a in obs["actions"]]
        if CUT in self.actions:
            raise InconsistentObservationError("cuckoo: a cut ends the hand; it cannot be in 'actions'")
        t = Trace.replay(n, order, self.actions, self.opts["king_block"] == "automatic", False)
        pins: dict[int, int] = {}  # origin -> card

        def pin(origin: int, card: int) -> None:
            """Record ``origin`` as dealt ``card``; InconsistentObservationError if seen as another card."""
            if pins.get(origin, card) != card:
                raise InconsistentObservationError(
                    f"cuckoo: origin {origin} seen as two different cards")
            pins[origin] = card

        seat = self.seat
        if order:
            if seat in order:
                if obs["dealt_card"] is None:
                    raise InconsistentObservationError("cuckoo: a seat dealt in has no dealt_card")
                pin(seat, parse_french(obs["dealt_card"]))
            for s, code in enumerate(obs["known"]):
                if code is not None:
                    pin(t.holder[s], parse_french(code))
            for s, code in obs["blocks"]:
                pin(t.holder[s], parse_french(code))
        if len(set(pins.values())) != len(pins):
            raise InconsistentObservationError("cuckoo: one card seen at two places")
        self.pins = pins
        seat_bit = 1 << seat

        def card(code: str | None) -> int:
            """The French card id of ``code``, -1 for None."""
            return -1 if code is None else parse_french(code)

        self.hands = tuple(
            (int(h["dealer"]), tuple(card(c) for c in h["cards"]), card(h["cut"]),
             tuple(int(s) for s in h["losers"]), bool(h["void"]), card(h["discard"]),
             0 if h["discard"] is None else seat_bit)
            for h in obs["hands"])
        self.free = [s for s in order if s not in pins]
        self.nonking = t.nonking
        #: per seat, the origin of the card it holds after the observed actions (-1: not dealt in)
        self._holder = list(t.holder)

    def problem(self) -> SamplingProblem:
        """Unseen cards over the unknown dealt cards and the stock (§3.5 constraints 1–6)."""
        if not self.order:
            return SamplingProblem([], [], [], [], [])
        seen = set(self.pins.values())
        cards = [c for c in DECK if c not in seen]
        stock_cap = 52 - len(self.order)
        locations = [(f"hand {s}", 1) for s in self.free] + [("stock", stock_cap)]
        banned = [f"hand {s}" for s in self.free if self.nonking >> s & 1]
        allowed = None
        if banned:
            ok = [name for name, _ in locations if name not in banned]
            allowed = {k: ok for k in KINGS if k not in seen}
        return SamplingProblem.build(locations, cards, allowed)

    def sample(self, rng: random.Random) -> CuckooState:
        """A complete world (:meth:`InfoSet.sample <engine.core.InfoSet.sample>`: the same draws).

        :raises InconsistentObservationError: if no deal is consistent with the observation.
        """
        pool = self._pool
        if pool is not None:    # the sampler's draws, typed (draw_deal)
            free, stock = draw_deal(pool, len(self.free), rng.random)
            st = self._tmpl.clone()    # type: ignore[union-attr]  # _pool is set after _tmpl
            st.deal_seed = rng.getrandbits(63)
            self._fill(st, free, stock)
            return st
        sampler = self._sampler
        if sampler is None:
            sampler = self.sampler
        assignment, choices = sampler.sample(rng)
        return self.world(assignment, choices, rng)

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> CuckooState:
        """The world with the dealt cards and stock of ``assignment``, the hand replayed.

        Earlier hands come from the observation; later hands get the fresh deal seed
        ``rng.getrandbits(63)``. The first world is built by :meth:`_first_world` (the
        observed actions applied one by one, every one checked); later ones clone it and
        put their own cards where the trace of the actions moved them (which origin each
        seat holds does not depend on the deal, and every deal the sampler draws admits
        the actions: blocked kings are pinned, and no king comes from an origin that
        showed a non-king under ``automatic``), giving the same state as the replay.

        :raises IllegalActionError: if the observed actions cannot be replayed on this deal.
        """
        tmpl = self._tmpl
        if tmpl is None:
            return self._first_world(assignment, rng)
        st = tmpl.clone()
        st.deal_seed = rng.getrandbits(63)
        if self.order:
            self._fill(st, [a[0] for a in assignment[:-1]], tuple(assignment[-1]))
        return st

    def _fill(self, st: CuckooState, free: list[int], stock: tuple[int, ...]) -> None:
        """Deal ``free`` (one card per seat of :attr:`free`, in order) and the pinned cards
        into the clone ``st`` of the template, the cards moved as the observed actions moved
        them, and ``stock``."""
        pins = self.pins
        dealt = [-1] * self.n
        j = 0
        for s in self.order:
            c = pins.get(s, -1)
            if c < 0:
                c = free[j]
                j += 1
            dealt[s] = c
        cards = st._cards
        holder = self._holder
        for s in self.order:
            cards[s] = dealt[holder[s]]
        st._dealt = tuple(dealt)
        st._stock = stock

    def _first_world(self, assignment: list[list[int]], rng: random.Random) -> CuckooState:
        """:meth:`world` by constructing the state and applying the observed actions; keeps a
        copy as the template of the later worlds.

        :raises IllegalActionError: if the observed actions cannot be replayed on this deal.
        """
        n = self.n
        pub = self._public
        check = pub is None
        if pub is None:  # the public fields, parsed (and checked below) once per information set
            obs = self.observation
            pub = self._public = ([int(x) for x in obs["lives"]],
                                  [-1 if e is None else int(e) for e in obs["eliminated_in"]],
                                  int(obs["dealer"]), int(obs["hand_index"]))
        st = CuckooState(self.game, n, self.opts, rng.getrandbits(63))
        st.lives = list(pub[0])
        st.elim = list(pub[1])
        st.dealer = pub[2]
        st.hidx = pub[3]
        st.hands = self.hands
        if not self.order:
            self._tmpl = st.clone()
            return st
        if check and st._turn_order() != tuple(self.order):
            self._public = None  # every later world fails the same check
            raise InconsistentObservationError("cuckoo: turn_order does not follow dealer and eliminations")
        free = iter(assignment[:-1])
        deck = []
        for s in self.order:
            deck.append(self.pins[s] if s in self.pins else next(free)[0])
        st._deal(deck + list(assignment[-1]))
        for a in self.actions:
            st.apply(a)
        self._tmpl = st.clone()
        sampler = self.sampler
        if (len(sampler.class_cards) == 1 and sampler.nloc == len(self.free) + 1
                and not sampler.problem.unordered and not sampler.problem.choices):
            self._pool = list(sampler.class_cards[0])
        return st


def draw_deal(pool: list[int], nfree: int, rand: Any) -> tuple[list[int], tuple[int, ...]]:
    """The draws of :meth:`engine.sampling.Sampler.sample` for ``nfree`` one-card hands and
    then an ordered stock, all from one card class ``pool`` (no card restricted): per hand a
    partial Fisher–Yates step, then a Fisher–Yates shuffle of the rest. ``rand`` is the
    generator's ``random``; exactly the sampler's calls, the same cards.

    :returns: ``(the hands' cards in location order, the stock top first)``.
    """
    n = len(pool)
    cards = [0] * 52
    for i in range(n):
        cards[i] = pool[i]
    free = []
    for _j in range(nfree):
        r = rand()
        i = int(r * n)
        e = n - 1
        x = cards[i]
        cards[i] = cards[e]
        cards[e] = x
        free.append(x)
        n -= 1
    for t in range(n - 1, 0, -1):
        r = rand()
        i = int(r * (t + 1))
        x = cards[i]
        cards[i] = cards[t]
        cards[t] = x
    return free, tuple([cards[i] for i in range(n)])
