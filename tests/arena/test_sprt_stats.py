"""The GSPRT of `arena sprt` on synthetic streams with known block-outcome distributions.

Error rates are checked by simulation with fixed seeds: the observed count of wrong verdicts
must not be improbable (p >= 0.001, binomial) under the nominal rate. Average sample numbers
are printed (`pytest -s`) and quoted in docs/regression.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binom

from arena import gsprt
from arena.gsprt import GSPRT, NELO_PER_T
from arena.record import MatchRecord
from arena.schedule import SprtDesign as Design
from arena.sprt.blocks import BlockBook
from arena.sprt.simulate import at_nelo, simulate

PENTA = np.array([0, 0.25, 0.5, 0.75, 1.0])
PENTA_BASE = np.array([0.04, 0.21, 0.5, 0.2, 0.05])
# duplicate replacement, 3 players: rewards {0, 1/2, 1} averaged over 3 seats, candidate − baseline
V3 = np.arange(13) / 12
B3 = np.exp(-((V3 - 0.5) / 0.14) ** 2) * (1 + 0.3 * (V3 > 0.5))
# 4 players: rewards {0, 1/3, 2/3, 1} averaged over 4 seats
V4 = np.arange(25) / 24
B4 = np.exp(-np.abs(V4 - 0.5) / 0.08) + 0.02


def _not_worse(wrong: int, runs: int, rate: float) -> bool:
    """Observed ``wrong`` verdicts are compatible with a true rate <= ``rate`` (one-sided, p >= 0.001)."""
    return binom.sf(wrong - 1, runs, rate) >= 0.001


def _slsqp(w, values, t):
    x = values
    cons = [{"type": "eq", "fun": lambda q: q.sum() - 1},
            {"type": "eq", "fun": lambda q: (q * x).sum() - 0.5 - t * np.sqrt((q * (x - (q * x).sum()) ** 2).sum())}]
    best = None
    for start in (w, np.full(len(w), 1 / len(w))):
        r = minimize(lambda q: -(w * np.log(np.maximum(q, 1e-300))).sum(), start, constraints=cons,
                     bounds=[(1e-12, 1)] * len(w), method="SLSQP", options={"ftol": 1e-15, "maxiter": 1000})
        if r.success and (best is None or r.fun < best.fun):
            best = r
    return best


@pytest.mark.parametrize("row", [[10, 20, 40, 25, 5], [0, 0, 0, 0, 10], [0, 0, 8, 0, 0], [3, 0, 0, 0, 0],
                                 [0, 1, 0, 0, 0], [1, 0, 0, 0, 1], [7, 3, 0, 9, 2]])
@pytest.mark.parametrize("t", [0.17, 0.05, -0.1])
def test_mle_matches_a_general_optimiser(row, t):
    w = gsprt.weights(np.array([row], dtype=float), PENTA)
    p = gsprt.mle(PENTA, w, t=t)[0]
    mu = (p * PENTA).sum()
    sd = np.sqrt((p * (PENTA - mu) ** 2).sum())
    assert abs((mu - 0.5) / sd - t) < 1e-8  # the constraint holds
    ref = _slsqp(w[0], PENTA, t)
    live = w[0] > 0
    ours = -(w[0][live] * np.log(p[live])).sum()
    assert ours <= ref.fun + 1e-9  # at least as likely as SLSQP's optimum
    assert np.allclose(p, ref.x, atol=2e-3)


def test_mean_constraint_and_projection():
    w = gsprt.weights(np.array([[5, 10, 20, 10, 5.0]]), PENTA)
    p = gsprt.mle(PENTA, w, mean=0.55)[0]
    assert abs((p * PENTA).sum() - 0.55) < 1e-10 and abs(p.sum() - 1) < 1e-10
    for values, base, ne in ((PENTA, PENTA_BASE, 30), (V3, B3, -20), (V4, B4, 60)):
        q = at_nelo(values, base, ne)
        mu = (q * values).sum()
        assert abs((mu - 0.5) / np.sqrt((q * (values - mu) ** 2).sum()) * NELO_PER_T - ne) < 1e-6


def test_all_draw_sample_is_weak_evidence():
    """Today's complaint: 8 blocks of exactly 0.5 (Argute) accepted H0. In normalized Elo they do not."""
    t = GSPRT(0, 40)
    for _ in range(8):
        assert t.add(0.5) is None
    assert t.lower < t.llr() < 0
    # ... while a candidate that wins every block is accepted within a bounded number of blocks
    t = GSPRT(0, 40)
    n = next(i for i in range(1, 200) if t.add(1.0) == "H1")
    assert 10 <= n <= 60


