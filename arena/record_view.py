"""A lazy, read-only sequence of records over :class:`arena.columns.Columns` (issue 18).

:class:`RecordView` is a ``Sequence[MatchRecord]`` over chosen rows of one
:class:`~arena.columns.Columns`: it builds a light record per index when asked, so iterating it
many times never holds every record at once. Hot consumers (the replay, the counters, the
batch fit) read its numpy columns directly (:meth:`RecordView.deal_index`,
:meth:`RecordView.seat_codes`, :meth:`RecordView.rank_matrix`, ...), and
:meth:`RecordView.replay_order` sorts by the replay key on the columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from arena.columns import Columns, _np, concat
from arena.record import MatchRecord


class RecordView(Sequence[MatchRecord]):
    """A read-only sequence of the records ``cols`` holds at ``index`` (an int64 array of rows, kept as ``rows``).

    Each item is built when asked (:meth:`Columns.record`): nothing holds every record.
    """

    def __init__(self, cols: Columns, index: np.ndarray | None = None) -> None:
        self.cols = cols
        self.rows = np.arange(len(cols), dtype=np.int64) if index is None else np.asarray(index, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> MatchRecord: ...

    @overload
    def __getitem__(self, i: slice) -> RecordView: ...

    def __getitem__(self, i: int | slice) -> MatchRecord | RecordView:
        if isinstance(i, slice):
            rows = self.rows[i]
            if not len(rows) and self.cols.pieces() is not None:  # nothing to read: not deferred columns
                return RecordView(concat([]), rows)
            part = self.cols.tail_after(int(rows.min())) if len(rows) else None
            if part is not None:  # wholly in the new rows of deferred columns: a view of those alone
                return RecordView(part[1], rows - part[0])
            return RecordView(self.cols, rows)
        return self.cols.record(int(self.rows[i]))

    def parts(self) -> Iterator[RecordView]:
        """This view cut at its columns' pieces (:meth:`Columns.pieces`), each part a view of one
        piece's columns read alone — a pass over the parts holds one piece, not every column;
        the view itself when its columns are in memory or its rows are not in file order."""
        pieces, rows = self.cols.pieces(), self.rows
        if pieces is None or (len(rows) > 1 and bool((np.diff(rows) <= 0).any())):
            yield self
            return
        hashes = self.cols.id_hash
        for lo, n, read in pieces:
            a, b = np.searchsorted(rows, [lo, lo + n]).tolist()
            if b > a:
                cols = read()
                if hashes is not None and cols.id_hash is None:
                    cols.id_hash = np.asarray(hashes)[lo:lo + n]
                yield RecordView(cols, rows[a:b] - lo)

    def __iter__(self) -> Iterator[MatchRecord]:
        rec = self.cols.record
        for i in self.rows.tolist():
            yield rec(i)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return NotImplemented if not isinstance(other, Sequence) else False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------------- columns for hot consumers

    def deal_index(self) -> np.ndarray:
        """Per record, its deal index (int64; 0 for a record kept whole, see :meth:`Columns.append`)."""
        return _np(self.cols.deal)[self.rows]

    def rotation(self) -> np.ndarray:
        """Per record, its rotation (int64, as :meth:`deal_index`)."""
        return _np(self.cols.rot)[self.rows]

    def seat_codes(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """``(seat start per record, bot code per seat of the whole column, name table)``: record ``k``'s
        seats are ``codes[start[k]:start[k] + players]`` decoded by the name table."""
        end = _np(self.cols.seat_end).astype(np.int64)
        start = np.concatenate(([0], end[:-1])) if len(end) else end
        return start[self.rows], _np(self.cols.seats), self.cols.names

    # Column accessors (published in /work/notes/s7/columns_api.md for the replay and the counters).
    # Each returns one value per record of the view (row k = ``self[k]``) unless said otherwise;
    # integer dtypes may be narrow (int8/int16/int32): cast before arithmetic that could overflow.
    # A record that is not :meth:`plain` is kept whole: read it as ``self[k]`` (a MatchRecord).

    def plain(self) -> np.ndarray:
        """Per record, whether its fields are in the columns (bool); False: read ``self[k]``."""
        return _np(self.cols.shape)[self.rows] >= 0

    def players(self) -> np.ndarray:
        """Per record, its number of seats (int64)."""
        end = _np(self.cols.seat_end).astype(np.int64)
        return (end - np.concatenate(([0], end[:-1])).astype(end.dtype))[self.rows] if len(end) else \
            np.zeros(len(self.rows), np.int64)

    def seat_matrix(self, players: int) -> np.ndarray:
        """``(records, players)`` bot codes (into :attr:`names`) of records all of ``players`` seats.

        :raises ValueError: if a record of the view has another number of seats."""
        start, codes, _names = self.seat_codes()
        if len(self.rows) and bool((self.players() != players).any()):
            raise ValueError(f"seat_matrix({players}): the view holds records of another player count")
        return codes[start[:, None] + np.arange(players)[None, :]] if len(self.rows) else \
            np.zeros((0, players), codes.dtype)

    @property
    def names(self) -> list[str]:
        """The name table the codes index (bots, games, statuses, versions)."""
        return self.cols.names

    def code_of(self, name: str) -> int:
        """The code of ``name`` in :attr:`names` (-1 if absent: no record uses it)."""
        return self.cols._code.get(name, -1)

    def has_ranks(self) -> np.ndarray:
        """Per record, whether it is plain and has ranks (an outcome) in the columns (bool)."""
        shape = _np(self.cols.shape)[self.rows]
        return (shape >= 0) & (shape & 1 != 0)

    def rank_matrix(self, players: int) -> np.ndarray:
        """``(records, players)`` seat ranks (0 = first) of records all of ``players`` seats; rows
        without :meth:`has_ranks` are 0 (mask them).

        :raises ValueError: as :meth:`seat_matrix`."""
        if len(self.rows) and bool((self.players() != players).any()):
            raise ValueError(f"rank_matrix({players}): the view holds records of another player count")
        cols = self.cols
        if not hasattr(cols, "_rank_at"):
            cols.freeze()
        has = self.has_ranks()
        at = np.asarray(cols._rank_at, dtype=np.int64)[self.rows] if len(self.rows) else np.zeros(0, np.int64)
        ranks = _np(cols.ranks)
        out = np.zeros((len(self.rows), players), dtype=ranks.dtype)
        if len(ranks) and bool(has.any()):
            out[has] = ranks[at[has, None] + np.arange(players)[None, :]]
        return out

    def status_codes(self) -> np.ndarray:
        """Per record, its status as a code into :attr:`names` (``code_of("ok")`` etc.); a record
        kept whole has its own status here too."""
        return _np(self.cols.status)[self.rows]

    def game_codes(self) -> np.ndarray:
        """Per record, its game as a code into :attr:`names`."""
        return _np(self.cols.game)[self.rows]

    def id_hashes(self) -> np.ndarray | None:
        """Per record, :func:`arena.record.id_hash` of its match id (int64), when the reader kept
        them (:func:`arena.journal_cache.read` does); else None."""
        h = getattr(self.cols, "id_hash", None)
        return None if h is None else np.asarray(h, dtype=np.int64)[self.rows]

    def match_id(self, k: int) -> str:
        """The match id of record ``k`` (no record built)."""
        return self.cols.match_id(int(self.rows[k]))

    def fingerprint(self, k: int) -> str:
        """The fingerprint of record ``k`` (no record built)."""
        return self.cols.fingerprint(int(self.rows[k]))

    def replay_order(self, rate_forfeits: bool = False) -> RecordView:
        """The rated records (:meth:`MatchRecord.rated`) sorted by :meth:`MatchRecord.replay_key`,
        stably (equal keys keep their order) — what ``sorted(..., key=replay_key)`` gives, as a view.

        Computed on the columns (numpy: deal, rotation, the lineup's bytes in the id blob, which
        sort as the strings do), so no list of records or keys is held."""
        cols, rows = self.cols, self.rows
        if not len(rows):
            return RecordView(cols, rows)
        shape = _np(cols.shape)[rows]
        status = _np(cols.status)[rows]
        ok = cols._code.get("ok", -2)
        forfeit = cols._code.get("forfeit", -2) if rate_forfeits else -2
        rated = (shape >= 0) & (shape & 1 != 0) & ((status == ok) | (status == forfeit))
        deal = _np(cols.deal)[rows].astype(np.int64)
        rot = _np(cols.rot)[rows].astype(np.int64)
        lo, hi = _lineup_spans(cols, rows)
        whole = np.flatnonzero(shape < 0)
        extra_lineups: dict[int, bytes] = {}
        for k in whole.tolist():  # records kept whole: their own fields
            rec = cols.record(int(rows[k]))
            rated[k] = rec.rated(rate_forfeits)
            if rated[k]:
                if type(rec.deal_index) is not int or type(rec.rotation) is not int or \
                        max(abs(rec.deal_index), abs(rec.rotation)) >= 1 << 62:
                    return self._sorted_in_python(rate_forfeits)
                deal[k], rot[k] = rec.deal_index, rec.rotation
                extra_lineups[k] = rec.lineup.encode("utf-8", "surrogatepass")
        keep = np.flatnonzero(rated)
        if not len(keep):
            return RecordView(cols, np.zeros(0, np.int64))
        width = int(max([int((hi - lo)[keep].max())] + [len(x) for x in extra_lineups.values()]))
        blob = np.frombuffer(cols.ids, dtype=np.uint8)
        n = (hi - lo)[keep]
        at = np.searchsorted(keep, np.array(sorted(extra_lineups), dtype=np.int64))
        for j, lu in zip(at.tolist(), [extra_lineups[k] for k in sorted(extra_lineups)]):
            n[j] = len(lu)
        if width == 0:
            lin = np.zeros(len(keep), np.int64)
        else:
            fixed = np.zeros((len(keep), width), dtype=np.uint8)
            for c in range(0, len(keep), 1 << 16):  # gathered in slices: the index array stays small
                ks = keep[c:c + (1 << 16)]
                idx = lo[ks, None] + np.arange(width)[None, :]
                inside = idx < hi[ks, None]
                fixed[c:c + len(ks)] = np.where(inside, blob[np.minimum(idx, len(blob) - 1)], 0)
            for j, lu in zip(at.tolist(), [extra_lineups[k] for k in sorted(extra_lineups)]):
                fixed[j] = 0
                fixed[j, :len(lu)] = np.frombuffer(lu, dtype=np.uint8)
            if _has_nul(fixed, n):
                return self._sorted_in_python(rate_forfeits)  # a NUL inside a lineup: numpy would drop it
            _, lin = np.unique(fixed.view(f"S{width}").ravel(), return_inverse=True)
        order = np.lexsort((lin.ravel(), rot[keep], deal[keep]))
        return RecordView(cols, rows[keep[order]])

    def _sorted_in_python(self, rate_forfeits: bool) -> RecordView:
        """:meth:`replay_order` by ``sorted`` (keys beyond int64, or NUL characters in a lineup)."""
        recs = [(k, r) for k, r in enumerate(self) if r.rated(rate_forfeits)]
        recs.sort(key=lambda kr: kr[1].replay_key())
        return RecordView(self.cols, self.rows[np.array([k for k, _ in recs], dtype=np.int64)])


def _lineup_spans(cols: Columns, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the byte span ``[lo, hi)`` of its lineup (the id's second ``/`` part) in ``cols.ids``."""
    end = _np(cols.id_end).astype(np.int64)
    start = np.concatenate(([0], end[:-1]))[rows]
    end = end[rows]
    slash = np.flatnonzero(np.frombuffer(cols.ids, dtype=np.uint8) == 47) if len(cols.ids) else np.zeros(0, np.int64)
    first = np.searchsorted(slash, start)
    s1 = np.where(first < len(slash), slash[np.minimum(first, len(slash) - 1)], end)
    has1 = s1 < end
    s2 = np.where(first + 1 < len(slash), slash[np.minimum(first + 1, max(len(slash) - 1, 0))], end)
    lo = np.where(has1, s1 + 1, end)
    hi = np.where(has1, np.minimum(s2, end), end)
    return lo.astype(np.int64), hi.astype(np.int64)


def _has_nul(fixed: np.ndarray, n: np.ndarray) -> bool:
    """Whether a row of ``fixed`` holds a NUL byte within its first ``n[row]`` bytes (its lineup)."""
    cols = np.arange(fixed.shape[1])[None, :]
    return any(bool(((fixed[c:c + (1 << 16)] == 0) & (cols < n[c:c + (1 << 16), None])).any())
               for c in range(0, len(fixed), 1 << 16))


def view_of(records: Iterable[MatchRecord]) -> RecordView:
    """A :class:`RecordView` of ``records`` (tests and callers holding whole records)."""
    cols = Columns()
    for rec in records:
        cols.append(rec)
    cols.freeze()
    return RecordView(cols)


def is_view(records: Sequence[Any]) -> bool:
    """Whether ``records`` is a :class:`RecordView` (consumers may then read its columns)."""
    return isinstance(records, RecordView)
