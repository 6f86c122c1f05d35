"""Greedy Cuckoo: block with a king, otherwise trade when a better card is likely.

Strategy (docs/rules/cuckoo.md §3.3):

* ``RESPOND``: block whenever holding a king (accepting one is never better, C-A2).
* A non-dealer's turn: the neighbour's card has not moved before our turn, so it is never
  known; swap when more of the unseen cards are higher than ours than lower (kings
  excluded: a king-holder would block, leaving us unchanged). Never give a king away.
* The dealer: keep if some other player is known to hold a lower card (we are safe);
  otherwise cut when more unseen cards are higher than ours than lower (kings count as
  neither: a cut king is put back).
"""

from __future__ import annotations

import random

from engine.cards import parse_french
from engine.games.cuckoo.actions import VALUE


def _value(code: str) -> int:
    return VALUE[parse_french(code)]


def _odds(observation: dict, mine: int) -> tuple[int, int]:
    """``(higher, lower)``: unseen non-king cards above and below value ``mine``."""
    seen = set()
    for code in observation["known"]:
        if code is not None:
            seen.add(parse_french(code))
    if observation.get("dealt_card") is not None:
        seen.add(parse_french(observation["dealt_card"]))
    higher = lower = 0
    for c in range(52):
        if c in seen:
            continue
        v = VALUE[c]
        if v == 13:
            continue
        if v > mine:
            higher += 1
        elif v < mine:
            lower += 1
    return higher, lower


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """One of ``legal`` for the Cuckoo ``observation`` (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    if "block" in legal:
        return "block"
    mine = _value(observation["card"])
    seat = observation["seat"]
    known = observation["known"]
    if mine == 13:
        return "keep"
    if "cut" in legal:
        others = [_value(code) for s, code in enumerate(known) if code is not None and s != seat]
        if any(v < mine for v in others):
            return "keep"
        higher, lower = _odds(observation, mine)
        return "cut" if higher > lower else "keep"
    # a non-dealer's turn: the neighbour's card has not moved yet this hand, so it is
    # unknown; judge by the unseen cards
    higher, lower = _odds(observation, mine)
    return "swap" if higher > lower else "keep"
