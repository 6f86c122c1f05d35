"""The tables' counters over a run of records, mergeable and checkpointed (issue 18).

:class:`Tallies` adds records one at a time (:meth:`Tallies.add`) into counters that only grow:
per bot its matches, wins, rank sum, faults by class, forfeits and first fault; per (duplicate
block, bot) the sum and count of its scores (the score column and its interval,
:func:`arena.stats.block_t_cis`) and of its ``ok`` rewards with their squares (the duplicate
efficiency); the pairs of bots that met (the design's mixing); the batch fit's results as
compact arrays (:func:`arena.strength.strength_of_contests`). Every table is then computed from
the counters in O(bots + blocks) numpy work, never from the records again.

:func:`tallies` keeps them in ``<folder>/checkpoint-tables.pkl`` (a small pickle, then every
counter and index as a ``.npy`` array: :meth:`Tallies.dump`; no million-entry dict is pickled or
rebuilt, the indexes are sorted key arrays plus a dict of the keys added since) for the journal's **byte
prefix** that :mod:`arena.journal_cache` vouches for (its chunks' running digests): the
counters of the records in ``matches.jsonl[0, end)`` in file order, so an update after ``k``
new records adds those ``k``. The tables are sums in file order — order-independent in value,
but floating-point sums: the full rebuild adds the same records in the same order, so the
checkpointed tables equal it **bit for bit**. A journal edited before ``end``, other bots or
another ``rate_forfeits`` → the counters are rebuilt from the records. A cache: deleting it only
costs time; an unreadable one is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena import stats
from arena.batchfit import RankCodes, record_results
from arena.record import MatchRecord, id_hash

NAME = "checkpoint-tables.pkl"
FORMAT = 3
_SHIFT = 32  # slot key: block << _SHIFT | bot
#: from this many fit blocks on, :meth:`Tallies.contests` orders the blocks by their lineups' hashes
HASH_ORDER_FROM = 20_000


def credits(rec: MatchRecord) -> list[tuple[str, int, bool, int, float]]:
    """The entries one record adds to the bots' rows: ``(bot, seat, win, rank, score)`` per
    counted bot (partners: one entity per side, its first seat).

    * aborted matches (or no outcome): nothing;
    * ``ok``: every bot, its seat's rank and reward (:attr:`MatchRecord.rewards`);
    * ``forfeit``: likewise, but a bot that faulted never counts a win;
    * ``disabled`` (a match not played because a bot was disabled): only the disabled bots
      count it, as a loss (score 0, last place); the other seats never started, so they are
      credited with nothing — no match, no win, no score (a walkover included).
    """
    ranks = rec.ranks
    if ranks is None or rec.status == "aborted":
        return []
    faulty = {f.bot for f in rec.faults} if rec.status == "forfeit" else set()
    disabled = {f.bot for f in rec.faults if f.cls == "disabled"} if rec.disabled else set()
    last = len(rec.sides) - 1
    rewards = rec.rewards
    out = []
    seen: set[str] = set()
    for seat, b in enumerate(rec.seats):
        if b in seen:
            continue
        seen.add(b)
        if disabled:
            if b in disabled:
                out.append((b, seat, False, last, 0.0))
            continue
        out.append((b, seat, ranks[seat] == 0 and b not in faulty, ranks[seat], rewards[seat]))
    return out


class _Index:
    """``int key -> int value`` (insertion numbers): a sorted pair of arrays for what was loaded
    from the checkpoint plus a dict for what was added since — loaded and saved as two arrays,
    never as a million-entry dict."""

    def __init__(self, keys: np.ndarray | None = None, vals: np.ndarray | None = None) -> None:
        self.keys = np.zeros(0, np.int64) if keys is None else keys
        self.vals = np.zeros(0, np.int64) if vals is None else vals
        self.new: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.keys) + len(self.new)

    def get(self, key: int) -> int | None:
        """The value of ``key`` (None if absent)."""
        v = self.new.get(key)
        if v is None and len(self.keys):
            i = int(np.searchsorted(self.keys, key))
            if i < len(self.keys) and self.keys[i] == key:
                return int(self.vals[i])
        return v

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(keys, values)``, keys ascending (the loaded arrays merged with the new entries)."""
        if not self.new:
            return self.keys, self.vals
        nk = np.fromiter(self.new.keys(), np.int64, len(self.new))
        nv = np.fromiter(self.new.values(), np.int64, len(self.new))
        o = np.argsort(nk, kind="stable")
        nk, nv = nk[o], nv[o]
        at = np.searchsorted(self.keys, nk)
        return np.insert(self.keys, at, nk), np.insert(self.vals, at, nv)

    def items(self) -> list[tuple[int, int]]:
        """Every ``(key, value)`` (small fields' canonical order only)."""
        k, v = self.arrays()
        return list(zip(k.tolist(), v.tolist()))


