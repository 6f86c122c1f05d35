"""Operating characteristics of the GSPRT by simulation (tests and ``bench/sprt_design.py``).

Many synthetic streams of block scores, drawn from a known distribution on a finite set of
values, run the very test :class:`arena.sprt.gsprt.GSPRT` runs (same LLR, same bounds, decided
after every block), vectorised over streams with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.sprt import gsprt


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
             kind: str = "nelo", runs: int = 1000, max_blocks: int = 2000, seed: int = 0) -> OC:
    """Run ``runs`` independent GSPRTs on i.i.d. blocks with scores ``values`` drawn with ``probs``.

    :param values: ``(K,)`` block scores, holding 0 and 1 (give them probability 0 if impossible).
    :param probs: ``(K,)`` their probabilities.
    :returns: :class:`OC`.
    """
    values = np.asarray(values, dtype=float)
    probs = np.asarray(probs, dtype=float)
    rng = np.random.default_rng(seed)
    lower, upper = gsprt.bounds(alpha, beta)
    k = len(values)
    draws = rng.choice(k, size=(runs, max_blocks), p=probs / probs.sum())
    counts = np.zeros((runs, k))
    verdicts = np.full(runs, "", dtype="<U2")
    blocks = np.full(runs, max_blocks)
    active = np.arange(runs)
    t0, t1 = h0 / gsprt.NELO_PER_T, h1 / gsprt.NELO_PER_T
    for n in range(max_blocks):
        counts[active, draws[active, n]] += 1.0
        c = counts[active]
        w = gsprt.weights(c, values)
        if kind == "nelo":
            p0 = gsprt.mle(values, w, t=t0)
            p1 = gsprt.mle(values, w, t=t1)
        else:
            p0 = gsprt.mle(values, w, mean=h0)
            p1 = gsprt.mle(values, w, mean=h1)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (n + 1) * np.where(w > 0, w * np.log(p1 / p0), 0.0).sum(axis=1)
        hi, lo = v >= upper, v <= lower
        verdicts[active[hi]] = "H1"
        verdicts[active[lo]] = "H0"
        blocks[active[hi | lo]] = n + 1
        keep = ~(hi | lo)
        active = active[keep]
        if not len(active):
            break
    return OC(verdicts, blocks)


def at_nelo(values, base, nelo: float) -> np.ndarray:
    """A distribution on ``values`` with normalized Elo exactly ``nelo``: the KL projection of ``base``.

    (The maximum-likelihood fit of ``base`` under the t-constraint, :func:`arena.sprt.gsprt.mle`.)
    """
    b = np.asarray(base, dtype=float)[None, :]
    return gsprt.mle(np.asarray(values, dtype=float), b / b.sum(), t=nelo / gsprt.NELO_PER_T)[0]
