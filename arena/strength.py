"""The batch fit of a tournament (arena.batchfit) over its rated records: what orders the table.

One estimate gives the table's order, each bot's strength with its 95% interval, its rank
interval ("2–3": the bots cannot be separated) and P(>next), so they always agree
(docs/ratings.md). The evidence is the same as TrueSkill's (:func:`arena.ratings.rate`):

* ``ok`` records: the sides by their ranks (teams: a side's strength is the sum of its bots');
* forfeits, ``disabled`` records included, only with ``rate_forfeits``: each side with a
  faulty seat loses to each side without one (a two-side result each);
* a duplicate block is one deal of one lineup (every rotation), as in the score intervals.

Strengths are reported in Elo points (400 / ln 10 per unit of log-strength), 0 = the mean of
the rated bots: +100 means winning about 64% of head-to-head decisions against an average bot.
"""

from __future__ import annotations

import io
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from arena import batchfit, fit_cache
from arena.errors import ArenaError
from arena.results_folder import discard, open_regular, write_file

N_BOOT = 200  #: bootstrap replicates of a table (the sd of a difference to about 5%)


@dataclass(frozen=True)
class Strength:
    """The batch fit of one tournament, per bot name.

    :ivar bots: the bots, in the tournament's order.
    :ivar fit: the :class:`arena.batchfit.BatchFit` (indices follow ``bots``).
    :ivar results: results fitted; :ivar blocks: duplicate blocks resampled.
    """

    bots: tuple[str, ...]
    fit: batchfit.BatchFit
    results: int
    blocks: int

    def order(self) -> list[str]:
        """Bot names best first (rated bots by strength, then the unrated in the given order)."""
        return [self.bots[i] for i in self.fit.order()]

    def rows(self) -> dict[str, dict[str, Any]]:
        """Per bot: ``strength``, ``strength_low``, ``strength_high`` (Elo points, None if unrated),
        ``rank_low``, ``rank_high`` (1-based; None if unrated)."""
        lo, hi = self.fit.interval() if self.fit.has_spread else (self.fit.theta, self.fit.theta)
        rlo, rhi = self.fit.rank_intervals()
        out = {}
        for i, b in enumerate(self.bots):
            rated = bool(self.fit.rated[i])
            out[b] = {"strength": float(batchfit.ELO * self.fit.theta[i]) if rated else None,
                      "strength_low": float(batchfit.ELO * lo[i]) if rated else None,
                      "strength_high": float(batchfit.ELO * hi[i]) if rated else None,
                      "rank_low": int(rlo[i]) if rated else None, "rank_high": int(rhi[i]) if rated else None}
        return out

    @cached_property
    def _index(self) -> dict[str, int]:
        return {b: i for i, b in enumerate(self.bots)}

    @cached_property
    def _p(self) -> Any:
        return self.fit.p_stronger()  # (n, n): computed once, not per row (1,000 rows × n² each)

    def p_stronger(self, a: str, b: str) -> float:
        """P(strength of ``a`` > strength of ``b``) (0.5 when either is unrated)."""
        return float(self._p[self._index[a], self._index[b]])

    def pairs(self) -> dict[str, dict[str, dict[str, float]]]:
        """``{a: {b: {"p_stronger", "expected_score"}}}`` for every ordered pair of rated bots:
        the confidence that a is the stronger, and the model's expected score of a against b
        head to head (a tie counts half)."""
        p, e = self._p, self.fit.p_win()
        idx = [i for i in range(len(self.bots)) if self.fit.rated[i]]
        return {self.bots[i]: {self.bots[j]: {"p_stronger": float(p[i, j]), "expected_score": float(e[i, j])}
                               for j in idx if j != i} for i in idx}


contests = batchfit.record_results  #: the results one record adds (:func:`arena.batchfit.record_results`)
_contests = contests  # the earlier private name


def strength(records: Sequence[Any], bots: Sequence[str], rate_forfeits: bool = False, n_boot: int = N_BOOT,
             seed: int = 0, beta0: Any = None, method: str = "auto") -> Strength:
    """The batch fit of ``records`` (:class:`arena.record.MatchRecord`) over ``bots``.

    Order-independent: the same records in any order give the same fit; the bootstrap is
    seeded (``seed``), so a table is reproducible. Large fields (from
    :data:`arena.batchfit.ANALYTIC_FROM` results) get the block sandwich covariance instead
    of the bootstrap (``method``, see :func:`arena.batchfit.fit`).

    :param beta0: where Newton's method starts (``Strength.fit.beta`` of an earlier fit of the
        same bots, e.g. the checkpointed one): the same optimum, fewer steps.
    """
    index = {b: i for i, b in enumerate(bots)}
    blocks: dict[tuple[str, int], int] = {}
    flat, shapes, flat_ranks = array("i"), [], []
    shape_id: dict[tuple[int, int], tuple[int, int]] = {}
    block_i = array("q")
    for rec in sorted(records, key=lambda r: r.replay_key()):
        for sides, rk in contests(rec, rate_forfeits):
            if not all(b in index for s in sides for b in s):
                continue
            shape = (len(sides), len(sides[0]) if sides else 0)
            shapes.append(shape_id.setdefault(shape, shape))  # one shared tuple per shape
            flat.extend(index[b] for s in sides for b in s)
            flat_ranks.append(rk)  # the record's shared side-ranks tuple
            block_i.append(blocks.setdefault((rec.lineup, rec.deal_index), len(blocks)))
    sides_i, ranks = _compact(flat, shapes, flat_ranks)
    d = batchfit.design(sides_i, ranks, block_i, len(bots))
    return Strength(tuple(bots), batchfit.fit(d, n_boot=n_boot, seed=seed, beta0=beta0, method=method), len(ranks),
                    len(blocks))


