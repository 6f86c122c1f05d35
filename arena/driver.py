"""Run a tournament's schedule: prepare the journal, feed the executors, record, retry, resume.

DESIGN "Execution". The driver (this module, in the ``arena run`` process) is the only
writer of the journal (:mod:`arena.journal`). It opens the results folder and checks it
(:func:`prepare`), writes ``tournament.json`` (:func:`write_meta`), then hands batches
(:class:`arena.executors.Batcher`) to an executor (inline, or Ray tasks set up by
:mod:`arena.ray_setup`) and records each result as it arrives. Ids already recorded are
dropped, so a retried batch cannot duplicate a match; a batch that ended early is
resubmitted for its unrecorded matches, the interrupted match counting one attempt
(``attempts.jsonl``). Disabling bots is the fault ledger's call (:mod:`arena.faults`).

Infrastructure faults are never results (issue 15): a match the arena could not finish —
its worker, raylet or node died, its task stalled, it overran its wall budget while no bot
was thinking — is retried, and after its attempts (``execution.max_retries``, and
:data:`INFRA_RETRIES` more for deaths of the infrastructure) it is left *unrecorded*, so
the next run plays it. A local Ray instance whose raylet or GCS died is replaced by a new
one (:func:`arena.ray_setup.restart_local`); on a cluster the run goes on while the cluster
does, else it stops with a message and the rest is played by the next run.
"""

from __future__ import annotations

import heapq
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from arena import schedule_file
from arena.adaptive import adaptive_schedule, is_adaptive
from arena.executors import (
    Batcher,
    InfrastructureError,
    Outcome,
    cpu_count,
    execute_inline,
    execute_ray,
)
from arena.faults import FaultLedger, disabled_record
from arena.journal import Journal, record_of, unwritable
from arena.lazy_schedule import LazySchedule
from arena.ray_setup import init_ray, local_alive, restart_local
from arena.record import MatchRecord
from arena.results_folder import discard, refuse_links, write_file
from arena.schedule import (
    bot_commands,
    build_schedule,
    fingerprint_fields,
    lineups_for,
    tournament_settings,
)
from arena.specs import BotSpec, MatchSpec, files_digest
from engine import registry

#: extra attempts of a match whose worker, raylet or node died (beyond ``execution.max_retries``)
INFRA_RETRIES = 5


@dataclass
class RunSummary:
    """What a run did: matches played now, already present, forfeits, faults, unplayed.

    ``outside``: recorded matches that are not in the schedule as now configured (deals
    beyond a lowered ``deals``, a bot no longer listed): kept in the journal, not rated.
    ``unplayed``: matches this run could not finish (infrastructure), not recorded, so the
    next run plays them; ``restarts``: local Ray instances replaced after a death;
    ``replayed``: matches played again because the infrastructure failed under them (a lost
    node, worker or raylet: ``attempts.jsonl`` has an ``"infra": true`` line per batch).
    """

    tournament: str
    folder: Path
    total: int
    already: int
    outside: int = 0
    played: int = 0
    faults: Counter = field(default_factory=Counter)
    unplayed: list[str] = field(default_factory=list)
    restarts: int = 0
    replayed: int = 0
    sandbox: str = "none"
    root_bots: bool = False  # bots run as root (arena root, no limits.bot_user): docs/security.md
    disabled: list[str] = field(default_factory=list)
    seconds: float = 0.0
    batcher: Batcher | None = None


def lazy_schedule(tournament, salt: str) -> Sequence[MatchSpec]:
    """The schedule of a plain design as a :class:`arena.lazy_schedule.LazySchedule` (built match by
    match when asked: the driver's memory stays flat however long the run); SPRT schedules and
    lineups sharing a key as :func:`arena.schedule.build_schedule`'s list (equal specs, same order)."""
    m = tournament.model
    if getattr(m, "mode", "tournament") == "sprt":
        return build_schedule(tournament, salt)
    game = registry.get_game(m.game)
    lus = lineups_for(m.bots, m.players, game.teams(m.players), m.rotations, m.lineups, m.partners, salt,
                      getattr(m, "panel", None))
    try:
        return LazySchedule(tournament, salt, lus, range(m.deals))
    except ValueError:  # two lineups with one key: the list's stable sort decides their order
        return build_schedule(tournament, salt)


