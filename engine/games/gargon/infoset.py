"""Gargon information sets: values sampled within public colours (docs/rules/gargon.md §4.7, GC-1, GC-4).

A sample is a complete world: the opening deal (physical ids at every hand slot and pile
position) plus a face for every hidden ``select``. It is drawn **uniformly over physical
deals**: a world has probability proportional to the number of pairs (physical deal,
hidden faces) that give it. Copies matter only for zeros: a world has
``prod_c m_c`` physical deals, ``m_c = 1`` when both zeros of colour ``c`` lie in one
opponent's dealt hand and the observer knows neither, ``2`` otherwise (the observer's own
zeros are pinned, which halves every world alike).

The public record is replayed over *slots* (each seat's dealt cards, each pile position),
whose colours are public. What stays hidden splits into

1. **current holdings** (the :class:`~engine.sampling.SamplingProblem` of :meth:`problem`):
   per opponent and colour its hand cards ``H`` and its face-down cards of this round
   ``T`` (or one merged location ``U`` for the GC-1 prefix inference), and per run of equal
   colour in each pile its cards (an ordered location);
2. per opponent and colour, the **arrangement** of its *block*: which of its cards ever
   held in that colour (those revealed in earlier battles, with the time they were
   played, and ``H``/``T``/``U``) were dealt and which came from each of its pile draws.
   A card played at time ``t`` was dealt or drawn before ``t``. Filling the draws latest
   first, each draw picks among the cards that were still to be played after it: the
   number of candidates depends on public timings only, so for distinct cards the
   arrangement is a list of independent uniform picks (Sampler ``choices``).

Both stages are exact for distinct cards, and the stage-1 count does not depend on which
values went where, **except for the two zeros of a colour the observer knows neither of**
(that case makes the number of stage-2 ways depend on stage 1):

* a block holding both zeros has ``V = sum over its face arrangements of m`` physical
  arrangements instead of ``2 * N`` (``N`` = the count for distinct cards);
  :meth:`_block_plan` enumerates where its two zeros were dealt or drawn, each with its
  exact weight, and draws one (then the other cards as above);
* stage 1 therefore weighs the placements of the unseen zeros: per colour, a few
  *variants* (mask restrictions of the zeros, disjoint and covering) each with the exact
  weight ``count x factor`` (:meth:`_variants`). Unseen zeros in ``T`` and ``H`` of one
  seat are one world whichever physical zero is on the table (the engine plays the
  lower id), a merged ``U`` with both zeros has one valid face-down zero less, and a zero
  revealed by a seat whose other zero is still in its hand has factor ``V / 2N``.

Variant and zero-position draws are exact weighted draws (tickets of a ``choices``
entry); everything else is a :class:`~engine.sampling.Sampler` draw. No rejection.
``count()`` counts stage 1 (as Guiñote's does).

(~680 lines, over the project's ~600: the exact physical-deal sampler, its typed draw and the world placement share one set of per-information-set tables; the typed draw is the part to move to its own module next.)
"""

from __future__ import annotations

import random
import sys
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from math import gcd, prod
from typing import Any

from engine import compiled
from engine.core import InfoSet
from engine.errors import IllegalActionError, InconsistentObservationError
from engine.games.gargon import actions as A
from engine.games.gargon import rollout as _rollout
from engine.games.gargon import rules as R
from engine.games.gargon.record import LETTER, PublicRecord
from engine.games.gargon.state import GargonState
from engine.sampling import Sampler, SamplingProblem

#: the world replay (:func:`engine.games.gargon.rollout.replay`) when compiled; interpreted,
#: ``GargonState.apply`` per action is as fast
_REPLAY = _rollout.replay if compiled.is_compiled(_rollout) else None

_END = 1 << 40  # role time of a card still held (or face down this round)
_DEALT = -1  # time of the dealt slots

# location kinds
HAND, RUN, TABLE, MERGED = 0, 1, 2, 3


class _Tickets(Sequence):
    """``cum[-1]`` equally likely tickets; ticket ``i`` belongs to option ``bisect(cum, i)``."""

    __slots__ = ("cum",)

    def __init__(self, cum: list[int]) -> None:
        self.cum = cum

    def __len__(self) -> int:
        return self.cum[-1]

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        return bisect_right(self.cum, i)