class Tallies:
    """Counters of the tables over the records added, in the order added (see the module docstring).

    :param bots: the field (more names are added as records bring them: :attr:`names`).
    :param rate_forfeits: whether forfeits are rated (the batch fit's results).
    """

    def __init__(self, bots: Sequence[str], rate_forfeits: bool = False) -> None:
        self.field = list(bots)
        self.rate_forfeits = bool(rate_forfeits)
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.matches, self.wins, self.rank_sum = array("q"), array("q"), array("d")
        self.forfeits, self.fin_faults = array("q"), array("q")  # faults in finished records
        self.faults: list[dict[str, int]] = []
        self.first: dict[int, tuple[MatchRecord, Any]] = {}
        for b in self.field:
            self._bot(b)
        self.count = 0  #: records added
        self.resumed_from = 0  #: records taken from the checkpoint (:func:`tallies`)
        self.lineups = _Index()  # id_hash(lineup) -> lineup id (names: lineup_names / lineup_blob)
        self.lineup_names: list[str] = []  # of the lineup ids from len(lineup_off) on
        self.lineup_blob, self.lineup_off = "", np.zeros(1, np.int64)  # loaded: names joined, offsets
        self.lineup_other: dict[str, int] = {}  # lineups whose hash collides with another's
        self.blocks = _Index()  # lineup id << 32 | deal -> block
        self.block_lineup, self.block_deal = array("q"), array("q")
        self.lineup_hash = array("q")  # per lineup id: :func:`arena.record.id_hash` of its name
        self.slots = _Index()  # block << 32 | bot -> slot
        self.slot_bot, self.slot_block = array("q"), array("q")
        self.s_sum, self.s_n = array("d"), array("q")  # scores (credits)
        self.e_sum, self.e_sq, self.e_n = array("d"), array("d"), array("q")  # ok rewards
        n = len(self.field)
        self.met = np.zeros((n, n), dtype=bool)
        self.met_extra: dict[str, set[str]] = {}
        # the batch fit's results (field bots only), file order
        self.c_flat = array("i")
        self.c_shape = array("b")  # per result: its shape's index in shapes
        self.shapes: list[tuple[int, int]] = []
        self.c_rank: array = array("i")
        self.rank_pats: dict[tuple[int, ...], int] = {}
        self.c_block = array("q")
        self.fit_blocks = _Index()  # block -> fit block
        self.fit_block_src = array("q")  # per fit block: its block

    # ---------------------------------------------------------------- adding
    def _bot(self, b: str) -> int:
        i = self.index.get(b)
        if i is None:
            i = self.index[b] = len(self.names)
            self.names.append(b)
            for a in (self.matches, self.wins, self.forfeits, self.fin_faults):
                a.append(0)
            self.rank_sum.append(0.0)
            self.faults.append({})
        return i

    def _slot(self, block: int, bot: int) -> int:
        key = block << _SHIFT | bot
        s = self.slots.get(key)
        if s is None:
            s = self.slots.new[key] = len(self.slot_bot)
            self.slot_bot.append(bot)
            self.slot_block.append(block)
            for a in (self.s_sum, self.e_sum, self.e_sq):
                a.append(0.0)
            self.s_n.append(0)
            self.e_n.append(0)
        return s

    def add_all(self, records: Iterable[MatchRecord]) -> Tallies:
        """:meth:`add` every record, in order; returns ``self``."""
        for rec in records:
            self.add(rec)
        return self

    def add(self, rec: MatchRecord) -> None:
        """Add one record to every counter (the rules of :func:`arena.tables.credits`,
        :func:`arena.tables.reliability`, :func:`arena.tables.duplicate_efficiency`,
        :func:`arena.tables.mixing` and :func:`arena.strength.strength`)."""
        self.count += 1
        faults = [f for f in rec.faults if f.bot is not None]  # an arena-side fault names no bot
        for f in faults:
            i = self._bot(str(f.bot))
            self.faults[i][f.cls] = self.faults[i].get(f.cls, 0) + 1
            old = self.first.get(i)
            if old is None or (old[1].cls == "disabled" and f.cls != "disabled"):
                self.first[i] = (rec, f)  # :func:`arena.faults.first_fault` of it, for the tables
        if not rec.finished:
            return
        for f in faults:
            self.fin_faults[self._bot(str(f.bot))] += 1
        if rec.status == "forfeit":
            for fb in {str(f.bot) for f in faults}:
                self.forfeits[self._bot(fb)] += 1
        lid = self._lineup(rec.lineup)
        bkey = lid << _SHIFT | rec.deal_index
        block = self.blocks.get(bkey)
        if block is None:
            block = self.blocks.new[bkey] = len(self.block_lineup)
            self.block_lineup.append(lid)
            self.block_deal.append(rec.deal_index)
        for b, _seat, win, rank, score in credits(rec):
            i = self._bot(b)
            self.matches[i] += 1
            self.wins[i] += win
            self.rank_sum[i] += rank
            s = self._slot(block, i)
            self.s_sum[s] += score
            self.s_n[s] += 1
        if rec.played:
            rewards = rec.rewards
            seen: set[str] = set()
            for seat, b in enumerate(rec.seats):
                if b not in seen:
                    seen.add(b)
                    s = self._slot(block, self._bot(b))
                    x = rewards[seat]
                    self.e_sum[s] += x
                    self.e_sq[s] += x * x
                    self.e_n[s] += 1
        self._meet(tuple(dict.fromkeys(rec.seats)))
        self._contests(rec, block)

    def _lineup_name(self, lid: int) -> str:
        n_old = len(self.lineup_off) - 1
        if lid < n_old:
            return self.lineup_blob[int(self.lineup_off[lid]):int(self.lineup_off[lid + 1])]
        return self.lineup_names[lid - n_old]

    def _lineup(self, name: str) -> int:
        """The id of lineup ``name`` (a new one numbered next)."""
        other = self.lineup_other.get(name)
        if other is not None:
            return other
        h = id_hash(name)
        lid = self.lineups.get(h)
        if lid is not None and self._lineup_name(lid) == name:
            return lid
        new = len(self.lineup_hash)
        if lid is None:
            self.lineups.new[h] = new
        else:  # another lineup has this hash
            self.lineup_other[name] = new
        self.lineup_hash.append(h)
        self.lineup_names.append(name)
        return new

    def _meet(self, names: tuple[str, ...]) -> None:
        idx = [self.index.get(b, -1) for b in names]
        for a, ia in zip(names, idx):
            for b, ib in zip(names, idx):
                if a == b:
                    continue
                if 0 <= ia < len(self.field) and 0 <= ib < len(self.field):
                    self.met[ia, ib] = True
                else:
                    self.met_extra.setdefault(a, set()).add(b)

    def _contests(self, rec: MatchRecord, block: int) -> None:
        nf = len(self.field)
        for sides, rk in record_results(rec, self.rate_forfeits):
            ids = [self.index.get(b, nf) for s in sides for b in s]
            if max(ids, default=0) >= nf:
                continue
            shape = (len(sides), len(sides[0]) if sides else 0)
            if shape not in self.shapes:
                self.shapes.append(shape)
            self.c_shape.append(self.shapes.index(shape))
            self.c_flat.extend(ids)
            rk = tuple(rk)
            self.c_rank.append(self.rank_pats.setdefault(rk, len(self.rank_pats)))
            f = self.fit_blocks.get(block)
            if f is None:
                f = self.fit_blocks.new[block] = len(self.fit_block_src)
                self.fit_block_src.append(block)
            self.c_block.append(f)

    # ---------------------------------------------------------------- tables
    def _np(self, a: array, dtype: Any) -> np.ndarray:
        return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype)

    def bot_stats(self) -> dict[str, dict[str, Any]]:
        """Per bot (the field first, then any other name seen): ``matches``, ``wins``,
        ``win_rate``, ``mean_rank`` (0-based), ``score`` with ``score_low``/``score_high``,
        ``faults``, ``forfeits`` — as :func:`arena.tables.bot_stats`. The interval is the block
        bootstrap's (:func:`arena.stats.bootstrap_ci`) below :data:`arena.stats.T_FROM` blocks,
        else :func:`arena.stats.block_t_cis`."""
        n = len(self.names)
        sb, ss, sn = self._np(self.slot_bot, np.int64), self._np(self.s_sum, float), self._np(self.s_n, np.int64)
        has = sn > 0
        m, lo, hi, nb = stats.block_t_cis(sb[has], ss[has], sn[has], n)
        small = np.flatnonzero((nb > 0) & (nb < stats.T_FROM))
        if len(small):
            pos = np.flatnonzero(has)
            order = pos[np.argsort(sb[pos], kind="stable")]  # each bot's blocks in first-seen order
            cut = np.searchsorted(sb[order], np.arange(n + 1))
            for j in small.tolist():
                sel = order[cut[j]:cut[j + 1]]
                m[j], lo[j], hi[j] = _bootstrap(ss[sel], sn[sel], seed=len(self.names[j]))
        out = {}
        for i, b in enumerate(self.names):
            k = self.matches[i]
            out[b] = {"matches": k, "wins": self.wins[i], "rank_sum": self.rank_sum[i],
                      "faults": self.fin_faults[i], "forfeits": self.forfeits[i],
                      "score": float(m[i]), "score_low": float(lo[i]), "score_high": float(hi[i]),
                      "mean_rank": self.rank_sum[i] / k if k else float("nan"),
                      "win_rate": self.wins[i] / k if k else float("nan")}
        return out

    def fault_counts(self) -> tuple[dict[str, dict[str, int]], dict[str, tuple[MatchRecord, Any]]]:
        """``(faults by class per name, (record, fault) of its first fault per name)`` (names with
        faults only; a ``disabled`` first fault only if it has no other)."""
        return ({self.names[i]: f for i, f in enumerate(self.faults) if f},
                {self.names[i]: f for i, f in self.first.items()})

    def efficiency(self) -> dict[str, Any]:
        """:func:`arena.tables.duplicate_efficiency` from the counters (sums of the complete
        blocks' rewards and squares per (bot, lineup) group)."""
        en = self._np(self.e_n, np.int64)
        k = int(en.max()) if len(en) else 0
        out: dict[str, Any] = {"factor": float("nan"), "blocks": 0, "bot_blocks": 0, "block_size": k,
                               "var_single": float("nan"), "var_block_mean": float("nan")}
        if k == 0:
            return out
        full = np.flatnonzero(en == k)
        bot, block = self._np(self.slot_bot, np.int64)[full], self._np(self.slot_block, np.int64)[full]
        lineup = self._np(self.block_lineup, np.int64)[block]
        _, grp, size = np.unique(bot * (len(self.lineup_hash) + 1) + lineup, return_inverse=True, return_counts=True)
        keep = size[grp] >= 2  # groups with 2+ complete blocks
        grp, block = grp[keep], block[keep]
        s, q = self._np(self.e_sum, float)[full][keep], self._np(self.e_sq, float)[full][keep]
        out["blocks"] = len(np.unique(block))
        out["bot_blocks"] = n_block = len(grp)
        n_g = np.bincount(grp, minlength=len(size)).astype(float)
        t_g = np.bincount(grp, s, len(size))
        used = n_g > 0
        ss_single = float((np.bincount(grp, q, len(size))[used] - t_g[used] ** 2 / (n_g[used] * k)).sum())
        ss_block = float((np.bincount(grp, (s / k) ** 2, len(size))[used] - (t_g[used] / k) ** 2 / n_g[used]).sum())
        df_single, df_block = n_block * k - int(used.sum()), n_block - int(used.sum())
        if k < 2 or df_block < 2:
            return out
        var_single, var_block = max(ss_single, 0.0) / df_single, max(ss_block, 0.0) / df_block
        var_single = 0.0 if var_single <= 1e-12 else var_single
        out["var_single"], out["var_block_mean"] = var_single, var_block
        if var_block <= 1e-12:
            out["factor"] = float("inf") if var_single > 0 else float("nan")
        else:
            out["factor"] = var_single / (k * var_block)
        return out

    def mixing(self) -> dict[str, Any]:
        """:func:`arena.tables.mixing` from the pairs that met."""
        counts = [int(c) for c in self.met.sum(axis=1)]
        extra = {a: len(bs) for a, bs in self.met_extra.items()}
        for i, b in enumerate(self.field):
            counts[i] += extra.pop(b, 0)
        counts = sorted(counts + list(extra.values()))
        if not counts:
            return {"min": 0, "median": 0.0, "max": 0, "possible": 0}
        mid = len(counts) // 2
        median = counts[mid] if len(counts) % 2 else (counts[mid - 1] + counts[mid]) / 2
        return {"min": counts[0], "median": median, "max": counts[-1], "possible": max(0, len(self.field) - 1)}

    def _block_order(self) -> np.ndarray:
        """Per fit block (numbered in file order), its index when the blocks are sorted by
        ``(lineup, deal)``: a numbering that does not depend on the journal's order. From
        :data:`HASH_ORDER_FROM` blocks on the lineups are ordered by their names' 64-bit hashes
        instead of the names (numpy, no Python sort of every block: the same independence of
        the journal's order; the names are used if two lineups' hashes collide)."""
        n_fit = len(self.fit_block_src)
        if n_fit >= HASH_ORDER_FROM:
            lh = self._np(self.lineup_hash, np.int64)
            if len(np.unique(lh)) == len(lh):
                src = self._np(self.fit_block_src, np.int64)
                lid = self._np(self.block_lineup, np.int64)[src]
                new = np.empty(n_fit, dtype=np.int64)
                new[np.lexsort((self._np(self.block_deal, np.int64)[src], lh[lid]))] = np.arange(n_fit)
                return new
        names = {lid: self._lineup_name(lid) for lid in range(len(self.lineup_hash))}
        keys = {blk: (names[bkey >> _SHIFT], bkey & ((1 << _SHIFT) - 1)) for bkey, blk in self.blocks.items()}
        fit_keys: list[tuple[str, int]] = [("", 0)] * len(self.fit_blocks)
        for blk, f in self.fit_blocks.items():
            fit_keys[f] = keys[blk]
        new = np.empty(len(fit_keys), dtype=np.int64)
        new[sorted(range(len(fit_keys)), key=lambda i: fit_keys[i])] = np.arange(len(fit_keys))
        return new

    def contests(self) -> tuple[Any, Any, np.ndarray, int]:
        """The batch fit's results: ``(sides, ranks, blocks, n_blocks)`` for
        :func:`arena.batchfit.build_design` (sides one ``(R, K, size)`` array and the ranks
        as :class:`arena.batchfit.RankCodes` when every result has one shape, else nested
        lists), in a canonical order — blocks by ``(lineup,
        deal)``, results within a block by content — so the fit, bootstrap included, is the
        same bit for bit whatever order the journal holds the records in (a rerun from a
        shuffled journal, an incremental update, a full rebuild)."""
        pats = list(self.rank_pats)
        canon = {p: i for i, p in enumerate(sorted(pats))}
        rank_c = np.array([canon[p] for p in pats], dtype=np.int64)[self._np(self.c_rank, np.int32)] \
            if pats else np.zeros(0, dtype=np.int64)
        block = self._block_order()[self._np(self.c_block, np.int64)] if len(self.c_block) else \
            np.zeros(0, dtype=np.int64)
        used = np.unique(self._np(self.c_shape, np.int8)).tolist()
        if len(used) <= 1:
            k, size = self.shapes[used[0]] if used else (2, 1)
            flat = self._np(self.c_flat, np.int32).reshape(len(rank_c), k * size)
            perm = np.lexsort((rank_c, *flat.T[::-1], block)) if len(rank_c) else np.zeros(0, dtype=np.int64)
            sides: Any = flat[perm].reshape(len(rank_c), k, size)
            ranks: Any = RankCodes(self._np(self.c_rank, np.int32)[perm].astype(np.int64), pats)
        else:
            rows, pos = [], 0
            for r, code in enumerate(self.c_shape):
                k, size = self.shapes[code]
                row = [list(self.c_flat[pos + j * size:pos + (j + 1) * size]) for j in range(k)]
                rows.append((int(block[r]), row, pats[self.c_rank[r]], r))
                pos += k * size
            rows.sort(key=lambda x: (x[0], x[1], x[2]))
            perm = np.array([x[3] for x in rows], dtype=np.int64)
            sides = [x[1] for x in rows]
            ranks = [list(x[2]) for x in rows]
        return sides, ranks, block[perm], len(self.fit_blocks)


    # ---------------------------------------------------------------- checkpoint form
    def dump(self, f: Any) -> None:
        """Write the counters to the open binary file ``f``: one small pickle (names, faults,
        rank patterns, the lineups' names as one string), then every counter and index as a
        ``.npy`` array (:func:`numpy.save`) — loaded at the speed of reading them, no dict
        rebuilt entry by entry."""
        small = {k: v for k, v in vars(self).items() if k not in _ARRAYS and k not in _INDEXES
                 and k not in ("met", "lineup_names", "lineup_blob", "lineup_off")}
        lens = np.fromiter((len(x) for x in self.lineup_names), np.int64, len(self.lineup_names))
        small["lineup_blob"] = self.lineup_blob + "".join(self.lineup_names)
        pickle.dump(small, f, protocol=5)
        np.save(f, np.concatenate([self.lineup_off, self.lineup_off[-1] + np.cumsum(lens)]))
        np.save(f, self.met)
        for name in _ARRAYS:
            a = getattr(self, name)
            np.save(f, self._np(a, _DTYPE[a.typecode]))
        for name in _INDEXES:
            for x in getattr(self, name).arrays():
                np.save(f, x)

    @classmethod
    def load(cls, f: Any) -> Tallies:
        """The counters :meth:`dump` wrote to ``f``."""
        t = cls.__new__(cls)
        t.__dict__.update(pickle.load(f))
        t.lineup_off = np.load(f)
        t.lineup_names = []
        t.met = np.load(f)
        for name in _ARRAYS:
            a = array(_TYPECODE[name])
            a.frombytes(np.load(f).astype(_DTYPE[a.typecode], copy=False).tobytes())
            setattr(t, name, a)
        for name in _INDEXES:
            keys = np.load(f)
            setattr(t, name, _Index(keys, np.load(f)))
        return t


