"""The fault policy in one room (DESIGN "Faults"): what a fault does to a match and to a bot.

* In a match (:mod:`arena.match`): :func:`forfeit_outcome` (sides with a faulty seat rank
  last) and :func:`replacement_action` (the ``random`` policy's substitute move).
* Across a tournament (the driver): :class:`FaultLedger` counts faults per bot and match
  (``faults.disable_after``) and watches start-up failures (:class:`StartupWatch`,
  ``faults.disable_on_startup``); it says which bots to disable and why, and
  :func:`disabled_record` writes the forfeit of a match a disabled bot does not play.
* Explaining faults (tables and the live board): :func:`at_startup`, :func:`first_fault`,
  :func:`fault_line`.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from arena.journal import record_of
from arena.process import last_stderr_line
from arena.record import MatchRecord, RecordFault
from arena.specs import Fault, FaultPolicy, MatchSpec
from engine.seeds import h64


def forfeit_outcome(teams: Sequence[Sequence[int]], faulty: set[int]) -> dict[str, list]:
    """DESIGN's forfeit rule: sides with a faulty seat rank last (equal), the others share first.

    :returns: ``{"ranks": [...], "scores": [...]}`` per seat; scores are 0 for faulty sides
        and 1 for the others (the game's scores are not available).
    """
    n = sum(len(t) for t in teams)
    bad_sides = [any(s in faulty for s in t) for t in teams]
    good = bad_sides.count(False)
    ranks = [0] * n
    scores = [1] * n
    for t, bad in zip(teams, bad_sides, strict=True):
        for s in t:
            ranks[s] = good if bad else 0
            scores[s] = 0 if bad else 1
    return {"ranks": ranks, "scores": scores}


def replacement_action(deal_seed: int, move_index: int, legal: Sequence[Any]) -> Any:
    """The ``random`` policy's substitute for a faulty move: uniform over ``legal`` from an RNG
    keyed by (deal seed, move index)."""
    rng = random.Random(h64(b"cardarena-fault", deal_seed, move_index))
    return legal[rng.randrange(len(legal))]


def disabled_record(spec: MatchSpec, bad: list[str], game_version: int,
                    reasons: dict[str, str] | None = None) -> dict[str, Any]:
    """The journal record of a match not played because a bot was disabled: forfeit, fault
    ``disabled`` on each disabled seat.

    No bot is started. The ranks put the sides without a disabled bot first and the others
    last (tied); that is all the record says. How it counts is decided when tables are
    made: with ``faults.rate_forfeits`` it is rated like any forfeit (only the disabled sides
    move, as a loss to each other side, :meth:`arena.ratings.Rater.record`); in the scores,
    wins and crosstable it counts only for the disabled bots, as a loss — the other seats
    never played, so they are credited with nothing (:func:`arena.tables.credits`).

    :param reasons: per bot, why it was disabled (default: too many faults).
    """
    reasons = reasons or {}
    faults = [Fault(seat=s, bot=b, cls="disabled", move=0,
                    detail=f"bot disabled: {reasons[b]}" if b in reasons else "bot disabled after too many faults"
                    ).to_json()
              for s, b in enumerate(spec.seats) if b in bad]
    teams = [list(t) for t in spec.teams]
    bad_sides = [i for i, t in enumerate(teams) if any(spec.seats[s] in bad for s in t)]
    ranks = [0] * spec.players
    n_good = len(teams) - len(bad_sides)
    for i, t in enumerate(teams):
        for s in t:
            ranks[s] = n_good if i in bad_sides else 0
    res = {"status": "forfeit", "outcome": {"ranks": ranks, "scores": [0 if r else 1 for r in ranks]},
           "faults": faults, "time_ms": 0.0,
           "move_ms": [[] for _ in spec.seats], "actions": []}
    return record_of(spec, res, game_version)


# ------------------------------------------------------------------ explaining faults

def at_startup(rec: MatchRecord, fault: RecordFault) -> bool:
    """Whether ``fault`` (of ``rec``) happened at start-up: its seat never answered ``start``
    with ``ready`` in that match (``bot_versions`` empty for it) and no move was made."""
    versions = rec.bot_versions
    seat = fault.seat
    return (fault.cls != "disabled" and fault.move == 0 and isinstance(seat, int)
            and 0 <= seat < len(versions) == len(rec.seats) and not versions[seat])


def first_fault(rec: MatchRecord, fault: RecordFault) -> dict[str, Any]:
    """The summary of one fault kept as a bot's ``first_fault``: class, detail, match, move,
    start-up or not, and the last line of the stderr tail."""
    return {"class": fault.cls, "detail": fault.detail, "match_id": rec.match_id, "move": fault.move,
            "at_startup": at_startup(rec, fault), "stderr_last": last_stderr_line(fault.stderr_tail)}


def fault_line(bot: str, first: dict[str, Any], count: int | None = None) -> str:
    """One line explaining a bot's faults from its first one, e.g.
    ``ism-bad: crash at start-up — bot 'ism-bad' exited with code 2; stderr: ...: error: ...
    (first of 6 faults)``."""
    when = " at start-up" if first.get("at_startup") else ""
    line = f"{bot}: {first['class']}{when} — {first['detail']}"
    if first.get("stderr_last"):
        line += f"; stderr: {first['stderr_last']}"
    if count and count > 1:
        line += f" (first of {count} faults)"
    return line


# ------------------------------------------------------------------ disabling bots

class StartupWatch:
    """Bots that cannot start: each of their first ``n`` matches failed at start-up (the bot
    never answered ``start`` with ``ready``, :func:`at_startup`) with the same fault class
    and detail, e.g. a command-line error that makes the bot exit with code 2 every time.

    Fed the journal's records in arrival order (:meth:`add`), it tells the driver which
    bots to disable and why. A bot that answers ``ready`` once, or whose first ``n`` start-up
    failures differ, is never condemned. Records of matches not played (fault ``disabled``)
    and aborted matches are not counted.

    :param n: matches to watch per bot (None or 0: condemn nobody).
    """

    def __init__(self, n: int | None) -> None:
        self.n = n or 0
        self.failures: dict[str, list[dict[str, Any]]] = {}
        self.settled: set[str] = set()

    def add(self, rec: MatchRecord) -> list[tuple[str, str]]:
        """Account one record; ``(bot, reason)`` for each bot it condemns (once per bot)."""
        if not self.n or rec.status == "aborted" or any(f.cls == "disabled" for f in rec.faults):
            return []
        versions, seats = rec.bot_versions, rec.seats
        out = []
        for b in dict.fromkeys(seats):
            if b in self.settled:
                continue
            mine = [i for i, x in enumerate(seats) if x == b]
            startup = [f for f in rec.faults if f.bot == b and at_startup(rec, f)]
            if len(versions) == len(seats) and any(versions[i] for i in mine):
                self.settled.add(b)  # it started
                continue
            if not startup:
                continue  # not its fault (another seat's forfeit) or unknown: not counted
            seen = self.failures.setdefault(b, [])
            seen.append(first_fault(rec, startup[0]))
            if len(seen) < self.n:
                continue
            self.settled.add(b)
            if len({(x["class"], x["detail"]) for x in seen}) == 1:
                first = seen[0]
                why = f"{first['class']} — {first['detail']}"
                if first["stderr_last"]:
                    why += f"; stderr: {first['stderr_last']}"
                out.append((b, f"it failed at start-up in each of its first {self.n} matches: {why}"))
        return out


class FaultLedger:
    """A tournament's fault accounting: which bots are disabled, and why (DESIGN "Faults").

    Fed every record of the tournament in arrival order (:meth:`add`; records of an earlier
    run first), it counts faults per bot and match (a bot filling both seats of a side counts
    once; ``disabled`` faults not counted) against ``faults.disable_after`` and watches
    start-up failures against ``faults.disable_on_startup`` (:class:`StartupWatch`).

    :ivar disabled: bots disabled so far; :ivar reasons: why, per bot condemned at start-up.
    """

    def __init__(self, policy: FaultPolicy) -> None:
        self.policy = policy
        self.counts: Counter[str] = Counter()
        self.startup = StartupWatch(policy.disable_on_startup)
        self.disabled: set[str] = set()
        self.reasons: dict[str, str] = {}

    def add(self, rec: MatchRecord, seeding: bool = False) -> list[tuple[str, str, str]]:
        """Account one record; ``(bot, why, rule)`` for each bot it disables (``rule``: the config key).

        :param seeding: a record of an earlier run (a start-up verdict then also replaces the
            reason of a bot disabled for its fault count).
        """
        out = []
        limit = self.policy.disable_after
        for b in sorted({f.bot for f in rec.faults if f.cls != "disabled" and f.bot is not None}):
            self.counts[b] += 1
            if limit and self.counts[b] >= limit and b not in self.disabled:
                self.disabled.add(b)
                out.append((b, f"faults in {self.counts[b]} matches of this tournament",
                            f"faults.disable_after: {limit}"))
        for b, why in self.startup.add(rec):
            if seeding:
                self.reasons[b] = why
            if b not in self.disabled:
                self.disabled.add(b)
                self.reasons[b] = why
                out.append((b, why, f"faults.disable_on_startup: {self.policy.disable_on_startup}"))
        return out

    def seed(self, records: Iterable[MatchRecord]) -> list[str]:
        """Account the records of earlier runs; the bots they disabled (still disabled), sorted."""
        for rec in records:
            self.add(rec, seeding=True)
        return sorted(self.disabled)

    def blocked(self, seats: Sequence[str]) -> list[str]:
        """The disabled bots among ``seats`` (sorted, once each)."""
        return sorted({b for b in seats if b in self.disabled})