class _Weighted:
    """An exact weighted draw among options with non-negative integer (or Fraction) weights.

    Drawn through a card-less :class:`Sampler` whose one hidden choice is a ticket; a total
    beyond an index-sized int (never met in practice) is drawn with ``randrange``.
    """

    __slots__ = ("cum", "sampler")

    def __init__(self, weights: Sequence[int | Fraction]) -> None:
        den = 1
        for w in weights:
            if isinstance(w, Fraction):
                den = den * w.denominator // gcd(den, w.denominator)
        ints = [int(w * den) for w in weights]
        g = 0
        for w in ints:
            g = gcd(g, w)
        if g == 0:
            raise InconsistentObservationError("gargon: no placement has a positive weight")
        cum, acc = [], 0
        for w in ints:
            acc += w // g
            cum.append(acc)
        self.cum = cum
        self.sampler = (Sampler(SamplingProblem([], [], [], [], [_Tickets(cum)]))
                        if acc <= sys.maxsize and len(cum) > 1 else None)

    def draw(self, rng: random.Random) -> int:
        """The index of one option, drawn with probability proportional to its weight."""
        if len(self.cum) == 1:
            return 0
        if self.sampler is not None:
            return self.sampler.sample(rng)[1][0]
        return bisect_right(self.cum, rng.randrange(self.cum[-1]))


def _pick_sizes(times: Sequence[int], roles: Sequence[int]) -> list[int] | None:
    """Candidates per draw, latest draw first: cards still to be played after it, minus those placed.

    :param times: the block's free draw times, ascending.
    :param roles: per card to place, the time it was played (``_END`` if still held).
    :returns: the pick sizes, or ``None`` if some draw has no candidate.
    """
    out = []
    for placed, tau in enumerate(reversed(times)):
        a = sum(1 for r in roles if r > tau) - placed
        if a <= 0:
            return None
        out.append(a)
    return out


def draw_single(class_cards: list, loc_class: list, caps: list, rand: Any) -> list:
    """:meth:`engine.sampling.Sampler.sample`'s draws when every location holds one card class.

    Per location (in order) a partial Fisher–Yates step takes its ``caps[j]`` cards from the
    pool of class ``loc_class[j]`` (the whole pool, no draw, when it takes all that is left),
    then a Fisher–Yates shuffle orders them: exactly the sampler's ``rand()`` calls and cards
    (no location is ``unordered`` and there are no hidden choices).

    :param class_cards: per class its cards, in the sampler's pool order.
    :param rand: the generator's ``random``.
    :returns: per location its cards, as ``Sampler.sample(rng)[0]``.
    """
    buf = [0] * 102
    off = [0, 0, 0, 0, 0, 0, 0, 0]
    plen = [0, 0, 0, 0, 0, 0, 0, 0]
    loc = [0] * 102
    o = 0
    for c in range(len(class_cards)):
        cards = class_cards[c]
        off[c] = o
        plen[c] = len(cards)
        for x in cards:
            buf[o] = x
            o += 1
    out = []
    for j in range(len(caps)):
        c = loc_class[j]
        k = caps[j]
        n = plen[c]
        o = off[c]
        if k != n:
            for t in range(k):
                r = rand()
                i = int(r * (n - t))
                e = n - 1 - t
                x = buf[o + i]
                buf[o + i] = buf[o + e]
                buf[o + e] = x
        for t in range(k):
            loc[t] = buf[o + n - k + t]
        plen[c] = n - k
        for t in range(k - 1, 0, -1):
            r = rand()
            i = int(r * (t + 1))
            x = loc[i]
            loc[i] = loc[t]
            loc[t] = x
        out.append([loc[t] for t in range(k)])
    return out


def place(base: list, loc_tokens: list, assignment: list) -> list:
    """A copy of ``base`` with location ``j``'s cards written at the tokens ``loc_tokens[j]``, in order."""
    tok = base[:]
    for j in range(len(loc_tokens)):
        ts = loc_tokens[j]
        if ts:
            cards = assignment[j]
            for i in range(len(ts)):
                tok[ts[i]] = cards[i]
    return tok


#: the mask of each card id
_BIT = tuple(1 << i for i in range(A.NCARDS))