def test_verdict_is_final_and_bad_scores_refused():
    t = GSPRT(0, 200)
    while t.add(1.0) is None:
        pass
    n = t.stopped_at
    assert t.add(0.0) == "H1" and t.stopped_at == n and t.n == n
    with pytest.raises(ValueError):
        t.add(1.5)
    with pytest.raises(ValueError):
        GSPRT(10, 0)


CASES = {"2p-pentanomial": (PENTA, PENTA_BASE), "3p-replacement": (V3, B3), "4p-replacement": (V4, B4)}


def _check(values, base, h0, h1, runs, max_blocks, seed, alpha=0.05, beta=0.05, undecided=0.01):
    at0 = simulate(values, at_nelo(values, base, h0), h0, h1, alpha, beta, runs=runs, max_blocks=max_blocks,
                   seed=seed)
    at1 = simulate(values, at_nelo(values, base, h1), h0, h1, alpha, beta, runs=runs, max_blocks=max_blocks,
                   seed=seed + 1)
    fp, fn = int((at0.verdicts == "H1").sum()), int((at1.verdicts == "H0").sum())
    print(f"\n  K={len(values)} nElo [{h0}, {h1}] runs {runs}: false positives {fp / runs:.3f} (alpha {alpha}), "
          f"false negatives {fn / runs:.3f} (beta {beta}); ASN at H0 {at0.asn:.1f}, at H1 {at1.asn:.1f} blocks; "
          f"undecided {(at0.verdicts == '').mean() + (at1.verdicts == '').mean():.3f}")
    assert _not_worse(fp, runs, alpha), f"false-positive rate {fp / runs} above alpha {alpha}"
    assert _not_worse(fn, runs, beta), f"false-negative rate {fn / runs} above beta {beta}"
    # the test decides: almost nobody is left at 5-8x the expected length
    assert (at0.verdicts == "").mean() <= undecided and (at1.verdicts == "").mean() <= undecided
    return at0, at1


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.slow] if c != "2p-pentanomial" else [])
                                  for c in CASES])
def test_error_rates_quick(case):
    """2 players: a few seconds; the 13- and 25-value sets take ~10-30 s on a loaded machine (slow)."""
    values, base = CASES[case]
    _check(values, base, 0, 150, runs=200, max_blocks=160, seed=11, undecided=0.03)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_error_rates_default_bounds(case):
    values, base = CASES[case]
    _check(values, base, 0, 40, runs=1000, max_blocks=3000, seed=5)


def _rec(d, key, r, seats, ranks, faults=()):
    return MatchRecord.from_json({"match_id": f"t/{key}/d{d:05d}/r{r:02d}", "deal_index": d, "rotation": r,
                                  "seats": list(seats), "game": "agram", "status": "ok",
                                  "outcome": {"ranks": ranks}, "faults": list(faults)})


def test_blocks_are_fed_in_block_order_whatever_the_arrival_order():
    design = Design("cand", "base")
    rng = np.random.default_rng(3)
    recs = []
    for d in range(40):
        for key, seats, r in design.seatings(3):
            recs.append(_rec(d, key, r, seats, [int(x) for x in rng.permutation(3)]))
    ordered = BlockBook(design, 3, 40, GSPRT(0, 400))
    for rec in recs:
        ordered.add(rec)
    shuffled = BlockBook(design, 3, 40, GSPRT(0, 400))
    perm = rng.permutation(len(recs))
    fed_before_last_block_complete = []
    for i in perm:
        shuffled.add(recs[i])
        fed_before_last_block_complete.append(shuffled.next)
    assert shuffled.scores == ordered.scores and len(ordered.scores) == 40
    assert shuffled.test.last_llr == ordered.test.last_llr
    assert shuffled.test.stopped_at == ordered.test.stopped_at


