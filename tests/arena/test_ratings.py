"""TrueSkill replay: reference values from the trueskill package, ties, teams, upsets, order."""

from __future__ import annotations

import math
import random

import pytest
import trueskill

from arena.ratings import Rater, auto_draw_probability, rate
from arena.record import MatchRecord


def rec(game, seats, ranks, deal=0, rot=0, status="ok", faults=(), lineup="x"):
    return MatchRecord.from_json({
        "match_id": f"t/{lineup}/d{deal:05d}/r{rot:02d}", "game": game, "seats": list(seats),
        "deal_index": deal, "rotation": rot, "status": status,
        "outcome": {"ranks": list(ranks), "scores": [0] * len(ranks)}, "faults": list(faults)})


def env(dp):
    return trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=dp)


def test_one_v_one_win_matches_trueskill():
    out = rate([rec("agram", ["a", "b"], [0, 1])], ["a", "b"], draw_probability=0.1)
    (ra,), (rb,) = env(0.1).rate([(env(0.1).create_rating(),), (env(0.1).create_rating(),)], ranks=[0, 1])
    assert out.ratings["a"] == pytest.approx((ra.mu, ra.sigma))
    assert out.ratings["b"] == pytest.approx((rb.mu, rb.sigma))
    assert out.ratings["a"][0] == pytest.approx(29.396, abs=1e-3)
    assert out.ratings["a"][1] == pytest.approx(7.171, abs=1e-3)


def test_one_v_one_draw_matches_trueskill():
    out = rate([rec("agram", ["a", "b"], [0, 0])], ["a", "b"], draw_probability=0.1)
    assert out.ratings["a"] == pytest.approx((25.0, 6.458), abs=1e-3)
    assert out.ratings["a"] == pytest.approx(out.ratings["b"])


def test_two_v_two_teams_match_trueskill():
    # sedma 4 players: sides {0,2} and {1,3}; mixed teams a+b vs c+d
    out = rate([rec("sedma", ["a", "c", "b", "d"], [0, 1, 0, 1])], ["a", "b", "c", "d"], draw_probability=0.1)
    e = env(0.1)
    r = e.create_rating()
    (ra, rb), (rc, rd) = e.rate([(r, r), (r, r)], ranks=[0, 1])
    assert out.ratings["a"] == pytest.approx((ra.mu, ra.sigma))
    assert out.ratings["d"] == pytest.approx((rd.mu, rd.sigma))
    assert out.ratings["a"][0] == pytest.approx(28.108, abs=1e-3)


def test_self_partnership_rates_one_entity():
    out = rate([rec("sedma", ["a", "b", "a", "b"], [0, 1, 0, 1])], ["a", "b"], draw_probability=0.1)
    assert out.ratings["a"][0] == pytest.approx(29.396, abs=1e-3)


def test_free_for_all_with_ties_matches_trueskill():
    out = rate([rec("agram", ["a", "b", "c"], [0, 1, 1])], ["a", "b", "c"], draw_probability=0.1)
    e = env(0.1)
    r = e.create_rating()
    (ra,), (rb,), (rc,) = e.rate([(r,), (r,), (r,)], ranks=[0, 1, 1])
    assert out.ratings["a"] == pytest.approx((ra.mu, ra.sigma))
    assert out.ratings["b"] == pytest.approx((rb.mu, rb.sigma))
    assert out.ratings["a"][0] == pytest.approx(30.109, abs=1e-3)


def test_extreme_upset_falls_back_to_mpmath():
    rater = Rater(0.1)
    rater.cur["weak"] = trueskill.Rating(-175.0, 1.0)
    rater.cur["strong"] = trueskill.Rating(225.0, 1.0)
    with pytest.raises(FloatingPointError):
        rater.env.rate([(rater.cur["weak"],), (rater.cur["strong"],)], ranks=[0, 1])
    moved = rater.update([["weak"], ["strong"]], [0, 1])
    assert rater.fallbacks == 1
    assert set(moved) == {"weak", "strong"}
    assert all(math.isfinite(x) for v in moved.values() for x in v)


def test_shuffled_order_gives_identical_table():
    rng = random.Random(1)
    recs = []
    for d in range(30):
        for r in range(3):
            seats = ["a", "b", "c"][r:] + ["a", "b", "c"][:r]
            ranks = [0, 1, 1] if rng.random() < 0.6 else [1, 0, 1]
            recs.append(rec("agram", seats, ranks, deal=d, rot=r, lineup="a+b+c"))
    base = rate(recs, ["a", "b", "c"])
    for seed in range(3):
        shuffled = recs[:]
        random.Random(seed).shuffle(shuffled)
        assert rate(shuffled, ["a", "b", "c"]).ratings == base.ratings


def test_auto_draw_probability_counts_tied_adjacent_pairs():
    recs = [rec("agram", ["a", "b", "c"], [0, 1, 1]), rec("agram", ["a", "b", "c"], [0, 1, 2])]
    assert auto_draw_probability(recs) == pytest.approx(1 / 4)
    assert auto_draw_probability([rec("agram", ["a", "b"], [0, 1])]) == 0.01  # clipped
    # all ties: clipped to 0.9, and trueskill does not raise
    assert auto_draw_probability([rec("agram", ["a", "b"], [0, 0])]) == 0.9


def test_forfeits_not_rated_by_default_and_only_faulty_side_moves():
    f = [{"seat": 1, "bot": "b", "class": "crash", "move": 3, "detail": ""}]
    r1 = rec("agram", ["a", "b"], [0, 1], status="forfeit", faults=f)
    assert rate([r1], ["a", "b"]).ratings["a"] == pytest.approx((25.0, 25 / 3))
    out = rate([r1], ["a", "b"], rate_forfeits=True)
    assert out.ratings["a"] == pytest.approx((25.0, 25 / 3))
    assert out.ratings["b"][0] < 25.0


def test_fixed_anchor_keeps_prior():
    out = rate([rec("agram", ["a", "b"], [0, 1])], ["a", "b"], fixed=["b"], draw_probability=0.1)
    assert out.ratings["b"] == pytest.approx((25.0, 25 / 3))
    assert out.ratings["a"][0] > 25.0


def test_aborted_never_rated():
    r = rec("agram", ["a", "b"], [0, 1], status="aborted")
    assert rate([r], ["a", "b"]).ratings["a"] == pytest.approx((25.0, 25 / 3))