def prepare(tournament, results_root: str | Path,
            design: dict[str, Any] | None = None) -> tuple[Journal, Sequence[MatchSpec]]:
    """Open the journal, make/load the salt, build the schedule, check settings and fingerprints.

    :param design: filled with an adaptive design's state (:func:`arena.adaptive.design_status`).

    The schedule is a sequence in replay order: a :class:`arena.lazy_schedule.LazySchedule` for the
    plain designs (specs built when asked), a list for SPRT and adaptive rounds.

    :raises JournalError: if the folder's recorded tournament had other settings (game,
        players, options, clock, ...), or an existing match's fingerprinted fields changed.
    """
    folder = Path(results_root) / tournament.name
    refuse_links(folder, inside=("logs",))  # a run writes its logs there
    journal = Journal(folder)
    try:
        journal.check_settings(tournament.name, tournament_settings(tournament))
        salt = journal.salt(tournament.model.salt, tournament.name)
        specs: Sequence[MatchSpec]
        if is_adaptive(tournament.model):  # its rounds are planned from the journal's records
            specs = adaptive_schedule(tournament, salt, journal.records, design)
        else:
            specs = lazy_schedule(tournament, salt)
        game = registry.get_game(tournament.model.game)
        journal.check_fingerprints(specs, lambda s: fingerprint_fields(
            s.game, game.version, s.options, s.players, s.deal_seed, s.seats,
            bot_commands(s.seats, tournament.bots), asdict(s.clock)))
    except BaseException:
        journal.close()
        raise
    return journal, specs


def sandbox_mode(tournament, address: str | None = None) -> str:
    """The sandbox the bots get: ``bwrap`` | ``unshare`` | ``none`` on this machine (``auto`` and
    ``required`` resolved by :func:`arena.process.effective_mode`); on a cluster the configured
    mode, decided on each node.

    :raises ArenaError: ``sandbox: required`` and no sandbox can start here.
    """
    from arena.process import effective_mode

    limits = tournament.limits()
    if address:
        return str(limits.sandbox) + (" (decided on each node)" if limits.sandbox in ("auto", "required") else "")
    return effective_mode(limits)


def write_meta(tournament, folder: Path, specs: Sequence[MatchSpec], sandbox: str | None = None,
               design: dict[str, Any] | None = None) -> None:
    """``tournament.json``: the tournament as configured for this run.

    What ``arena leaderboard DIR`` needs without the config (bots, game, ratings), the
    settings the next run is checked against (:func:`arena.schedule.tournament_settings`),
    and the schedule (``match id -> fingerprint``, compact from
    :data:`arena.schedule_file.COMPACT_FROM` matches): the tables rate only the journal's
    records of this schedule; ``sandbox``: the sandbox this run's bots get
    (:func:`sandbox_mode`, shown in ``leaderboard.json`` and ``report.html``); ``design``: an
    adaptive design's rounds and why it stopped (:func:`arena.adaptive.design_status`). Replaced atomically.

    :raises JournalError: if the file cannot be written.
    """
    m = tournament.model
    meta = {"name": m.name, "game": m.game, "players": m.players, "options": m.options, "bots": m.bots,
            "deals": m.deals, "partners": m.partners, "rotations": m.rotations,
            "lineups": m.lineups if isinstance(m.lineups, str) else m.lineups.model_dump(),
            "ratings": m.ratings.model_dump(), "rate_forfeits": tournament.fault_policy().rate_forfeits,
            "config": tournament.source, "settings": tournament_settings(tournament),
            "sandbox": sandbox if sandbox is not None else sandbox_mode(tournament),
            "bot_files": bot_files(tournament), **({"design": design} if design else {}),
            **_schedule_entry(specs)}
    tmp = folder / "tournament.json.tmp"
    try:
        write_file(tmp, json.dumps(meta, indent=2) + "\n")  # never through a link
        os.replace(tmp, folder / "tournament.json")
    except OSError as e:
        discard(tmp)
        raise unwritable(folder / "tournament.json", e, "write the tournament's settings to {path}") from e


def _schedule_entry(specs: Sequence[MatchSpec]) -> dict[str, Any]:
    """``tournament.json``'s schedule entry (:func:`arena.schedule_file.encode`); a large lazy
    schedule streams its sorted ids and fingerprints instead of a dict of every match."""
    if isinstance(specs, LazySchedule) and len(specs) >= schedule_file.COMPACT_FROM:
        return schedule_file.encode_sorted(specs.sorted_pairs(), len(specs))
    return schedule_file.encode({s.match_id: s.fingerprint for s in specs})


