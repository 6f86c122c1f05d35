"""Greedy Whiskey Poker: play the hand you hold now, improve it when the widow allows.

Strategy (docs/rules/whiskey_poker.md), by the category of the current hand
(0 = high card, 1 = one pair, 2 = two pair, 3 = trips, 4+ = straight or better):

* **Exchange phase 1 (blind)**: if the widow's content is known (we exchanged last, so
  it holds our previous hand), take it back only if it is better. Otherwise exchange a
  high-card hand, keep a pair (``pass``, or ``knock`` when passing is not allowed), and
  ``knock`` with two pair or better. After a knock: exchange a high-card hand, else ``stand``.
* **Exchange phase 2 (open)**: try every ``take W give H`` and ``take all``; play the one
  giving the strongest hand if it beats the current hand, else ``knock`` / ``stand``.
* **Betting**: bet or raise with strong hands, call with medium ones, fold weak ones
  facing a bet. Early rounds are looser (the exchanges can still improve the hand):
  round 1 calls one bet with anything; the final round wants two pair to bet and a pair
  of jacks or better to call more than one bet.
"""

from __future__ import annotations

import random

from engine.cards import parse_french
from engine.games.whiskey_poker.hands import CATEGORIES, reference_strength, strength


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_french(c)
    return m


def _category(mask: int) -> int:
    return reference_strength([c for c in range(52) if mask >> c & 1]) >> 20


def _pair_rank(mask: int) -> int:
    """Rank index (0 = 2 … 12 = A) of the highest pair in ``mask``, -1 if none."""
    counts = [0] * 13
    for c in range(52):
        if mask >> c & 1:
            counts[c % 13] += 1
    pairs = [r for r in range(13) if counts[r] >= 2]
    return max(pairs) if pairs else -1


def _known_widow(observation: dict) -> int | None:
    """The face-down widow's cards if we know them: we were the last to ``exchange``."""
    seat = observation["seat"]
    exchanges = [s for s, a in observation["actions"] if a == "exchange"]
    if not exchanges or exchanges[-1] != seat:
        return None
    received = observation["received"]
    if len(received) >= 2:
        return _mask(received[-2])
    return _mask(observation["dealt"])


def _exchange1(observation: dict, legal: list[str], hand: int) -> str:
    cat = _category(hand)
    widow = _known_widow(observation)
    if widow is not None and "exchange" in legal:
        if strength(widow) > strength(hand):
            return "exchange"
        return "knock" if "knock" in legal and cat >= 1 else ("stand" if "stand" in legal else
                                                               ("pass" if "pass" in legal else "knock"))
    if "stand" in legal:
        return "exchange" if cat == 0 else "stand"
    if cat == 0:
        return "exchange"
    if cat >= 2 or "pass" not in legal:
        return "knock"
    return "pass"


def _exchange2(observation: dict, legal: list[str], hand: int) -> str:
    best, best_power = None, strength(hand)
    widow = _mask(observation["widow"])
    for text in legal:
        if text == "take all":
            power = strength(widow)
        elif text.startswith("take "):
            _, w, _, h = text.split()
            power = strength((hand | 1 << parse_french(w)) & ~(1 << parse_french(h)))
        else:
            continue
        if power > best_power:
            best, best_power = text, power
    if best is not None:
        return best
    return "knock" if "knock" in legal else "stand"


def _bet(observation: dict, legal: list[str], hand: int) -> str:
    cat = _category(hand)
    phase = observation["phase"]
    bets = observation["bets"]
    if phase == "bet3":
        strong = cat >= 3 or (cat == 2 and bets < 2)
        medium = cat == 2 or (cat == 1 and (_pair_rank(hand) >= 9 or bets <= 1))
    else:
        strong = cat >= 2
        medium = cat == 1 or (phase == "bet1" and bets <= 1)
    if "check" in legal:
        return "bet" if strong else "check"
    if strong and "raise" in legal:
        return "raise"
    if strong or medium:
        return "call"
    return "fold"


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """One of ``legal`` for the Whiskey Poker ``observation`` (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    hand = _mask(observation["hand"])
    phase = observation["phase"]
    if phase == "exchange1":
        choice = _exchange1(observation, legal, hand)
    elif phase == "exchange2":
        choice = _exchange2(observation, legal, hand)
    else:
        choice = _bet(observation, legal, hand)
    return choice if choice in legal else legal[rng.randrange(len(legal))]


__all__ = ["act", "CATEGORIES"]
