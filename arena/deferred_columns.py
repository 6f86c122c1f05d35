"""The journal cache's columns read from the file when first used (issue 18, an update's memory).

An update after ``k`` new records reads only those ``k`` (the replay and the counters resume
from their checkpoints), yet a :class:`arena.record_view.RecordView` of every record is what the
tables get. :class:`DeferredColumns` is that view's :class:`arena.columns.Columns`: the cached
prefix's ``n`` rows stay in ``checkpoint-journal.bin`` until an attribute of the columns is
read, and the new rows (:meth:`DeferredColumns.follow_with`) are their own ``Columns``. A slice
of the view that lies wholly in the new rows is a view of those alone
(:meth:`arena.columns.Columns.tail_after`), so the update's work never loads the prefix — at
1M records, 155 MB that are never resident. Anything else (a crosstable, an export, a changed
schedule) loads it once, transparently: the columns are then exactly those an eager read builds
(:func:`arena.columns.concat` of the chunks, then the new rows).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from arena.columns import Columns, concat

__all__ = ["DeferredColumns"]

_OWN = frozenset(("_rows", "_pieces", "_stored", "_tail", "__dict__", "__class__"))


class DeferredColumns(Columns):
    """:class:`arena.columns.Columns` of stored pieces read on first use, followed by new rows
    (:meth:`follow_with`).

    :param pieces: per stored piece in row order, its number of records and a function reading
        its columns (frozen). Each is called when the columns are first used (and again after
        :meth:`release`), or alone by a pass over :meth:`pieces`; one may raise
        :class:`arena.errors.JournalError` (the cache changed on disk since it was checked).
    """

    def __init__(self, pieces: Sequence[tuple[int, Callable[[], Columns]]]) -> None:  # noqa: D107 - the class says it
        # no Columns.__init__: every column attribute is missing until loaded (see __getattr__)
        self._pieces = list(pieces)
        self._rows = sum(n for n, _read in self._pieces)
        self._stored = True  # the pieces' columns are in the file, not in memory
        self._tail: Columns | None = None  # the new rows, kept as they are (also once joined)

    @property
    def loaded(self) -> bool:
        """Whether the stored pieces have been read into memory."""
        return not self._stored

    def __len__(self) -> int:
        if not self._stored:
            return Columns.__len__(self)
        return self._rows + (len(self._tail) if self._tail is not None else 0)

    def follow_with(self, tail: Columns) -> None:
        """Append the new rows ``tail`` (frozen columns; kept as they are, also once loaded)."""
        self._tail = tail
        if not self._stored:
            self._join(tail)

    def pieces(self) -> list[tuple[int, int, Callable[[], Columns]]] | None:
        """While not loaded: ``(first row, rows, read)`` per stored piece, then the new rows' (its
        read returns them); None once loaded."""
        if not self._stored:
            return None
        out, lo = [], 0
        for n, read in self._pieces:
            out.append((lo, n, read))
            lo += n
        if self._tail is not None:
            tail = self._tail
            out.append((lo, len(tail), lambda: tail))
        return out

    def tail_after(self, row: int) -> tuple[int, Columns] | None:
        """``(offset, tail)`` while not loaded and ``row`` is a new row: rows ``offset..`` of these
        columns are rows ``0..`` of ``tail``; else None."""
        if self._stored and self._tail is not None and row >= self._rows:
            return self._rows, self._tail
        return None

    def __getattr__(self, name: str) -> Any:
        # only called for a missing attribute: a column (or a derived index) not read yet
        if name in _OWN or name.startswith("__") or not self.__dict__.get("_stored"):
            raise AttributeError(name)
        self._load()
        return object.__getattribute__(self, name)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (or copied) as the plain :class:`arena.columns.Columns` it reads as, not the file."""
        self._load()
        state = Columns.__getstate__(self)
        for own in _OWN:
            state.pop(own, None)
        return (Columns.__new__, (Columns,), state)

    def release(self) -> None:
        """Drop the loaded columns (read again when next used): what the tables hold once their
        counters are taken (:func:`arena.results.standings`; 155 MB at 1M records). No-op when
        not loaded."""
        if self._stored:
            return
        keep = {k: v for k, v in self.__dict__.items() if k in ("id_hash", "_rows", "_pieces", "_tail")}
        self.__dict__.clear()
        self.__dict__.update(keep)
        self._stored = True

    def _load(self) -> None:
        """Read the pieces and append the new rows to them (again after :meth:`release`)."""
        if not self._stored:
            return
        cols = concat((read() for _n, read in self._pieces), into_first=True)  # the columns and one piece in memory
        if len(cols) != self._rows:
            raise ValueError(f"the journal cache's prefix has {len(cols)} records, not {self._rows}")
        keep = dict(self.__dict__)
        self.__dict__.update(cols.__dict__)
        self.__dict__.update(keep)  # what was set on these columns meanwhile (``id_hash``)
        self._stored = False
        if self._tail is not None:
            self._join(self._tail)

    def _join(self, tail: Columns) -> None:
        """Append ``tail``'s rows in place (concat empties what it copies from: a shallow copy of
        ``tail``, so views of ``tail`` itself stay whole)."""
        shell = Columns.__new__(Columns)
        shell.__dict__.update(tail.__dict__)
        concat([self, shell], into_first=True)