def bot_files(tournament) -> dict[str, str]:
    """``bot -> digest of the files its command names`` (:func:`arena.specs.files_digest`)."""
    return {b: files_digest(spec.cmd, spec.cwd) for b, spec in sorted(tournament.bots.items())}


def changed_bots(tournament, folder: Path) -> list[str]:
    """The bots whose files changed since the last run wrote ``folder/tournament.json``: their
    recorded matches stay (a match's fingerprint is its command and announced version, not its
    code) and rate the old code, which a class resubmitting would not expect."""
    try:
        old = json.loads((folder / "tournament.json").read_text()).get("bot_files") or {}
    except (OSError, ValueError, AttributeError):
        return []
    now = bot_files(tournament)
    return sorted(b for b, d in now.items() if b in old and old[b] != d)


def effective_workers(tournament, workers: int | None, address: str | None,
                      warn: Callable[[str], None]) -> int:
    """Concurrent matches: ``workers``, else the config's (auto = CPUs); locally at most the CPUs."""
    m = tournament.model
    ncpu = cpu_count()
    if workers is None:
        workers = ncpu if m.execution.workers == "auto" else int(m.execution.workers)
    if workers > ncpu and not address:
        warn(f"{m.name}: {workers} workers on {ncpu} CPUs would charge bots for CPU time they never get; "
             f"using {ncpu}")
        workers = ncpu
    return max(1, workers)


