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
