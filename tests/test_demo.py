"""The quick demo of tournaments.yaml: what a new user sees after `arena run`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from arena import config as cfg
from arena import stats
from arena.driver import run_tournament
from arena.journal import read_records
from arena.results import standings

ROOT = Path(__file__).resolve().parent.parent


def pairwise_blocks(records, a: str, b: str) -> dict:
    """Per duplicate block (lineup, deal): a's scores against b (1 / 0.5 / 0 by their sides' ranks)."""
    blocks = defaultdict(list)
    for rec in records:
        sides = rec.sides
        ranks = rec.side_ranks
        ia = next((i for i, s in enumerate(sides) if a in s), None)
        ib = next((i for i, s in enumerate(sides) if b in s), None)
        if ia is None or ib is None or ia == ib:
            continue
        s = 1.0 if ranks[ia] < ranks[ib] else 0.5 if ranks[ia] == ranks[ib] else 0.0
        blocks[(rec.lineup, rec.deal_index)].append(s)
    return blocks


@pytest.mark.ray
def test_demo_separates_greedy_from_random(ray_session, tmp_path):
    (demo,) = [t for t in cfg.load(ROOT / "tournaments.yaml") if t.model.default]
    assert demo.model.game == "agram" and demo.model.players == 3
    assert {"random", "greedy"} <= set(demo.model.bots)
    # a fixed public salt: the same deals every run, so the test is deterministic (every demo bot
    # is deterministic given its seed); `arena run` itself draws a secret salt per results folder
    demo.model = demo.model.model_copy(update={"salt": "cardarena-demo-test-v1"})
    summary = run_tournament(demo, tmp_path)
    records = read_records(summary.folder)
    assert len(records) == summary.total == summary.played
    assert all(r.status == "ok" for r in records)
    st = standings(summary.folder)
    order = [r["bot"] for r in st.rows]
    assert order.index("greedy") < order.index("random")
    mean, low, high = stats.bootstrap_ci(pairwise_blocks(records, "greedy", "random"), seed=1)
    assert low > 0.5, f"greedy vs random {mean:.3f} [{low:.3f}, {high:.3f}] does not exclude a tie"