class Run:
    """One run of a tournament over its open journal: what to play next, what to record.

    :param specs: the schedule; :param journal: its open journal (:func:`prepare`).
    :param on_result: called with each new record (a :class:`MatchRecord`) and the summary.
    :param warn: prints one warning (a bot disabled, a bot announcing a new version).
    """

    def __init__(self, tournament, journal: Journal, specs: Sequence[MatchSpec], workers: int,
                 on_result: Callable[[MatchRecord, RunSummary], None] | None,
                 warn: Callable[[str], None]) -> None:
        m = tournament.model
        self.name = m.name
        self.max_retries = m.execution.max_retries
        self.journal = journal
        lazy = isinstance(specs, LazySchedule)
        #: match id -> spec (a lazy schedule looks it up and builds it when asked)
        self.by_id: Any = specs if lazy else {s.match_id: s for s in specs}
        self.game_version = registry.get_game(m.game).version
        self.policy = tournament.fault_policy()
        self.on_result = on_result
        self.warn = warn
        self.stop: Callable[[], bool] | None = None  # asked before each batch (run_tournament's stop)
        self.announced: dict[str, str] = {}  # bot -> the name/version its recorded matches announced
        self.ledger = FaultLedger(self.policy)
        already = [0]

        def scheduled() -> Iterator[MatchRecord]:
            """The journal's records of the schedule as configured (prepare checked their fingerprints),
            streamed one at a time (no list of records: the driver stays flat on long journals); the
            others (deals beyond a lowered `deals`, a bot no longer listed) stay in the journal unrated."""
            for mid, raw in journal.records.items():
                if mid in self.by_id:
                    rec = MatchRecord.from_json(raw, moves=False)
                    already[0] += 1
                    for b, v in zip(rec.seats, rec.bot_versions):
                        if v:
                            self.announced.setdefault(b, v)
                    yield rec

        disabled = self.ledger.seed(scheduled())  # disabled by an earlier run: still disabled
        self.summary = RunSummary(m.name, journal.folder, len(specs), already[0],
                                  outside=len(journal.records) - already[0])
        self.summary.disabled.extend(disabled)
        fixed = None if m.execution.batch_size == "auto" else int(m.execution.batch_size)
        self.batcher: Batcher
        if isinstance(specs, LazySchedule):  # no list of the pending specs: the batcher builds them
            self.pending_count = len(specs) - already[0]
            self.wall_s = specs.wall_s
            self.batcher = self.summary.batcher = LazyBatcher(specs, journal.__contains__, self.pending_count,
                                                              workers, fixed)
        else:
            pending = [s for s in specs if s.match_id not in journal]
            self.pending_count = len(pending)
            self.wall_s = max((s.wall_s for s in pending), default=0.0)
            self.batcher = self.summary.batcher = Batcher(pending, workers, fixed)
        self.attempts: Counter[str] = Counter()
        self.infra_attempts: Counter[str] = Counter()
        self.warned: set[str] = set()

    def disable(self, bot: str, why: str, rule: str) -> None:
        """Say that ``bot`` is disabled from now on (``rule``: the config key that did it)."""
        self.summary.disabled.append(bot)
        rated = "rated as its losses" if self.policy.rate_forfeits else "not rated (faults.rate_forfeits: false)"
        self.warn(f"{self.name}: bot {bot!r} disabled: {why}. Its remaining matches are recorded as forfeits "
                  f"(fault 'disabled'), {rated}; the other seats get no credit for them ({rule})")

    def check_versions(self, rec: MatchRecord) -> None:
        """Warn once per bot whose announced name/version differs from its recorded matches'."""
        for b, v in zip(rec.seats, rec.bot_versions):
            if not v:
                continue
            old = self.announced.setdefault(b, v)
            if old != v and b not in self.warned:
                self.warned.add(b)
                self.warn(f"{self.name}: bot {b!r} now announces {v!r} but its recorded matches were played by "
                          f"{old!r}; the table mixes both. To rate the new version on its own, give it a new "
                          "bot name, a new tournament name or another --results folder")

    def write(self, raw: dict[str, Any], count_faults: bool = False) -> None:
        """Journal ``raw``; if new, count it in the summary and call ``on_result``; with
        ``count_faults`` (a played match) the fault ledger may disable bots."""
        rec = MatchRecord.from_json(raw)
        self.check_versions(rec)
        if not self.journal.append(raw):
            return
        self.summary.played += 1
        for f in rec.faults:
            self.summary.faults[f.cls] += 1
        if self.on_result:
            self.on_result(rec, self.summary)
        if count_faults:
            for bot, why, rule in self.ledger.add(rec):
                self.disable(bot, why, rule)

    def next_batch(self) -> list[MatchSpec] | None:
        """The next unjournaled specs (a disabled bot's journaled as ``disabled``); None at the end."""
        while True:
            if self.stop is not None and self.stop():
                return None
            batch = self.batcher.next()
            if batch is None:
                return None
            keep = []
            for s in batch:
                if s.match_id in self.journal:
                    continue
                bad = self.ledger.blocked(s.seats)
                if bad:
                    self.write(disabled_record(s, bad, self.game_version, self.ledger.reasons))
                else:
                    keep.append(s)
            if keep:
                return keep

    def take(self, out: Outcome) -> None:
        """Record one executor outcome: a result (retried if aborted), or a failed batch."""
        if out.result is not None:
            res = out.result
            spec = self.by_id.get(res["match_id"])
            if spec is None or spec.match_id in self.journal:
                return
            if res["status"] == "aborted":  # over its wall budget while no bot was thinking
                self.journal.attempt({**record_of(spec, res, self.game_version),
                                      "attempt": self.attempts[spec.match_id] + 1})
                if self.again(spec, infra=False):
                    self.batcher.push_retry([spec])
                return
            if res.get("time_ms") is not None:
                self.batcher.observe(spec.match_id, res["time_ms"] / 1000.0)
            self.write(record_of(spec, res, self.game_version), count_faults=True)
        elif out.failed_batch is not None:
            self.failed(out.failed_batch, out.error, out.infra)

    def again(self, spec: MatchSpec, infra: bool) -> bool:
        """Count one failed attempt of ``spec``; whether to try it again (else it stays
        unrecorded in this run, and the next run plays it)."""
        counter = self.infra_attempts if infra else self.attempts
        counter[spec.match_id] += 1
        if counter[spec.match_id] <= self.max_retries + (INFRA_RETRIES if infra else 0):
            return True
        self.summary.unplayed.append(spec.match_id)
        return False

    def failed(self, batch: list[MatchSpec], error: str, infra: bool = False) -> None:
        """A batch ended early: its first unrecorded match counts one attempt; the rest are retried."""
        rest = [s for s in batch if s.match_id not in self.journal and s.match_id not in self.summary.unplayed]
        if not rest:
            return
        first = rest[0]
        self.journal.attempt({"match_id": first.match_id, "status": "aborted", "error": error, "infra": infra,
                              "attempt": self.attempts[first.match_id] + self.infra_attempts[first.match_id] + 1,
                              "unfinished": len(rest)})  # matches of the batch played again
        if infra:
            self.summary.replayed += len(rest)
        if not self.again(first, infra):
            rest = rest[1:]
        if rest:
            self.batcher.push_retry(rest, front=True)

