"""Run a tournament's schedule: on Ray (default) or inline; batching, retries, resume.

DESIGN "Execution". The driver (this module, in the ``arena run`` process) is the only
writer of the journal. Work is split into batches (one lineup and one rotation over
distinct deals) by :class:`Batcher`, adaptively: small probe batches first, then about
two seconds of matches per batch at the measured match time, bounded so the load still
balances at the end. Each batch runs as a Ray generator task that yields one result per
match as it finishes. At most ``workers`` batches are in flight (back-pressure: batches
are cut only when a slot frees, never the whole schedule at once; and never more
concurrent matches than CPUs). Ids already recorded are dropped, so a retried batch
cannot duplicate a match; a batch whose worker died is resubmitted for its unrecorded
matches, the interrupted match counting one attempt (``attempts.jsonl``).

The local Ray instance is pinned to loopback: ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
must be in the environment before ``ray`` is imported (this module sets it at import),
together with ``_node_ip_address="127.0.0.1"``; the dashboard is off. Also set at import:
the raylet reaps a dead worker's child processes (bots), and workers run at nice 0
(Ray's default 15 would let any other load starve bots under wall-clock budgets). After
``ray.init`` the driver's ``SIGCHLD`` disposition is restored (Ray leaves it ignored,
which breaks ``subprocess`` exit codes) and a guard process kills the local instance's
leftovers when the driver dies, even by ``kill -9``. See ``docs/architecture.md``,
``docs/cluster.md``, ``tests/arena/test_tournament.py`` and ``tests/arena/test_cluster.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper", "true")
# Ray runs workers at nice 15 by default; bots under wall-clock budgets must not be starved
# by whatever else runs on the machine (DESIGN's charging rule), so workers run at nice 0.
os.environ.setdefault("RAY_worker_niceness", "0")

import math  # noqa: E402
import time  # noqa: E402
from collections import Counter, deque  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from arena.errors import ArenaError  # noqa: E402
from arena.journal import FORMAT, Journal  # noqa: E402
from arena.schedule import (  # noqa: E402
    bot_commands,
    build_schedule,
    fingerprint_fields,
    tournament_settings,
)
from arena.specs import BotSpec, Fault, MatchSpec  # noqa: E402
from engine import ENGINE_VERSION, registry  # noqa: E402

RUNTIME_EXCLUDES = ["results/", ".git/", ".venv/", "venv/", "bench/.venv-openspiel/", "**/__pycache__/",
                    ".pytest_cache/", ".hypothesis/", "*.egg-info/"]


def cpu_count() -> int:
    """CPUs this process may use (affinity-aware)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def init_ray(workers: int, address: str | None = None, project_root: str | None = None) -> Any:
    """Start (or join) Ray; returns the ``ray`` module.

    Local: ``num_cpus=workers``, loopback only, dashboard off. With ``address``
    (``auto`` or ``HOST:PORT``): join the cluster and ship ``project_root`` as the job's
    working directory (excluding results, .git and virtual environments). If
    ``RAY_AUTH_MODE`` is unset and a token exists (``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``), token mode is used; Ray reads this
    setting when it is imported, so it is decided before ``import ray``.

    Ray ignores ``SIGCHLD`` in the driver once started, which makes every later
    ``subprocess`` of this process report exit code 0; the default disposition is
    restored after ``ray.init``.

    :raises ArenaError: with remedies when a cluster cannot be reached (a refused
        connection within ~5 s; a token mismatch after Ray's own retries).
    """
    import logging
    import signal

    if address and not os.environ.get("RAY_AUTH_MODE") and _token_exists():
        os.environ["RAY_AUTH_MODE"] = "token"  # effective only if ray is not imported yet
    import ray

    if ray.is_initialized():
        return ray
    logging.getLogger("ray").setLevel(logging.ERROR)
    if address:
        _probe_address(address)
        before = _subreaper()
        sigterm = signal.getsignal(signal.SIGTERM)
        runtime_env = {"working_dir": project_root or os.getcwd(), "excludes": RUNTIME_EXCLUDES}
        try:
            ray.init(address=address, runtime_env=runtime_env, configure_logging=False,
                     log_to_driver=False, logging_level="ERROR")
        except Exception as e:  # noqa: BLE001 - Ray raises many kinds of errors here
            auth = os.environ.get("RAY_AUTH_MODE", "unset")
            raise ArenaError(
                f"cannot join the Ray cluster at {address!r}: {str(e)[:300]}. Remedies: check the address "
                "(`ray status` on the head) and the firewall; if the cluster uses token authentication "
                f"(RAY_AUTH_MODE here: {auth}), copy the head's token to ~/.ray/auth_token or set "
                "RAY_AUTH_TOKEN, and leave RAY_AUTH_MODE unset or set it to token (docs/cluster.md)") from e
        finally:
            _restore_sigchld(signal, before, sigterm)
        return ray
    before = _subreaper()
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1",
                 configure_logging=False, log_to_driver=False, logging_level="ERROR")
    finally:
        _restore_sigchld(signal, before, sigterm)
    _start_orphan_guard()
    return ray


