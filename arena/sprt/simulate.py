"""Operating characteristics of the GSPRT by simulation (tests and ``bench/sprt_design.py``).

Many synthetic streams of block scores, drawn from a known distribution on a finite set of
values, run the very test :class:`arena.gsprt.GSPRT` runs (same LLR, same bounds, decided
after every block), vectorised over streams with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena import gsprt


@dataclass
class OC:
    """Outcome of :func:`simulate`: per stream the verdict and the blocks it took.

    :ivar verdicts: ``(runs,)`` of ``"H1"``, ``"H0"`` or ``""`` (no decision by ``max_blocks``).
    :ivar blocks: ``(runs,)`` blocks played (``max_blocks`` for the undecided).
    """

    verdicts: np.ndarray
    blocks: np.ndarray

    def rate(self, verdict: str) -> float:
        """Fraction of streams that ended with ``verdict``."""
        return float(np.mean(self.verdicts == verdict))

    @property
    def asn(self) -> float:
        """Average sample number: mean blocks per stream (undecided counted at the cap)."""
        return float(self.blocks.mean())


def simulate(values, probs, h0: float, h1: float, alpha: float = 0.05, beta: float = 0.05,
             kind: str = "nelo", runs: int = 1000, max_blocks: int = 2000, seed: int = 0,
             chunk: int = 16) -> OC:
    """Run ``runs`` independent GSPRTs on i.i.d. blocks with scores ``values`` drawn with ``probs``.

    :param values: ``(K,)`` block scores, holding 0 and 1 (give them probability 0 if impossible).
    :param probs: ``(K,)`` their probabilities.
    :param chunk: blocks evaluated per vectorised step at first (doubling up to 256; a speed knob,
        the verdicts are the same as block by block).
    :returns: :class:`OC`.
    """
    values = np.asarray(values, dtype=float)
    probs = np.asarray(probs, dtype=float)
    rng = np.random.default_rng(seed)
    lower, upper = gsprt.bounds(alpha, beta)
    k = len(values)
    draws = rng.choice(k, size=(runs, max_blocks), p=probs / probs.sum())
    base = np.zeros((runs, k))  # counts before the current chunk
    verdicts = np.full(runs, "", dtype="<U2")
    blocks = np.full(runs, max_blocks)
    active = np.arange(runs)
    n0 = 0
    while n0 < max_blocks and len(active):
        # a chunk of steps for every live stream at once: rows = (stream, step); numpy's per-call
        # overhead is paid once per chunk instead of once per block
        c = min(chunk, max_blocks - n0)
        onehot = np.zeros((len(active), c, k))
        np.put_along_axis(onehot, draws[active, n0:n0 + c][:, :, None], 1.0, axis=2)
        counts = base[active][:, None, :] + np.cumsum(onehot, axis=1)
        v = np.asarray(gsprt.llr(counts.reshape(-1, k), values, h0, h1, kind)).reshape(len(active), c)
        hit = (v >= upper) | (v <= lower)
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        done = first >= 0
        rows = active[done]
        at = first[done]
        verdicts[rows] = np.where(v[done, at] >= upper, "H1", "H0")
        blocks[rows] = n0 + at + 1
        base[active] = counts[:, -1, :]
        active = active[~done]
        n0 += c
        chunk = min(2 * chunk, 256)
    return OC(verdicts, blocks)


def at_nelo(values, base, nelo: float) -> np.ndarray:
    """A distribution on ``values`` with normalized Elo exactly ``nelo``: the KL projection of ``base``.

    (The maximum-likelihood fit of ``base`` under the t-constraint, :func:`arena.gsprt.mle`.)
    """
    b = np.asarray(base, dtype=float)[None, :]
    return gsprt.mle(np.asarray(values, dtype=float), b / b.sum(), t=nelo / gsprt.NELO_PER_T)[0]