def test_block_score_and_faults():
    design = Design("cand", "base")
    book = BlockBook(design, 3, 2, GSPRT(0, 40))
    for key, seats, r in design.seatings(3):  # candidate always first, baseline always last
        ranks = [2, 2, 2]
        ranks[r] = 0 if key == "cand" else 2
        if key == "base":
            ranks = [0, 0, 0]
            ranks[r] = 2
        book.add(_rec(0, key, r, seats, ranks))
    assert book.scores == [1.0]
    for key, seats, r in design.seatings(3):  # block 1: the candidate wins but faulted once: lost
        faults = [{"seat": 1, "bot": "cand", "class": "timeout"}] if key == "cand" and r == 1 else []
        book.add(_rec(1, key, r, seats, [0, 1, 2], faults))
    assert book.scores == [1.0, 0.0] and book.lost == 1 and book.faults == {"cand": 1}
    assert book.lost_at == [False, True]  # per block: the result counts those of the blocks the test used


def test_the_note_for_blocks_that_all_scored_the_same_says_why():
    """New-user trial (session 8): a candidate that crashed in every block got "the two versions
    played alike" — the note now tells a crash from a draw and from a clean sweep."""
    from arena.sprt.render import _same_blocks_note

    assert "lost every block to its own faults" in _same_blocks_note(25, 25, 0.0)
    assert "played alike" in _same_blocks_note(0, 25, 0.5)
    assert "candidate lost every block" in _same_blocks_note(3, 25, 0.0)
    assert "candidate won every block" in _same_blocks_note(0, 25, 1.0)


@pytest.mark.parametrize("row", [[0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 5, 3, 1, 0, 0, 0, 0, 0],
                                 [0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0]])
def test_sparse_samples_get_the_best_of_several_maxima(row):
    """A few blocks on 13 values: the constrained likelihood has several local maxima."""
    t = 150 / NELO_PER_T
    w = gsprt.weights(np.array([row], dtype=float), V3)[0]
    p = gsprt.mle(V3, w[None], t=t)[0]
    live = w > 0
    ours = -(w[live] * np.log(p[live])).sum()
    rng = np.random.default_rng(0)
    x = V3
    cons = [{"type": "eq", "fun": lambda q: q.sum() - 1},
            {"type": "eq", "fun": lambda q: (q * x).sum() - 0.5 - t * np.sqrt((q * (x - (q * x).sum()) ** 2).sum())}]
    best = np.inf
    for _ in range(6):
        start = rng.dirichlet(np.ones(len(x)))
        r = minimize(lambda q: -(w * np.log(np.maximum(q, 1e-300))).sum(), start, constraints=cons,
                     bounds=[(1e-12, 1)] * len(x), method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
        if r.success:
            best = min(best, r.fun)
    assert np.isfinite(best) and ours <= best + 1e-7


def test_chunked_simulation_equals_block_by_block():
    p = at_nelo(PENTA, PENTA_BASE, 60)
    a = simulate(PENTA, p, 0, 150, runs=60, max_blocks=120, seed=4, chunk=1)
    b = simulate(PENTA, p, 0, 150, runs=60, max_blocks=120, seed=4, chunk=64)
    assert (a.verdicts == b.verdicts).all() and (a.blocks == b.blocks).all()
    # and equals the one-stream GSPRT fed the same draws
    rng = np.random.default_rng(4)
    draws = rng.choice(5, size=(60, 120), p=p / p.sum())
    for i in range(5):
        t = GSPRT(0, 150)
        for j in range(120):
            if t.add(float(PENTA[draws[i, j]])):
                break
        assert (t.verdict or "") == a.verdicts[i] and (t.stopped_at or 120) == a.blocks[i]
