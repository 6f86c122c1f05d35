"""Sedma information sets (``docs/rules/sedma.md`` §2.4, ruling CA-3).

There is no inference from the choice of rank (any held rank may be played, continuing
is optional), but a seat can only play a rank it holds, so its plays say something about
the cards it was dealt and drew. DESIGN asks for worlds uniform over *physical* deals.

**Why Guiñote's two-stage argument does not carry over.** Guiñote draws (1) the unseen
cards into hidden hand slots and the undrawn stock, then (2) per seat which of its known
cards were dealt and which drawn; that is exact because the number of stage-2
arrangements does not depend on stage 1 (each card is unique; a shown card has a
deadline; hidden cards have none). In Sedma the copies of a rank are interchangeable:
the j-th play of rank x by a seat only needs *some* x received before it, and the
physical copy it used is not observable. The number of ways a seat's received cards can
be ordered into its dealt hand and draws therefore depends on how many further copies of
its played ranks it holds. Example: a seat played one x from its dealt hand, then drew
one card, and holds 4 hidden cards. Per assignment of unseen ids to its hand (the played
copy pinned), the weight ``g`` below is 4·4! = 96 if none of them is an x (the x must
have been dealt: 4 of its 5 receipt slots) and C(5,2)·3! = 60 if one is (any two slots
for the two x's): 8 : 5 against holding a further copy. The old sampler (CA-3 before
this change) weighted them 1 : 1.

**Exact weights.** Physical copies are pinned canonically from the observation: cards
played this hand take the lowest copies of their rank in play order, the observer's hand
the next ones, the unseen cards are the remaining ids. For another seat ``s`` let ``P_s``
be the ranks it played this hand, ``R_s`` its hand size and ``κ_s`` the number of copies
of each rank of ``P_s`` among its hidden cards. A world is a rank sequence for every
deal position; all consistent rank sequences are equally likely (each stands for the
same number of physical deals). The number of consistent physical deals an assignment
``A`` of unseen ids to hidden hands and stock stands for is proportional to
``∏_s g_s(κ_s)`` with

    g_s(κ) = L_s(κ) · (R_s − Σκ)! · ∏_x κ_x!

where ``L_s(κ)`` counts the sequences over {ranks of P_s, ∗} for the seat's receipt slots
(4 dealt, then its draws in the public schedule) that end holding ``κ`` and never play a
rank not held (the ∗ slots take its cards of other ranks, in any of ``(R_s − Σκ)!``
orders; ``∏ κ_x!`` converts rank sequences to id sets). ``L_s`` is a dynamic programme
over the seat's receipts and plays whose state is the number of held cards per rank of
``P_s`` (at most 4 cards in hand, so few states).

**Sampling**, all exact, no rejection:

1. ``κ`` for every other seat by an exact weighted draw (integer weights,
   ``rng.randrange(total)``, drawn as :func:`engine.sampling.randbelow`) from a dynamic programme over the other seats whose state is
   the unseen count of each rank a later seat played (:meth:`SedmaInfoSet._transitions`);
   a transition's weight is ``g_s(κ_s)`` times the number of ways to pick the seat's
   unseen ids. The path also fixes how many cards of each rank a later seat played the
   seat holds; its remaining cards come from the other ranks with multivariate
   hypergeometric probabilities (exact weighted draws, one rank at a time). The rest of
   the unseen cards is the undrawn stock.
2. Orders: one fixed :class:`engine.sampling.Sampler` deals position tokens, giving a
   uniformly random order of the undrawn stock and of each seat's cards of ranks it did
   not play. Which physical copy of a rank goes where is canonical (copies are
   interchangeable and unobservable; the pinned ones are canonical too), so worlds are
   uniform over physical deals up to renaming copies of a rank.
3. Per seat, its receipt pattern: uniform among the ``L_s(κ_s)`` sequences (a backward
   walk over the programme's counts). Its copies of each played rank fill the rank's slots
   in receipt order, pinned copies first (so replaying plays exactly the pinned ids); its
   other cards fill the ∗ slots in their random order.

The deal is assembled (stock: the seats' draws in the public schedule, then the rest) and
the hand's actions are replayed. :meth:`problem` / :meth:`count` remain the unweighted
stage-1 problem (unseen ids to the other hands and the stock; every assignment is
consistent, and :meth:`world` builds a world for any of them); :meth:`sample` is the
weighted draw above.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from math import comb
from typing import Any

from engine.core import InfoSet
from engine.errors import InconsistentObservationError
from engine.games.sedma.actions import END, deck_for, parse_action, parse_rank
from engine.games.sedma.seats import RECV, SeatModel, vectors
from engine.games.sedma.state import SedmaState, hand_rewards_from_points
from engine.games.sedma.worlds import deal_of, draw_counts, shuffle_orders, split_hands
from engine.sampling import Sampler, SamplingProblem


class SedmaInfoSet(InfoSet):
    """The information set of one seat's observation (§2.4, CA-3; see the module docstring).

    Stage-1 locations (:meth:`problem`): ``hand s`` for every other seat (capacity = its
    hand size), then ``stock`` (capacity = stock size; its cards come back in draw order).

    :raises InconsistentObservationError: if the observation does not fit the deck
        (more copies of a rank than exist, sizes that do not add up, a terminal match).
    """

    __slots__ = ("game", "n", "opts", "actions", "others", "played_ids", "own_recv", "schedule",
                 "unseen", "capacities", "past", "vp", "dealer", "hidx", "models", "_joint_memo",
                 "_joint_steps", "_order", "_tracked", "_order_sampler", "_unseen_by_rank", "_copies", "_template", "_order_sizes",
                 "_plan", "_split")

    def __init__(self, game: Any, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        obs = observation
        self.game = game
        n = int(obs["players"])
        game.check_players(n)
        self.n = n
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
        hand_ids = self._pin_seen(deck)
        self.own_recv = self._own_receipts(hand_ids)
        events, left = self._schedule(len(deck))
        self.others = [s for s in range(n) if s != self.seat]
        hand_sizes = [int(h) for h in obs["hand_sizes"]]
        self.capacities = [hand_sizes[s] for s in self.others] + [left]
        ubr = [0] * 8
        for c in self.unseen:
            ubr[c >> 2] += 1
        self._unseen_by_rank = ubr
        self._copies = [[c for c in self.unseen if c >> 2 == x] for x in range(8)]
        self.models = {s: SeatModel(s, events[s], hand_sizes[s], ubr) for s in self.others}
        # κ programme: seats in order, tracking the unseen counts of ranks later seats played
        order = list(self.others)
        self._order = order
        tracked: list[tuple[int, ...]] = []
        for j in range(len(order) + 1):
            later = set()
            for s in order[j:]:
                later.update(self.models[s].ranks)
            tracked.append(tuple(sorted(later)))
        self._tracked = tracked
        self._joint_memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._joint_steps: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[tuple]]] = {}
        self._order_sampler: Sampler | None = None
        self._template: SedmaState | None = None
        self._order_sizes = [self.models[s].size for s in order if self.models[s].receipts != 4]
        self._order_sizes.append(left)
        self._plan = [(self.models[s].ranks, self.models[s].size) for s in order]
        self._split = [(sum(1 << x for x in self.models[s].ranks), self.models[s].receipts > 4) for s in order]
        start = tuple(ubr[x] for x in tracked[0])
        if self._joint(0, start) == 0:
            raise InconsistentObservationError("sedma: no deal of the unseen cards fits the seats' plays")

    def _pin_seen(self, deck: Sequence[int]) -> list[list[int]]:
        """Pin every seen card (plays, own hand) to the next unused physical copy of its rank.

        Sets ``played_ids`` (per seat its played ids) and ``unseen``; returns per rank the
        ids of the observer's hand.
        """
        obs = self.observation
        copies: list[list[int]] = [[] for _ in range(8)]
        for c in deck:
            copies[c >> 2].append(c)
        nxt = [0] * 8

        def pin(rank: int) -> int:
            """The next unused physical copy of ``rank``; InconsistentObservationError if none is left."""
            if nxt[rank] >= len(copies[rank]):
                raise InconsistentObservationError(
                    f"sedma: the observation shows more than {len(copies[rank])} cards of rank {'789TJQKA'[rank]}")
            c = copies[rank][nxt[rank]]
            nxt[rank] += 1
            return c

        played_ids: list[list[int]] = [[] for _ in range(self.n)]
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
        return hand_ids

    def _own_receipts(self, hand_ids: list[list[int]]) -> list[int]:
        """The observer's card ids in the order received (dealt, then drawn).

        :raises InconsistentObservationError: if they do not match its plays and hand.
        """
        obs = self.observation
        seat = self.seat
        own_by_rank: list[list[int]] = [[c for c in self.played_ids[seat] if c >> 2 == x] + hand_ids[x]
                                        for x in range(8)]
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
        return own_recv

    def _schedule(self, deck_size: int) -> tuple[list[list[int]], int]:
        """The public draw schedule (after each trick, from the winner round the table).

        Sets ``schedule`` (the seat of each stock draw, in order); returns per seat its
        timeline of receipts (``RECV``) and played ranks, and the stock left.

        :raises InconsistentObservationError: if the stock size does not match the tricks.
        """
        obs = self.observation
        n = self.n
        left = deck_size - 4 * n
        schedule = []
        sizes = [4] * n
        events: list[list[int]] = [[RECV] * 4 for _ in range(n)]
        for t in obs["tricks"]:
            rounds = len(t["cards"]) // n
            for p, r in t["cards"]:
                events[int(p)].append(parse_rank(r))
            for i in range(n):
                sizes[i] -= rounds
            if left:
                need = min(rounds * n, left)
                w = int(t["winner"])
                for i in range(need):
                    s = (w + i) % n
                    schedule.append(s)
                    events[s].append(RECV)
                    sizes[s] += 1
                left -= need
        for p, r in obs["trick"]["cards"]:
            events[int(p)].append(parse_rank(r))
        self.schedule = schedule
        if left != int(obs["stock"]):
            raise InconsistentObservationError(f"sedma: stock of {obs['stock']} cards, the tricks leave {left}")
        return events, left

    # ------------------------------------------------------------ stage 1 (unweighted)

    def problem(self) -> SamplingProblem:
        """Unseen ids -> the other seats' hands and the stock rest; no constraints (§2.4).

        Every assignment is consistent (:meth:`world` builds a world for it); the weights of
        physical-deal uniformity are applied by :meth:`sample`.
        """
        names = [f"hand {s}" for s in self.others] + ["stock"]
        return SamplingProblem.build(list(zip(names, self.capacities, strict=True)), self.unseen)

    # ------------------------------------------------------------ κ programme

    def _transitions(self, j: int, rem: tuple[int, ...]):
        """Per (κ of seat ``order[j]``, next state): the weight (module docstring, step 1)."""
        model = self.models[self._order[j]]
        here = self._tracked[j]
        after = self._tracked[j + 1]
        idx = {x: i for i, x in enumerate(here)}
        tot = len(self.unseen) - sum(self.models[s].size for s in self._order[:j])
        lump = tot - sum(rem)
        pidx = [idx[x] for x in model.ranks]
        pset = set(model.ranks)
        ys = [x for x in after if x not in pset]
        yidx = [idx[x] for x in ys]
        out: dict[tuple, int] = {}
        for kappa, g in model.weights.items():
            w0 = g
            for i, k in zip(pidx, kappa):
                if k > rem[i]:
                    w0 = 0
                    break
                if k:
                    w0 *= comb(rem[i], k)
            if not w0:
                continue
            free = model.size - sum(kappa)
            newrem = list(rem)
            for i, k in zip(pidx, kappa):
                newrem[i] -= k
            for f in vectors([rem[i] for i in yidx], free):
                rest = free - sum(f)
                if rest > lump:
                    continue
                w = w0 * comb(lump, rest)
                nr = list(newrem)
                for i, k in zip(yidx, f):
                    if k:
                        w *= comb(rem[i], k)
                        nr[i] -= k
                nxt = tuple(nr[idx[x]] for x in after)
                key = (kappa, nxt)
                out[key] = out.get(key, 0) + w
        return out

    def _joint(self, j: int, rem: tuple[int, ...]) -> int:
        """Total weight of completing seats ``order[j:]`` from unseen counts ``rem`` (over tracked
        ranks); records the cumulative weights of the transitions for :meth:`_draw_hands`."""
        if j == len(self._order):
            return 1
        key = (j, rem)
        got = self._joint_memo.get(key)
        if got is not None:
            return got
        cum: list[int] = []
        opts: list[tuple] = []
        total = 0
        for (kappa, nxt), w in self._transitions(j, rem).items():
            w *= self._joint(j + 1, nxt)
            if w:
                total += w
                cum.append(total)
                opts.append((kappa, nxt))
        self._joint_memo[key] = total
        self._joint_steps[key] = (cum, opts)
        return total

    def _draw_hands(self, rng: random.Random) -> list[list[int]]:
        """Steps 1–2: per seat of ``order``, how many unseen cards of each rank it holds.

        The κ programme's path fixes, per seat, its counts of the ranks it played (κ) and of
        the ranks a later seat played; its remaining cards ("lump") come from the ranks no
        later seat played, with multivariate hypergeometric probabilities (exact weighted
        draws, one rank at a time). The unseen cards left over form the stock.
        """
        return draw_counts(self._joint_steps, self._plan, self._tracked, self._unseen_by_rank, rng)

    def _orders(self) -> Sampler:
        """Step 3's randomness: uniformly random orders of each other seat's hand slots and of
        the stock, as orders of position tokens dealt by one fixed
        :class:`engine.sampling.Sampler` (which copy of a rank goes where is canonical:
        copies are interchangeable, as the pinned ones)."""
        if self._order_sampler is None:
            names: list[str] = []
            caps: list[int] = []
            cards: list[int] = []
            allowed: list[int] = []
            token = 0
            for s in self._order:
                if self.models[s].receipts == 4:
                    continue  # no draws: the order of its cards does not matter
                size = self.models[s].size
                cards.extend(range(token, token + size))
                allowed.extend([1 << len(caps)] * size)
                names.append(f"order of hand {s}")
                caps.append(size)
                token += size
            size = self.capacities[-1]
            cards.extend(range(token, token + size))
            allowed.extend([1 << len(caps)] * size)
            names.append("order of the stock")
            caps.append(size)
            self._order_sampler = Sampler(SamplingProblem(cards, caps, allowed, names))
        return self._order_sampler

    def sample(self, rng: random.Random) -> SedmaState:
        """A world uniform over the physical deals consistent with the observation (module docstring)."""
        comps = self._draw_hands(rng)
        orders = shuffle_orders(self._order_sizes, rng)  # = self._orders().sample(rng)[0]
        got, rest = split_hands(self._split, comps, self._copies, orders)
        hands = dict(zip(self._order, got))
        return self._build(hands, rest, rng)

    # ------------------------------------------------------------ worlds

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> SedmaState:
        """The world of one stage-1 assignment (hands of the other seats, then the stock rest).

        Each seat's receipt pattern is drawn uniformly from ``rng`` among those legal for its
        hidden cards (step 3 of the module docstring). Later hands of a VP match are dealt
        from a fresh key ``rng.getrandbits(63)``.

        :raises InconsistentObservationError: if the assignment does not fit the sizes.
        """
        if len(assignment) != len(self.others) + 1:
            raise InconsistentObservationError("sedma: an assignment needs one list per other seat and the stock")
        return self._build({s: list(assignment[j]) for j, s in enumerate(self.others)}, assignment[-1], rng)

    def _build(self, hidden: dict[int, list[int]], stock_rest: list[int], rng: random.Random) -> SedmaState:
        n = self.n
        seat = self.seat
        recv: list[list[int]] = [[] for _ in range(n)]
        recv[seat] = self.own_recv
        for s in self.others:
            model = self.models[s]
            cards = hidden[s]
            if len(cards) != model.size:
                raise InconsistentObservationError(f"sedma: seat {s} holds {model.size} cards, not {len(cards)}")
            if model.receipts == 4:  # no draws: every legal pattern gives the same dealt hand
                recv[s] = self.played_ids[s] + list(cards)
                continue
            pos = model.pos
            queues: list[list[int]] = [[] for _ in model.ranks]
            for c in self.played_ids[s]:
                queues[pos[c >> 2]].append(c)
            free: list[int] = []
            extra: list[list[int]] = [[] for _ in model.ranks]
            for c in cards:
                i = pos.get(c >> 2)
                if i is None:
                    free.append(c)
                else:
                    extra[i].append(c)
            for i in range(len(queues)):
                queues[i].extend(sorted(extra[i]))  # pinned copies first: replay plays them
            held = tuple(len(e) for e in extra)
            if held not in model.weights:
                raise InconsistentObservationError(f"sedma: seat {s}'s hidden cards do not fit its plays")
            heads = [0] * len(queues)
            fi = 0
            out = []
            for sym in model.pattern(held, rng):
                if sym < 0:
                    out.append(free[fi])
                    fi += 1
                else:
                    out.append(queues[sym][heads[sym]])
                    heads[sym] += 1
            recv[s] = out
        hands, stock = deal_of(recv, self.schedule, stock_rest)
        template = self._template
        if template is None:  # the match's state before the deal, the same for every world
            template = SedmaState(self.game, n, self.opts, 0)
            template.dealer = self.dealer
            template.hidx = self.hidx
            template.vp = list(self.vp)
            template.past = self.past
            if self.past:
                template.last_rewards = hand_rewards_from_points(n, self.past[-1]["points"])
            self._template = template
        st = template.dealt_world(hands, stock, rng.getrandbits(63))
        for a in self.actions:
            st.apply(a)
        return st
