"""Greedy Sedma heuristic (``docs/rules/sedma.md``): take points when it can, else play cheaply.

* Leader deciding (``continue x`` / ``end``): end when its own side is winning or the
  trick holds no A/T; otherwise continue, with the starter's rank if that is a plain
  card, else with a 7.
* Leading: a plain card (not A, T or 7), preferring a rank held twice or more (so the
  trick can be continued); then a 7; an A or T only when nothing else is left.
* Following: when the other side is winning a trick with points (or a plain card of the
  starter's rank is held), beat it with the starter's rank, else with a 7; when its own
  side is winning and the leader is on its side and it is the last to play in the round,
  add an A or T; otherwise the cheapest card (plain before 7 before A/T).
"""

from __future__ import annotations

import random

POINT = ("T", "A")
SEVEN = "7"


def _cost(rank: str) -> int:
    """How much a card is worth keeping: plain 0, seven 1, A/T 2."""
    return 2 if rank in POINT else 1 if rank == SEVEN else 0


def _side(teams: list[list[int]], seat: int) -> int:
    for i, t in enumerate(teams):
        if seat in t:
            return i
    return seat


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """Choose one of ``legal`` for a Sedma observation (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    seat = observation["seat"]
    teams = observation["teams"]
    n = observation["players"]
    me = _side(teams, seat)
    trick = observation["trick"]
    cards = trick["cards"]
    hand = observation["hand"]
    trick_points = 10 * sum(1 for _, r in cards if r in POINT)
    starter = trick["starter"]
    winning = trick["winning"]
    ours = winning is not None and _side(teams, winning) == me

    if "end" in legal:  # leader's decision after a round
        if ours or trick_points == 0:
            return "end"
        conts = [a for a in legal if a.startswith("continue ")]
        plain = f"continue {starter}"
        if plain in conts and _cost(starter) == 0:
            return plain
        if f"continue {SEVEN}" in conts:
            return f"continue {SEVEN}"
        return conts[0] if conts else "end"

    plays = {a.split()[1]: a for a in legal}
    if not cards:  # leading a trick
        def lead_key(r: str) -> tuple[int, int, float]:
            """Lead order of rank ``r``: cheapest first, then most copies held, then random."""
            return (_cost(r), -hand.count(r), rng.random())
        return plays[min(plays, key=lead_key)]

    cheapest = min(plays, key=lambda r: (_cost(r), rng.random()))
    if not ours:
        beaters = [r for r in plays if r == starter or r == SEVEN]
        if beaters:
            best = min(beaters, key=lambda r: (_cost(r), r != starter))
            if trick_points > 0 or _cost(best) == 0:
                return plays[best]
        return plays[cheapest]
    leader = trick["leader"]
    last_in_round = (seat + 1) % n == leader
    if _side(teams, leader) == me and last_in_round:
        pts = [r for r in plays if r in POINT]
        if pts:
            return plays[pts[0]]
    return plays[cheapest]
