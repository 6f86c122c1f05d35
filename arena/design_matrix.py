"""The batch fit's generic likelihood layout (:class:`Design`): every candidate group of every
stage a sparse row (the model: :mod:`arena.batchfit`), built from results of any shape — two or
more sides, partnerships, ties (:func:`build_design`). Moved out of :mod:`arena.batchfit` (issue
18, tenth pass) and imported from there as before; two-side results also have the array form
:mod:`arena.twoside`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp


@lru_cache(maxsize=512)
def _template(ranks: tuple[int, ...], max_tie: int) -> tuple[tuple[tuple[tuple[int, ...], ...], int], ...]:
    """The stages of one ranking pattern: per stage, its candidate side groups and the chosen one.

    :param ranks: dense side ranks (0 = first; equal = tied).
    :returns: ``((candidates, chosen index), ...)``; a stage with one candidate is left out.
    """
    remaining = list(range(len(ranks)))
    out = []
    for r in sorted(set(ranks)):
        group = tuple(i for i in remaining if ranks[i] == r)
        cands = [c for k in range(1, min(max_tie, len(remaining)) + 1) for c in itertools.combinations(remaining, k)]
        if len(cands) > 1:
            out.append((tuple(cands), cands.index(group)))
        remaining = [i for i in remaining if ranks[i] != r]
    return tuple(out)


def dense_ranks(ranks: Sequence[int]) -> tuple[int, ...]:
    """``ranks`` renumbered 0, 1, 2, ... keeping ties (``(0, 2, 2) -> (0, 1, 1)``)."""
    order = {r: i for i, r in enumerate(sorted(set(ranks)))}
    return tuple(order[r] for r in ranks)


@dataclass(frozen=True)
class Design:
    """The likelihood's layout: candidate rows grouped by stage (contiguous).

    :ivar x: ``(C, P)`` sparse design: row = a candidate group, columns = bots then tie
        parameters ``log δ_2 .. log δ_D``.
    :ivar pad: ``(C,)`` 0 for a candidate row, ``-inf`` for a padding row: stage ``s`` holds
        rows ``s·width .. s·width + width − 1``.
    :ivar width: rows per stage.
    :ivar chosen: ``(S,)`` the row that happened; :ivar block: ``(S,)`` the stage's block id.
    :ivar n_bots, max_tie, n_blocks: sizes.
    """

    x: sp.csr_matrix
    pad: np.ndarray
    width: int
    chosen: np.ndarray
    block: np.ndarray
    n_bots: int
    max_tie: int
    n_blocks: int

    @property
    def n_stages(self) -> int:
        """Stages (choices) of the likelihood."""
        return len(self.chosen)

    @property
    def stage(self) -> np.ndarray:
        """``(C,)`` the stage of each row."""
        return np.repeat(np.arange(self.n_stages), self.width)

    @property
    def n_params(self) -> int:
        """Bots plus tie parameters."""
        return self.n_bots + self.max_tie - 1


def build_design(sides: Sequence[Sequence[Sequence[int]]] | np.ndarray, ranks: Sequence[Sequence[int]] | RankCodes,
                 blocks: Sequence[int], n_bots: int) -> Design:
    """The design of a set of results.

    :param sides: per result, per side, the bot indices on it (every side of one result the
        same size; results may differ in side count and size) — or, when every result has the
        same shape, one ``(R, K, size)`` integer array (what :func:`arena.strength.strength`
        passes: 4 bytes an index instead of nested lists; the same design).
    :param ranks: per result, per side, its rank (ties equal); or :class:`RankCodes`.
    :param blocks: per result, its duplicate block id (0 .. n_blocks−1).
    :param n_bots: number of bots (indices ``0 .. n_bots−1``).
    :raises ValueError: if a result's sides and ranks disagree in length or a side is empty.
    """
    dense = isinstance(sides, np.ndarray)
    if isinstance(ranks, RankCodes):
        if not isinstance(sides, np.ndarray):
            ranks = [ranks.pats[c] for c in ranks.codes.tolist()]
        else:
            groups_c, pats_c = _coded_groups(sides, ranks)
            return _design(sides, True, groups_c, pats_c, blocks, n_bots)
    groups: dict[tuple[tuple[int, ...], int], Any] = {}
    pats = []
    sides_: Any = sides
    for i, r in enumerate(ranks):
        if dense:
            k, size, empty = sides_.shape[1], sides_.shape[2], sides_.shape[2] == 0
        else:
            s = sides_[i]
            k, size, empty = len(s), len(s[0]) if len(s) else 0, any(len(x) == 0 for x in s)
        if k != len(r) or empty:
            raise ValueError(f"result {i}: {k} sides for {len(r)} ranks, or an empty side")
        pat = dense_ranks(r)
        pats.append(pat)
        groups.setdefault((pat, size), []).append(i)
    return _design(sides, dense, groups, pats, blocks, n_bots)


@dataclass(frozen=True)
class RankCodes:
    """The results' side ranks as codes into a table of rank tuples (what
    :meth:`arena.tallies.Tallies.contests` keeps): ``ranks[i] == pats[codes[i]]``. Passed to
    :func:`build_design` instead of one tuple per result, the design is the same, built without
    a Python step per result."""

    codes: np.ndarray
    pats: list[tuple[int, ...]]

    def __len__(self) -> int:
        return len(self.codes)


def _coded_groups(sides: np.ndarray, ranks: RankCodes) -> tuple[dict[tuple[tuple[int, ...], int], Any], list[Any]]:
    """:func:`build_design`'s groups (results by dense rank pattern and side size, in order of
    first occurrence, each its result indices ascending) from rank codes."""
    k, size = sides.shape[1], sides.shape[2]
    used = np.unique(ranks.codes)
    for c in used.tolist():
        if len(ranks.pats[c]) != k or size == 0:
            raise ValueError(f"result {int(np.flatnonzero(ranks.codes == c)[0])}: {k} sides for "
                             f"{len(ranks.pats[c])} ranks, or an empty side")
    dense_of = [dense_ranks(p) for p in ranks.pats]
    gid_of: dict[tuple[int, ...], int] = {}
    gid = np.array([gid_of.setdefault(d, len(gid_of)) for d in dense_of], dtype=np.int64)
    g = gid[ranks.codes] if len(ranks.codes) else np.zeros(0, np.int64)
    pats_g = list(gid_of)
    _, first = np.unique(g, return_index=True)
    groups = {}
    for gi in g[np.sort(first)].tolist():
        groups[(pats_g[gi], size)] = np.flatnonzero(g == gi)
    return groups, [pats_g[gi] for gi in np.unique(g).tolist()]


def _design(sides: Any, dense: bool, groups: dict[tuple[tuple[int, ...], int], Any], pats: list[Any],
            blocks: Sequence[int], n_bots: int) -> Design:
    """The :class:`Design` of results grouped by ``(dense rank pattern, side size)``."""
    import scipy.sparse as sp  # imported when a generic design is built (two-side fits need none)

    sides_: Any = sides
    max_tie = max((max(np.bincount(np.array(p))) for p in pats), default=1)
    rows, cols, vals, start, chosen, sblock = [], [], [], [], [], []
    c = 0
    blocks_a = np.asarray(blocks, dtype=np.int64)
    for (pat, size), idx in groups.items():
        mem = (sides_[np.asarray(idx)].astype(np.int64) if dense  # (m, K, size)
               else np.array([sides_[i] for i in idx], dtype=np.int64))
        m = len(idx)
        for cands, ch in _template(pat, int(max_tie)):
            base = c + np.arange(m) * len(cands)
            start.append(base)
            chosen.append(base + ch)
            sblock.append(blocks_a[idx])
            for j, grp in enumerate(cands):
                for q in grp:
                    for t in range(size):
                        rows.append(base + j)
                        cols.append(mem[:, q, t])
                        vals.append(np.full(m, 1.0 / len(grp)))
                if len(grp) > 1:
                    rows.append(base + j)
                    cols.append(np.full(m, n_bots + len(grp) - 2))
                    vals.append(np.ones(m))
            c += m * len(cands)
    n_params = n_bots + int(max_tie) - 1
    cat = _cat
    st = cat(start, np.int64)
    lens = np.diff(np.append(st, c))
    width = int(lens.max()) if len(lens) else 1
    # pad every stage to `width` rows (padding rows score -inf) so stages are a reshape away
    stage_of = np.repeat(np.arange(len(st)), lens)
    pos = np.arange(c) - st[stage_of]
    remap = stage_of * width + pos
    row_i = cat(rows, np.int64)
    x = sp.csr_matrix((cat(vals, float), (remap[row_i], cat(cols, np.int64))), shape=(len(st) * width, n_params))
    pad = np.full(len(st) * width, -np.inf)
    pad[remap] = 0.0
    chosen_rows = cat(chosen, np.int64)
    n_blocks = int(blocks_a.max()) + 1 if len(blocks_a) else 0
    return Design(x, pad, width, remap[chosen_rows], cat(sblock, np.int64), n_bots, int(max_tie), n_blocks)


def record_results(rec: Any, rate_forfeits: bool) -> Iterable[tuple[Sequence[Sequence[str]], Sequence[int]]]:
    """The results one record (:class:`arena.record.MatchRecord`) adds: ``(sides, side ranks)`` pairs —
    an ``ok`` record its sides by their ranks; a forfeit (only with ``rate_forfeits``) each side
    with a faulty seat losing to each side without one (:mod:`arena.strength`)."""
    if not rec.rated(rate_forfeits):
        return []
    if rec.status != "forfeit":
        return [(rec.sides, rec.side_ranks)]
    faulty = {f.seat for f in rec.faults}
    bad = [i for i, tm in enumerate(rec.teams) if faulty & set(tm)]
    return [((rec.sides[i], rec.sides[j]), (1, 0)) for i in bad for j in range(len(rec.teams)) if j not in bad]


def _cat(xs: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(xs).astype(dtype) if xs else np.zeros(0, dtype)
