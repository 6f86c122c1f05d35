"""Journal records → block scores, fed to the GSPRT in block order (the ordered prefix).

Workers finish matches in any order (Ray), so a block is fed only when it and every block
before it are complete: the decision depends on the blocks' order, never on finishing
order, and a rerun that replays the journal reaches the same verdict at the same block.

Scoring (:func:`arena.schedule.build_sprt_schedule` for the block layout): a match's reward is the seat's
reward in [0, 1] from the ranks (:attr:`arena.record.MatchRecord.rewards`). A block in which the
candidate faulted (any fault, a forfeit of a disabled bot included) **counts as lost**:
score 0. A block holding an aborted match (the infrastructure failed after its retries,
no outcome) is void: not fed, counted in ``void``.
"""

from __future__ import annotations

from collections import Counter

from arena.gsprt import GSPRT
from arena.record import MatchRecord
from arena.schedule import SprtDesign as Design


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
        self.pending: dict[int, dict[tuple[str, int], MatchRecord]] = {}
        self.next = 0            # the first block not yet fed
        self.scores: list[float] = []
        self.void = 0
        self.lost = 0            # blocks lost to a candidate fault
        self.lost_at: list[bool] = []  # per fed block (in order): lost to a candidate fault
        self.faults: Counter = Counter()  # per bot: matches with a fault of it
        self.records = 0

    def add(self, rec: MatchRecord) -> int:
        """Account one journal record of the test; returns how many blocks were fed now."""
        d = rec.deal_index
        if d < self.next or d >= self.cap:
            return 0
        key = (rec.lineup, rec.rotation)
        if key not in self.need:
            return 0
        block = self.pending.setdefault(d, {})
        if key in block:
            return 0
        block[key] = rec
        self.records += 1
        for b in {f.bot for f in rec.faults if f.bot}:
            self.faults[b] += 1
        fed = 0
        while len(self.pending.get(self.next, ())) == len(self.need):
            self._feed(self.pending.pop(self.next))
            self.next += 1
            fed += 1
        return fed

    def _feed(self, block: dict[tuple[str, int], MatchRecord]) -> None:
        if not all(r.finished for r in block.values()):
            self.void += 1
            return
        c = self.design.candidate
        lost = any(f.bot == c for r in block.values() for f in r.faults)
        self.lost += lost
        self.lost_at.append(lost)
        x = 0.0 if lost else self.score(block)
        self.scores.append(x)
        self.test.add(x)

    def score(self, block: dict[tuple[str, int], MatchRecord]) -> float:
        """The block score in [0, 1] (0.5: no difference; :func:`arena.schedule.build_sprt_schedule`)."""
        c, b = self.design.candidate, self.design.baseline
        if self.design.design == "pairs":
            got = [r.rewards[s] for r in block.values() for s, n in enumerate(r.seats) if n == c]
            return sum(got) / len(got)
        cand = [r.rewards[k[1]] for k, r in block.items() if k[0] == c]
        base = [r.rewards[k[1]] for k, r in block.items() if k[0] == b]
        return min(1.0, max(0.0, 0.5 + (sum(cand) / len(cand) - sum(base) / len(base)) / 2))

    @property
    def complete(self) -> bool:
        """Every block up to the cap has been fed."""
        return self.next >= self.cap
