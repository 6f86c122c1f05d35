"""The batch fit's input in compact form (arena/strength.py → arena/batchfit.build_design): one
``(R, K, size)`` int32 array instead of nested lists gives the same design and fit bit for bit,
and mixed shapes (forfeits rated as two-side results among three-side ones) still fit."""

from __future__ import annotations

import random

import numpy as np

from arena import batchfit
from arena.record import MatchRecord
from arena.strength import _contests, strength


def _same_design(a: batchfit.Design, b: batchfit.Design) -> None:
    assert (a.x != b.x).nnz == 0 and a.x.shape == b.x.shape
    assert np.array_equal(a.pad, b.pad) and np.array_equal(a.chosen, b.chosen) and np.array_equal(a.block, b.block)
    assert (a.width, a.n_bots, a.max_tie, a.n_blocks) == (b.width, b.n_bots, b.max_tie, b.n_blocks)


def test_an_array_of_sides_builds_the_same_design_as_nested_lists():
    rng = random.Random(5)
    sides = [[[rng.randrange(30), rng.randrange(30)] for _ in range(3)] for _ in range(400)]
    ranks = [[rng.randrange(3) for _ in range(3)] for _ in range(400)]  # ties included
    blocks = [i // 3 for i in range(400)]
    nested = batchfit.build_design(sides, ranks, blocks, 30)
    dense = batchfit.build_design(np.array(sides, dtype=np.int32), [tuple(r) for r in ranks], blocks, 30)
    _same_design(nested, dense)
    assert dense.max_tie == 3


def _record(i: int, seats: list[str], ranks: list[int], faults: list | None = None) -> MatchRecord:
    return MatchRecord.from_json({"match_id": f"t/{'+'.join(sorted(seats))}/d{i // 3:05d}/r{i % 3:02d}",
                                  "game": "sedma", "seats": seats, "deal_index": i // 3, "rotation": i % 3,
                                  "status": "forfeit" if faults else "ok", "faults": faults or [],
                                  "outcome": {"ranks": ranks, "scores": [0.0] * len(seats)}})


def test_mixed_shapes_fit_as_the_nested_lists_did():
    rng = random.Random(9)
    bots = [f"b{j}" for j in range(8)]
    recs = []
    for i in range(300):
        seats = rng.sample(bots, 3)
        if i % 17 == 0:  # a forfeit: the faulty side loses to each other side (two-side results)
            recs.append(_record(i, seats, [1, 0, 0], [{"seat": 0, "bot": seats[0], "class": "timeout"}]))
        else:
            recs.append(_record(i, seats, rng.sample(range(3), 3)))
    got = strength(recs, bots, rate_forfeits=True, n_boot=20)
    index = {b: i for i, b in enumerate(bots)}
    blocks: dict = {}
    sides_i, ranks, block_i = [], [], []
    for rec in sorted(recs, key=MatchRecord.replay_key):  # the nested-list input, as before
        for sides, rk in _contests(rec, True):
            sides_i.append([[index[b] for b in s] for s in sides])
            ranks.append(list(rk))
            block_i.append(blocks.setdefault((rec.lineup, rec.deal_index), len(blocks)))
    assert {len(s) for s in sides_i} == {2, 3}
    ref = batchfit.fit(batchfit.build_design(sides_i, ranks, block_i, len(bots)), n_boot=20)
    assert np.array_equal(got.fit.theta, ref.theta) and got.results == len(ranks)
