"""Live progress of ``arena run`` (rich): a bar and a provisional leaderboard.

The bar shows matches done/total, matches per second (this run), faults so far, elapsed
time and ETA. Under it, one line per bot that has faulted in this run: its first fault's
class, detail and last stderr line (:func:`arena.faults.fault_line`), so a bot that cannot
start says why while the run goes on. Below, an interim leaderboard: incremental TrueSkill
(:class:`arena.ratings.Rater`) over results in **arrival order**, labelled provisional —
the final table (``arena.results.standings``) is ordered by the batch fit over all results
(:mod:`arena.strength`) and shows TrueSkill in the ordered replay, so it may differ; with
``tau: 0`` the board's TrueSkill converges to the final one. The rules are the same: the board uses the tournament's rating configuration (mu,
sigma, tau, fixed, draw probability, ``faults.rate_forfeits``), rates a record through the
same :meth:`arena.ratings.Rater.record`, counts matches/wins/score/faults through the same
:func:`arena.tables.tally` and orders rows by the same :func:`arena.tables.row_order`.

Cost: the driver only appends each record to a pending list; the ratings are brought up
to date and the display drawn by rich's refresh thread at most ``refresh_per_second``
times per second (4), so the workers' CPUs are not touched and the driver spends
well under a millisecond per match.

When the run ends only the bar stays on screen: the board and the fault lines would repeat
the final tables printed under it (each table is printed once).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from rich.console import Console, Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from arena.faults import fault_line, first_fault
from arena.ratings import Rater, auto_draw_probability, played
from arena.record import MatchRecord
from arena.results import load_meta, rated_records
from arena.tables import new_stats, row_order, tally

REFRESH_PER_SECOND = 4


#: played records needed before ``draw_probability: auto`` is estimated (else 0.1), as in the final table.
AUTO_MIN_EVIDENCE = 20


class ProvisionalBoard:
    """Incremental TrueSkill in arrival order, rendered as a rich table on demand.

    :param bots: the tournament's bots (all shown, unrated ones at the prior).
    :param draw_probability: the config's value, or ``"auto"`` (estimated from ``seed_records``, else 0.1).
    :param seed_records: records already in the journal (a resumed run), rated first in replay order.
    :param max_rows: rows shown (the best by :func:`arena.tables.row_order`).
    :param mu: ``ratings.mu`` (the prior).
    :param sigma: ``ratings.sigma``.
    :param rate_forfeits: ``faults.rate_forfeits``: forfeits, ``disabled`` records included, are
        rated as in the final table (:meth:`arena.record.MatchRecord.rated`).
    """

    def __init__(self, bots: Iterable[str], draw_probability: float | str = "auto", tau: float | str = "default",
                 fixed: Iterable[str] = (), seed_records: Iterable[MatchRecord] = (), max_rows: int = 20,
                 mu: float = 25.0, sigma: float = 25.0 / 3, rate_forfeits: bool = False) -> None:
        self.rate_forfeits = rate_forfeits
        seed = sorted((r for r in seed_records if r.finished), key=MatchRecord.replay_key)
        self.auto = draw_probability == "auto"
        self._rater_args = (tau, list(fixed), mu, sigma)
        self.applied: list[MatchRecord] = []  # every record rated or tallied, in order
        self._evidence = 0  # played records when the draw probability was last estimated
        self._played = 0  # played records among ``applied``
        if self.auto:
            evidence = played(seed)
            dp = auto_draw_probability(evidence) if len(evidence) >= AUTO_MIN_EVIDENCE else 0.1
            self._evidence = len(evidence)
        else:
            dp = float(draw_probability)
        self.rater = Rater(dp, *self._rater_args)
        self.bots = list(bots)
        for b in self.bots:
            self.rater.rating(b)
        self.stats: dict[str, dict[str, Any]] = {b: new_stats() for b in self.bots}
        self.max_rows = max_rows
        self._pending: list[MatchRecord] = []
        self._lock = threading.Lock()
        self.rated = 0
        for rec in seed:
            self._apply(rec)

    @property
    def matches(self) -> dict[str, int]:
        """Matches counted per bot (as in the final table)."""
        return {b: st["matches"] for b, st in self.stats.items()}

    @property
    def wins(self) -> dict[str, int]:
        """Wins per bot (as in the final table)."""
        return {b: st["wins"] for b, st in self.stats.items()}

    def add(self, record: MatchRecord) -> None:
        """Queue one finished match (cheap; rated at the next render)."""
        if record.finished:
            with self._lock:
                self._pending.append(record)

    def _apply(self, rec: MatchRecord) -> None:
        self.applied.append(rec)
        if rec.played:  # as arena.ratings.played counts
            self._played += 1
        for b in rec.seats:
            self.stats.setdefault(b, new_stats())
        tally(self.stats, rec)
        if rec.rated(self.rate_forfeits):
            self.rater.record(rec)
            self.rated += 1

    def catch_up(self) -> None:
        """Rate every queued record (arrival order).

        With ``draw_probability: auto`` the probability is re-estimated from the played records
        as they grow (from :data:`AUTO_MIN_EVIDENCE` on, then at every 25% more); when it moves by
        more than 0.01 the ratings are replayed with it, so the live board converges to the
        final table's setting (amortised: a few full replays over a run).
        """
        with self._lock:
            todo, self._pending = self._pending, []
        for rec in todo:
            self._apply(rec)
        if todo and self.auto:
            self._refresh_draw_probability()

    def _refresh_draw_probability(self) -> None:
        n = self._played
        if n < AUTO_MIN_EVIDENCE or n < 1.25 * self._evidence:
            return  # cheap: no pass over the records between re-estimates
        self._evidence = n
        dp = auto_draw_probability(played(self.applied))
        if abs(min(0.9, max(0.01, dp)) - self.rater.dp) <= 0.01:
            return
        records, self.applied, self._played = self.applied, [], 0
        self.rater = Rater(dp, *self._rater_args)
        for b in self.bots:
            self.rater.rating(b)
        self.stats = {b: new_stats() for b in self.bots}
        self.rated = 0
        for rec in records:
            self._apply(rec)

    def rows(self) -> list[tuple[str, float, float, int, int]]:
        """``(bot, mu, sigma, matches, wins)`` in the final table's order (:func:`arena.tables.row_order`), best first."""
        self.catch_up()
        full = []
        for b, st in self.stats.items():
            r = self.rater.rating(b)
            score = st["score_sum"] / st["matches"] if st["matches"] else float("nan")
            full.append({"bot": b, "mu": r.mu, "sigma": r.sigma, "score": score, "faults": st["faults"],
                         "matches": st["matches"], "wins": st["wins"]})
        full.sort(key=row_order)
        return [(x["bot"], x["mu"], x["sigma"], x["matches"], x["wins"]) for x in full]

    def __rich__(self) -> Table:
        rows = self.rows()
        t = Table(title=f"provisional leaderboard — {self.rated} matches, TrueSkill in arrival order. "
                        "Provisional: the final table, printed when the run ends, rates all results "
                        "together and may order the bots differently; this board converges to it.",
                  title_style="italic dim", title_justify="left")
        for c in ("#", "bot", "μ", "σ", "μ−3σ", "matches", "wins"):
            t.add_column(c, justify="left" if c == "bot" else "right")
        for i, (b, mu, sigma, n, w) in enumerate(rows[: self.max_rows], 1):
            t.add_row(str(i), b, f"{mu:.2f}", f"{sigma:.2f}", f"{mu - 3 * sigma:.2f}", str(n), str(w))
        if len(rows) > self.max_rows:
            t.add_row("…", f"{len(rows) - self.max_rows} more", "", "", "", "", "")
        return t


