"""The tables' counters over a run of records, mergeable (issue 18; their checkpoint:
:mod:`arena.tallies_checkpoint`).

:class:`Tallies` adds records (:meth:`Tallies.add_all`) into counters that only grow: per bot
its matches, wins, rank sum, faults by class, forfeits and first fault; per (duplicate block,
bot) slot the sum and count of its scores (the score column and its interval,
:func:`arena.stats.block_t_cis`) and of its ``ok`` rewards with their squares (the duplicate
efficiency); the pairs of bots that met (the design's mixing); the batch fit's results as
compact arrays (:func:`arena.strength.strength_of_results`). Every table is then computed from
the counters in O(bots + blocks) numpy work, never from the records again.

The records are added a chunk at a time as numpy arrays (:mod:`arena.tallies_events`): the plain
records of an :class:`arena.record_view.RecordView` straight from its columns, the others one by
one. Lineups, blocks, slots and fit blocks are numbered in order of first appearance in file
order, kept as numpy columns with sorted key arrays (no dict per lineup, block or slot); the
floating-point sums are ``numpy.add.at`` in file order — the same additions in the same order
as one record at a time, so every counter is equal bit for bit however the records are cut
into chunks. :meth:`Tallies.arrays` / :meth:`Tallies.from_arrays` are the checkpoint's layout.

(~760 lines, over the project's ~600: the counters, their summaries and their array layout — with the checkpoint's read into buffers with room, :func:`_member` — are one job; the checkpoint's file moved out; the array layout (arrays, from_arrays, _member) is the part to move out next.)
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from arena import stats
from arena.batchfit import RankCodes, record_results
from arena.heap import release_heap
from arena.record import MatchRecord, RecordFault
from arena.tallies_events import Events, Sorted, credits, events_of, number

__all__ = ["HASH_ORDER_FROM", "Tallies", "credits"]

_SHIFT = 32  # slot key: block << _SHIFT | bot; block key: lineup << _SHIFT | deal
#: from this many fit blocks on, :meth:`Tallies.contests` orders the blocks by their lineups' hashes
HASH_ORDER_FROM = 20_000
#: records added per chunk (the temporaries of one chunk: ~500 bytes a record)
CHUNK = 1 << 16
#: columns of at least this many entries are sized ahead by :meth:`Tallies.reserve` (the per-bot ones are not)
RESERVE_FROM = 1 << 16
#: room made beyond the entries per record seen so far (a rate that grows a little later must
#: not cost a copy of the whole column at the end; the spare costs address space only)
ROOM_MARGIN = 1 / 8


class _Col:
    """A growable 1-D numpy column (``v``: the filled part)."""

    __slots__ = ("a", "n")

    def __init__(self, dtype: Any, data: np.ndarray | None = None) -> None:
        self.a = np.zeros(0, dtype) if data is None else np.ascontiguousarray(data, dtype=dtype)
        self.n = len(self.a)

    def __len__(self) -> int:
        return self.n

    @property
    def v(self) -> np.ndarray:
        """The filled part (a view)."""
        return self.a[:self.n]

    def extend(self, x: Any) -> None:
        """Append the values of ``x``."""
        x = np.asarray(x, dtype=self.a.dtype)
        need = self.n + len(x)
        if need > len(self.a):
            b = np.zeros(max(need, len(self.a) * 5 // 4 + 64), self.a.dtype)
            b[:self.n] = self.a[:self.n]
            self.a = b
        self.a[self.n:need] = x
        self.n = need

    def grow(self, n: int) -> None:
        """Append zeros up to length ``n``."""
        if n > self.n:
            self.extend(np.zeros(n - self.n, self.a.dtype))

    def reserve(self, n: int) -> None:
        """Make room for ``n`` entries in all (one copy now instead of a 25% spare at the next
        :meth:`extend`)."""
        if n > len(self.a):
            b = np.zeros(n, self.a.dtype)
            b[:self.n] = self.a[:self.n]
            self.a = b


#: the columns of :class:`Tallies` and their dtypes (the checkpoint's arrays)
_COLS = {"matches": np.int64, "wins": np.int64, "rank_sum": np.float64, "forfeits": np.int64,
         "fin_faults": np.int64, "lineup_hash": np.int64, "lineup_off": np.int64, "block_lineup": np.int32,
         "block_deal": np.int64, "slot_bot": np.int32, "slot_block": np.int32, "s_sum": np.float64,
         "s_n": np.int32, "e_sum": np.float64, "e_sq": np.float64, "e_n": np.int32, "c_flat": np.int32,
         "c_shape": np.int8, "c_rank": np.int32, "c_block": np.int32, "fit_block_src": np.int32}
_INDEXES = ("lineups", "blocks", "slots", "fit_blocks")


class Tallies:
    """Counters of the tables over the records added, in the order added (see the module docstring).

    :param bots: the field (more names are added as records bring them: :attr:`names`).
    :param rate_forfeits: whether forfeits are rated (the batch fit's results).
    """

    matches: _Col
    wins: _Col
    rank_sum: _Col
    forfeits: _Col
    fin_faults: _Col
    lineup_hash: _Col
    lineup_off: _Col
    block_lineup: _Col
    block_deal: _Col
    slot_bot: _Col
    slot_block: _Col
    s_sum: _Col
    s_n: _Col
    e_sum: _Col
    e_sq: _Col
    e_n: _Col
    c_flat: _Col
    c_shape: _Col
    c_rank: _Col
    c_block: _Col
    fit_block_src: _Col

    def __init__(self, bots: Sequence[str], rate_forfeits: bool = False) -> None:
        self.field = list(bots)
        self.rate_forfeits = bool(rate_forfeits)
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.faults: list[dict[str, int]] = []
        self.first: dict[int, tuple[MatchRecord, RecordFault]] = {}  # bot -> its first fault, its record
        self.count = 0  #: records added
        self.resumed_from = 0  #: records taken from the checkpoint (:func:`tallies`)
        for name, dtype in _COLS.items():
            setattr(self, name, _Col(dtype))
        self.lineup_off.extend([0])
        self.lineup_blob = bytearray()  # the lineups' names, UTF-8, in id order (offsets lineup_off)
        self.lineup_other: dict[str, int] = {}  # lineups whose hash collides with another's
        self.lineups, self.blocks, self.slots, self.fit_blocks = Sorted(), Sorted(), Sorted(), Sorted()
        self.closed = False  #: :meth:`close`d: no more records, no checkpoint
        self.met = np.zeros((len(self.field),) * 2, dtype=bool)
        self.met_extra: dict[str, set[str]] = {}
        self.shapes: list[tuple[int, int]] = []
        self.rank_pats: dict[tuple[int, ...], int] = {}
        for b in self.field:
            self._bot(b)

    # ---------------------------------------------------------------- adding
    def _bot(self, b: str) -> int:
        i = self.index.get(b)
        if i is None:
            i = self.index[b] = len(self.names)
            self.names.append(b)
            self.faults.append({})
            for col in (self.matches, self.wins, self.rank_sum, self.forfeits, self.fin_faults):
                col.grow(len(self.names))
        return i

    def add(self, rec: MatchRecord) -> None:
        """Add one record to every counter (:meth:`add_all` of one)."""
        self.add_all([rec])

    def add_all(self, records: Iterable[MatchRecord]) -> Tallies:
        """Add every record, in order (the rules of :func:`credits`, :func:`arena.tables.reliability`,
        :func:`arena.tables.duplicate_efficiency`, :func:`arena.tables.mixing` and
        :func:`arena.strength.strength`); returns ``self``."""
        if self.closed:
            raise RuntimeError("these counters were closed (Tallies.close): their lookup indexes are gone")
        recs: Any = records if isinstance(records, Sequence) else list(records)
        rf = self.rate_forfeits
        for lo in range(0, len(recs), CHUNK):
            self._apply(events_of(recs, lo, min(len(recs), lo + CHUNK), set(self.field),
                                  lambda r: record_results(r, rf)))
            if len(recs) > CHUNK:
                self.reserve(len(recs) - lo - CHUNK)  # the columns sized for the rest (a no-op once they are)
                release_heap()  # a chunk's temporaries, freed in pieces (~50 MB kept at 1M without)
        return self

    def _apply(self, ev: Events) -> None:
        """Add one chunk's events (:func:`arena.tallies_events.events_of`) to the counters."""
        self.count += ev.n
        for name in ev.register:
            self._bot(name)
        gid = np.array([self.index.get(n, -1) for n in ev.names], dtype=np.int64)  # chunk name code -> bot
        for _k, rec, faults in ev.faults:
            self._faults(rec, faults)
        fin = np.flatnonzero(ev.lineup >= 0)
        lid = self._lineups(ev.lineup_names, ev.lineup[fin])
        block = np.full(ev.n, -1, np.int64)
        n_old = len(self.block_lineup)
        block[fin], new = number(lid << _SHIFT | ev.deal[fin], self.blocks, n_old)
        if len(new):  # each new block's lineup and deal, from its records
            self.block_lineup.grow(n_old + len(new))
            self.block_deal.grow(n_old + len(new))
            b = block[fin]
            fresh = b >= n_old
            self.block_lineup.v[b[fresh]] = lid[fresh]
            self.block_deal.v[b[fresh]] = ev.deal[fin][fresh]
        nb = len(self.names)
        cb, eb = gid[ev.c_bot], gid[ev.e_bot]
        self.matches.v[:] += np.bincount(cb, minlength=nb)
        self.wins.v[:] += np.bincount(cb, ev.c_win, minlength=nb).astype(np.int64)
        np.add.at(self.rank_sum.v, cb, ev.c_rank.astype(np.float64))
        self._slots(block, cb, eb, ev)
        self._meet(ev, gid)
        self._contests(ev, gid, block)

    def _faults(self, rec: MatchRecord, faults: Sequence[Any]) -> None:
        """A record's faults (an arena-side fault names no bot): counts by class, first fault,
        faults and forfeits of finished records."""
        for f in faults:
            i = self.index[str(f.bot)]
            self.faults[i][f.cls] = self.faults[i].get(f.cls, 0) + 1
            old = self.first.get(i)
            if old is None or (old[1].cls == "disabled" and f.cls != "disabled"):
                self.first[i] = (rec, f)  # :func:`arena.faults.first_fault` of it, for the tables
        if not rec.finished:
            return
        for f in faults:
            self.fin_faults.v[self.index[str(f.bot)]] += 1
        if rec.status == "forfeit":
            for fb in {str(f.bot) for f in faults}:
                self.forfeits.v[self.index[fb]] += 1

    def _lineup_name(self, lid: int) -> str:
        off = self.lineup_off.v
        return bytes(self.lineup_blob[int(off[lid]):int(off[lid + 1])]).decode("utf-8", "surrogatepass")

    def _lineups(self, names: list[str], codes: np.ndarray) -> np.ndarray:
        """Per finished record (``codes`` into the chunk's lineup ``names``), its lineup id (new
        ones numbered in order of first appearance; found by their names' 64-bit hashes
        (:func:`lineup_hashes`), a colliding name in :attr:`lineup_other`)."""
        if not len(codes):
            return np.zeros(0, np.int64)
        used, first = np.unique(codes, return_index=True)
        used = used[np.argsort(first, kind="stable")]  # first-seen order
        enc = [names[c].encode("utf-8", "surrogatepass") for c in used.tolist()]
        hashes = lineup_hashes(enc)
        found = self.lineups.find(hashes)
        fi = np.flatnonzero(found >= 0)
        new = np.flatnonzero(found < 0)
        blob, off = self.lineup_blob, self.lineup_off.v
        same = all(blob[off[f]:off[f + 1]] == enc[i] for i, f in zip(fi.tolist(), found[fi].tolist()))
        lid_of = np.empty(len(names), np.int64)
        if self.lineup_other or not same or len(np.unique(hashes[new])) != len(new):
            lid_of[used] = self._lineups_by_name(enc, hashes, found)  # a hash shared by two lineups
            return lid_of[codes]
        n_l = len(self.lineup_hash)
        lid = found.copy()
        lid[new] = n_l + np.arange(len(new))
        self._new_lineups([enc[i] for i in new.tolist()], hashes[new])
        self.lineups.add(hashes[new], lid[new])
        lid_of[used] = lid
        return lid_of[codes]

    def _new_lineups(self, enc: list[bytes], hashes: np.ndarray) -> None:
        """Append lineups (their UTF-8 names and hashes) as the next ids."""
        self.lineup_hash.extend(hashes)
        lens = np.fromiter((len(x) for x in enc), np.int64, len(enc))
        self.lineup_off.extend(self.lineup_off.v[-1] + np.cumsum(lens))
        self.lineup_blob += b"".join(enc)

    def _lineups_by_name(self, enc: list[bytes], hashes: np.ndarray, found: np.ndarray) -> np.ndarray:
        """:meth:`_lineups` one name at a time (some hash is shared by two lineups)."""
        out = np.empty(len(enc), np.int64)
        fresh: set[int] = set()  # hashes of the lineups numbered here
        new_h, new_id = [], []
        for j, (e, h, f) in enumerate(zip(enc, hashes.tolist(), found.tolist())):
            name = e.decode("utf-8", "surrogatepass")
            other = self.lineup_other.get(name)
            off = self.lineup_off.v
            if other is not None:
                out[j] = other
                continue
            if f >= 0 and self.lineup_blob[off[f]:off[f + 1]] == e:
                out[j] = f
                continue
            out[j] = n_l = len(self.lineup_hash)
            if f < 0 and h not in fresh:
                fresh.add(h)
                new_h.append(h)
                new_id.append(n_l)
            else:  # another lineup has this hash
                self.lineup_other[name] = n_l
            self._new_lineups([e], np.array([h], np.int64))
        self.lineups.add(np.array(new_h, np.int64), np.array(new_id, np.int64))
        return out

    def _slots(self, block: np.ndarray, cb: np.ndarray, eb: np.ndarray, ev: Events) -> None:
        """The (block, bot) slots of the credits and the ``ok`` rewards, numbered in order of first
        appearance (each record's credits, then its rewards), and their sums in file order."""
        ck = (block[ev.c_rec] << _SHIFT) | cb
        ek = (block[ev.e_rec] << _SHIFT) | eb
        order = np.argsort(np.concatenate([ev.c_rec * 2, ev.e_rec * 2 + 1]), kind="stable")
        keys = np.concatenate([ck, ek])[order]
        got, new = number(keys, self.slots, len(self.slot_bot))
        slot = np.empty(len(keys), np.int64)
        slot[order] = got
        cs, es = slot[:len(ck)], slot[len(ck):]
        self.slot_bot.extend(new & ((1 << _SHIFT) - 1))
        self.slot_block.extend(new >> _SHIFT)
        n = len(self.slot_bot)
        for name in ("s_sum", "s_n", "e_sum", "e_sq", "e_n"):
            getattr(self, name).grow(n)
        np.add.at(self.s_sum.v, cs, ev.c_score)
        _count(self.s_n.v, cs)
        np.add.at(self.e_sum.v, es, ev.e_x)
        np.add.at(self.e_sq.v, es, ev.e_x * ev.e_x)
        _count(self.e_n.v, es)

    def _meet(self, ev: Events, gid: np.ndarray) -> None:
        """The pairs of the field that met (and of other names, by name)."""
        nf = len(self.field)
        if len(ev.pairs):
            a, b = gid[ev.pairs[:, 0]], gid[ev.pairs[:, 1]]
            inside = (a >= 0) & (a < nf) & (b >= 0) & (b < nf)
            self.met[a[inside], b[inside]] = True
            for x, y in ev.pairs[~inside].tolist():
                self.met_extra.setdefault(ev.names[x], set()).add(ev.names[y])

    def _contests(self, ev: Events, gid: np.ndarray, block: np.ndarray) -> None:
        """The batch fit's results of the chunk (field bots only), in file order."""
        if not len(ev.r_rec):
            return
        shape_of = np.zeros(len(ev.r_shapes), np.int8)
        for c in _first_seen(ev.r_shape):  # new shapes and rank patterns numbered in file order
            shape_of[c] = self._code(self.shapes, ev.r_shapes[c])
        rank_of = np.zeros(len(ev.r_pats), np.int32)
        for c in _first_seen(ev.r_pat):
            rank_of[c] = self.rank_pats.setdefault(ev.r_pats[c], len(self.rank_pats))
        self.c_shape.extend(shape_of[ev.r_shape])
        self.c_rank.extend(rank_of[ev.r_pat])
        self.c_flat.extend(gid[ev.r_flat])
        f, new = number(block[ev.r_rec], self.fit_blocks, len(self.fit_block_src))
        self.fit_block_src.extend(new)
        self.c_block.extend(f)

    def _check(self) -> None:
        """:raises ValueError: if the columns' lengths disagree (a checkpoint of another layout)."""
        n = {name: len(getattr(self, name)) for name in _COLS}
        groups = (("matches", "wins", "rank_sum", "forfeits", "fin_faults"), ("block_lineup", "block_deal"),
                  ("slot_bot", "slot_block", "s_sum", "s_n", "e_sum", "e_sq", "e_n"), ("c_shape", "c_rank", "c_block"))
        sizes = [math.prod(s) for s in self.shapes]
        ok = (all(len({n[c] for c in g}) == 1 for g in groups) and n["matches"] == len(self.names) == len(self.faults)
              and n["lineup_off"] == n["lineup_hash"] + 1 and int(self.lineup_off.v[-1]) == len(self.lineup_blob)
              and self.met.shape == (len(self.field),) * 2 and len(self.slots) == n["slot_bot"]
              and len(self.blocks) == n["block_lineup"] and len(self.fit_blocks) == n["fit_block_src"]
              and (not n["c_shape"] or 0 <= int(self.c_shape.v.min()) <= int(self.c_shape.v.max()) < len(sizes))
              and n["c_flat"] == int(np.dot(np.bincount(self.c_shape.v.astype(np.int64),
                                                        minlength=len(sizes)), np.array(sizes, np.int64))))
        if not ok:
            raise ValueError("the counters' sizes disagree")

    @staticmethod
    def _code(table: list, item: Any) -> int:
        if item not in table:
            table.append(item)
        return table.index(item)

    # ---------------------------------------------------------------- tables
    def bot_stats(self) -> dict[str, dict[str, Any]]:
        """Per bot (the field first, then any other name seen): ``matches``, ``wins``,
        ``win_rate``, ``mean_rank`` (0-based), ``score`` with ``score_low``/``score_high``,
        ``faults``, ``forfeits`` — as :func:`arena.tables.bot_stats`. The interval is the block
        bootstrap's (:func:`arena.stats.bootstrap_ci`) below :data:`arena.stats.T_FROM` blocks,
        else :func:`arena.stats.block_t_cis`."""
        n = len(self.names)
        played = self.s_n.v > 0
        pos: np.ndarray | None = None  # the slots taken, in order; None: every slot, in place
        if bool(played.all()):  # the columns themselves (at 4M slots a copy of each was ~100 MB)
            sb, ss, sn = self.slot_bot.v, self.s_sum.v, self.s_n.v
        else:
            pos = np.flatnonzero(played)
            sb, ss, sn = self.slot_bot.v[pos], self.s_sum.v[pos], self.s_n.v[pos]
        del played
        if not stats.exact_sums(ss, sn):  # sums that round: taken in each bot's (lineup, deal) order
            order = self._canonical_slots(np.arange(len(sn)) if pos is None else pos)
            sb, ss, sn, pos = self.slot_bot.v[order], self.s_sum.v[order], self.s_n.v[order], order
        m, lo, hi, nb = stats.block_t_cis(sb, ss, sn, n)  # the same digits in any order of the journal
        small = np.flatnonzero((nb > 0) & (nb < stats.T_FROM))
        if len(small):  # the bootstrap resamples each bot's blocks in (lineup, deal) order
            hit = np.flatnonzero(np.isin(sb, small))
            few = hit if pos is None else pos[hit]
            few = self._canonical_slots(few)
            fb = self.slot_bot.v[few]
            cut = np.searchsorted(fb, np.arange(n + 1))
            for j in small.tolist():
                sel = few[cut[j]:cut[j + 1]]
                m[j], lo[j], hi[j] = _bootstrap(self.s_sum.v[sel], self.s_n.v[sel], seed=len(self.names[j]))
        out = {}
        mat, win, rs = self.matches.v.tolist(), self.wins.v.tolist(), self.rank_sum.v.tolist()
        ff, fo = self.fin_faults.v.tolist(), self.forfeits.v.tolist()
        for i, b in enumerate(self.names):
            k = mat[i]
            out[b] = {"matches": k, "wins": win[i], "rank_sum": rs[i], "faults": ff[i], "forfeits": fo[i],
                      "score": float(m[i]), "score_low": float(lo[i]), "score_high": float(hi[i]),
                      "mean_rank": rs[i] / k if k else float("nan"), "win_rate": win[i] / k if k else float("nan")}
        return out

    def fault_counts(self) -> tuple[dict[str, dict[str, int]], dict[str, tuple[MatchRecord, Any]]]:
        """``(faults by class per name, (record, fault) of its first fault per name)`` (names with
        faults only; a ``disabled`` first fault only if it has no other)."""
        return ({self.names[i]: f for i, f in enumerate(self.faults) if f},
                {self.names[i]: f for i, f in self.first.items()})

    def efficiency(self) -> dict[str, Any]:
        """:func:`arena.tables.duplicate_efficiency` from the counters (sums of the complete
        blocks' rewards and squares per (bot, lineup) group)."""
        en = self.e_n.v
        k = int(en.max()) if len(en) else 0
        out: dict[str, Any] = {"factor": float("nan"), "blocks": 0, "bot_blocks": 0, "block_size": k,
                               "var_single": float("nan"), "var_block_mean": float("nan")}
        if k == 0:
            return out
        # the slots of complete blocks, then of groups with 2+ of them; the columns themselves
        # where every slot qualifies (no copies: at 1M records each is 2M entries)
        full: Any = slice(None) if bool((en == k).all()) else np.flatnonzero(en == k)
        # a (bot, lineup) group has at most as many blocks as its lineup: slots of lineups with
        # one block never count (four random bots of 1,000 a match: every slot; the groups' sort
        # of 4M keys took ~110 MB for nothing)
        several = (np.bincount(self.block_lineup.v, minlength=len(self.lineup_hash)) >= 2)[
            self.block_lineup.v[self.slot_block.v[full]]]
        if not bool(several.all()):
            full = (np.flatnonzero(en == k) if isinstance(full, slice) else full)[several]
        del several
        block = self.slot_block.v[full]
        span = len(self.lineup_hash) + 1
        narrow = (len(self.names) + 1) * span < 2**31  # the key fits 4 bytes (1,000 bots, 430k lineups: yes)
        key = self.slot_bot.v[full].astype(np.int32 if narrow else np.int64)
        key *= span
        key += self.block_lineup.v[block]
        grp, size = _groups(key)
        del key
        keep = size[grp] >= 2  # groups with 2+ complete blocks
        everyone = bool(keep.all())
        if not everyone:
            grp, block = grp[keep], block[keep]
        s, q = self.e_sum.v[full], self.e_sq.v[full]
        if not everyone:
            s, q = s[keep], q[keep]
        del keep
        out["blocks"] = int(np.count_nonzero(np.bincount(block))) if len(block) else 0
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

    def _canonical_slots(self, pos: np.ndarray) -> np.ndarray:
        """The block slots ``pos`` ordered by bot, then by their block's ``(lineup, deal)``: an order
        that does not depend on the journal's line order."""
        if not len(pos):
            return pos
        blk = self.slot_block.v[pos]
        used, inv = np.unique(blk, return_inverse=True)
        canon = self._canon(self.block_lineup.v[used], self.block_deal.v[used])[inv]
        return pos[_sort_by((self.slot_bot.v[pos].astype(np.int64), canon))]

    def _block_order(self) -> np.ndarray:
        """Per fit block (numbered in file order), its index when the blocks are sorted by
        ``(lineup, deal)``: a numbering that does not depend on the journal's order."""
        src = self.fit_block_src.v
        return self._canon(self.block_lineup.v[src], self.block_deal.v[src])

    def _canon(self, lid: np.ndarray, deal: np.ndarray) -> np.ndarray:
        """Per block given by its lineup code and deal, its index when they are sorted by
        ``(lineup name, deal)``. From :data:`HASH_ORDER_FROM` blocks on the lineups are ordered by
        their names' 64-bit hashes instead of the names (numpy, no Python sort of every block:
        the same independence of the journal's order; the names are used if two lineups'
        hashes collide)."""
        n = len(lid)
        new = np.empty(n, dtype=np.int64)
        if n >= HASH_ORDER_FROM:
            lh = self.lineup_hash.v
            by_hash = np.argsort(lh, kind="stable")
            if not (lh[by_hash][1:] == lh[by_hash][:-1]).any():  # no two lineups' hashes collide
                rank = np.empty(len(lh), np.int64)
                rank[by_hash] = np.arange(len(lh))  # each lineup's place by hash
                new[_sort_by((rank[lid], deal))] = np.arange(n)
                return new
        names = [self._lineup_name(i) for i in range(len(self.lineup_hash))]
        keys = list(zip([names[i] for i in lid.tolist()], deal.tolist()))
        new[sorted(range(n), key=keys.__getitem__)] = np.arange(n)
        return new

    def contests(self) -> tuple[Any, Any, np.ndarray, int]:
        """The batch fit's results: ``(sides, ranks, blocks, n_blocks)`` for
        :func:`arena.batchfit.build_design` (sides one ``(R, K, size)`` array and the ranks
        as :class:`arena.batchfit.RankCodes` when every result has one shape, else nested
        lists), in a canonical order — blocks by ``(lineup, deal)``, results within a block by
        content — so the fit, bootstrap included, is the same bit for bit whatever order the
        journal holds the records in (a rerun from a shuffled journal, an incremental update,
        a full rebuild)."""
        pats = list(self.rank_pats)
        c_rank = self.c_rank.v  # int32 codes (and int32 canonical codes: 4 bytes a result each)
        canon = {p: i for i, p in enumerate(sorted(pats))}
        rank_c = np.array([canon[p] for p in pats], dtype=np.int32)[c_rank] if pats else np.zeros(0, np.int32)
        block = self._block_order()[self.c_block.v] if len(self.c_block) else np.zeros(0, np.int64)
        c_shape = self.c_shape.v
        used = np.unique(c_shape).tolist()
        flat_all = self.c_flat.v
        if len(used) <= 1:
            k, size = self.shapes[used[0]] if used else (2, 1)
            flat = flat_all.reshape(len(rank_c), k * size)
            perm = _sort_by((block, *flat.T, rank_c)) if len(rank_c) else np.zeros(0, dtype=np.int64)
            sides: Any = flat[perm].reshape(len(rank_c), k, size)
            ranks: Any = RankCodes(c_rank[perm], pats)
        else:
            rows, pos = [], 0
            for r, code in enumerate(c_shape.tolist()):
                k, size = self.shapes[code]
                row = [flat_all[pos + j * size:pos + (j + 1) * size].tolist() for j in range(k)]
                rows.append((int(block[r]), row, pats[c_rank[r]], r))
                pos += k * size
            rows.sort(key=lambda x: (x[0], x[1], x[2]))
            perm = np.array([x[3] for x in rows], dtype=np.int64)
            sides = [x[1] for x in rows]
            ranks = [list(x[2]) for x in rows]
        return sides, ranks, block[perm], len(self.fit_block_src)

    # ---------------------------------------------------------------- checkpoint form
    def reserve(self, more: int) -> None:
        """Before ``more`` records are added to counters that hold some already: size each long
        column and index for them at its present entries per record, plus :data:`ROOM_MARGIN`,
        once, instead of growing it by a quarter again and again — each growth holds the old
        array and its copy at once (a full build: none after its first chunk). The spare is
        never written, so it is never resident (numpy's zeros of ≥ 4 MiB are fresh mappings:
        :mod:`arena.heap`); nothing for short ones."""
        if self.count <= 0 or more <= 0 or self.closed:
            return
        for name in (*_COLS, *_INDEXES):
            arr = getattr(self, name)
            if len(arr) >= RESERVE_FROM:
                arr.reserve(len(arr) + math.ceil(len(arr) * more / self.count * (1 + ROOM_MARGIN)) + 64)

    def arrays(self) -> dict[str, np.ndarray]:
        """Every counter as a numpy array and the small ones in one JSON header (``head``,
        UTF-8 bytes): what :meth:`from_arrays` reads back (no pickle)."""
        small = {"field": self.field, "rate_forfeits": self.rate_forfeits, "names": self.names,
                 "faults": self.faults, "first": [[i, _record_json(r), _fault_json(f)] for i, (r, f) in self.first.items()],
                 "count": self.count, "lineup_other": self.lineup_other,
                 "met_extra": {a: sorted(bs) for a, bs in self.met_extra.items()},
                 "shapes": [list(s) for s in self.shapes], "rank_pats": [list(p) for p in self.rank_pats]}
        out = {"tallies": np.frombuffer(json.dumps(small).encode(), np.uint8), "met": self.met,
               "lineup_blob": np.frombuffer(bytes(self.lineup_blob), np.uint8)}
        out.update({name: getattr(self, name).v for name in _COLS})
        if self.closed:
            raise RuntimeError("these counters were closed (Tallies.close): their lookup indexes are gone")
        for name in _INDEXES:
            out[name + "_keys"], out[name + "_vals"] = getattr(self, name).keys, getattr(self, name).vals
        return out

    def close(self) -> None:
        """Drop the lookup indexes (lineups, blocks, slots, fit blocks: ~55 MB at 1M records), needed
        only to add records or to checkpoint; the tables read from a closed :class:`Tallies` as
        before, :meth:`add_all` and :meth:`arrays` raise ``RuntimeError``."""
        for name in _INDEXES:
            setattr(self, name, Sorted())
        self.closed = True

    def dump(self, f: Any) -> None:
        """Write :meth:`arrays` to the open binary file ``f`` (``numpy.savez``: no pickle)."""
        np.savez(f, **self.arrays())  # type: ignore[arg-type]

    @classmethod
    def load(cls, f: Any) -> Tallies:
        """The counters :meth:`dump` wrote to ``f`` (read with ``allow_pickle=False``)."""
        with np.load(f, allow_pickle=False) as z:
            return cls.from_arrays(z)

    @classmethod
    def from_arrays(cls, z: Any, room: float = 0.0) -> Tallies:
        """The counters :meth:`arrays` gave (``z``: a mapping of names to arrays, e.g. an ``NpzFile``),
        the long columns and indexes with spare capacity for ``room`` × their entries more (the
        records about to be added, per record counted: nothing is copied to make room later).

        :raises ValueError, KeyError, TypeError: for arrays of another layout."""
        small = json.loads(bytes(np.asarray(z["tallies"], np.uint8)).decode())
        t = cls.__new__(cls)
        t.field, t.rate_forfeits, t.names = list(small["field"]), bool(small["rate_forfeits"]), list(small["names"])
        t.index = {b: i for i, b in enumerate(t.names)}
        t.faults = [{str(k): int(v) for k, v in f.items()} for f in small["faults"]]
        t.first = {int(i): (_record_of(r), RecordFault(**f)) for i, r, f in small["first"]}
        t.count, t.resumed_from, t.closed = int(small["count"]), 0, False
        t.lineup_other = {str(k): int(v) for k, v in small["lineup_other"].items()}
        t.met_extra = {str(a): set(bs) for a, bs in small["met_extra"].items()}
        t.shapes = [(int(a), int(b)) for a, b in small["shapes"]]
        t.rank_pats = {tuple(int(x) for x in p): i for i, p in enumerate(small["rank_pats"])}
        t.met = np.asarray(z["met"], dtype=bool)
        t.lineup_blob = bytearray(np.asarray(z["lineup_blob"], np.uint8).tobytes())
        for name, dtype in _COLS.items():
            col = _Col(dtype)
            col.a, col.n = _member(z, name, dtype, room)
            setattr(t, name, col)
        for name in _INDEXES:
            (k, nk), (v, nv) = _member(z, name + "_keys", np.int64, room), _member(z, name + "_vals", np.int32, room)
            if nk != nv:
                raise ValueError(f"{name}: {nk} keys, {nv} values")
            setattr(t, name, Sorted(k, v, nk))
        t._check()
        return t


def _member(z: Any, name: str, dtype: Any, room: float) -> tuple[np.ndarray, int]:
    """``(buffer, entries)``: the 1-D ``dtype`` array ``name`` of ``z`` at the start of a buffer
    with spare capacity for ``room`` × its entries more (long arrays only: :data:`RESERVE_FROM`).
    From an uncompressed ``NpzFile`` (what :meth:`Tallies.dump` writes) it is read into that
    buffer a MiB at a time, so a column is never held twice; the spare is never written.

    :raises ValueError: for another dtype or shape, or a cut member."""
    zf = getattr(z, "zip", None)
    member = name + ".npy"
    if zf is not None and member in zf.namelist() and zf.getinfo(member).compress_type == zipfile.ZIP_STORED:
        with zf.open(member) as f:
            version = np.lib.format.read_magic(f)
            header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _fortran, dt = header(f)
            if dt != np.dtype(dtype) or len(shape) != 1:
                raise ValueError(f"{name}: {dt} {shape}")
            n = int(shape[0])
            buf = np.zeros(n + (math.ceil(n * room) + 64 if room > 0 and n >= RESERVE_FROM else 0), dtype)
            view = memoryview(buf.view(np.uint8).data)[:n * buf.itemsize]
            at = 0
            while at < len(view):
                got = f.readinto(view[at:at + (1 << 20)])
                if not got:
                    raise ValueError(f"{name}: cut after {at} bytes")
                at += got
            return buf, n
    a = z[name]
    if a.dtype != dtype or a.ndim != 1:
        raise ValueError(f"{name}: {a.dtype} {a.shape}")
    if room > 0 and len(a) >= RESERVE_FROM:
        buf = np.zeros(len(a) + math.ceil(len(a) * room) + 64, dtype)
        buf[:len(a)] = a
        return buf, len(a)
    return np.ascontiguousarray(a, dtype=dtype), len(a)


def _count(counts: np.ndarray, idx: np.ndarray) -> None:
    """``counts[i] += (occurrences of i in idx)``, over the span ``idx`` covers only (a chunk's
    slots are mostly new ones, at the end: no temporary as long as every slot)."""
    if len(idx):
        lo = int(idx.min())
        got = np.bincount(idx - lo)
        counts[lo:lo + len(got)] += got.astype(counts.dtype)


def _sort_by(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """The stable order of rows by the non-negative integer ``keys`` (most significant first): the
    permutation ``np.lexsort(keys[::-1])`` gives, by one sort of the keys packed into 63 bits when
    they fit (a sort of ``len(keys)`` keys costs as many passes), else by ``np.lexsort``."""
    bits = [max(int(k.max()), 1).bit_length() if len(k) else 1 for k in keys]
    if sum(bits) > 63 or any(len(k) and int(k.min()) < 0 for k in keys):
        return np.lexsort(keys[::-1])
    packed = np.zeros(len(keys[0]), np.int64)
    for k, b in zip(keys, bits):
        packed <<= b
        packed |= k.astype(np.int64)
    order = np.argsort(packed)  # the fast (unstable) sort: the same order when no two rows are equal
    srt = packed[order]
    if (srt[1:] == srt[:-1]).any():
        return np.argsort(packed, kind="stable")
    return order


def _first_seen(codes: np.ndarray) -> list[int]:
    """The distinct values of ``codes`` in order of first appearance."""
    u, first = np.unique(codes, return_index=True)
    return u[np.argsort(first, kind="stable")].tolist()


def _fault_json(f: RecordFault) -> dict[str, Any]:
    return {"seat": f.seat, "bot": f.bot, "cls": f.cls, "move": f.move, "detail": f.detail,
            "stderr_tail": f.stderr_tail}


_KEPT = ("match_id", "lineup", "game", "deal_index", "rotation", "seats", "status", "ranks", "scores", "bot_versions",
         "time_ms", "fingerprint", "teams", "side_ranks", "rewards")


def _record_json(r: MatchRecord) -> dict[str, Any]:
    """A first fault's record for the checkpoint's JSON (its decision times left out)."""
    out = {k: getattr(r, k) for k in _KEPT}
    out["faults"] = [_fault_json(f) for f in r.faults]
    return out


def _record_of(j: dict[str, Any]) -> MatchRecord:
    """:func:`_record_json` read back (lists as tuples; what :func:`arena.faults.first_fault` reads equal)."""
    def tup(x: Any) -> Any:
        """``x`` with every nested list as a tuple."""
        return tuple(tup(y) for y in x) if isinstance(x, list) else x

    kw = {k: tup(j[k]) for k in _KEPT}
    return MatchRecord(**kw, faults=tuple(RecordFault(**f) for f in j["faults"]), move_ms=())


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(key, return_inverse=True, return_counts=True)[1:]`` by one argsort: each
    entry's group (the rank of its key among the distinct keys) and the groups' sizes (numpy's
    own path took 0.70 CPU-s on 2M keys at 1M records, this one 0.15)."""
    if not len(key):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(key)
    srt = key[order]
    new = np.empty(len(key), bool)
    new[0] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    del srt
    grp = np.empty(len(key), np.int32 if len(key) < 2**31 else np.int64)
    rank = np.cumsum(new, dtype=grp.dtype)
    rank -= 1
    grp[order] = rank
    del order, rank
    return grp, np.diff(np.append(np.flatnonzero(new), len(key)))


def lineup_hashes(enc: list[bytes]) -> np.ndarray:
    """The 64-bit hashes of lineups' UTF-8 names: :func:`arena.record.id_hash` of each."""
    b2 = hashlib.blake2b
    return np.fromiter((int.from_bytes(b2(e, digest_size=8).digest(), "little", signed=True) for e in enc),
                       np.int64, len(enc))


def _bootstrap(sums: np.ndarray, counts: np.ndarray, seed: int) -> tuple[float, float, float]:
    """:func:`arena.stats.bootstrap_ci` of blocks given by their sums and sizes."""
    return stats.bootstrap_ci([[float(s)] + [0.0] * (int(c) - 1) for s, c in zip(sums, counts)], seed=seed)
