"""Greedy Argute heuristic (``docs/rules/argute.md``): bid what the hand can likely
win, then play to make the bid.

Bid: the hand's strength (its sum of values, 15 on average) against the table, scaled
to the three tricks. Play: while more tricks are needed, put the highest value into
the trick; once the bid is made (or cannot be made), play the lowest value.
"""

from __future__ import annotations

import random

#: average sum of a 6-card hand (values 0..5, 7 copies each).
AVERAGE_HAND = 15.0


def choose_bid(hand: list[int], players: int, scale: float = 1.0) -> int:
    """Estimated tricks (0..3) for a 6-card ``hand`` of values among ``players`` seats."""
    share = sum(hand) / AVERAGE_HAND / players  # a rough share of the table's strength
    return max(0, min(3, round(3 * share * scale)))


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """Choose one of ``legal`` (``bid b`` / ``play v`` strings) for an Argute observation."""
    if len(legal) == 1:
        return legal[0]
    if legal[0].startswith("bid"):
        return f"bid {choose_bid(observation['hand'], observation['players'])}"
    values = sorted(int(t.split()[1]) for t in legal)
    me = observation["seat"]
    bid = observation["bid"] or 0
    won = observation["tricks_won"][me]
    need = bid - won
    if need <= 0:
        return f"play {values[0]}"
    # how much this trick's rivals have already put in, to avoid throwing cards away
    totals = observation["totals"]
    mine = totals[me]
    best_other = max(t for s, t in enumerate(totals) if s != me)
    left_here = observation["cards_per_player"] - sum(1 for s, _ in observation["trick"] if s == me)
    if need < 4 - observation["trick_number"] and mine + values[-1] * left_here < best_other:
        return f"play {values[0]}"  # this trick is lost anyway; keep the big cards for later
    return f"play {values[-1]}"