class FaultNotes:
    """The first fault of every bot that faulted in this run, one line each (rich renderable).

    :meth:`add` runs in the driver (a dict look-up per fault); the lines are rebuilt only when
    a bot's first fault arrives, and rendering reads an immutable snapshot.
    """

    def __init__(self, max_rows: int = 10) -> None:
        self.first: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}
        self.max_rows = max_rows
        self._lines: tuple[str, ...] = ()

    def add(self, record: MatchRecord) -> None:
        """Count the record's faults (``disabled`` ones too) and keep each bot's first real one."""
        changed = False
        for f in record.faults:
            b = f.bot
            if b is None:
                continue
            self.counts[b] = self.counts.get(b, 0) + 1
            if b not in self.first and f.cls != "disabled":
                self.first[b] = first_fault(record, f)
                changed = True
        if changed or self._lines:
            lines = [fault_line(b, first, self.counts[b]) for b, first in self.first.items()]
            if len(lines) > self.max_rows:
                lines = [*lines[: self.max_rows], f"… and {len(lines) - self.max_rows} more faulting bots"]
            self._lines = tuple(lines)

    def lines(self) -> tuple[str, ...]:
        """The current lines (empty before any fault)."""
        return self._lines

    def __rich__(self) -> Text:
        lines = self._lines
        if not lines:
            return Text("")
        return Text("\n".join(["first fault of each faulting bot:", *lines]), style="yellow")


