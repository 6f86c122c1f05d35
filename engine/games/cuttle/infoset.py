"""Cuttle information sets (``docs/rules/cuttle.md`` §3.9).

Hidden from seat ``me``: the unknown part of the opponent's hand, the deck order and,
while the opponent resolves a 7, the card it drew. Everything else is public or
remembered: the table, the scrap, every action, the cards taken by 3s or returned by
9s, the cards shown to a 4, and — for a seat controlling glasses — the opponent's hand
and every card drawn meanwhile.

Sampling has two steps, both through :mod:`engine.sampling`:

1. :meth:`CuttleInfoSet.problem` places the cards ``me`` has never located: the unknown
   part of the opponent's hand, the opponent's pending 7-card (never an unplayable
   jack: that one would have been scrapped at once) and the deck.
2. :meth:`CuttleInfoSet.world` rebuilds the deal. Every card that ever was in one of the
   opponent's hidden slots (their dealt hand, each draw ``me`` did not see) must have
   been drawn before it was first seen (played, shown to a 4, or seen in a glimpse of
   the glasses) and after the previous glimpse (which showed the whole hand). Within
   one interval between glimpses these deadlines are nested, so placing the cards with
   the earliest deadline first, each uniformly among the still free slots before its
   deadline, is uniform over all consistent arrangements; and their number does not
   depend on which unknown cards step 1 chose, so the two steps together are uniform
   over physical deals. The hand's actions are then replayed from that deal.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.cards import cards_of, parse_french
from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.games.cuttle.actions import ALL_CARDS, JACKS, QUEENS, parse_action
from engine.games.cuttle.rollout import replay
from engine.games.cuttle.state import CuttleState
from engine.sampling import Sampler, SamplingProblem


def _mask(cards) -> int:
    m = 0
    for t in cards:
        m |= 1 << parse_french(t)
    return m


#: ``(k, n)`` -> the exact sampler of which ``k`` of ``n`` free slots a class of cards takes
_SLOT_SAMPLERS: dict[tuple[int, int], Sampler] = {}


def _slot_sampler(k: int, n: int) -> Sampler:
    """The sampler choosing ``k`` of ``n`` slots (location 0 of its assignment), built once per
    ``(k, n)``: a sampler's draws depend only on its problem and the generator."""
    got = _SLOT_SAMPLERS.get((k, n))
    if got is None:
        got = _SLOT_SAMPLERS[(k, n)] = Sampler(SamplingProblem(list(range(n)), [k, n - k], [3] * n))
    return got


#: the deadline of a card never seen after passing through a hidden slot (held now)
NEVER = 1 << 30


def _previous_glimpse(glimpse_stamps: list[int], t: int) -> int:
    """The stamp of the last glimpse of the opponent's hand before stamp ``t`` (-2 if none)."""
    lo = -2
    for g in glimpse_stamps:
        if g < t and g > lo:
            lo = g
    return lo


def _between(slots: list[tuple[int, int]], lo: int, hi: int) -> list[int]:
    """Indices of the hidden slots filled strictly between stamps ``lo`` and ``hi``."""
    return [j for j, (s, _) in enumerate(slots) if lo < s < hi]


