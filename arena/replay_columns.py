"""The TrueSkill replay read straight from the journal's columns (issue 18).

:func:`arena.checkpoint.replay` over a :class:`arena.record_view.RecordView` (what ``arena
leaderboard`` reads) goes through here instead of building a :class:`arena.record.MatchRecord`
per item: the records it can take from the columns — plain ones (:meth:`arena.columns.Columns.append`)
with status ``ok`` whose two sides are one bot each (two players, or ``partners: self``) — are
rated by :meth:`arena.ratings.Rater.pair` from their bot codes and ranks (two sides of several
bots — ``partners: mixed`` — by :meth:`arena.ratings.Rater.update` of the sides built from the
seat codes, as :meth:`~arena.ratings.Rater.record` does), their prefix digest
fed from the id and fingerprint bytes, their tie counts taken with numpy; every other record
(free-for-all, forfeits, records kept whole) is built and goes through
:meth:`arena.ratings.Rater.record` and :func:`arena.checkpoint._feed` as before. So the
ratings, the moves, the tie counts and the chained digests are **the same values** as the
record path's (``tests/ratings/test_replay_columns.py``): a checkpoint written by either
resumes with the other.

The columns are gathered in slices of :data:`CHUNK` records (a few MB of arrays at a time,
whatever the journal's length).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from arena.columns import _np
from arena.record import MatchRecord, teams_of
from arena.record_view import RecordView

#: records gathered from the columns at a time
CHUNK = 1 << 15
_SEP = b"\x1f"


def _teams(names: list[str], game: int, n: int) -> tuple[tuple[int, ...], ...] | None:
    """The game's teams for ``n`` seats (:func:`arena.record.teams_of`, cached there); None for a
    game the registry does not know (its records take the record path, which raises as before)."""
    try:
        return teams_of(names[game], n)
    except Exception:
        return None


class _Slice:
    """The columns of ``view.rows[lo:hi]`` the replay reads.

    :ivar fast: per record, whether it takes :meth:`Rater.pair` (plain, ``ok``, two one-bot sides).
    :ivar a, b: bot codes of the two sides (fast records; 0 otherwise).
    :ivar ra, rb: their side ranks (fast and team records).
    :ivar team: per record, whether it takes :meth:`Rater.update` from its seat codes (plain, ``ok``,
        two sides, one of them of several bots: ``partners: mixed``).
    :ivar tdef, s_lo: a team record's teams (index into :attr:`teams`) and its first seat's place.
    """

    def __init__(self, view: RecordView, lo: int, hi: int) -> None:
        cols = view.cols
        rows = view.rows[lo:hi]
        self.rows = rows
        m = len(rows)
        # every column in its own item type (arena.columns narrows them), widened where it is used
        shape = _np(cols.shape)[rows]
        status = _np(cols.status)[rows].astype(np.int64)
        game = _np(cols.game)[rows].astype(np.int64)
        end = _np(cols.seat_end)
        s_hi = end[rows].astype(np.int64)
        s_lo = np.where(rows > 0, end[np.maximum(rows - 1, 0)], 0).astype(np.int64)
        nseat = s_hi - s_lo
        seats = _np(cols.seats)
        ranks = _np(cols.ranks)
        rank_at = np.asarray(cols._rank_at, dtype=np.int64)[rows] if len(rows) else np.zeros(0, np.int64)
        ok = cols._code.get("ok", -2)
        plain = (shape >= 0) & (shape & 1 != 0)
        self.fast = np.zeros(m, dtype=bool)
        self.a = np.zeros(m, dtype=np.int64)
        self.b = np.zeros(m, dtype=np.int64)
        self.ra = np.zeros(m, dtype=np.int64)
        self.rb = np.zeros(m, dtype=np.int64)
        #: plain records played to the end: (tied adjacent side pairs, side pairs) of all of them
        self.tied = self.pairs = 0
        self.counted = np.zeros(m, dtype=bool)
        self.team = np.zeros(m, dtype=bool)
        self.tdef = np.zeros(m, dtype=np.int64)
        self.teams: list[tuple[tuple[int, ...], ...]] = []
        self.s_lo, self.s_hi = s_lo, s_hi
        cand = plain & (status == ok)
        if cand.any():
            keys = np.unique(np.stack([game[cand], nseat[cand]], axis=1), axis=0)
            for g, n in keys.tolist():
                teams = _teams(cols.names, int(g), int(n))
                if teams is None or not all(teams):
                    continue
                sel = np.flatnonzero(cand & (game == g) & (nseat == n))
                side = np.stack([ranks[rank_at[sel] + t[0]].astype(np.int64) for t in teams], axis=1)
                srt = np.sort(side, axis=1)
                self.tied += int((srt[:, 1:] == srt[:, :-1]).sum())
                self.pairs += len(sel) * (len(teams) - 1)
                self.counted[sel] = True
                if len(teams) != 2:
                    continue
                first = [seats[s_lo[sel] + t[0]].astype(np.int64) for t in teams]
                single = np.ones(len(sel), dtype=bool)
                for t, f in zip(teams, first):
                    for s in t[1:]:
                        single &= seats[s_lo[sel] + s] == f
                pick = sel[single]
                self.fast[pick] = True
                self.a[pick], self.b[pick] = first[0][single], first[1][single]
                self.ra[pick], self.rb[pick] = side[single, 0], side[single, 1]
                many = sel[~single]
                if len(many):
                    self.team[many] = True
                    self.tdef[many] = len(self.teams)
                    self.teams.append(teams)
                    self.ra[many], self.rb[many] = side[~single, 0], side[~single, 1]
        idend, fpend = _np(cols.id_end), _np(cols.fp_end)
        prev = np.maximum(rows - 1, 0)
        self.i1, self.f1 = idend[rows].astype(np.int64), fpend[rows].astype(np.int64)
        self.i0 = np.where(rows > 0, idend[prev], 0).astype(np.int64)
        self.f0 = np.where(rows > 0, fpend[prev], 0).astype(np.int64)
        self.status = status


def _slices(view: RecordView, start: int = 0) -> Iterator[tuple[int, _Slice]]:
    for lo in range(start, len(view), CHUNK):
        yield lo, _Slice(view, lo, min(len(view), lo + CHUNK))


def ties(view: RecordView, stop: int | None = None) -> tuple[int, int]:
    """:func:`arena.checkpoint._ties` of ``view[:stop]`` (its played records' ``(tied, pairs)``),
    from the columns (records kept whole are built)."""
    v = view if stop is None else view[:stop]
    tied = pairs = 0
    for _, sl in _slices(v):
        tied += sl.tied
        pairs += sl.pairs
        for k in np.flatnonzero(~sl.counted).tolist():
            rec = v.cols.record(int(sl.rows[k]))
            if rec.played:
                r = sorted(rec.side_ranks)
                pairs += len(r) - 1
                tied += sum(a == b for a, b in zip(r, r[1:]))
    return tied, pairs


def record_bytes(rec: MatchRecord) -> bytes:
    """What the chained prefix digest takes of a record (:func:`arena.checkpoint._feed`): match id,
    fingerprint, status, side ranks, the seats' bots (``\x1e``-joined) and the faulty seats —
    everything :meth:`arena.ratings.Rater.record` reads — ``\x1f``-separated (the same bytes the
    columns give, :func:`_tail`)."""
    return (f"{rec.match_id}\x1f{rec.fingerprint}\x1f{rec.status}\x1f{rec.side_ranks}\x1f"
            f"{chr(0x1e).join(rec.seats)}\x1f{','.join(str(f.seat) for f in rec.faults)}").encode()


#: the most :func:`_tail` bytes kept for reuse while replaying: a field of few lineups repeats its
#: keys, a large one hardly does (four random bots of 1,000 a match: every key new, 1M of them
#: held ~360 MB at the end of a 1M-record replay)
TAILS_MAX = 1 << 16


def _tail(names: list[str], key: tuple[int, ...]) -> bytes:
    """:func:`record_bytes` after the fingerprint for a plain record (no faults) of ``key`` =
    ``(status code, side rank a, side rank b, *seat codes)``."""
    return (_SEP + names[key[0]].encode() + _SEP + str(key[1:3]).encode() + _SEP
            + "\x1e".join(names[c] for c in key[3:]).encode() + _SEP)


def _keys(sl: _Slice, seats: Any) -> list[tuple[int, ...]]:
    """Per record of ``sl``, ``(status code, side rank a, side rank b, *seat codes)`` (the key of
    its :func:`_tail`; the seat codes are read for fast and team records only)."""
    use = (sl.fast | sl.team).tolist()
    lo, hi = sl.s_lo.tolist(), sl.s_hi.tolist()
    return [(st, a, b, *seats[x:y]) if u else (st, a, b)
            for st, a, b, u, x, y in zip(sl.status.tolist(), sl.ra.tolist(), sl.rb.tolist(), use, lo, hi)]


def play(rater: Any, view: RecordView, start: int, marks: Any, h: Any, snaps: dict[int, dict[str, Any]],
         history: Any, snapshot: Any, offset: int = 0, counts: list[int] | None = None) -> None:
    """:func:`arena.checkpoint._play` of ``view`` (rated records in replay order) from the columns:
    replay ``view[start:]`` with ``rater`` (:class:`arena.ratings.Rater`), feed the chained digest
    ``h`` (``h.d``: the digest bytes), store ``{"n", "digest", **snapshot(rater)}`` in ``snaps`` at
    ``marks`` (positions from ``offset``), append the moves to ``history`` (if not None), add the
    tie counts to ``counts``."""
    cols = view.cols
    names, ids, fps, seats = cols.names, cols.ids, cols.fps, cols.seats
    marks = set(marks)
    blake2b = hashlib.blake2b
    pair, record, update = rater.pair, rater.record, rater.update
    tails: dict[tuple[int, int, int], bytes] = {}
    for lo, sl in _slices(view, start):
        if counts is not None:
            counts[0] += sl.tied
            counts[1] += sl.pairs
        d = h.d
        # 1: Rater.pair, 2: Rater.update of the seats' sides (as Rater.record), 0: the record built
        kind = (sl.fast + 2 * sl.team).tolist()
        tdef, s_lo, teams = sl.tdef.tolist(), sl.s_lo.tolist(), sl.teams
        keys = _keys(sl, seats)
        for k, (fa, a, b, i0, i1, f0, f1, key) in enumerate(zip(kind, sl.a.tolist(), sl.b.tolist(), sl.i0.tolist(),
                                                                  sl.i1.tolist(), sl.f0.tolist(), sl.f1.tolist(), keys)):
            moved: dict[str, tuple[float, float]] | None = {} if history is not None else None
            if fa:
                ra, rb = key[1], key[2]
                if fa == 1:
                    pair(names[a], names[b], ra, rb, moved)
                else:  # MatchRecord.sides: per team its distinct bots in seat order
                    at = s_lo[k]
                    got = update(tuple(tuple(dict.fromkeys([names[seats[at + s]] for s in t])) for t in teams[tdef[k]]),
                                 (ra, rb))
                    if moved is not None:
                        moved.update(got)
                tail = tails.get(key)
                if tail is None:
                    if len(tails) >= TAILS_MAX:
                        tails.clear()
                    tail = tails[key] = _tail(names, key)
                d = blake2b(d + ids[i0:i1] + _SEP + fps[f0:f1] + tail, digest_size=16).digest()
            else:
                rec: MatchRecord = cols.record(int(sl.rows[k]))
                if counts is not None and rec.played and not sl.counted[k]:
                    r = sorted(rec.side_ranks)
                    counts[1] += len(r) - 1
                    counts[0] += sum(x == y for x, y in zip(r, r[1:]))
                got = record(rec)
                if moved is not None:
                    moved.update(got)
                d = blake2b(d + record_bytes(rec), digest_size=16).digest()
            if history is not None:
                history.append(moved)
            pos = offset + lo + k + 1
            if pos in marks:
                snaps[pos] = {"n": pos, "digest": d.hex(), **snapshot(rater)}
        h.d = d


def chain(view: RecordView, h: Any, stop: int, at: Any) -> dict[int, str]:
    """Feed ``view[:stop]`` into the chained digest ``h`` (:func:`record_bytes`, from the columns)
    and return the hex digest after each position in ``at`` (1-based)."""
    cols = view.cols
    names, ids, fps, seats = cols.names, cols.ids, cols.fps, cols.seats
    want = set(at)
    out: dict[int, str] = {}
    blake2b = hashlib.blake2b
    tails: dict[tuple[int, int, int], bytes] = {}
    v = view[:stop]
    for lo, sl in _slices(v):
        d = h.d
        keys = _keys(sl, seats)
        for k, (fa, i0, i1, f0, f1, key) in enumerate(zip((sl.fast | sl.team).tolist(), sl.i0.tolist(), sl.i1.tolist(),
                                                          sl.f0.tolist(), sl.f1.tolist(), keys)):
            if fa:
                tail = tails.get(key)
                if tail is None:
                    if len(tails) >= TAILS_MAX:
                        tails.clear()
                    tail = tails[key] = _tail(names, key)
                d = blake2b(d + ids[i0:i1] + _SEP + fps[f0:f1] + tail, digest_size=16).digest()
            else:
                d = blake2b(d + record_bytes(cols.record(int(sl.rows[k]))), digest_size=16).digest()
            if lo + k + 1 in want:
                out[lo + k + 1] = d.hex()
        h.d = d
    return out