class _RateColumn(ProgressColumn):
    """Matches per second of this run (not counting matches recorded before it)."""

    def __init__(self, live: LiveProgress) -> None:
        super().__init__()
        self.live = live

    def render(self, task) -> Text:
        """This run's throughput, ``N.N matches/s`` (a dash before the first match)."""
        dt = time.monotonic() - self.live.t0
        played = self.live.played
        return Text(f"{played / dt:7.1f} matches/s" if dt > 0 and played else "      – matches/s")


class _BoardProgress(Progress):
    def __init__(self, *columns, board: ProvisionalBoard, notes: FaultNotes, **kw) -> None:
        self.board = board  # before Progress.__init__, which may render
        self.notes = notes
        super().__init__(*columns, **kw)

    #: set when the run ends: the last frame left on screen is the bar alone (the final
    #: tables and the reliability section with the first faults are printed after it, once)
    final = False

    def get_renderables(self):
        """The progress bars, the first faults, then the provisional leaderboard below them."""
        if self.final:
            yield self.make_tasks_table(self.tasks)
        elif self.notes.lines():
            yield Group(self.make_tasks_table(self.tasks), self.notes, self.board)
        else:
            yield Group(self.make_tasks_table(self.tasks), self.board)


class LiveProgress:
    """The live display of one tournament run; use as a context manager and pass
    :meth:`on_start` / :meth:`on_result` to :func:`arena.driver.run_tournament`.

    :param console: where the display goes (stderr in ``arena run``).
    :param tournament: an :class:`arena.config.Tournament`.
    :param quiet: show nothing (CI logs).
    """

    def __init__(self, console: Console, tournament, quiet: bool = False) -> None:
        self.console = console
        self.tournament = tournament
        self.quiet = quiet
        self.t0 = time.monotonic()
        self.played = 0
        self.faults = 0
        self.board: ProvisionalBoard | None = None
        self.notes = FaultNotes()
        self.progress: _BoardProgress | None = None
        self.task: TaskID | None = None

    def __enter__(self) -> LiveProgress:
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.final = True  # the board and fault notes would repeat the final tables
            from arena.adaptive import is_adaptive

            if exc[0] is None and self.task is not None and is_adaptive(self.tournament.model):
                # an adaptive design that stopped before max_matches (width reached): the bar
                # closes at what was played, not at a budget it will never reach (new-user finding)
                done = self.progress.tasks[0].completed if self.progress.tasks else None
                if done is not None:
                    self.progress.update(self.task, total=done)
            self.progress.stop()

    def on_start(self, summary) -> None:
        """Build the display once the journal is open (``summary``: :class:`arena.driver.RunSummary`)."""
        if self.quiet:
            return
        from arena.journal import read_records

        m = self.tournament.model
        # the records the final table will rate (not those outside the current schedule)
        seed = rated_records(read_records(summary.folder), load_meta(summary.folder))[0] if summary.already else []
        self.board = ProvisionalBoard(m.bots, m.ratings.draw_probability, m.ratings.tau, m.ratings.fixed, seed,
                                      mu=m.ratings.mu, sigma=m.ratings.sigma,
                                      rate_forfeits=self.tournament.fault_policy().rate_forfeits)
        self.progress = _BoardProgress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), _RateColumn(self),
            TextColumn("faults {task.fields[faults]}"), TimeElapsedColumn(), TextColumn("ETA"),
            TimeRemainingColumn(), console=self.console, refresh_per_second=REFRESH_PER_SECOND,
            transient=False, board=self.board, notes=self.notes)
        self.t0 = time.monotonic()
        self.task = self.progress.add_task(f"{m.name} ({m.game})", total=summary.total,
                                           completed=summary.already, faults=0)
        self.progress.start()

    def on_result(self, record: MatchRecord, summary) -> None:
        """One match recorded: advance the bar and queue the record for the provisional table."""
        self.played = summary.played
        if self.progress is None or self.board is None or self.task is None:
            return
        self.board.add(record)
        if record.faults:
            self.notes.add(record)
        self.progress.update(self.task, advance=1, faults=sum(summary.faults.values()))
