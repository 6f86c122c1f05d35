"""The lines under the leaderboard (arena.render.notes_lines)."""

from __future__ import annotations

from types import SimpleNamespace

from arena.render import notes_lines


def _st(meta):
    return SimpleNamespace(strength=None, rows=[], efficiency={"factor": float("nan"), "blocks": 0},
                           mixing={}, meta=meta)


def test_fixed_ratings_are_explained_under_the_table():
    """New-user trial (session 8): a gauntlet's fixed panel showed μ 25.00 σ 8.33 (the prior) next
    to strengths +107 and +4, with no word on why."""
    lines = notes_lines(_st({"ratings": {"fixed": ["random", "greedy"]}}))
    assert any(x.startswith("Fixed TrueSkill ratings (random, greedy)") for x in lines), lines
    assert not any("Fixed TrueSkill" in x for x in notes_lines(_st({"ratings": {"fixed": []}})))
