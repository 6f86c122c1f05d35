"""What ``report.html`` embeds: per-bot aggregates and a downsampled rating history, never per match.

The page must not grow with the number of matches (issue 22): a 1,000-bot field with a million
matches embeds

* one row of numbers per bot (the leaderboard and reliability columns);
* the TrueSkill history sampled at :data:`HISTORY_POINTS` match numbers, μ and σ as
  little-endian int16 in hundredths (``round(100 μ)``), base64 — ``2 · 2 · bots · points`` bytes;
* the crosstable as one byte per ordered pair (score × 250, 255 = never met), base64, for the
  first :data:`MATRIX_BOTS` bots of the table; match counts only for :data:`COUNT_BOTS` or fewer.

So the payload is ``O(bots²)`` with a fixed cap, independent of the match count.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.ratings import HISTORY_POINTS, sample_points  # noqa: F401  (the report's sampling)

#: The crosstable bytes cover at most this many bots (the table's first ones).
MATRIX_BOTS = 1000
#: Match counts per cell are embedded for fields up to this size (cell labels show them).
COUNT_BOTS = 30
#: Score byte scale: a score ``s`` in [0, 1] is stored as ``round(250 s)``; 255 = no match.
SCORE_SCALE = 250
NO_MATCH = 255


def rating_series(history: Sequence[dict[str, tuple[float, float]]], bots: Sequence[str],
                  prior: tuple[float, float] = (25.0, 25.0 / 3)) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each bot's (μ, σ) after every rated match of the replay, starting at the prior.

    :param history: :attr:`arena.ratings.RatingResult.history` — per rated match, the bots it moved.
    :returns: ``bot -> (mu, sigma)`` arrays of length ``len(history) + 1`` (index 0 is the
        prior; a bot that did not move in a match keeps its previous value).
    """
    idx = np.arange(len(history) + 1)
    mu, sg = sampled_history(history, bots, prior, idx)
    return {b: (mu[i], sg[i]) for i, b in enumerate(bots)}


def sampled_history(history: Sequence[dict[str, tuple[float, float]]], bots: Sequence[str],
                    prior: tuple[float, float], at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ and σ of every bot after match number ``at[k]`` (0 = before the first rated match).

    :returns: two float arrays of shape ``(len(bots), len(at))``; one pass over ``history``.
    """
    pos = {b: i for i, b in enumerate(bots)}
    cur_mu = np.full(len(bots), prior[0])
    cur_sg = np.full(len(bots), prior[1])
    mu = np.empty((len(bots), len(at)))
    sg = np.empty((len(bots), len(at)))
    k = 0
    for i in range(len(history) + 1):
        if i:
            for b, (m, s) in history[i - 1].items():
                j = pos.get(b)
                if j is not None:
                    cur_mu[j], cur_sg[j] = m, s
        while k < len(at) and at[k] == i:
            mu[:, k], sg[:, k] = cur_mu, cur_sg
            k += 1
    return mu, sg


def crosstable_matrix(cross: dict[str, dict[str, dict[str, float]]], order: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The crosstable as arrays in ``order``: scores (``nan`` where no match) and match counts."""
    pos = {b: i for i, b in enumerate(order)}
    n = len(order)
    score = np.full((n, n), np.nan)
    matches = np.zeros((n, n), dtype=np.int64)
    for a, row in cross.items():
        i = pos.get(a)
        if i is None:
            continue
        for b, c in row.items():
            j = pos.get(b)
            if j is not None and j != i:
                score[i, j] = c["score"]
                matches[i, j] = c["matches"]
    return score, matches


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(a.tobytes()).decode("ascii")


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        return None if (math.isnan(v) or math.isinf(v)) else round(v, 4)
    if isinstance(v, (int, str, bool)) or v is None:
        return v
    if isinstance(v, np.generic):
        return _clean(v.item())
    return None


def bot_rows(rows: Sequence[dict[str, Any]], rel: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per bot, the scalar columns of its leaderboard row and its reliability numbers (JSON-ready:
    floats rounded to 4 places, nan/inf as None; non-scalar fields left out)."""
    out = []
    for r in rows:
        d = {k: _clean(v) for k, v in r.items() if _clean(v) is not None or v is None}
        x = rel.get(r["bot"]) or {}
        for k in ("moves", "p50_ms", "p99_ms"):
            if k in x:
                d[k] = _clean(x[k])
        for c, n in (x.get("faults") or {}).items():
            d[f"fault_{c}"] = n
        out.append(d)
    return out


def payload(rows: Sequence[dict[str, Any]], rel: dict[str, dict[str, Any]], history: Sequence[dict[str, tuple[float, float]]],
            cross: dict[str, dict[str, dict[str, float]]], prior: tuple[float, float],
            links: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON object the page's script reads (bounded; see the module docstring).

    :returns: ``{"bots", "rows", "history": {"x", "mu", "sigma"}, "cross": {"n", "score", "count"},
        "links"}`` — ``mu``/``sigma``/``score``/``count`` base64 strings (int16 / uint8 / uint16).
    """
    order = [r["bot"] for r in rows]
    at = sample_points(len(history))
    mu, sg = sampled_history(history, order, prior, at)
    q = lambda a: np.clip(np.round(a * 100), -32767, 32767).astype("<i2")  # noqa: E731
    m = order[:MATRIX_BOTS]
    score, matches = crosstable_matrix(cross, m)
    cells = np.where(np.isnan(score), NO_MATCH, np.round(np.nan_to_num(score) * SCORE_SCALE)).astype(np.uint8)
    cross_out: dict[str, Any] = {"n": len(m), "score": _b64(cells), "scale": SCORE_SCALE, "none": NO_MATCH}
    if len(m) <= COUNT_BOTS:
        cross_out["count"] = _b64(np.clip(matches, 0, 65535).astype("<u2"))
    return {"bots": order, "rows": bot_rows(rows, rel),
            "history": {"x": [int(v) for v in at], "mu": _b64(q(mu)), "sigma": _b64(q(sg)), "rated": len(history)},
            "cross": cross_out, "links": links or {}}


__all__ = ["COUNT_BOTS", "HISTORY_POINTS", "MATRIX_BOTS", "NO_MATCH", "SCORE_SCALE", "bot_rows", "crosstable_matrix",
           "payload", "rating_series", "sample_points", "sampled_history"]
