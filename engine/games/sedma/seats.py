"""Sedma's per-seat receipt model (``docs/rules/sedma.md`` §2.4, ruling CA-3).

A seat's timeline is its receipts (4 dealt, then its draws in the public schedule) and
its plays; :class:`SeatModel` counts the rank sequences over its receipt slots that never
play a rank not held (``L_s``), weighs each final holding (``g_s``) and draws a uniform
receipt pattern for one. The information set (:mod:`engine.games.sedma.infoset`) combines
the seats.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from math import factorial

from engine.errors import InconsistentObservationError
from engine.sampling import randbelow

#: timeline event: the seat receives a card (deal or draw); any other event is the rank played
RECV = -1


def vectors(limits: list[int], total_max: int):
    """Every vector ``v`` with ``0 <= v_i <= limits[i]`` and ``sum(v) <= total_max``."""
    m = len(limits)
    cur = [0] * m

    def rec(i: int, left: int):
        """Yield every completion of ``cur[i:]`` within ``limits`` whose sum is at most ``left``."""
        if i == m:
            yield tuple(cur)
            return
        for k in range(min(limits[i], left) + 1):
            cur[i] = k
            yield from rec(i + 1, left - k)
        cur[i] = 0

    yield from rec(0, total_max)


class SeatModel:
    """One other seat's receipts and plays: the programme ``L_s`` and the weights ``g_s``
    (:mod:`engine.games.sedma.infoset` docstring).

    :raises InconsistentObservationError: if its plays cannot come from its receipts, or
        its hand size does not fit them.
    """

    __slots__ = ("seat", "ranks", "events", "forward", "weights", "size", "pos", "receipts")

    def __init__(self, seat: int, events: list[int], size: int, unseen_by_rank: list[int]) -> None:
        self.seat = seat
        self.size = size
        self.events = events
        ranks = sorted({e for e in events if e != RECV})
        self.ranks = ranks
        pos = {x: i for i, x in enumerate(ranks)}
        self.pos = pos
        self.receipts = events.count(RECV)
        m = len(ranks)
        total_plays = [0] * m
        for e in events:
            if e != RECV:
                total_plays[pos[e]] += 1
        # a seat receives at most (its plays + the unseen copies) cards of a played rank
        cap = [total_plays[i] + unseen_by_rank[x] for i, x in enumerate(ranks)]
        played = [0] * m
        cur: dict[tuple[int, ...], int] = {(0,) * m: 1}
        forward = [cur]
        for e in events:
            nxt: dict[tuple[int, ...], int] = {}
            if e == RECV:
                for held, w in cur.items():
                    nxt[held] = nxt.get(held, 0) + w
                    for i in range(m):
                        if held[i] + played[i] < cap[i]:
                            h = held[:i] + (held[i] + 1,) + held[i + 1:]
                            nxt[h] = nxt.get(h, 0) + w
            else:
                i = pos[e]
                for held, w in cur.items():
                    if held[i]:
                        h = held[:i] + (held[i] - 1,) + held[i + 1:]
                        nxt[h] = nxt.get(h, 0) + w
                played[i] += 1
            if not nxt:
                raise InconsistentObservationError(
                    f"sedma: seat {seat}'s plays cannot come from the cards it received")
            cur = nxt
            forward.append(cur)
        self.forward = forward
        weights = {}
        for held, n_seq in cur.items():
            free = size - sum(held)
            if free < 0:
                continue
            w = n_seq * factorial(free)
            for k in held:
                w *= factorial(k)
            weights[held] = w
        if not weights:
            raise InconsistentObservationError(f"sedma: seat {seat}'s hand size does not fit its plays")
        self.weights = weights

    def pattern(self, held: tuple[int, ...], rng: random.Random) -> list[int]:
        """A uniform receipt pattern ending with ``held``: per receipt the rank index or -1 (∗)."""
        events = self.events
        ranks = self.ranks
        if not ranks:
            return [-1] * len(events)
        forward = self.forward
        m = len(ranks)
        out: list[int] = []
        cur = held
        for t in range(len(events) - 1, -1, -1):
            e = events[t]
            prev_tab = forward[t]
            if e != RECV:
                i = ranks.index(e)
                cur = cur[:i] + (cur[i] + 1,) + cur[i + 1:]
                continue
            opts: list[tuple[int, tuple[int, ...]]] = []
            cum: list[int] = []
            acc = 0
            w = prev_tab.get(cur)
            if w:
                acc += w
                cum.append(acc)
                opts.append((-1, cur))
            for i in range(m):
                if cur[i]:
                    p = cur[:i] + (cur[i] - 1,) + cur[i + 1:]
                    w = prev_tab.get(p)
                    if w:  # every forward state respects the cap, so this receipt was allowed
                        acc += w
                        cum.append(acc)
                        opts.append((i, p))
            k = 0 if len(opts) == 1 else bisect_right(cum, randbelow(rng, acc))
            sym, cur = opts[k]
            out.append(sym)
        out.reverse()
        return out
