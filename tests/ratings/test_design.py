"""The ``sample`` lineup design (arena.schedule.mixing_sample): mixing, balance, reproducibility."""

from __future__ import annotations

import itertools
from collections import Counter

from arena.config import LineupsSample
from arena.schedule import design_mixing, lineups_for, mixing_sample

BOTS = [f"student{i:02d}" for i in range(60)]


def test_sixty_bot_class_meets_many_distinct_opponents():
    """The issue's class (60 bots, 3 players, ``per_bot: 12``): 240 lineups, every bot in
    exactly 12, and each meets at least 22 of the 24 opponents its 12 lineups can hold
    (the previous design met 6–7; a random balanced design about 20)."""
    lus = mixing_sample(BOTS, 12, 3, "salt")
    assert len(lus) == 240 == len(set(lus))
    assert set(Counter(b for lu in lus for b in lu).values()) == {12}
    mix = design_mixing(lus, BOTS)
    assert mix["min"] >= 22 and mix["median"] == 24 and mix["possible"] == 59


def test_reproducible_from_the_salt():
    assert mixing_sample(BOTS, 6, 4, "a") == mixing_sample(BOTS, 6, 4, "a")
    assert mixing_sample(BOTS, 6, 4, "a") != mixing_sample(BOTS, 6, 4, "b")


def test_uneven_budget_stays_balanced_and_small_fields_play_everything():
    """Appearances differ by at most one when ``per_bot · n`` is not a multiple of the
    lineup size; a budget that covers every lineup plays every lineup once."""
    bots = [f"b{i}" for i in range(7)]
    lus = mixing_sample(bots, 2, 3, "x")
    counts = Counter(b for lu in lus for b in lu)
    assert len(lus) == 5 and max(counts.values()) - min(counts.values()) <= 1 and set(counts) == set(bots)
    everything = [tuple(c) for c in itertools.combinations(bots[:4], 3)]
    assert mixing_sample(bots[:4], 12, 3, "x") == everything


def test_schedule_rotations_balance_the_seats():
    """Through ``lineups_for``: cyclic rotations put every bot in every seat equally often."""
    lus = lineups_for(BOTS[:30], 3, [[0], [1], [2]], "cyclic", LineupsSample(sample={"per_bot": 5}), salt="s")
    seats = Counter((b, s) for lu in lus for seating in lu.seatings for s, b in enumerate(seating))
    per_bot = Counter(b for lu in lus for b in lu.bots)
    assert all(seats[(b, s)] == per_bot[b] for b in per_bot for s in range(3))
    mix = design_mixing(lus, BOTS[:30])
    assert mix["min"] >= 8 and mix["median"] == 10  # 5 lineups of 3 hold at most 10 opponents
