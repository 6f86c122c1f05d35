"""The journal's decision times per bot, checkpointed whole: ``<folder>/checkpoint-times.npz`` (issue 18).

The journal cache (:mod:`arena.journal_cache`) keeps each chunk's own decision times, so a cut
cache still knows those of its valid chunks; but merging them back per chunk and bot costs
~0.5 ms a bot (16 chunks at 1M records, 1,000 bots: 0.6 CPU-s of an update). This file holds
the merged totals of every bot for the cache's last prefix, keyed by that prefix (its end, its
CRC-32 digest, which rows are inside, the bots), in one flat layout: ``us`` and ``counts`` of
all bots end to end with per-bot offsets, the odd times likewise (:mod:`arena.latency`). An
update loads it (~25 MB at 1M) and merges only its new block's times. Numpy arrays and a JSON
header read with ``allow_pickle=False``; written aside and renamed, never through a link. A
cache: absent, foreign, stale or damaged means the chunks' own times are merged instead.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena.errors import ArenaError
from arena.latency import DecisionTimes
from arena.results_folder import discard, open_regular, write_file

NAME = "checkpoint-times.npz"
FORMAT = 1


def key_of(prefix: str, bots: Sequence[str]) -> str:
    """The checkpoint's key: the journal prefix it covers (``end/digest/inside``) and the bots."""
    return json.dumps([FORMAT, prefix, list(bots)])


def load(folder: str | Path, key: str, bots: Sequence[str]) -> dict[str, DecisionTimes] | None:
    """The checkpointed times per bot of ``bots`` if the file holds ``key`` (else None)."""
    try:
        with open_regular(Path(folder) / NAME) as f, np.load(f, allow_pickle=False) as z:
            head = json.loads(bytes(np.asarray(z["head"], np.uint8)).decode())
            if not isinstance(head, dict) or head.get("key") != key or head.get("bots") != list(bots):
                return None
            us, counts, off = z["us"], z["counts"], z["off"]
            odd, odd_off = z["odd"], z["odd_off"]
            if us.dtype != np.uint32 or counts.dtype != np.int64 or odd.dtype != np.float64:
                return None
            n = len(bots)
            if len(off) != n + 1 or len(odd_off) != n + 1 or len(us) != len(counts) or int(off[-1]) != len(us) \
                    or int(odd_off[-1]) != len(odd) or bool((np.diff(off) < 0).any()) \
                    or bool((np.diff(odd_off) < 0).any()) or int(off[0]) != 0 or int(odd_off[0]) != 0:
                return None
            return {b: DecisionTimes.of_arrays(us[off[i]:off[i + 1]], counts[off[i]:off[i + 1]],
                                               odd[odd_off[i]:odd_off[i + 1]]) for i, b in enumerate(bots)}
    except Exception:  # noqa: BLE001 - a cache: unreadable, cut or foreign means merge the chunks' times
        return None


def save(folder: str | Path, key: str, bots: Sequence[str], times: Mapping[str, DecisionTimes]) -> None:
    """Checkpoint ``times`` (every bot of ``bots``) under ``key`` (nothing if the folder is unwritable)."""
    parts = [times[b].arrays() if b in times else (np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros(0))
             for b in bots]
    off = np.zeros(len(bots) + 1, np.int64)
    odd_off = np.zeros(len(bots) + 1, np.int64)
    np.cumsum([len(u) for u, _c, _o in parts], out=off[1:])
    np.cumsum([len(o) for _u, _c, o in parts], out=odd_off[1:])
    arrays: dict[str, Any] = {
        "head": np.frombuffer(json.dumps({"key": key, "bots": list(bots)}).encode(), np.uint8),
        "us": np.concatenate([np.asarray(u, np.uint32) for u, _c, _o in parts]) if parts else np.zeros(0, np.uint32),
        "counts": np.concatenate([np.asarray(c, np.int64) for _u, c, _o in parts]) if parts else np.zeros(0, np.int64),
        "off": off, "odd": np.concatenate([np.asarray(o, np.float64) for _u, _c, o in parts]) if parts else np.zeros(0),
        "odd_off": odd_off}
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # STORED members (the folder check refuses deflated ones)
    path = Path(folder) / NAME
    tmp = path.with_suffix(".tmp")
    try:
        write_file(tmp, buf.getvalue())  # never through a link
        os.replace(tmp, path)
    except (OSError, ArenaError):
        discard(tmp)