class _Block:
    """One opponent's cards of one colour: dealt slots, draws, revealed cards, held locations."""

    __slots__ = ("seat", "colour", "dealt", "draws", "revealed", "hand", "table", "merged", "tsel",
                 "plain", "plans")

    def __init__(self, seat: int, colour: int, dealt: list[int], draws: list[tuple[int, int]],
                 revealed: list[tuple[int, int]]) -> None:
        self.seat = seat
        self.colour = colour
        self.dealt = dealt  # slot tokens
        self.draws = draws  # (time, pile token), ascending
        self.revealed = revealed  # (card id, time played)
        self.hand = self.table = self.merged = -1  # location indices
        self.tsel: list[int] = []  # this round's hidden selects of this colour, in order
        self.plain: Sampler | None = None
        self.plans: dict = {}


#: stage 1's samplers: common locations and their sampler, per split colour its locations and
#: variant samplers, the variant choosers
_Stage1 = tuple[list[int], Sampler, list[tuple[list[int], list[Sampler]]], list[_Weighted], Any]


class GargonInfoSet(InfoSet):
    """Constraints of one Gargon observation and the builder of consistent worlds.

    :raises InconsistentObservationError: (at construction) if the observation's public
        record does not fit together (colours, counts, duplicate values).
    """

    __slots__ = ("game", "n", "opts", "first_start", "tok_colour", "tok_id", "init_hands", "init_piles",
                 "steps", "sel_face", "locs", "merged", "blocks", "obs_zero", "rev_zero", "_problem",
                 "_stage1", "_lchoice", "_direct")

    def __init__(self, game: Any, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        me = self.seat
        self.n = n
        self.opts = game.resolve_options(obs["options"])
        self.first_start = int(obs["first_start"])
        rec = PublicRecord(obs, n, me)
        self.init_hands = rec.hands
        self.init_piles = rec.piles
        self.obs_zero = rec.obs_zero
        self.rev_zero = rec.rev_zero
        unseen = rec.unseen()
        merged = (-1, -1)
        actor = int(obs["to_act"])
        if obs["phase"] == "play" and actor != me and actor != int(obs["start_player"]) and rec.cur[actor]:
            merged = self._merge_colour(obs, actor, [rec.sel_info[e][1] for e in rec.cur[actor]], rec.count[actor])
        locs, blocks = self._holdings(rec, merged)
        for k in (0, 1):
            rest = rec.piles[k][rec.top[k]:]
            i = 0
            while i < len(rest):
                j = i
                while j < len(rest) and rec.tok_colour[rest[j]] == rec.tok_colour[rest[i]]:
                    j += 1
                locs.append((f"pile {'ab'[k]} {i}", rec.tok_colour[rest[i]], RUN, j - i, rest[i:j]))
                i = j
        for c in range(A.NCOL):
            slots = sum(x[3] for x in locs if x[1] == c)
            cards = sum(1 for x in unseen if A.COLOUR_OF[x] == c)
            if slots != cards:
                raise InconsistentObservationError(f"gargon: {slots} hidden {A.COLOURS[c]} slots for {cards} unseen cards")
        self.tok_colour = rec.tok_colour
        self.tok_id = rec.tok_id
        self.steps = rec.steps
        self.sel_face = rec.sel_face
        self.locs = locs
        self.merged = merged
        self.blocks = blocks
        self._stage1: _Stage1 | None = None
        self._lchoice: dict[int, Sampler] = {}
        #: when no block needs arranging (no draws, no face-down cards): the deal's tokens
        #: with the revealed cards written, and per location the tokens its cards go to
        self._direct: Any = False   # False: not planned yet
        self._problem = SamplingProblem(
            cards=unseen,
            capacities=[x[3] for x in locs],
            allowed=[sum(1 << j for j, x in enumerate(locs) if x[1] == A.COLOUR_OF[c]) for c in unseen],
            names=[x[0] for x in locs])

    def _holdings(self, rec: PublicRecord, merged: tuple[int, int]
                  ) -> tuple[list[tuple[str, int, int, int, list[int]]], list[_Block]]:
        """The hidden locations of the opponents' current holdings and their colour blocks.

        :returns: ``(locs, blocks)``: per location ``(name, colour, kind, capacity, pile
            tokens)`` (hands, tables, merged hand+table), and the blocks with dealt or drawn cards.
        """
        bad = InconsistentObservationError
        n, me = self.n, self.seat
        table: dict[tuple[int, int], list[int]] = {}
        for s in range(n):
            if s != me:
                for e in rec.cur[s]:
                    table.setdefault((s, rec.sel_info[e][1]), []).append(e)
        locs: list[tuple[str, int, int, int, list[int]]] = []  # (name, colour, kind, capacity, pile tokens)
        blocks: list[_Block] = []
        for s in range(n):
            if s == me:
                continue
            for c in range(A.NCOL):
                dealt_c = [t for t in rec.hands[s] if rec.tok_colour[t] == c]
                b = _Block(s, c, dealt_c, rec.draws.get((s, c), []), rec.rev.get((s, c), []))
                h = rec.count[s][c]
                tl = table.get((s, c), [])
                b.tsel = tl
                if (s, c) == merged:
                    if len(tl) != 1:
                        raise bad("gargon: a merged selection must hold one card of its colour")
                    b.merged = len(locs)
                    locs.append((f"hand+table {s} {A.COLOURS[c]}", c, MERGED, h + 1, []))
                else:
                    if h:
                        b.hand = len(locs)
                        locs.append((f"hand {s} {A.COLOURS[c]}", c, HAND, h, []))
                    if tl:
                        b.table = len(locs)
                        locs.append((f"table {s} {A.COLOURS[c]}", c, TABLE, len(tl), []))
                if len(b.dealt) + len(b.draws) != len(b.revealed) + h + len(tl):
                    raise bad(f"gargon: seat {s}'s {A.COLOURS[c]} cards do not add up")
                if b.dealt or b.draws:
                    blocks.append(b)
        return locs, blocks

    @staticmethod
    def _merge_colour(obs: Mapping[str, Any], actor: int, sel_colours: list[int], hand_counts: list[int]
                      ) -> tuple[int, int]:
        """The (seat, colour) whose hand and table must be merged (the §4.3 prefix inference), or (-1, -1)."""
        pattern = tuple(obs["pattern"])
        allowed = 0b111111
        n = int(obs["players"])
        if actor == (int(obs["start_player"]) - 1) % n:
            allowed = 0
            for ch in obs["colours_played"]:
                allowed |= 1 << LETTER[ch]
        sc = [0] * A.NCOL
        for c in sel_colours:
            sc[c] += 1
        last = sel_colours[-1]
        if R.completable(sc, last, 0, hand_counts, allowed, pattern, len(sel_colours)):
            return (-1, -1)
        return (actor, last)

    def problem(self) -> SamplingProblem:
        """Stage 1 (module docstring) with every unseen card free within its colour.

        Every assignment respecting it gives a consistent world (:meth:`world`); :meth:`sample`
        weighs the unseen zeros' placements exactly on top of it.
        """
        return self._problem

    # ------------------------------------------------------------ stage 2: arrangements

    def _block_plan(self, b: _Block, zero_roles: tuple[int, int] | None, n_held: int):
        """How block ``b`` is arranged when it holds ``n_held`` cards now.

        ``zero_roles`` (the play times of its two zeros, earlier first) when it holds both
        zeros, else ``None``.

        :returns: ``(total, options, chooser)``: the number of physical arrangements
            (``m``-weighted for two zeros), per option ``(zero positions, pick sampler)``
            and the :class:`_Weighted` draw among options.
        """
        key = (zero_roles, n_held)
        got = b.plans.get(key)
        if got is not None:
            return got
        times = [t for t, _ in b.draws]
        roles = [r for _, r in b.revealed] + [_END] * n_held
        d = len(b.dealt)
        options: list[tuple[tuple[int, int] | None, Sampler]] = []
        weights: list[int] = []
        if zero_roles is None:
            sizes = _pick_sizes(times, roles)
            if sizes is None:
                raise InconsistentObservationError(f"gargon: seat {b.seat} played cards it could not have held")
            options.append((None, Sampler(SamplingProblem([], [], [], [], [range(a) for a in sizes]))))
            weights.append(prod(sizes))
        else:
            ra, rb = zero_roles
            others = list(roles)
            others.remove(ra)
            others.remove(rb)
            m = len(times)
            # positions: -1 = dealt, i = draw i; the earlier-placed zero takes the earlier role
            cands = [(-1, -1)] if d >= 2 else []
            cands += [(-1, j) for j in range(m)] if d >= 1 else []
            cands += [(i, j) for i in range(m) for j in range(i + 1, m)]
            for p, q in cands:
                tp = _DEALT if p < 0 else times[p]
                tq = _DEALT if q < 0 else times[q]
                if not (tp < ra and tq < rb):
                    continue
                if d - (p < 0) - (q < 0) < 0:
                    continue
                free = [times[i] for i in range(m) if i != p and i != q]
                sizes = _pick_sizes(free, others)
                if sizes is None:
                    continue
                w = (1 if p < 0 and q < 0 else 2) * prod(sizes)
                options.append(((p, q), Sampler(SamplingProblem([], [], [], [], [range(a) for a in sizes]))))
                weights.append(w)
            if not options:
                raise InconsistentObservationError(f"gargon: seat {b.seat}'s zeros fit no deal")
        got = (sum(weights), options, _Weighted(weights))
        b.plans[key] = got
        return got

    def _arrange(self, b: _Block, held: list[int], tok_id: list[int], rng: random.Random) -> None:
        """Deal block ``b``'s cards (revealed ones and ``held``) to its dealt slots and draws."""
        cards = b.revealed + [(c, _END) for c in held]
        if not b.draws:
            for t, (c, _) in zip(b.dealt, cards, strict=True):
                tok_id[t] = c
            return
        zeros = [(r, c) for c, r in cards if A.VALUE_OF[c] == 0]
        zero_roles = None
        if len(zeros) == 2:
            zeros.sort()
            zero_roles = (zeros[0][0], zeros[1][0])
        _, options, chooser = self._block_plan(b, zero_roles, len(held))
        pos, picker = options[chooser.draw(rng)]
        _, picks = picker.sample(rng)
        dealt: list[int] = []
        left = cards
        skip = ()
        if pos is not None:
            zc = [c for _, c in zeros]
            left = [x for x in cards if x[0] not in zc]
            skip = pos
            for at, c in zip(pos, zc, strict=True):
                if at < 0:
                    dealt.append(c)
                else:
                    tok_id[b.draws[at][1]] = c
        left = sorted(left)
        k = 0
        for i in range(len(b.draws) - 1, -1, -1):
            if i in skip:
                continue
            tau, t = b.draws[i]
            cand = [x for x in left if x[1] > tau]
            x = cand[picks[k]]
            k += 1
            tok_id[t] = x[0]
            left.remove(x)
        dealt.extend(c for c, _ in left)
        for t, c in zip(b.dealt, dealt, strict=True):
            tok_id[t] = c

    # ------------------------------------------------------------ stage 1: the unseen zeros

    def _variants(self, c: int, loc_of: list[int]) -> list[tuple[dict[int, int], Fraction]]:
        """Stage-1 variants of colour ``c`` (module docstring): ``(zero id -> allowed local mask, factor)``.

        One variant with no restriction when uniform stage-1 assignments are already exact.
        """
        zu = [x for x in (c * A.PER_COLOUR, c * A.PER_COLOUR + 1) if x in self._problem.cards]
        plain: list[tuple[dict[int, int], Fraction]] = [({}, Fraction(1))]
        if self.obs_zero[c] or not zu:
            return plain
        local = {j: i for i, j in enumerate(loc_of)}
        full = (1 << len(loc_of)) - 1

        def mask(js: Iterable[int]) -> int:
            """Bitmask of the local indices of locations ``js`` (negative entries skipped)."""
            m = 0
            for j in js:
                if j >= 0:
                    m |= 1 << local[j]
            return m

        mine = [b for b in self.blocks if b.colour == c]
        rz = self.rev_zero[c]
        if len(zu) == 1 and len(rz) == 1:
            s1, _, when = rz[0]
            b = next((x for x in mine if x.seat == s1), None)
            if b is None:
                return plain
            held = mask((b.hand, b.table, b.merged))
            if not held:
                return plain
            nh = sum(self.locs[j][3] for j in (b.hand, b.table, b.merged) if j >= 0)
            v = self._block_plan(b, (when, _END), nh)[0] if b.draws else 1
            n0 = self._block_plan(b, None, nh)[0] if b.draws else 1
            return [({zu[0]: held}, Fraction(v, 2 * n0)), ({zu[0]: full & ~held}, Fraction(1))]
        if len(zu) == 2:
            z, z2 = zu
            split = [b for b in mine if b.hand >= 0 and b.table >= 0]
            um = [b for b in mine if b.merged >= 0 and self.locs[b.merged][3] >= 3]
            if not split and not um:
                return plain
            hands = mask(b.hand for b in split)
            umask = mask(b.merged for b in um)
            out = [({z: full & ~hands & ~umask}, Fraction(1))]
            for b in split:  # z in H and z2 in T is the same world as z in T and z2 in H
                out.append(({z: mask([b.hand]), z2: full & ~mask([b.table])}, Fraction(1)))
            for b in um:
                u = self.locs[b.merged][3]
                out.append(({z: mask([b.merged]), z2: full & ~mask([b.merged])}, Fraction(1)))
                out.append(({z: mask([b.merged]), z2: mask([b.merged])}, Fraction(u - 2, u - 1)))
            return out
        return plain

    def _build_stage1(self) -> _Stage1:
        """Stage 1's samplers: one over the colours without variants, one per variant of the others."""
        prob = self._problem
        ncol = A.NCOL
        by_colour_locs = [[j for j, x in enumerate(self.locs) if x[1] == c] for c in range(ncol)]
        by_colour_cards = [[x for x in prob.cards if A.COLOUR_OF[x] == c] for c in range(ncol)]
        common_locs: list[int] = []
        common_cards: list[int] = []
        split: list[tuple[list[int], list[Sampler]]] = []
        choosers: list[_Weighted] = []
        for c in range(ncol):
            loc_of = by_colour_locs[c]
            variants = self._variants(c, loc_of)
            if len(variants) == 1:
                common_locs += loc_of
                common_cards += by_colour_cards[c]
                continue
            samplers, weights = [], []
            full = (1 << len(loc_of)) - 1
            for restrict, factor in variants:
                sub = SamplingProblem(by_colour_cards[c], [self.locs[j][3] for j in loc_of],
                                      [restrict.get(x, full) for x in by_colour_cards[c]],
                                      [self.locs[j][0] for j in loc_of])
                try:
                    sm = Sampler(sub)
                except InconsistentObservationError:
                    continue
                samplers.append(sm)
                weights.append(sm.card_total * factor)
            if not samplers:
                raise InconsistentObservationError(f"gargon: no deal of colour {A.COLOURS[c]} fits")
            split.append((loc_of, samplers))
            choosers.append(_Weighted(weights))
        index = {j: i for i, j in enumerate(common_locs)}
        common = Sampler(SamplingProblem(
            common_cards, [self.locs[j][3] for j in common_locs],
            [sum(1 << index[j] for j in by_colour_locs[A.COLOUR_OF[x]]) for x in common_cards],
            [self.locs[j][0] for j in common_locs]))
        single = None
        if (all(len(lc) == 1 for lc in common.loc_classes) and not common.problem.unordered
                and not common.problem.choices and len(common.class_cards) <= 8):
            single = (common.class_cards, [lc[0] for lc in common.loc_classes], list(common.problem.capacities))
        self._stage1 = (common_locs, common, split, choosers, single)
        return self._stage1

    def sample(self, rng: random.Random) -> GargonState:
        """A complete world, uniform over physical deals (and hidden faces) consistent with the observation."""
        stage1 = self._stage1
        if stage1 is None:
            stage1 = self._build_stage1()
        common_locs, common, split, choosers, single = stage1
        assignment: list[list[int]] = [[] for _ in self.locs]
        if single is not None:   # the same draws as common.sample, typed (infoset.pxd)
            got = draw_single(single[0], single[1], single[2], rng.random)
        else:
            got, _ = common.sample(rng)
        for j, cards in zip(common_locs, got):
            assignment[j] = cards
        for (loc_of, samplers), chooser in zip(split, choosers):
            got, _ = samplers[chooser.draw(rng)].sample(rng)
            for j, cards in zip(loc_of, got):
                assignment[j] = cards
        return self._world(assignment, rng)

    # ------------------------------------------------------------ worlds

    def _valid_last(self, cards: list[int]) -> list[int]:
        """Faces a merged location's selected card may have: some other card of it comes later."""
        faces = sorted({A.FACE_OF[x] for x in cards})
        zeros = sum(1 for x in cards if A.VALUE_OF[x] == 0)
        top = max(A.VALUE_OF[x] for x in cards)
        return [f for f in faces if f % 16 < top or (f % 16 == 0 and zeros == 2)]

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> GargonState:
        """The world of one stage-1 assignment: the blocks arranged (stage 2), the deal rebuilt, the hand replayed.

        :raises InconsistentObservationError: if a card lies in a location of another
            colour, or the replay is illegal.
        """
        for (name, colour, _, cap, _), cards in zip(self.locs, assignment, strict=True):
            if len(cards) != cap:
                raise InconsistentObservationError(f"gargon: location {name} needs {cap} cards")
            for c in cards:
                if A.COLOUR_OF[c] != colour:
                    raise InconsistentObservationError(f"gargon: card {A.FACE_STR[A.FACE_OF[c]]} cannot be in {name}")
        return self._world(assignment, rng)

    def _direct_plan(self) -> tuple[list[int], list[list[int]]] | None:
        """:attr:`_direct` (``None`` when some block has draws, a face-down card or a merged location)."""
        base = self.tok_id[:]
        loc_tokens: list[list[int]] = [x[4] if x[2] == RUN else [] for x in self.locs]
        for b in self.blocks:
            if b.draws or b.table >= 0 or b.merged >= 0:
                return None
            k = len(b.revealed)
            for t, (c, _) in zip(b.dealt, b.revealed):
                base[t] = c
            if b.hand >= 0:
                loc_tokens[b.hand] = b.dealt[k:]
        return base, loc_tokens

    def _world(self, assignment: list[list[int]], rng: random.Random) -> GargonState:
        """:meth:`world` of an assignment known to fit the locations (the sampler's)."""
        direct = self._direct
        if direct is False:
            direct = self._direct = self._direct_plan()
        if direct is not None:   # every card goes straight to its slot: no arrangement to draw
            tok_id = place(direct[0], direct[1], assignment)
            return self._state(tok_id, self.sel_face, rng)
        tok_id = self.tok_id[:]
        for (_, _, kind, _, tokens), cards in zip(self.locs, assignment):
            if kind == RUN:
                for t, c in zip(tokens, cards):
                    tok_id[t] = c
        sel_face = self.sel_face[:]
        for b in self.blocks:
            held: list[int] = []
            if b.merged >= 0:
                cards = sorted(assignment[b.merged])
                valid = self._valid_last(cards)
                if not valid:
                    raise InconsistentObservationError("gargon: no valid selection in a merged location")
                k = len(valid)
                if k > 1:
                    chooser = self._lchoice.get(k)
                    if chooser is None:
                        chooser = self._lchoice[k] = Sampler(SamplingProblem([], [], [], [], [range(k)]))
                    f = valid[chooser.sample(rng)[1][0]]
                else:
                    f = valid[0]
                sel_face[b.tsel[0]] = f
                held = cards
            else:
                if b.table >= 0:
                    tab = sorted(assignment[b.table])
                    for e, c in zip(b.tsel, tab, strict=True):
                        sel_face[e] = A.FACE_OF[c]
                    held += tab
                if b.hand >= 0:
                    held += assignment[b.hand]
            self._arrange(b, held, tok_id, rng)
        return self._state(tok_id, sel_face, rng)

    def _state(self, tok_id: list[int], sel_face: list[int], rng: random.Random) -> GargonState:
        """The world of a complete deal ``tok_id`` (card id per token), the hand replayed."""
        hands = []
        for h in self.init_hands:
            m = 0
            for t in h:
                m |= _BIT[tok_id[t]]
            hands.append(m)
        piles = [[tok_id[t] for t in p] for p in self.init_piles]
        state = GargonState.from_deal(self.game, self.n, self.opts, hands, piles, self.first_start,
                                      rng.getrandbits(63), self.opts["first_start"])
        try:
            if _REPLAY is not None:   # the compiled kernel: the same state as the apply loop
                _REPLAY(state, [sel_face[e] if a < 0 else a for _, a, e in self.steps])
            else:
                for _, a, e in self.steps:
                    state.apply(sel_face[e] if a < 0 else a)
        except IllegalActionError as e:
            raise InconsistentObservationError(f"gargon: the sampled world does not replay: {e}") from e
        return state