_GUARD_CODE = """
import sys, psutil
procs = []
for item in sys.argv[1:]:
    pid, created = item.split(":")
    procs.append((int(pid), float(created)))
sys.stdin.buffer.read()  # returns at EOF: the driver has exited, however it ended
for pid, created in procs:
    try:
        p = psutil.Process(pid)
        if abs(p.create_time() - created) < 0.5:
            p.kill()
    except psutil.Error:
        pass
"""

_GUARD = None


def _start_orphan_guard() -> None:
    """Make the local Ray instance die with the driver, even after ``kill -9``.

    Ray's own reaper stops the GCS and the raylet when the driver dies, but the raylet's
    agents (dashboard and runtime-environment agents) survive as orphans (measured with
    Ray 2.60). A small guard process, in its own session, holds the read end of a pipe
    whose write end only the driver has; at EOF it kills the processes Ray started
    (identified by pid and creation time, taken right after ``ray.init``).
    """
    global _GUARD
    import subprocess
    import sys

    import psutil

    if _GUARD is not None:
        return
    me = psutil.Process()
    items = []
    for c in me.children(recursive=True):
        try:
            items.append(f"{c.pid}:{c.create_time()}")
        except psutil.Error:
            continue
    if not items:
        return
    _GUARD = subprocess.Popen([sys.executable, "-c", _GUARD_CODE, *items], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def _subreaper() -> int | None:
    """This process's child-subreaper flag (Linux), or None if unknown."""
    try:
        import ctypes

        flag = ctypes.c_int(0)
        if ctypes.CDLL(None, use_errno=True).prctl(37, ctypes.byref(flag), 0, 0, 0) != 0:  # PR_GET_CHILD_SUBREAPER
            return None
        return flag.value
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return None


def _restore_sigchld(signal, subreaper: int | None, sigterm=None) -> None:
    """Undo what ``ray.init`` does to the driver: ``SIGCHLD`` ignored, child subreaper on,
    and the caller's ``SIGTERM`` handler replaced (Ray's core worker installs a crash-dump
    handler; ``sigterm`` is the Python handler to put back, e.g. the CLI's, which turns
    ``SIGTERM`` into an orderly interrupt).

    Ignoring ``SIGCHLD`` makes every later ``subprocess`` of the driver report exit code 0.
    Once it is restored, the subreaper flag must go back to what it was before (off in
    ``arena run``; :mod:`arena.process` may have set it in a process that also runs bots
    inline): otherwise processes orphaned in Ray's tree would be adopted by the driver and
    stay zombies there. The bots of a dead worker go to the raylet instead (a subreaper with
    ``RAY_kill_child_processes_on_worker_exit_with_raylet_subreaper``), which kills and
    reaps them (``tests/arena/test_cluster.py``).
    """
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if callable(sigterm):
            signal.signal(signal.SIGTERM, sigterm)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    if subreaper is None:
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, subreaper, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _token_exists() -> bool:
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    return bool(os.environ.get("RAY_AUTH_TOKEN")) or Path(path).exists()


def _probe_address(address: str) -> None:
    """Fail within seconds (not Ray's ~20 s of retries) when HOST:PORT refuses connections."""
    import socket

    if address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    host = host.replace("ray://", "")
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            pass
    except (OSError, ValueError) as e:
        raise ArenaError(f"cannot reach the Ray head at {address}: {e}. Remedies: start it with "
                         "`ray start --head --node-ip-address=<ip> --port=<port>` (docs/cluster.md), check the "
                         "address and the firewall, or run without --address for a local instance") from e


# ---------------------------------------------------------------------------- executors

def _run_batch_inline(specs: list[MatchSpec], bots: dict[str, BotSpec], results_dir: str) -> Iterator[dict]:
    from arena.batch import play_batch

    for res in play_batch(specs, bots, results_dir):
        yield res.to_json()


_REMOTE = None


def _remote_batch(ray):
    global _REMOTE
    if _REMOTE is None:
        @ray.remote(num_cpus=1, max_retries=0)
        def run_batch(specs, bots, results_dir):
            """Ray task: play ``specs`` (:func:`arena.batch.play_batch`), yielding each result as JSON."""
            from arena.batch import play_batch

            for res in play_batch(specs, bots, results_dir):
                yield res.to_json()

        _REMOTE = run_batch
    return _REMOTE


@dataclass
class _Outcome:
    """What the executor loop reports to the driver: a result, or a batch that ended early."""

    result: dict | None = None
    failed_batch: list[MatchSpec] | None = None
    error: str = ""


def execute_inline(batch_iter: Callable[[], list[MatchSpec] | None], bots: dict[str, BotSpec],
                   results_dir: str) -> Iterator[_Outcome]:
    """Run batches one after another in this process."""
    while True:
        batch = batch_iter()
        if batch is None:
            return
        try:
            for res in _run_batch_inline(batch, bots, results_dir):
                yield _Outcome(result=res)
        except Exception as e:  # noqa: BLE001 - a crash of the batch is reported and retried
            yield _Outcome(failed_batch=batch, error=f"{type(e).__name__}: {e}")


def execute_ray(ray, batch_iter: Callable[[], list[MatchSpec] | None], bots: dict[str, BotSpec],
                results_dir: str, in_flight_max: int, stall_s: float) -> Iterator[_Outcome]:
    """Run batches as Ray generator tasks, at most ``in_flight_max`` at once.

    A task that yields nothing for ``stall_s`` seconds is cancelled (``force=True``) and
    reported as a failed batch (the backstop; match budgets are enforced inside the task).
    """
    task = _remote_batch(ray)
    in_flight: dict[Any, tuple[list[MatchSpec], float]] = {}
    exhausted = False
    while True:
        while not exhausted and len(in_flight) < in_flight_max:
            batch = batch_iter()
            if batch is None:
                exhausted = True
                break
            gen = task.remote(batch, bots, results_dir)
            in_flight[gen] = (batch, time.monotonic())
        if not in_flight:
            return
        ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
        now = time.monotonic()
        for gen in ready:
            batch, _t = in_flight[gen]
            try:
                ref = next(gen)
            except StopIteration:
                del in_flight[gen]
                yield _Outcome(failed_batch=batch)  # driver ignores it if every match is recorded
                continue
            except Exception as e:  # noqa: BLE001
                del in_flight[gen]
                yield _Outcome(failed_batch=batch, error=f"{type(e).__name__}: {e}")
                continue
            try:
                res = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - worker died, task error
                del in_flight[gen]
                yield _Outcome(failed_batch=batch, error=f"{type(e).__name__}: {str(e)[:500]}")
                continue
            in_flight[gen] = (batch, now)
            yield _Outcome(result=res)
        for gen, (batch, t) in list(in_flight.items()):
            if now - t > stall_s:
                ray.cancel(gen, force=True)
                del in_flight[gen]
                yield _Outcome(failed_batch=batch, error=f"no result for {stall_s:.0f} s; task cancelled")


# ---------------------------------------------------------------------------- driver

@dataclass
class RunSummary:
    """What a run did: matches played now, already present, forfeits, faults, aborted.

    ``outside``: recorded matches that are not in the schedule as now configured (deals
    beyond a lowered ``deals``, a bot no longer listed): kept in the journal, not rated.
    """

    tournament: str
    folder: Path
    total: int
    already: int
    outside: int = 0
    played: int = 0
    faults: Counter = field(default_factory=Counter)
    aborted: int = 0
    disabled: list[str] = field(default_factory=list)
    seconds: float = 0.0
    batcher: Batcher | None = None


def record_of(spec: MatchSpec, res: dict[str, Any], game_version: int) -> dict[str, Any]:
    """The journal record (DESIGN "Journal") of one finished match."""
    return {"format": FORMAT, "match_id": spec.match_id, "tournament": spec.tournament,
            "fingerprint": spec.fingerprint, "game": spec.game, "game_version": game_version,
            "engine_version": ENGINE_VERSION, "options": spec.options, "deal_index": spec.deal_index,
            "deal_seed": spec.deal_seed, "rotation": spec.rotation, "lineup": list(spec.lineup),
            "seats": list(spec.seats), "bot_commands": list(spec.bot_commands), "clock": asdict(spec.clock),
            "bot_versions": res.get("bot_versions") or [],
            "status": res["status"], "outcome": res.get("outcome"), "faults": res.get("faults") or [],
            "time_ms": res.get("time_ms"), "move_ms": res.get("move_ms") or [], "actions": res.get("actions") or []}


def disabled_record(spec: MatchSpec, bad: list[str], game_version: int,
                    reasons: dict[str, str] | None = None) -> dict[str, Any]:
    """A match not played because a bot was disabled: forfeit, fault ``disabled`` on each disabled seat.

    No bot is started. The ranks put the sides without a disabled bot first and the others
    last (tied); that is all the record says. How it counts is decided when tables are
    made: with ``faults.rate_forfeits`` it is rated like any forfeit (only the disabled sides
    move, as a loss to each other side, :meth:`arena.ratings.Rater.record`); in the scores,
    wins and crosstable it counts only for the disabled bots, as a loss — the other seats
    never played, so they are credited with nothing (:func:`arena.report.credits`).

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
           "faults": faults, "time_ms": 0.0, "move_ms": [[] for _ in spec.seats], "actions": []}
    return record_of(spec, res, game_version)


def prepare(tournament, results_root: str | Path) -> tuple[Journal, list[MatchSpec]]:
    """Open the journal, make/load the salt, build the schedule, check settings and fingerprints.

    :raises JournalError: if the folder's recorded tournament had other settings (game,
        players, options, clock, ...), or an existing match's fingerprinted fields changed.
    """
    folder = Path(results_root) / tournament.name
    journal = Journal(folder)
    try:
        journal.check_settings(tournament.name, tournament_settings(tournament))
        salt = journal.salt(tournament.model.salt, tournament.name)
        specs = build_schedule(tournament, salt)
        game = registry.get_game(tournament.model.game)
        journal.check_fingerprints(specs, lambda s: fingerprint_fields(
            s.game, game.version, s.options, s.players, s.deal_seed, s.seats,
            bot_commands(s.seats, tournament.bots), asdict(s.clock)))
    except BaseException:
        journal.close()
        raise
    return journal, specs


def write_meta(tournament, folder: Path, specs: list[MatchSpec]) -> None:
    """``tournament.json``: the tournament as configured for this run.

    What ``arena leaderboard DIR`` needs without the config (bots, game, ratings), the
    settings the next run is checked against (:func:`arena.schedule.tournament_settings`),
    and the schedule (``match id -> fingerprint``): the tables rate only the journal's
    records of this schedule. Replaced atomically.
    """
    import json

    m = tournament.model
    meta = {"name": m.name, "game": m.game, "players": m.players, "options": m.options, "bots": m.bots,
            "deals": m.deals, "partners": m.partners, "rotations": m.rotations,
            "lineups": m.lineups if isinstance(m.lineups, str) else m.lineups.model_dump(),
            "ratings": m.ratings.model_dump(), "rate_forfeits": tournament.fault_policy().rate_forfeits,
            "config": tournament.source, "settings": tournament_settings(tournament),
            "schedule": {s.match_id: s.fingerprint for s in specs}}
    tmp = folder / "tournament.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2) + "\n")
    os.replace(tmp, folder / "tournament.json")


def auto_batch_size(pending: int, workers: int) -> int:
    """Upper bound of a batch for load balance: about four batches per worker over what is left."""
    return max(1, min(MAX_BATCH, math.ceil(pending / (workers * 4))))


MAX_BATCH = 256      # matches per batch, at most
TARGET_BATCH_S = 2.0  # wall time a batch should take once match times are known
PROBE_BATCH = 4      # batch size before any match time is known


class Batcher:
    """Adaptive batches of one lineup and one rotation over distinct deals (DESIGN "Execution").

    Matches are grouped per (lineup, rotation) in deal order; each call of :meth:`next`
    takes the group whose next match comes first in replay order (deal, rotation, lineup)
    and cuts a batch from it. With ``fixed`` the size is constant. Otherwise the first
    batches are small probes, then a batch holds about ``target_s`` of matches at the
    measured mean match time (:meth:`observe`, an exponential average), so tiny matches
    share one task and one set of bot processes, bounded by :func:`auto_batch_size` of
    the matches left so the load still balances at the end. Retries come first.
    """

    def __init__(self, specs: list[MatchSpec], workers: int, fixed: int | None = None,
                 target_s: float = TARGET_BATCH_S, max_size: int = MAX_BATCH) -> None:
        self.workers = max(1, workers)
        self.fixed = fixed
        self.target_s = target_s
        self.max_size = max_size
        groups: dict[tuple[str, int], list[MatchSpec]] = {}
        for spec in specs:
            groups.setdefault((spec.match_id.split("/")[1], spec.rotation), []).append(spec)
        self.groups = {k: deque(sorted(v, key=lambda x: x.deal_index)) for k, v in groups.items()}
        self.retry: deque[list[MatchSpec]] = deque()
        self.remaining = len(specs)
        self.match_s: float | None = None
        self.head_s: float | None = None
        self._heads: set[str] = set()
        self.sizes: list[int] = []

    def observe(self, match_id: str, seconds: float | None) -> None:
        """Account one finished match that took ``seconds`` of wall time in its worker.

        The first match of a batch also pays the bots' start-up, so it is averaged
        separately (``head_s``) from the others (``match_s``).
        """
        if seconds is None or not math.isfinite(seconds) or seconds < 0:
            return
        if match_id in self._heads:
            self._heads.discard(match_id)
            self.head_s = seconds if self.head_s is None else 0.8 * self.head_s + 0.2 * seconds
        else:
            self.match_s = seconds if self.match_s is None else 0.8 * self.match_s + 0.2 * seconds

    def size(self) -> int:
        """The size of the next fresh batch."""
        if self.fixed:
            return max(1, self.fixed)
        per_match = self.match_s if self.match_s is not None else (
            self.head_s / 4 if self.head_s is not None else None)
        if per_match is None:
            return max(1, min(PROBE_BATCH, auto_batch_size(self.remaining, self.workers)))
        per_match = max(per_match, 1e-4)
        want = math.ceil(self.target_s / per_match)
        # load balance: ~4 batches per worker over what is left, but never so small that
        # the bots' start-up (head_s - match_s) outweighs the batch's own work
        startup = max(0.0, (self.head_s or 0.0) - per_match)
        bound = max(auto_batch_size(self.remaining, self.workers), math.ceil(startup / per_match))
        return max(1, min(self.max_size, want, bound))

    def push_retry(self, batch: list[MatchSpec], front: bool = False) -> None:
        """Queue matches to run again (before any fresh batch)."""
        if front:
            self.retry.appendleft(batch)
        else:
            self.retry.append(batch)

    def next(self) -> list[MatchSpec] | None:
        """The next batch, or None when every group is exhausted."""
        if self.retry:
            batch = self.retry.popleft()
            if batch:
                self._heads.add(batch[0].match_id)
            return batch
        live = [(q[0].deal_index, k[1], k[0]) for k, q in self.groups.items() if q]
        if not live:
            return None
        _, rot, key = min(live)
        q = self.groups[(key, rot)]
        n = min(self.size(), len(q))
        batch = [q.popleft() for _ in range(n)]
        self.remaining -= n
        self.sizes.append(n)
        self._heads.add(batch[0].match_id)
        return batch


def run_tournament(tournament, results_root: str | Path = "results", *, inline: bool = False,
                   workers: int | None = None, address: str | None = None,
                   on_result: Callable[[dict, RunSummary], None] | None = None,
                   on_start: Callable[[RunSummary], None] | None = None,
                   warn: Callable[[str], None] = lambda m: None,
                   stop: Callable[[], bool] | None = None) -> RunSummary:
    """Play every match of ``tournament`` not yet in its journal; write each record as it ends.

    :param inline: run in this process (no Ray).
    :param workers: concurrent matches (default: the config's ``execution.workers``; auto = CPUs).
    :param address: join this Ray cluster instead of starting a local instance.
    :param on_result: called after each record is written (progress display).
    :param stop: asked before each new batch; when true, no batch is started (those in flight
        finish and are recorded) — a sequential test that has decided (:mod:`arena.sprt`).
    :returns: :class:`RunSummary`.
    :raises BotSetupError: (before anything is played) if a bot's command, script, sandbox or
        ``bot_user`` access cannot work on this machine.
    :raises JournalError: if another run holds the results folder, the folder's recorded
        tournament had other settings, or a recorded match's fingerprint changed.
    """
    m = tournament.model
    t0 = time.monotonic()
    if not address:  # on a cluster the bots run elsewhere, with the job's copy of the project
        from arena.process import preflight

        preflight(tournament.bots.values(), tournament.limits())
    journal, specs = prepare(tournament, results_root)
    game = registry.get_game(m.game)
    ncpu = cpu_count()
    if workers is None:
        workers = ncpu if m.execution.workers == "auto" else int(m.execution.workers)
    if workers > ncpu and not address:
        warn(f"{m.name}: {workers} workers on {ncpu} CPUs would charge bots for CPU time they never get; "
             f"using {ncpu}")
        workers = ncpu
    workers = max(1, workers)
    write_meta(tournament, journal.folder, specs)
    by_id = {s.match_id: s for s in specs}
    # the journal's records of the schedule as configured (prepare checked their fingerprints);
    # the others (deals beyond a lowered `deals`, a bot no longer listed) stay in the journal unrated
    scheduled = [rec for mid, rec in journal.records.items() if mid in by_id]
    summary = RunSummary(m.name, journal.folder, len(specs), len(scheduled),
                         outside=len(journal.records) - len(scheduled))
    policy = tournament.fault_policy()
    fault_count: Counter = Counter()
    for rec in scheduled:  # faults per bot and match (a bot filling both seats of a side counts once)
        fault_count.update({f.get("bot") for f in rec.get("faults", []) if f.get("class") != "disabled"})
    disabled: set[str] = set()
    if policy.disable_after:
        disabled = {b for b, c in fault_count.items() if c >= policy.disable_after}
    from arena.report import StartupWatch

    # bots that cannot start: each of their first N matches failed at start-up the same way
    startup = StartupWatch(policy.disable_on_startup)
    reasons: dict[str, str] = {}
    for rec in scheduled:
        for b, why in startup.add(rec):
            disabled.add(b)
            reasons[b] = why
    summary.disabled.extend(sorted(disabled))  # disabled by an earlier run: still disabled

    def disable(bot: str, why: str, rule: str) -> None:
        """Disable ``bot`` from now on and say so (``rule``: the config key that did it)."""
        disabled.add(bot)
        summary.disabled.append(bot)
        rated = "rated as its losses" if policy.rate_forfeits else "not rated (faults.rate_forfeits: false)"
        warn(f"{m.name}: bot {bot!r} disabled: {why}. Its remaining matches are recorded as forfeits "
             f"(fault 'disabled'), {rated}; the other seats get no credit for them ({rule})")

    pending = [s for s in specs if s.match_id not in journal]
    fixed = None if m.execution.batch_size == "auto" else int(m.execution.batch_size)
    batcher = Batcher(pending, workers, fixed)
    summary.batcher = batcher
    attempts: Counter = Counter()
    if on_start:
        on_start(summary)

    announced: dict[str, str] = {}  # bot -> the name/version its recorded matches announced
    for rec in scheduled:
        for b, v in zip(rec.get("seats", []), rec.get("bot_versions") or []):
            if v:
                announced.setdefault(b, v)
    warned: set[str] = set()

    def check_versions(rec: dict) -> None:
        """Warn once per bot whose announced name/version differs from its recorded matches'."""
        for b, v in zip(rec["seats"], rec.get("bot_versions") or []):
            if not v:
                continue
            old = announced.setdefault(b, v)
            if old != v and b not in warned:
                warned.add(b)
                warn(f"{m.name}: bot {b!r} now announces {v!r} but its recorded matches were played by "
                     f"{old!r}; the table mixes both. To rate the new version on its own, give it a new "
                     "bot name, a new tournament name or another --results folder")

    def write(rec: dict) -> None:
        """Journal ``rec``; if new, count it and its faults in ``summary`` and call ``on_result``."""
        check_versions(rec)
        if journal.append(rec):
            summary.played += 1
            for f in rec["faults"]:
                summary.faults[f["class"]] += 1
            if on_result:
                on_result(rec, summary)

    def next_batch() -> list[MatchSpec] | None:
        """The next unjournaled specs (a disabled bot's journaled as ``disabled``); None at the end."""
        while True:
            if stop is not None and stop():
                return None
            batch = batcher.next()
            if batch is None:
                return None
            batch = [s for s in batch if s.match_id not in journal]
            keep = []
            for s in batch:
                bad = [b for b in s.seats if b in disabled]
                if bad:
                    write(disabled_record(s, sorted(set(bad)), game.version, reasons))
                else:
                    keep.append(s)
            if keep:
                return keep

    bots = tournament.bots
    if address:
        bots = {k: BotSpec(**{**v.__dict__, "cwd": "."}) for k, v in bots.items()}
    results_dir = str(journal.folder.resolve())
    if not pending:
        stream = iter(())  # nothing to play: no Ray start-up
    elif inline:
        stream = execute_inline(next_batch, bots, results_dir)
    else:
        try:
            ray = init_ray(workers, address, str(tournament.root))
        except BaseException:
            journal.close()
            raise
        stall = max(s.wall_s for s in pending) * 1.0 + 30.0 if pending else 60.0
        stream = execute_ray(ray, next_batch, bots, results_dir, workers, stall)
    try:
        for out in stream:
            if out.result is not None:
                res = out.result
                spec = by_id.get(res["match_id"])
                if spec is None or spec.match_id in journal:
                    continue
                if res["status"] == "aborted":
                    attempts[spec.match_id] += 1
                    journal.attempt({**record_of(spec, res, game.version), "attempt": attempts[spec.match_id]})
                    if attempts[spec.match_id] > m.execution.max_retries:
                        write(record_of(spec, res, game.version))
                        summary.aborted += 1
                    else:
                        batcher.push_retry([spec])
                    continue
                rec = record_of(spec, res, game.version)
                if res.get("time_ms") is not None:
                    batcher.observe(spec.match_id, res["time_ms"] / 1000.0)
                write(rec)
                if policy.disable_after:
                    for b in sorted({f["bot"] for f in rec["faults"] if f["class"] != "disabled"}):
                        fault_count[b] += 1
                        if fault_count[b] >= policy.disable_after and b not in disabled:
                            disable(b, f"faults in {fault_count[b]} matches of this tournament",
                                    f"faults.disable_after: {policy.disable_after}")
                for b, why in startup.add(rec):
                    if b not in disabled:
                        reasons[b] = why
                        disable(b, why, f"faults.disable_on_startup: {policy.disable_on_startup}")
            elif out.failed_batch is not None:
                rest = [s for s in out.failed_batch if s.match_id not in journal]
                if not rest:
                    continue
                first = rest[0]
                attempts[first.match_id] += 1
                journal.attempt({"match_id": first.match_id, "status": "aborted", "error": out.error,
                                 "attempt": attempts[first.match_id]})
                if attempts[first.match_id] > m.execution.max_retries:
                    res = {"status": "aborted", "outcome": None, "faults": [], "time_ms": None,
                           "move_ms": [], "actions": []}
                    write(record_of(first, res, game.version))
                    summary.aborted += 1
                    rest = rest[1:]
                if rest:
                    batcher.push_retry(rest, front=True)
    finally:
        journal.close()
    summary.seconds = time.monotonic() - t0
    return summary
