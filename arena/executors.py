"""Where batches run: inline (this process) or as Ray generator tasks; how big they are.

DESIGN "Execution". Work is split into batches (one lineup and one rotation over distinct
deals) by :class:`Batcher`, adaptively: small probe batches first, then about two seconds
of matches per batch at the measured match time, bounded so the load still balances at the
end. Each batch runs as a Ray generator task that yields one result per match as it
finishes (:func:`execute_ray`). At most ``workers`` batches are in flight (back-pressure:
batches are cut only when a slot frees, never the whole schedule at once). The executors
report :class:`Outcome` values; what to record and what to retry is the driver's
(:mod:`arena.driver`).
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from arena.batch import play_batch
from arena.errors import ArenaError
from arena.specs import BotSpec, MatchSpec

MAX_BATCH = 256      # matches per batch, at most
TARGET_BATCH_S = 2.0  # wall time a batch should take once match times are known
PROBE_BATCH = 4      # batch size before any match time is known


def cpu_count() -> int:
    """CPUs this process may use (affinity-aware)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


@dataclass
class Outcome:
    """What an executor reports: a result (a :meth:`MatchResult.to_json` dict), or a batch
    that ended early (``failed_batch``, with ``error`` saying why; ``infra`` when the
    cause was the infrastructure — a dead worker, raylet or node — not the batch), or
    ``restarted``: the local Ray instance died and a new one took over."""

    result: dict | None = None
    failed_batch: list[MatchSpec] | None = None
    error: str = ""
    infra: bool = False
    restarted: bool = False


class InfrastructureError(ArenaError):
    """Ray failed as a whole (not one task) and the arena cannot replace it (a cluster)."""


def execute_inline(batch_iter: Callable[[], list[MatchSpec] | None], bots: dict[str, BotSpec],
                   results_dir: str) -> Iterator[Outcome]:
    """Run batches one after another in this process (``batch_iter`` returns None at the end)."""
    while True:
        batch = batch_iter()
        if batch is None:
            return
        try:
            for res in play_batch(batch, bots, results_dir):
                yield Outcome(result=res.to_json())
        except Exception as e:  # noqa: BLE001 - a crash of the batch is reported and retried
            yield Outcome(failed_batch=batch, error=f"{type(e).__name__}: {e}")


_REMOTE: dict[int, Any] = {}


def _remote_batch(ray: Any) -> Any:
    """The Ray task that plays a batch (one per Ray session: a restarted instance needs its own)."""
    key = id(ray)
    if key not in _REMOTE:
        @ray.remote(num_cpus=1, max_retries=0)
        def run_batch(specs, bots, results_dir):
            """Ray task: play ``specs`` (:func:`arena.batch.play_batch`), yielding each result as JSON."""
            from arena.batch import play_batch

            for res in play_batch(specs, bots, results_dir):
                yield res.to_json()

        _REMOTE[key] = run_batch
    return _REMOTE[key]


def _infra_error(ray: Any, e: BaseException) -> bool:
    """Whether ``e`` (from a Ray task) means the infrastructure failed rather than the batch's code."""
    exc = ray.exceptions
    kinds = tuple(getattr(exc, n) for n in ("WorkerCrashedError", "NodeDiedError", "RaySystemError",
                                           "LocalRayletDiedError", "ObjectLostError", "OwnerDiedError",
                                           "ActorDiedError", "TaskUnschedulableError", "GetTimeoutError",
                                           "RayChannelError", "ObjectFetchTimedOutError")
                  if hasattr(exc, n))
    return isinstance(e, kinds) or not isinstance(e, exc.RayTaskError)


#: restarts of the local Ray instance in one run before the run stops with an
#: :class:`InfrastructureError` (a restart loop would never end otherwise)
MAX_LOCAL_RESTARTS = 5


def execute_ray(ray: Any, batch_iter: Callable[[], list[MatchSpec] | None], bots: dict[str, BotSpec],
                results_dir: str, in_flight_max: int, stall_s: float,
                alive: Callable[[], bool] | None = None, restart: Callable[[], Any] | None = None,
                ) -> Iterator[Outcome]:
    """Run batches as Ray generator tasks, at most ``in_flight_max`` at once.

    A task that yields nothing for ``stall_s`` seconds is cancelled (``force=True``) and
    reported as a failed batch (the backstop; match budgets are enforced inside the task).
    A task that fails because its worker, raylet or node died is reported with ``infra``.
    With ``alive`` and ``restart`` (a local instance): when ``alive()`` turns false (checked
    after every infrastructure error and every 2 s), every batch in flight is reported failed
    (``infra``), ``restart()`` brings up a new instance (returns the ``ray`` module) and the
    run goes on there (an :class:`Outcome` with ``restarted`` says so).

    :raises InfrastructureError: when Ray itself fails (not one task) and cannot be restarted,
        or the local instance died more than :data:`MAX_LOCAL_RESTARTS` times.
    """
    task = _remote_batch(ray)
    in_flight: dict[Any, tuple[list[MatchSpec], float]] = {}
    exhausted = False
    checked = time.monotonic()
    restarts = 0
    while True:
        broken = False
        try:
            while not exhausted and len(in_flight) < in_flight_max:
                batch = batch_iter()
                if batch is None:
                    exhausted = True
                    break
                in_flight[task.remote(batch, bots, results_dir)] = (batch, time.monotonic())
            if not in_flight:
                return
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=0.5)
        except Exception as e:  # noqa: BLE001 - Ray itself failed (submitting or waiting)
            if alive is None or restart is None:
                raise InfrastructureError(f"the Ray cluster failed ({type(e).__name__}: {str(e)[:300]})") from e
            ready, broken = [], True
        now = time.monotonic()
        for gen in ready:
            batch, _t = in_flight.pop(gen)
            try:
                res = ray.get(next(gen))
            except StopIteration:
                yield Outcome(failed_batch=batch)  # the driver ignores it if every match is recorded
                continue
            except Exception as e:  # noqa: BLE001 - worker died, task error
                infra = _infra_error(ray, e)
                broken = broken or infra
                yield Outcome(failed_batch=batch, error=f"{type(e).__name__}: {str(e)[:500]}", infra=infra)
                continue
            in_flight[gen] = (batch, now)
            yield Outcome(result=res)
        for gen, (batch, t) in list(in_flight.items()):
            if now - t > stall_s:
                ray.cancel(gen, force=True)
                del in_flight[gen]
                yield Outcome(failed_batch=batch, error=f"no result for {stall_s:.0f} s; task cancelled")
        if alive is not None and restart is not None and (broken or now - checked > 2.0):
            checked = now
            if not alive():
                for batch, _t in in_flight.values():
                    yield Outcome(failed_batch=batch, error="the local Ray instance died", infra=True)
                in_flight.clear()
                restarts += 1
                if restarts > MAX_LOCAL_RESTARTS:  # something keeps killing it: stop, nothing finished is lost
                    raise InfrastructureError(f"the local Ray instance died {restarts} times in this run")
                ray = restart()
                task = _remote_batch(ray)
                yield Outcome(restarted=True)


def auto_batch_size(pending: int, workers: int) -> int:
    """Upper bound of a batch for load balance: about four batches per worker over what is left."""
    return max(1, min(MAX_BATCH, math.ceil(pending / (workers * 4))))


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