def strength_of_results(contests: tuple[Any, Any, Any, int], bots: Sequence[str], n_boot: int = N_BOOT,
                        seed: int = 0, beta0: Any = None, method: str = "auto", info0: Any = None,
                        folder: Any = None) -> Strength:
    """The batch fit of ``contests``, the results an :class:`arena.tallies.Tallies` kept
    (:meth:`arena.tallies.Tallies.contests`: taken first, so the counters need not be held while
    the fit runs; the checkpointed path of :func:`arena.results.standings`).

    The same model, data and options as :func:`strength`; the results are taken in the order
    the records were added (the journal's), not sorted, so the fit equals :func:`strength`'s
    to rounding (the likelihood's sums in another order), and a checkpointed table equals its
    full rebuild bit for bit (both add the journal's records in file order). ``info0``: the
    information of the fit ``beta0`` comes from (:func:`fit_info`; :func:`arena.batchfit.chord`).
    ``folder``: a small field's fit (the bootstrap path) is kept there and reused while its
    results are the same (:mod:`arena.fit_cache`: the same bits, without the 200 refits).
    """
    sides, ranks, blocks, n_blocks = contests
    small = (len(ranks) < batchfit.ANALYTIC_FROM and len(bots) <= batchfit.ANALYTIC_BOTS and method != "sandwich"
             and n_boot > 0 and folder is not None)
    key = fit_cache.digest(sides, ranks, blocks, len(bots), n_boot, seed, method, batchfit.RIDGE) if small else ""
    kept = fit_cache.load(folder, key, len(bots), n_boot) if small else None
    if kept is not None:
        return Strength(tuple(bots), kept, len(ranks), n_blocks)
    d = batchfit.design(sides, ranks, blocks, len(bots))
    got = batchfit.fit(d, n_boot=n_boot, seed=seed, beta0=beta0, method=method, info0=info0)
    if small:
        fit_cache.save(folder, key, got)
    return Strength(tuple(bots), got, len(ranks), n_blocks)


INFO_NAME = "checkpoint-fit-info.npy"


def fit_info(folder: Any, n_params: int) -> Any:
    """The checkpointed information matrix of the last large-field fit of ``folder`` (``(P, P)``,
    None if absent, unreadable or of another size). Only a preconditioner: a stale one costs
    steps, never a different table (:func:`arena.batchfit.chord`)."""
    if folder is None:
        return None
    path = Path(folder) / INFO_NAME
    try:
        with open_regular(path) as f:  # a FIFO is refused, not waited on
            version = np.lib.format.read_magic(f)
            fmt = np.lib.format
            header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = header(f)  # the header only
            if shape != (n_params, n_params) or dtype != np.float64 or fortran:
                return None  # another size, or an npz / crafted header: absent (checked before any allocation)
            f.seek(0)
            got = np.load(f, allow_pickle=False)
    except (OSError, ValueError, TypeError, EOFError):
        return None
    ok = isinstance(got, np.ndarray) and got.shape == (n_params, n_params) and got.dtype == np.float64
    return got if ok and bool(np.isfinite(got).all()) else None


def save_fit_info(folder: Any, info: Any) -> None:
    """Checkpoint a fit's information matrix (atomically; nothing for None or an unwritable folder)."""
    if folder is None or info is None:
        return
    path = Path(folder) / INFO_NAME
    tmp = path.with_suffix(".tmp.npy")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(info, dtype=np.float64))
    try:
        write_file(tmp, buf.getvalue())  # never through a link
        os.replace(tmp, path)
    except (OSError, ArenaError):
        discard(tmp)


def _compact(flat: array, shapes: list[tuple[int, int]], ranks: list[Sequence[int]]) -> tuple[Any, Any]:
    """The results' sides and ranks for :func:`arena.batchfit.build_design`: one ``(R, K, size)``
    array when every result has the same shape (no nested lists: 4 bytes an index), else nested lists."""
    if len(set(shapes)) <= 1:  # ranks stay the records' own tuples
        k, size = shapes[0] if shapes else (2, 1)
        return np.frombuffer(flat, dtype=np.int32).reshape(len(shapes), k, size), ranks
    out, pos = [], 0
    for k, size in shapes:
        out.append([list(flat[pos + j * size:pos + (j + 1) * size]) for j in range(k)])
        pos += k * size
    return out, [list(r) for r in ranks]


def rank_text(low: int | None, high: int | None) -> str:
    """``"3"`` or ``"2–4"``; ``"–"`` for an unrated bot."""
    if low is None or high is None:
        return "–"
    return str(low) if low == high else f"{low}–{high}"

