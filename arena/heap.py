"""Handing freed C heap back to the system after a large step (the journal's parse, the counters, the fit)."""

from __future__ import annotations

import ctypes


def release_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    numpy's temporaries of a million-record step are freed in pieces the allocator would otherwise
    keep resident (measured: RSS 216 → 145 MB after the counters of 100k records; ~70 MB after the
    fit of 1M)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


#: ``mallopt`` parameter of glibc's mmap threshold (``<malloc.h>``)
M_MMAP_THRESHOLD = -3
#: blocks of at least this many bytes get their own mapping, handed back when freed (4 MiB: the
#: 1M-record tables' arrays of 16-32 MB; at 1 MiB a two-player +1% update paid ~1 CPU-s more in
#: page faults for 10 MB less)
MMAP_THRESHOLD = 1 << 22


def fix_mmap_threshold() -> None:
    """Give every allocation of ≥ 4 MiB its own mapping, returned to the system when freed.

    glibc raises its mmap threshold after each freed large block (up to 32 MiB), so numpy's
    arrays below that size then come from the heap, where freed ones stay resident between
    steps (a 1M-record four-player table: counters' peak 719 → 580 MB, replay 603 → 547 MB with
    the threshold fixed at 1 MiB; its +1% update 587 → 530 MB at 4 MiB). Fixing it turns the
    adjustment off. Idempotent; nothing outside glibc."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass
