"""The typed steps of drawing a Sedma world (issue 19; :class:`engine.games.sedma.infoset.SedmaInfoSet`).

Module functions so that ``worlds.pxd`` beside this file can type them for Cython (C arrays and
indices; pure-Python mode, this file is the source): the κ walk (:func:`draw_counts`), the
orders (:func:`shuffle_orders`), the split of the cards into hands and stock
(:func:`split_hands`) and the deal's masks (:func:`deal_of`). Each makes the same random draws as
the code it replaced (``tests/search/test_typed_paths.py``, ``tests/games/test_sedma_guinote_fast.py``).
Rules: ``docs/rules/sedma.md`` §2.4, ruling CA-3 (the infoset module's docstring).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from math import comb

from engine.errors import InconsistentObservationError
from engine.sampling import randbelow

#: ``1 << i`` is ``ONE << i`` so that the compiled shift is 64-bit
ONE = 1

#: index ``copies << 12 | later lump copies << 6 | cards to draw`` (copies at most 4, the others
#: below 64: a 32-card deck) -> cumulative hypergeometric weights ``C(copies, k) * C(later,
#: rest - k)`` for ``k = lo..hi``, or ``None`` until first asked (integers only: shared by every
#: information set; the same draws as summing them per sample, issue 19; a list, not a dict:
#: the lookup is a C index when compiled)
_LUMP: list = [None] * (5 << 12)


def _lump_weights(c: int, total: int, rest: int, lo: int, hi: int) -> list[int]:
    """Cumulative weights of drawing ``k = lo..hi`` of ``c`` copies when ``rest`` cards come from
    ``c + total`` (multivariate hypergeometric, one rank at a time; :meth:`SedmaInfoSet._draw_hands`).
    ``lo`` and ``hi`` follow from the other three (``max(0, rest - total)``, ``min(c, rest)``)."""
    key = c << 12 | total << 6 | rest
    got = _LUMP[key]
    if got is None:
        got = []
        acc = 0
        for i in range(lo, hi + 1):
            acc += comb(c, i) * comb(total, rest - i)
            got.append(acc)
        _LUMP[key] = got
    return got


def draw_counts(steps: dict, plan: list, tracked: list, unseen_by_rank: list, rng: random.Random) -> list[list[int]]:
    """The walk of :meth:`SedmaInfoSet._draw_hands` (module level so ``infoset.pxd`` can type it).

    :param steps: the κ programme's ``(seat index, tracked counts) -> (cumulative weights,
        (κ, next counts) options)``.
    :param plan: per seat of the order, ``(ranks it played, hand size)``.
    :param tracked: per seat index, the ranks a later seat played (the programme's state).
    :param unseen_by_rank: unseen cards per rank (8 ranks).
    :returns: per seat of the order, its unseen cards per rank.
    """
    # C arrays when compiled (infoset.pxd): the unseen cards not yet placed per rank, the
    # seat's cards per rank, a tracked rank's index in ``tracked[j]``
    left = [0, 0, 0, 0, 0, 0, 0, 0]
    comp = [0, 0, 0, 0, 0, 0, 0, 0]
    at = [0, 0, 0, 0, 0, 0, 0, 0]
    for x in range(8):
        left[x] = unseen_by_rank[x]
    rem = tuple([unseen_by_rank[y] for y in tracked[0]])
    out = []
    getrandbits = rng.getrandbits
    for j in range(len(plan)):
        ranks, size = plan[j]
        cum, opts = steps[(j, rem)]
        nopt = len(opts)
        k = 0 if nopt == 1 else bisect_right(cum, randbelow(rng, cum[nopt - 1]))
        kappa, nxt = opts[k]
        for x in range(8):
            comp[x] = 0
        rmask = 0
        for i in range(len(ranks)):
            x = ranks[i]
            comp[x] = kappa[i]
            rmask |= 1 << x
        here = tracked[j]
        hmask = 0
        for i in range(len(here)):
            x = here[i]
            hmask |= 1 << x
            at[x] = i
        later = tracked[j + 1]
        for i in range(len(later)):
            x = later[i]
            if not rmask >> x & 1:
                comp[x] = rem[at[x]] - nxt[i]
        rest = size
        for x in range(8):
            rest -= comp[x]
        if rest:
            # the lump: a uniform set of ``rest`` cards among the unseen cards of the ranks no
            # later seat played; its ranks one at a time, each count with probability
            # C(copies, k) · C(copies of the later lump ranks, rest − k) / C(…, rest)
            total = 0
            for x in range(8):
                if not hmask >> x & 1:
                    total += left[x]
            for x in range(8):
                c = left[x]
                if not c or hmask >> x & 1:
                    continue
                total -= c
                lo = rest - total if rest > total else 0
                hi = c if c < rest else rest
                kk = lo
                if hi > lo:
                    ws = _lump_weights(c, total, rest, lo, hi)
                    # randbelow(rng, ws[-1]) inlined: rng.randrange's own draws (the total is small)
                    m = ws[hi - lo]
                    bits = 0
                    while m >> bits:
                        bits += 1
                    r = getrandbits(bits)
                    while r >= m:
                        r = getrandbits(bits)
                    while r >= ws[kk - lo]:
                        kk += 1
                comp[x] += kk
                rest -= kk
                if not rest:
                    break
        for x in range(8):
            left[x] -= comp[x]
        out.append([comp[0], comp[1], comp[2], comp[3], comp[4], comp[5], comp[6], comp[7]])
        rem = nxt
    return out


def shuffle_orders(sizes: list, rng: random.Random) -> list[list[int]]:
    """The orders :meth:`SedmaInfoSet._orders`' sampler deals, drawn without it (issue 19).

    Location ``j`` holds the position tokens ``base_j .. base_j + sizes[j] - 1`` (``base_j``
    the sizes before it), each token allowed there only: the sampler takes the whole class
    and shuffles it by Fisher-Yates with one ``rng.random()`` per position from the last, so
    this makes the same calls and gives the same orders.
    """
    random_ = rng.random
    out = []
    base = 0
    for j in range(len(sizes)):
        m = sizes[j]
        loc = list(range(base, base + m))
        for t in range(m - 1, 0, -1):
            x = random_()
            i = int(x * (t + 1))
            e = loc[i]
            loc[i] = loc[t]
            loc[t] = e
        out.append(loc)
        base += m
    return out


def split_hands(split: list, comps: list, queues: list, orders: list) -> tuple[list, list]:
    """Step 3's cards (:meth:`SedmaInfoSet.sample`): per seat of the order its hidden cards,
    those of ranks it played first (then its others in the order ``orders`` gives them), and
    the undrawn stock in its order.

    :param split: per seat ``(mask of the ranks it played, whether it drew)``.
    :param comps: per seat its unseen cards per rank (:func:`draw_counts`).
    :param queues: per rank the unseen ids in canonical order (each seat takes the next ones).
    :param orders: :func:`shuffle_orders`' orders (a seat that drew, then the stock).
    """
    heads = [0, 0, 0, 0, 0, 0, 0, 0]  # a C array when compiled
    out = []
    base = 0
    j = 0
    for idx in range(len(comps)):
        comp = comps[idx]
        pmask, draws = split[idx]
        mine = []
        other = []
        for x in range(8):
            k = comp[x]
            if k:
                h = heads[x]
                q = queues[x]
                if pmask >> x & 1:
                    for t in range(h, h + k):
                        mine.append(q[t])
                else:
                    for t in range(h, h + k):
                        other.append(q[t])
                heads[x] = h + k
        if draws:
            order = orders[j]
            n_other = len(other)
            if n_other > 1:  # a uniform order of its other cards: the relative order of its first tokens
                kept = []
                for i in range(len(order)):
                    t = order[i] - base
                    if t < n_other:
                        kept.append(other[t])
                other = kept
            base += len(order)
            j += 1
        out.append(mine + other)
    rest = []
    for x in range(8):
        q = queues[x]
        for t in range(heads[x], len(q)):
            rest.append(q[t])
    if len(rest) > 1:
        order = orders[len(orders) - 1]
        kept = []
        for i in range(len(order)):
            kept.append(rest[order[i] - base])
        rest = kept
    return out, rest


def deal_of(recv: list, schedule: list, stock_rest: list) -> tuple[list[int], list[int]]:
    """The deal of a world: per seat the mask of its first 4 receipts, and the stock (the
    seats' later receipts in the public draw ``schedule``, then ``stock_rest``).

    :param recv: per seat its card ids in the order received (dealt, then drawn).
    :raises InconsistentObservationError: if the receipts do not fit the schedule.
    """
    n = len(recv)
    hands = []
    ptr = [4, 4, 4, 4]  # a C array when compiled (at most 4 seats)
    for s in range(n):
        r = recv[s]
        if len(r) < 4:
            raise InconsistentObservationError(f"sedma: seat {s} would receive fewer than 4 cards")
        m = 0
        for i in range(4):
            m |= ONE << r[i]
        hands.append(m)
    stock = []
    for i in range(len(schedule)):
        s = schedule[i]
        r = recv[s]
        if ptr[s] >= len(r):
            raise InconsistentObservationError(f"sedma: seat {s} draws more cards than it received")
        stock.append(r[ptr[s]])
        ptr[s] += 1
    for s in range(n):
        if ptr[s] != len(recv[s]):
            raise InconsistentObservationError("sedma: the cards received do not fill the draw schedule")
    stock.extend(stock_rest)
    return hands, stock