class _WorldPlan:
    """The parts of :meth:`CuttleInfoSet.world` that depend on the observation only, computed
    on the first sample: the opponent's hidden slots, the deadlines of the cards seen after
    passing through them, every draw event's cards (``None``: the pending 7's card, or a
    draw the observer did not see), the observer's dealt hand, the options and the actions."""

    __slots__ = ("slots", "deadline", "glimpse_stamps", "groups", "hand_group", "draws", "my_init", "options",
                 "dealer", "actions")

    def __init__(self, info: CuttleInfoSet) -> None:
        obs = info.observation
        pinned, self.slots = info._hidden_slots()
        deadline: dict[int, int] = {}
        for p, stamp, card in obs["shown"]:
            c = parse_french(card)
            if p == info.opp and not pinned >> c & 1 and c not in deadline:
                deadline[c] = stamp
        for g, cards in obs["glimpses"]:
            for t in cards:
                c = parse_french(t)
                if not pinned >> c & 1 and deadline.get(c, g + 1) > g:
                    deadline[c] = g
        self.deadline = deadline
        self.glimpse_stamps = [g for g, _ in obs["glimpses"]]
        # the classes of the seen cards (sorted by deadline, then previous glimpse) with the
        # slots each may take; the unseen hand's class (deadline "never") comes last
        by_key: dict[tuple[int, int], list[int]] = {}
        for c, hi in deadline.items():
            by_key.setdefault((_previous_glimpse(self.glimpse_stamps, hi), hi), []).append(c)
        self.groups = [(lo, hi, sorted(by_key[(lo, hi)]), _between(self.slots, lo, hi))
                       for (lo, hi) in sorted(by_key, key=lambda k: (k[1], k[0]))]
        lo = _previous_glimpse(self.glimpse_stamps, NEVER)
        self.hand_group = (lo, _between(self.slots, lo, NEVER))
        self.draws: list[list[int] | None] = [
            None if cards and cards[0] == "?" else [parse_french(t) for t in cards]
            for (_p, _stamp, _kind, cards) in obs["draws"]]
        self.my_init = _mask(obs["initial_hand"])
        self.options = info.game.resolve_options(obs["options"])
        self.dealer = int(obs["dealer"])
        self.actions = [parse_action(a) for _, a in obs["actions"]]


