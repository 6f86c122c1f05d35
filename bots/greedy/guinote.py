"""Greedy Guiñote heuristic (``docs/rules/guinote.md``): take points when it can, else play cheaply.

* Window after a won trick: ``swap7`` when offered, then a call (trumps first), then
  ``proceed``.
* Leading: the cheapest card (non-trump before trump, then fewest points, then lowest rank).
* Last to play to a trick: every legal card is scored by the points it brings to its own
  side (trick + the card, if the side ends up winning) or gives away (if not), minus a
  small cost for spending a trump; the best score is played. So it wins points with the
  cheapest sufficient card, drops points on its partner's winning trick, and throws its
  cheapest card on a trick it cannot win.
* Otherwise: if the partner is winning, the cheapest card; if it can beat the winning
  card and the trick holds points, the cheapest winning card; else the cheapest card.
"""

from __future__ import annotations

import random

from engine.cards import SPANISH_SUITS, parse_spanish
from engine.games.guinote.actions import POINTS, POWER, SUIT
from engine.tricks import trick_winner


def _cost(card: int, trump: int) -> tuple[int, int, int]:
    """Keep-value of a card: trumps last, then points, then rank (lower = cheaper)."""
    return (SUIT[card] == trump, POINTS[card], POWER[card])


def _beats(card: int, win: int, trump: int) -> bool:
    """Whether ``card`` played now would beat the winning card ``win``."""
    if SUIT[card] == SUIT[win]:
        return POWER[card] > POWER[win]
    return SUIT[card] == trump


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """Choose one of ``legal`` for a Guiñote observation (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    trump = SPANISH_SUITS.index(observation["trump_suit"])
    if "proceed" in legal:
        if "swap7" in legal:
            return "swap7"
        calls = [a for a in legal if a.startswith("call ")]
        if calls:
            return max(calls, key=lambda a: a[-1] == observation["trump_suit"])
        return "proceed"
    cards = {parse_spanish(a.split()[1]): a for a in legal}
    trick = observation["trick"]
    if not trick:
        return cards[min(cards, key=lambda c: _cost(c, trump))]
    n = observation["players"]
    seat = observation["seat"]
    played = [parse_spanish(c) for _, c in trick]
    wi = trick_winner(played, SUIT, POWER, trump)
    win, win_seat = played[wi], trick[wi][0]
    partner_winning = n == 4 and win_seat == (seat + 2) % n
    on_table = sum(POINTS[c] for c in played)
    if len(trick) == n - 1:
        def value(c: int) -> float:
            """Playing ``c`` last: ± the trick's points (+ if our side takes it) less a trump's cost."""
            ours = partner_winning or _beats(c, win, trump)
            gain = on_table + POINTS[c]
            spend = 2 + POWER[c] / 3 if SUIT[c] == trump else 0
            return (gain if ours else -gain) - spend - POWER[c] / 100
        return cards[max(cards, key=value)]
    cheapest = min(cards, key=lambda c: _cost(c, trump))
    if partner_winning:
        return cards[cheapest]
    winners = [c for c in cards if _beats(c, win, trump)]
    if winners and on_table > 0:
        return cards[min(winners, key=lambda c: _cost(c, trump))]
    return cards[cheapest]
