"""A compact schedule with one very long id (a crafted tournament.json): the hash join pads every
id to the longest, so such a schedule is looked up pair by pair instead (arena/schedule_file.py)."""

from __future__ import annotations

import random

import numpy as np

from arena import schedule_file
from arena.schedule_file import CompactSchedule


def compact(plain: dict[str, str]) -> CompactSchedule:
    ids = sorted(plain, key=lambda s: s.encode())
    return CompactSchedule({"format": 1, "count": len(ids), "ids": "\n".join(ids),
                            "fingerprints": "\n".join(plain[i] for i in ids)})


def plain_schedule(n: int, seed: int, width: int = 0) -> dict[str, str]:
    rng = random.Random(seed)
    pad = "x" * width
    return {f"t/a{pad}+b/d{d:05d}/r00": f"{rng.getrandbits(64):016x}" for d in range(n)}


def blobs(pairs: list[tuple[str, str]]) -> tuple[bytes, np.ndarray, bytes, np.ndarray]:
    ids = [m.encode() for m, _ in pairs]
    fps = [f.encode() for _, f in pairs]
    return b"".join(ids), np.cumsum([len(x) for x in ids]), b"".join(fps), np.cumsum([len(x) for x in fps])


def queries(plain: dict[str, str]) -> tuple[list[tuple[str, str]], list[int]]:
    pairs, want = [], []
    for k, (mid, fp) in enumerate(plain.items()):
        pairs.append((mid, fp if k % 3 else fp[::-1]))  # a third with a wrong fingerprint
        want.append(int(k % 3 != 0 or fp == fp[::-1]))
    pairs.append(("t/unknown/d00000/r00", "0" * 16))
    want.append(0)
    return pairs, want


def test_one_outlier_id_is_not_padded_into_every_row() -> None:
    plain = plain_schedule(300, seed=3)
    plain["t/" + "y" * 50_000 + "/d00000/r00"] = "f" * 16
    sched = compact(plain)
    assert sched._index() is None  # per-pair lookups: no (n, 50 KB) rows
    pairs, want = queries(plain)
    assert sched.holds(*blobs(pairs)).tolist() == want


def test_a_typical_schedule_keeps_its_index() -> None:
    plain = plain_schedule(300, seed=4)
    sched = compact(plain)
    assert sched._index() is not None
    pairs, want = queries(plain)
    assert sched.holds(*blobs(pairs)).tolist() == want


def test_uniformly_wide_ids_are_joined_in_smaller_steps() -> None:
    plain = plain_schedule(200, seed=5, width=3000)
    sched = compact(plain)
    index = sched._index()
    assert index is not None
    assert schedule_file._step(index.sid, index.sfp) * (index.sid.width + index.sfp.width) <= schedule_file._ROW_BYTES
    pairs, want = queries(plain)
    assert sched.holds(*blobs(pairs)).tolist() == want