class CuttleInfoSet(InfoSet):
    """The information set of one Cuttle observation (see the module docstring).

    :raises InconsistentObservationError: if the observation's counts do not add up.
    """

    __slots__ = ("game", "me", "opp", "unknown", "caps", "names", "allowed", "seven_slot", "_pinned",
                 "_plan")

    def __init__(self, game: Any, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        me = self.seat
        opp = 1 - me
        self.me, self.opp = me, opp
        known = _mask(obs["hand"]) | _mask(obs["scrap"]) | _mask(obs["opponent_known"])
        for st in obs["stacks"]:
            known |= _mask([st["base"]]) | _mask(st["jacks"])
        known |= _mask(obs["permanents"][0]) | _mask(obs["permanents"][1])
        if obs["oneoff"]:
            known |= _mask(obs["oneoff"]["suspended"]) | _mask(obs["oneoff"]["counters"])
        if obs["seven_card"]:
            known |= _mask([obs["seven_card"]])
        self.unknown = cards_of(ALL_CARDS & ~known)
        h_u = obs["hand_sizes"][opp] - len(obs["opponent_known"])
        self.seven_slot = obs["phase"] == "seven" and obs["turn_player"] == opp
        caps = [h_u]
        names = ["opponent hand"]
        if self.seven_slot:
            caps.append(1)
            names.append("seven card")
        caps.append(obs["deck_size"])
        names.append("deck")
        self.caps, self.names = caps, names
        full = (1 << len(caps)) - 1
        no_seven = full
        if self.seven_slot:
            # a jack drawn by a 7 with no legal play is scrapped at once (§3.5, 7)
            jack_playable = bool(obs["stacks"]) and not (_mask(obs["permanents"][me]) & QUEENS)
            if not jack_playable:
                no_seven = full & ~2
        self.allowed = [no_seven if JACKS >> c & 1 else full for c in self.unknown]
        self._plan: _WorldPlan | None = None

    def problem(self) -> SamplingProblem:
        """Unknown cards over (opponent's unknown hand, pending 7-card, deck)."""
        return SamplingProblem(list(self.unknown), list(self.caps), list(self.allowed), list(self.names))

    # ------------------------------------------------------------ world

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> CuttleState:
        """The deal consistent with ``assignment`` and the observation, replayed to now.

        :raises InconsistentObservationError: if the opponent's known cards cannot be
            placed in their hidden slots; ``IllegalActionError`` if the replay fails.
        """
        plan = self._plan
        if plan is None:
            plan = self._plan = _WorldPlan(self)
        me, opp = self.me, self.opp
        slots = plan.slots
        slot_card = self._fill_slots(plan, assignment[0], rng)
        opp_init = 0
        event_cards: dict[int, list[int]] = {}
        for j, (_stamp, i) in enumerate(slots):
            if i < 0:
                opp_init |= 1 << slot_card[j]
            else:
                event_cards.setdefault(i, []).append(slot_card[j])
        order: list[int] = []
        for i, cards in enumerate(plan.draws):
            if i in event_cards:
                order.extend(event_cards[i])
            elif cards is None:  # the pending 7's card (seven_slot)
                order.append(assignment[1][0])
            else:
                order.extend(cards)
        order.extend(assignment[-1])
        hands = [0, 0]
        hands[me] = plan.my_init
        hands[opp] = opp_init
        state = CuttleState.from_deal(self.game, plan.options, plan.dealer, hands, order,
                                      rng.getrandbits(63))
        replay(state, plan.actions)   # = state.apply(a) for each, on the rollout kernel's table
        return state

    def _hidden_slots(self) -> tuple[int, list[tuple[int, int]]]:
        """The cards whose position the observer knows (its dealt hand, every draw it saw), and
        the opponent's hidden slots ``(stamp, draw event index)``: its dealt hand (-1, -1), then
        each card of each unseen draw."""
        obs = self.observation
        opp = self.opp
        pinned = _mask(obs["initial_hand"])
        draws = obs["draws"]
        last = len(draws) - 1
        hidden_events = []  # (event index, stamp, size) of the opponent's unseen past draws
        for i, (p, stamp, kind, cards) in enumerate(draws):
            if cards and cards[0] == "?":
                if self.seven_slot and i == last and kind == "seven":
                    continue
                if p != opp:
                    raise InconsistentObservationError("cuttle: an unseen draw of the observer itself")
                hidden_events.append((i, stamp, len(cards)))
            else:
                pinned |= _mask(cards)
        n_init = 6 if obs["dealer"] == opp else 5
        slots: list[tuple[int, int]] = [(-1, -1)] * n_init
        for (i, stamp, size) in hidden_events:
            slots.extend([(stamp, i)] * size)
        return pinned, slots

    def _fill_slots(self, plan: _WorldPlan, hand_unknown: list[int], rng: random.Random) -> list[int]:
        """Per hidden slot its card: each class of cards (same deadline and previous glimpse,
        ``plan.groups``, then the cards of ``hand_unknown``: never seen) takes uniformly drawn
        free slots between the two.

        :raises InconsistentObservationError: if the cards do not fit the slots.
        """
        opp = self.opp
        slots = plan.slots
        fixed = plan.deadline
        groups = plan.groups
        overlap = {c for c in hand_unknown if c in fixed}
        if overlap:   # held now: its deadline is "never" (not expected in a consistent observation)
            groups = [(lo, hi, [c for c in cards if c not in overlap], between) for (lo, hi, cards, between) in groups]
            groups = [g for g in groups if g[2]]
        count = len(fixed) - len(overlap) + len(hand_unknown)
        if count != len(slots):
            raise InconsistentObservationError(
                f"cuttle: {count} cards for {len(slots)} hidden slots of seat {opp}")
        free = [True] * len(slots)
        slot_card = [-1] * len(slots)
        if hand_unknown:
            groups = [*groups, (plan.hand_group[0], NEVER, sorted(hand_unknown), plan.hand_group[1])]
        for (_lo, hi, cards, between) in groups:
            elig = [j for j in between if free[j]]
            if len(elig) < len(cards):
                raise InconsistentObservationError(
                    f"cuttle: {len(cards)} cards of seat {opp} seen at {hi} but {len(elig)} free earlier slots")
            # which free slots this class takes, uniformly (the exact sampler, two locations)
            picked = _slot_sampler(len(cards), len(elig)).sample(rng)[0][0]
            for c, k in zip(cards, picked, strict=True):
                j = elig[k]
                free[j] = False
                slot_card[j] = c
        return slot_card
