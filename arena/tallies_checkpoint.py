"""The tables' counters checkpointed for the journal's prefix: ``<folder>/checkpoint-tables.npz``.

:func:`tallies` keeps the :class:`arena.tallies.Tallies` of a results folder (numpy arrays and a
JSON header, read with ``allow_pickle=False``: a folder someone sent never runs code) for the
journal's **byte prefix** that :mod:`arena.journal_cache` vouches for (its chunks' running
checksums): the counters of the records in ``matches.jsonl[0, end)`` in file order, so an update
after ``k`` new records adds those ``k``. A journal edited before ``end``, other bots or another
``rate_forfeits`` → the counters are rebuilt from the records. A cache: deleting it only costs
time; an unreadable or foreign one is ignored (the older ``checkpoint-tables.pkl`` is never read,
only deleted). It is written again only when worth it (:func:`worth_saving`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.heap import release_heap
from arena.record import MatchRecord
from arena.record_view import RecordView
from arena.results_folder import discard
from arena.tallies import ROOM_MARGIN, Tallies

NAME = "checkpoint-tables.npz"
OLD_NAME = "checkpoint-tables.pkl"  #: format 3 and before (pickles): deleted, never read
FORMAT = 5

def _key(bots: Sequence[str], rate_forfeits: bool) -> str:
    blob = json.dumps([FORMAT, list(bots), bool(rate_forfeits)])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def tallies(folder: str | Path | None, records: Sequence[MatchRecord], bots: Sequence[str],
            rate_forfeits: bool = False, prefixes: Sequence[tuple[int, str, int]] | None = None,
            close: bool = False) -> Tallies:
    """The :class:`Tallies` of ``records`` (the schedule's records in file order), resumed from
    ``folder``'s checkpoint and saved again.

    :param close: :meth:`arena.tallies.Tallies.close` them once saved (the tables only read them).

    :param prefixes: the journal's vouched-for byte prefixes, ``(end, digest, records of
        ``records`` in it)`` each (:func:`arena.journal_cache.read`'s ``info["prefixes"]``); the
        last one is where the new checkpoint is taken. None or empty: no checkpoint.
    :returns: counters equal to ``Tallies(bots, rate_forfeits).add_all(records)`` bit for bit.
    """
    key = _key(bots, rate_forfeits)
    valid: dict[tuple[Any, Any], int] = {(int(e), str(d)): int(n) for e, d, n in prefixes or ()}
    t = _load(Path(folder), key, valid, len(records)) if folder is not None and valid else None
    if t is None:
        t = Tallies(bots, rate_forfeits)
    t.resumed_from = t.count
    new = records[t.count:] if t.count else records
    total = t.count + len(new)
    for part in new.parts() if isinstance(new, RecordView) else (new,):  # a piece of the journal at a time
        t.reserve(total - t.count)  # sized for what is left, at the entries per record so far
        t.add_all(part)
    release_heap()
    if folder is not None and prefixes and worth_saving(t.resumed_from, len(records)):
        end, digest, n = prefixes[-1]
        if n == len(records):
            _save(Path(folder), {"key": key, "end": int(end), "digest": str(digest), "count": n}, t)
    if close:
        t.close()
        release_heap()
    return t


#: the counters are checkpointed again once the records counted past the checkpoint reach this
#: fraction of all (1/16: at 1M records, 62,500). Counting a record again costs ~7 µs, writing the
#: checkpoint ~180 bytes (~1.5 µs) a record of *all* of them (1.5 CPU-s at 1M, measured): saving
#: after every small update would cost more than it spares the next one
SAVE_FRACTION = 1 / 16


def worth_saving(resumed_from: int, count: int) -> bool:
    """Whether :func:`tallies` writes a new checkpoint: none was resumed from (``resumed_from`` 0
    and records exist), or the records counted past it are at least :data:`SAVE_FRACTION` of
    ``count``. Never when nothing is new."""
    new = count - resumed_from
    return new > 0 and (resumed_from == 0 or new >= SAVE_FRACTION * count)


def _load(folder: Path, key: str, valid: dict[tuple[Any, Any], int], n_records: int) -> Tallies | None:
    """The checkpointed counters if they are of ``key`` and a vouched-for prefix (else None)."""
    try:
        with np.load(folder / NAME, allow_pickle=False) as z:
            head = json.loads(bytes(np.asarray(z["head"], np.uint8)).decode())
            if (not isinstance(head, dict) or head.get("key") != key
                    or valid.get((head.get("end"), head.get("digest"))) != head.get("count")
                    or not isinstance(head.get("count"), int) or head["count"] > n_records):
                return None
            count = head["count"]
            t = Tallies.from_arrays(z, room=(n_records - count) / count * (1 + ROOM_MARGIN) if count else 0.0)
    except Exception:  # noqa: BLE001 - a cache: unreadable, cut or foreign means rebuild
        return None
    return t if t.count == head["count"] else None


def _save(folder: Path, head: dict[str, Any], t: Tallies) -> None:
    tmp = folder / (NAME + ".tmp")
    try:
        with open(tmp, "wb") as f:
            np.savez(f, head=np.frombuffer(json.dumps(head).encode(), np.uint8), **t.arrays())  # type: ignore[arg-type]
        os.replace(tmp, folder / NAME)
        discard(folder / OLD_NAME)
    except OSError:
        discard(tmp)
