"""Journal records → block scores, fed to the GSPRT in block order (the ordered prefix).

Workers finish matches in any order (Ray), so a block is fed only when it and every block
before it are complete: the decision depends on the blocks' order, never on finishing
order, and a rerun that replays the journal reaches the same verdict at the same block.

Scoring (:mod:`arena.sprt.design` for the block layout): a match's reward is the seat's
reward in [0, 1] from the ranks (:func:`arena.ratings.seat_rewards`). A block in which the
candidate faulted (any fault, a forfeit of a disabled bot included) **counts as lost**:
score 0. A block holding an aborted match (the infrastructure failed after its retries,
no outcome) is void: not fed, counted in ``void``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from arena.ratings import seat_rewards
from arena.sprt.design import Design
from arena.sprt.gsprt import GSPRT


class BlockBook:
    """Collects a test's records by block and feeds complete blocks, in order, to ``test``.

    :param design: who plays and how; ``players``: seats; ``blocks``: the cap (deals).
    :param test: the :class:`GSPRT` (its verdict is final once reached).
    """

    def __init__(self, design: Design, players: int, blocks: int, test: GSPRT) -> None:
        self.design = design
        self.players = players
        self.cap = blocks
        self.test = test
        self.need = {(k, r) for k, _s, r in design.seatings(players)}
        self.pending: dict[int, dict[tuple[str, int], dict[str, Any]]] = {}
        self.next = 0            # the first block not yet fed
        self.scores: list[float] = []
        self.void = 0
        self.lost = 0            # blocks lost to a candidate fault
        self.faults: Counter = Counter()  # per bot: matches with a fault of it
        self.records = 0

    def add(self, rec: dict[str, Any]) -> int:
        """Account one journal record of the test; returns how many blocks were fed now."""
        mid = rec.get("match_id", "")
        parts = mid.split("/")
        d = rec.get("deal_index")
        if len(parts) < 4 or not isinstance(d, int) or d < self.next or d >= self.cap:
            return 0
        key = (parts[1], rec.get("rotation"))
        if key not in self.need:
            return 0
        block = self.pending.setdefault(d, {})
        if key in block:
            return 0
        block[key] = rec
        self.records += 1
        for b in {f.get("bot") for f in rec.get("faults") or []}:
            self.faults[b] += 1
        fed = 0
        while len(self.pending.get(self.next, ())) == len(self.need):
            self._feed(self.pending.pop(self.next))
            self.next += 1
            fed += 1
        return fed

    def _feed(self, block: dict[tuple[str, int], dict[str, Any]]) -> None:
        if any(r.get("status") == "aborted" or not r.get("outcome") for r in block.values()):
            self.void += 1
            return
        c = self.design.candidate
        if any(f.get("bot") == c for r in block.values() for f in r.get("faults") or []):
            self.lost += 1
            x = 0.0
        else:
            x = self.score(block)
        self.scores.append(x)
        self.test.add(x)

    def score(self, block: dict[tuple[str, int], dict[str, Any]]) -> float:
        """The block score in [0, 1] (0.5: no difference; :mod:`arena.sprt.design`)."""
        c, b = self.design.candidate, self.design.baseline
        if self.design.design == "pairs":
            got = [seat_rewards(r)[s] for r in block.values() for s, n in enumerate(r["seats"]) if n == c]
            return sum(got) / len(got)
        cand = [seat_rewards(r)[k[1]] for k, r in block.items() if k[0] == c]
        base = [seat_rewards(r)[k[1]] for k, r in block.items() if k[0] == b]
        return min(1.0, max(0.0, 0.5 + (sum(cand) / len(cand) - sum(base) / len(base)) / 2))

    @property
    def complete(self) -> bool:
        """Every block up to the cap has been fed."""
        return self.next >= self.cap