class LazyBatcher(Batcher):
    """:class:`arena.executors.Batcher` over a :class:`LazySchedule`'s matches not yet recorded
    (``recorded(match_id)``): the same batches in the same order, one cursor per group.

    :param pending: how many of the schedule's matches are not recorded (the batch sizing's count).
    """

    def __init__(self, schedule: LazySchedule, recorded: Callable[[str], bool], pending: int, workers: int,
                 fixed: int | None = None, **kw: Any) -> None:
        super().__init__([], workers, fixed, **kw)
        self.schedule, self.recorded = schedule, recorded
        self.remaining = pending
        self._pos: dict[tuple[int, int], int] = {}  # (lineup, rotation) -> index into the deals of its next match
        self._heap: list[tuple[int, int, str, int]] = []  # (deal, rotation, key, lineup) of each live group's head
        for r, ids in enumerate(schedule.by_rot):
            for lu in ids:
                self._pos[(lu, r)] = 0
                self._push(lu, r)

    def _push(self, lu: int, r: int) -> None:
        """Advance group ``(lu, r)`` past recorded matches and queue its head (if any)."""
        s, k = self.schedule, self._pos[(lu, r)]
        while k < len(s.deals) and self.recorded(s.match_id(lu, s.deals[k], r)):
            k += 1
        self._pos[(lu, r)] = k
        if k < len(s.deals):
            heapq.heappush(self._heap, (s.deals[k], r, s.lineups[lu].key, lu))

    def next(self) -> list[MatchSpec] | None:
        """The next batch (retries first), or None when every group is exhausted."""
        if self.retry:
            return super().next()
        if not self._heap:
            return None
        _, r, _, lu = heapq.heappop(self._heap)
        s, n = self.schedule, self.size()
        batch: list[MatchSpec] = []
        k = self._pos[(lu, r)]
        while len(batch) < n and k < len(s.deals):
            d = s.deals[k]
            k += 1
            if not self.recorded(s.match_id(lu, d, r)):
                batch.append(s.spec(lu, d, r))
        self._pos[(lu, r)] = k
        self._push(lu, r)
        self.remaining -= len(batch)
        self.sizes.append(len(batch))
        self._heads.add(batch[0].match_id)
        return batch


def _stream(run: Run, tournament, inline: bool, workers: int, address: str | None) -> Iterator[Outcome]:
    """The executor's outcomes for ``run``'s pending matches (no Ray start-up when none are pending)."""
    bots = tournament.bots
    if address:  # on a cluster the bots run with the job's copy of the project
        bots = {k: BotSpec(**{**v.__dict__, "cwd": "."}) for k, v in bots.items()}
    results_dir = str(run.journal.folder.resolve())
    if not run.pending_count:
        return iter(())
    if inline:
        return execute_inline(run.next_batch, bots, results_dir)
    ray = init_ray(workers, address, str(tournament.root))
    stall = run.wall_s + 30.0
    if address:  # a cluster: the arena cannot restart it
        return execute_ray(ray, run.next_batch, bots, results_dir, workers, stall)

    def restart() -> Any:
        """Restart the local Ray instance after its raylet or GCS died; the interrupted matches are replayed."""
        restart_local(ray)
        return ray

    return execute_ray(ray, run.next_batch, bots, results_dir, workers, stall, alive=local_alive, restart=restart)


