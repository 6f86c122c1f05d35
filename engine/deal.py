"""Shared dealing: the shuffled deck of a hand, from (deal seed, hand index).

DESIGN "Chance": each hand's shuffle comes from ``(deal_seed, hand_index)`` and never
from an RNG stream that play consumes, so every rotation of a duplicate block sees the
same first-hand cards.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType

from engine.cards import mask_of
from engine.compiled import kernel
from engine.seeds import hand_seed


def _checked_kernel() -> ModuleType | None:
    """The typed shuffle (``engine/_shuffle.pyx``) if built and equal to ``random.Random``'s here."""
    k = kernel("engine._shuffle")
    if k is None:
        return None
    for seed, size in ((0, 52), (2**32 - 1, 40), (2**64 - 1, 102), (0x1234_5678_9ABC_DEF0, 33)):
        want = list(range(size))
        random.Random(seed).shuffle(want)
        got = list(range(size))
        k.shuffle_seeded(got, seed)
        if got != want:  # a Python whose shuffle or seeding changed: the reference runs
            return None
    return k


#: the typed shuffle, ``None`` when not built, pure Python is forced, or it disagrees with ``random``
_KERNEL = _checked_kernel()
#: the audit's deck arranger (see :func:`forced_orders`); ``None`` in play.
_ARRANGE: ContextVar[Callable[[list[int], int, int], list[int] | None] | None] = ContextVar(
    "engine_deal_arrange", default=None)


@contextmanager
def forced_orders(arrange: Callable[[list[int], int, int], list[int] | None]) -> Iterator[None]:
    """Audit hook: while active, :func:`shuffled` returns ``arrange(cards, deal_seed, hand_index)``
    instead of the seeded shuffle whenever that is not ``None``.

    The conformance suite deals explicit physical deals through each game's own dealing
    code with it (``tests/conformance.py``, exactness over physical deals); play never uses it.
    ``arrange`` must return a permutation of ``cards``.
    """
    token = _ARRANGE.set(arrange)
    try:
        yield
    finally:
        _ARRANGE.reset(token)


def shuffled(cards: Sequence[int], deal_seed: int, hand_index: int) -> list[int]:
    """``cards`` in the uniformly random order of hand ``hand_index`` of deal ``deal_seed``.

    The order is ``random.Random(hand_seed(deal_seed, hand_index)).shuffle`` of ``cards``
    (the reproducibility contract of every recorded deal); the typed kernel
    ``engine/_shuffle.pyx`` computes the same order in C when built.

    :returns: a new list (a permutation of ``cards``); deterministic in the arguments.
    """
    deck = list(cards)
    arrange = _ARRANGE.get()
    if arrange is not None:
        forced = arrange(deck, deal_seed, hand_index)
        if forced is not None:
            if sorted(forced) != sorted(deck):
                raise ValueError("forced_orders: the arranged deck is not a permutation of the cards")
            return list(forced)
    if _KERNEL is not None:
        _KERNEL.shuffle_seeded(deck, hand_seed(deal_seed, hand_index))
    else:
        random.Random(hand_seed(deal_seed, hand_index)).shuffle(deck)
    return deck


def deal_hands(deck: Sequence[int], n: int, per_hand: int, first: int = 0) -> tuple[list[list[int]], list[int]]:
    """Deal ``per_hand`` cards to each of ``n`` seats from the top of ``deck``.

    The physical dealing pattern does not matter for a uniform shuffle (rules §0.3), so
    seat ``(first + i) % n`` gets the ``i``-th block of ``per_hand`` cards.

    :returns: ``(hands, rest)``: per seat its cards, and the undealt remainder in order.
    :raises ValueError: if the deck is too small.
    """
    if n * per_hand > len(deck):
        raise ValueError(f"cannot deal {per_hand} cards to {n} seats from {len(deck)} cards")
    hands: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        seat = (first + i) % n
        hands[seat] = list(deck[i * per_hand:(i + 1) * per_hand])
    return hands, list(deck[n * per_hand:])


def deal_masks(cards: Sequence[int], deal_seed: int, hand_index: int, n: int, per_hand: int,
               first: int = 0) -> tuple[list[int], list[int]]:
    """:func:`shuffled` then :func:`deal_hands`, with each hand as a card mask (``mask_of``).

    The same deal as those two (and :func:`forced_orders` applies); the typed kernel builds
    the masks in C when the card ids fit 64 bits.

    :returns: ``(masks, rest)``: per seat the mask of its cards, and the undealt cards in order.
    :raises ValueError: if the deck is too small.
    """
    deck = shuffled(cards, deal_seed, hand_index)
    if _KERNEL is not None and n * per_hand <= len(deck):
        try:
            return _KERNEL.block_masks(deck, n, per_hand, first), deck[n * per_hand:]
        except (ValueError, OverflowError, TypeError):  # ids beyond 63: the general path below
            pass
    hands, rest = deal_hands(deck, n, per_hand, first)
    return [mask_of(h) for h in hands], rest
