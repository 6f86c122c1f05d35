"""The last small-field batch fit of a results folder, kept for an unchanged table:
``<folder>/checkpoint-fit-result.npz``.

A small field's fit carries a block bootstrap (:func:`arena.batchfit.bootstrap`: 200 refits,
~4 CPU-s for 100 bots and 4,200 matches), paid again by every ``arena leaderboard`` of a class
even when nothing new was recorded. The fit is a function of its results alone (the counters'
:meth:`arena.tallies.Tallies.contests`, the bots, the replicates and the seed), so it is kept
under a digest of exactly those and reused bit for bit when they are the same; any new or changed
result changes the digest and the fit runs again. Large fields (the sandwich path) warm-start
from their own checkpoint instead (:mod:`arena.strength`). Arrays only, read with
``allow_pickle=False`` after checking every member is stored uncompressed and small: a folder
someone sent never runs code nor inflates a bomb; anything else is ignored (a cache).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from arena.fit_summary import BatchFit
from arena.results_folder import discard

NAME = "checkpoint-fit-result.npz"
FORMAT = 1


def digest(sides: Any, ranks: Any, blocks: Any, n_bots: int, n_boot: int, seed: int, method: str,
           ridge: float) -> str:
    """A digest of everything a small field's fit depends on (results, sizes, options, the model's
    ridge :data:`arena.batchfit.RIDGE`)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([FORMAT, n_bots, n_boot, seed, method, ridge]).encode())
    for part in (sides, getattr(ranks, "codes", ranks), blocks):
        if isinstance(part, np.ndarray):
            h.update(f"{part.dtype.str}{part.shape}".encode())
            h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(json.dumps(part, default=lambda x: x.tolist()).encode())
    if hasattr(ranks, "pats"):
        h.update(json.dumps([list(p) for p in ranks.pats]).encode())
    return h.hexdigest()


def load(folder: str | Path | None, key: str, n_bots: int, n_boot: int) -> BatchFit | None:
    """The kept fit of ``key`` (None if absent, of another key or not as :func:`save` writes it)."""
    if folder is None:
        return None
    path = Path(folder) / NAME
    limit = 8 * (n_boot + 8) * (n_bots + 8) + 4096  # the largest member: the replicates
    try:
        if not path.is_file() or path.is_symlink():
            return None
        with zipfile.ZipFile(path) as z:
            if any(i.compress_type != zipfile.ZIP_STORED or i.file_size > limit for i in z.infolist()):
                return None
        with np.load(path, allow_pickle=False) as f:
            head = json.loads(bytes(np.asarray(f["head"], np.uint8)).decode())
            if not isinstance(head, dict) or head.get("key") != key:
                return None
            theta, boot, rated, beta = (np.asarray(f[k]) for k in ("theta", "boot", "rated", "beta"))
            tie = {int(k): float(v) for k, v in head["tie"].items()}
            blocks = int(head["blocks"])
    except Exception:  # noqa: BLE001 - a cache: unreadable, cut or foreign means fit again
        return None
    if (theta.shape != (n_bots,) or rated.shape != (n_bots,) or rated.dtype != bool or boot.ndim != 2
            or boot.shape[1] != n_bots or theta.dtype != np.float64 or boot.dtype != np.float64
            or beta.dtype != np.float64 or beta.ndim != 1):
        return None
    return BatchFit(theta, boot, tie, rated, blocks, None, beta, None)


def save(folder: str | Path | None, key: str, fit: BatchFit) -> None:
    """Keep ``fit`` under ``key`` (atomically; nothing for a large field's fit or an unwritable folder)."""
    if folder is None or fit.cov is not None or fit.info is not None or fit.beta is None:
        return
    path = Path(folder) / NAME
    tmp = path.with_name(NAME + ".tmp")
    head = {"key": key, "tie": {str(k): v for k, v in fit.tie.items()}, "blocks": int(fit.blocks)}
    try:
        with open(tmp, "wb") as f:
            np.savez(f, head=np.frombuffer(json.dumps(head).encode(), np.uint8), theta=fit.theta, boot=fit.boot,
                     rated=fit.rated, beta=fit.beta)
        os.replace(tmp, path)
    except OSError:
        discard(tmp)