def run_tournament(tournament, results_root: str | Path = "results", *, inline: bool = False,
                   workers: int | None = None, address: str | None = None,
                   on_result: Callable[[MatchRecord, RunSummary], None] | None = None,
                   on_start: Callable[[RunSummary], None] | None = None,
                   warn: Callable[[str], None] = lambda m: None,
                   stop: Callable[[], bool] | None = None) -> RunSummary:
    """Play every match of ``tournament`` not yet in its journal; write each record as it ends.

    ``lineups: {adaptive: ...}`` plays round after round (:mod:`arena.adaptive`): each pass
    plays the rounds the journal determines; once they are recorded the next pass plans the
    next round, until the design stops or a pass leaves matches unplayed. Parameters, return
    and errors as :func:`run_once`.
    """
    kw: dict[str, Any] = dict(inline=inline, workers=workers, address=address, on_result=on_result, warn=warn,
                              stop=stop)
    if not is_adaptive(tournament.model):
        return run_once(tournament, results_root, on_start=on_start, **kw)
    cap = tournament.model.lineups.adaptive.max_matches

    def first_start(s: RunSummary) -> None:
        """The live display counts towards the budget (the schedule grows round by round)."""
        if on_start:
            on_start(RunSummary(**{**s.__dict__, "total": max(s.total, cap)}))

    out = run_once(tournament, results_root, on_start=first_start, **kw)
    while out.played and not out.unplayed and not (stop is not None and stop()):
        if on_result is not None:  # the live display counts this run's matches over every pass
            base = out.played
            kw["on_result"] = lambda rec, s, base=base: on_result(rec, RunSummary(**{**s.__dict__,
                                                                                        "played": s.played + base}))
        more = run_once(tournament, results_root, **kw)
        out.total, out.played, out.seconds = more.total, out.played + more.played, out.seconds + more.seconds
        out.faults.update(more.faults)
        out.unplayed, out.restarts = more.unplayed, out.restarts + more.restarts
        out.replayed += more.replayed
        out.disabled.extend(b for b in more.disabled if b not in out.disabled)
        if not more.played:
            break
    return out


def run_once(tournament, results_root: str | Path = "results", *, inline: bool = False,
             workers: int | None = None, address: str | None = None,
             on_result: Callable[[MatchRecord, RunSummary], None] | None = None,
             on_start: Callable[[RunSummary], None] | None = None,
             warn: Callable[[str], None] = lambda m: None,
             stop: Callable[[], bool] | None = None) -> RunSummary:
    """Play every match of the schedule as the journal now determines it (one pass of :func:`run_tournament`).

    :param inline: run in this process (no Ray).
    :param workers: concurrent matches (default: the config's ``execution.workers``; auto = CPUs).
    :param address: join this Ray cluster instead of starting a local instance.
    :param on_result: called after each record is written (progress display).
    :param stop: asked before each new batch; when true no batch starts (those in flight finish
        and are recorded) — a sequential test that has decided (:mod:`arena.sprt`).
    :returns: :class:`RunSummary`.
    :raises BotSetupError: (before anything is played) if a bot's command, script, sandbox or
        ``bot_user`` access cannot work on this machine.
    :raises JournalError: if another run holds the results folder, the folder's recorded
        tournament had other settings, or a recorded match's fingerprint changed.
    """
    t0 = time.monotonic()
    if not address:  # on a cluster the bots run elsewhere, with the job's copy of the project
        from arena.process import preflight

        preflight(tournament.bots.values(), tournament.limits())
    sandbox = sandbox_mode(tournament, address)
    design: dict[str, Any] = {}
    journal, specs = prepare(tournament, results_root, design)
    try:
        n = effective_workers(tournament, workers, address, warn)
        for b in changed_bots(tournament, journal.folder):
            warn(f"{tournament.model.name}: bot {b!r}: its files changed since the last run; the matches "
                 "already recorded keep rating its old code. To rate the new code, play the tournament "
                 "again under a new name (or another --results root)")
        write_meta(tournament, journal.folder, specs, sandbox, design)
        run = Run(tournament, journal, specs, n, on_result, warn)
        run.stop = stop
        run.summary.sandbox = sandbox
        run.summary.root_bots = os.geteuid() == 0 and tournament.limits().bot_user is None
        if on_start:
            on_start(run.summary)
        for out in _stream(run, tournament, inline, n, address):
            if out.restarted:
                run.summary.restarts += 1
                warn(f"{run.name}: the local Ray instance died (raylet or GCS); a new one took over and the "
                     "matches it was playing are played again")
            else:
                run.take(out)
    except InfrastructureError as e:
        s = run.summary
        raise InfrastructureError(
            f"{e}. {s.already + s.played} of {s.total} matches of {s.tournament} are recorded in {s.folder}/ and "
            "nothing finished was lost; the matches in progress are not recorded. Remedies: check the cluster "
            "(`ray status --address ...`), then run the same command again to play the rest "
            "(docs/cluster.md)") from e
    finally:
        journal.close()
    run.summary.seconds = time.monotonic() - t0
    return run.summary