#: the counters :meth:`Tallies.dump` writes as arrays (typecode each), and the indexes
_TYPECODE = {"matches": "q", "wins": "q", "rank_sum": "d", "forfeits": "q", "fin_faults": "q", "block_lineup": "q",
             "block_deal": "q", "lineup_hash": "q", "slot_bot": "q", "slot_block": "q", "s_sum": "d", "s_n": "q",
             "e_sum": "d", "e_sq": "d", "e_n": "q", "c_flat": "i", "c_shape": "b", "c_rank": "i", "c_block": "q",
             "fit_block_src": "q"}
_ARRAYS = tuple(_TYPECODE)
_INDEXES = ("lineups", "blocks", "slots", "fit_blocks")
_DTYPE = {"q": np.int64, "d": np.float64, "i": np.int32, "b": np.int8}


def _bootstrap(sums: np.ndarray, counts: np.ndarray, seed: int) -> tuple[float, float, float]:
    """:func:`arena.stats.bootstrap_ci` of blocks given by their sums and sizes."""
    return stats.bootstrap_ci([[float(s)] + [0.0] * (int(c) - 1) for s, c in zip(sums, counts)], seed=seed)


# ---------------------------------------------------------------- checkpoint
def _key(bots: Sequence[str], rate_forfeits: bool) -> str:
    blob = json.dumps([FORMAT, list(bots), bool(rate_forfeits)])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def tallies(folder: str | Path | None, records: Sequence[MatchRecord], bots: Sequence[str],
            rate_forfeits: bool = False, prefixes: Sequence[tuple[int, str, int]] | None = None) -> Tallies:
    """The :class:`Tallies` of ``records`` (the schedule's records in file order), resumed from
    ``folder``'s checkpoint and saved again.

    :param prefixes: the journal's vouched-for byte prefixes, ``(end, digest, records of
        ``records`` in it)`` each (:func:`arena.journal_cache.read`'s ``info["prefixes"]``); the
        last one is where the new checkpoint is taken. None or empty: no checkpoint.
    :returns: counters equal to ``Tallies(bots, rate_forfeits).add_all(records)`` bit for bit.
    """
    key = _key(bots, rate_forfeits)
    t: Tallies | None = None
    valid: dict[tuple[Any, Any], int] = {(int(e), str(d)): int(n) for e, d, n in prefixes or ()}
    if folder is not None and valid:
        try:
            with open(Path(folder) / NAME, "rb") as f:
                head = pickle.load(f)
                if (isinstance(head, dict) and head.get("key") == key
                        and valid.get((head.get("end"), head.get("digest"))) == head.get("count")
                        and head["count"] <= len(records)):
                    t = Tallies.load(f)
        except Exception:  # noqa: BLE001 - a cache: unreadable or cut means rebuild
            t = None
    if not isinstance(t, Tallies) or t.count > len(records):
        t = Tallies(bots, rate_forfeits)
    t.resumed_from = t.count
    t.add_all(records[t.count:])
    if folder is not None and prefixes:
        end, digest, n = prefixes[-1]
        if n == len(records):
            _save(Path(folder), {"key": key, "end": int(end), "digest": str(digest), "count": n}, t)
    return t


def _save(folder: Path, head: dict[str, Any], t: Tallies) -> None:
    tmp = folder / (NAME + ".tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump(head, f, protocol=5)
            t.dump(f)
        os.replace(tmp, folder / NAME)
    except OSError:
        tmp.unlink(missing_ok=True)
