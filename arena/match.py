"""Play one match between bot processes (DESIGN "Bot protocol v1", "Faults").

:func:`play_match` deals the match with the engine, sends ``start`` to every seat and
waits for ``ready`` (``startup_ms`` for a new process, ``move_ms`` otherwise), then asks
the seat to move with ``act`` until the match is over and sends ``end``. A decision with
one legal action is played by the arena unless the bot has ``ask_forced``; with
``MatchSpec.pace_forced`` (``preset: competition``) it then takes as long as one of that
seat's decisions so far in the match (drawn at random), so the time between a bot's action
and its next ``act`` does not tell it that an opponent had a single legal move. Before the
seat's first decision of the match its bot's decisions in earlier matches of this process are used
(:data:`HISTORY`; the other seats' times never are: they would let a prober set the pace);
when the bot has never decided in this process, both its forced moves and its real decisions
take at least :data:`FIRST_PACE_FRACTION` of ``move_ms`` until it has decided once.
With ``MatchSpec.pause_idle`` (``preset: competition``) every process of a bot is stopped
after its ``ready`` and after each action, and continued when it is next sent a message
(:meth:`arena.process.BotProcess.pause`): busy children cannot take the CPU from the seat
that thinks.

Clock: each decision may use ``move_ms``; time beyond it comes out of the seat's bank; a
decision times out when its wall time (from the write of ``act`` to the read of the
reply's newline) minus ``grace_ms`` exceeds ``move_ms`` + the remaining bank. The
deadline is polled while the bot thinks.

Start-up: every seat is sent ``start`` and every seat's ``ready`` (or failure) is awaited
within its window before any fault is acted on, so every bot that fails at start-up is
blamed, not only the first one to be noticed.

Faults (``timeout``, ``crash``, ``illegal``, ``protocol``, ``stall``) are handled by the
match's :class:`FaultPolicy`: ``forfeit`` ends the match (every side with a faulty seat
ranks last, the others share first; scores 0 and 1); ``random`` replaces the faulty move
by a legal action drawn from an RNG keyed by (deal seed, move index), restarts a bot that
crashed, timed out, stalled or broke the protocol and sends it ``start`` with
``"resume": true``; after ``max_restarts_per_match`` restarts of a seat the match is
forfeited. A match over its wall budget is a ``timeout`` of the seat that took the most of
the match's time when that is more than its share, else of the seat that was thinking, or
``aborted`` if none was (:meth:`_Match.wall_culprit`).

The seats' processes live in :class:`arena.seat_pool.SeatPool`.
"""

from __future__ import annotations

import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from arena.errors import (
    LINE_HINT,
    BotCrashed,
    BotFault,
    BotIllegalAction,
    BotStall,
    BotTimeout,
    ProtocolError,
)
from arena.faults import forfeit_outcome, replacement_action
from arena.process import STDERR_DRAIN_S, BotProcess
from arena.protocol import (
    action_id,
    encode_act,
    encode_end,
    encode_start,
    parse_action,
    parse_ready,
)
from arena.seat_pool import SeatPool
from arena.specs import BotSpec, Fault, MatchResult, MatchSpec
from engine import registry
from engine.core import State
from engine.seeds import h64

InfoSink = Callable[[int, int, dict], None]

#: pace of a forced move (and floor of a real decision) of a bot that has not decided yet in
#: this process, as a fraction of ``move_ms`` (``pace_forced``).
FIRST_PACE_FRACTION = 0.5
#: per bot, its latest decision times (ms) in this process, for ``pace_forced`` before a
#: seat's first decision of a match; at most :data:`HISTORY_LEN` each.
HISTORY: dict[BotSpec, deque[float]] = {}
HISTORY_LEN = 256


class WallBudgetExceeded(Exception):
    """The match ran past ``MatchSpec.wall_s`` (internal); ``seat`` was thinking (or None)."""

    def __init__(self, seat: int | None) -> None:
        super().__init__(seat)
        self.seat = seat


class _Forfeit(Exception):
    pass


class _Match:
    """The state of one match being played (internal to :func:`play_match`)."""

    def __init__(self, spec: MatchSpec, pool: SeatPool, info_sink: InfoSink | None) -> None:
        self.spec = spec
        self.pool = pool
        self.info_sink = info_sink
        self.game = registry.get_game(spec.game)
        n = spec.players
        self.n = n
        self.clock = spec.clock
        self.bank = [float(spec.clock.bank_ms)] * n
        self.move_ms: list[list[float]] = [[] for _ in range(n)]
        #: time each seat took of the match (ms): its decisions and its paced forced moves, plus
        #: the decision under way (``think_t0``): who is charged when the wall budget runs out
        self.spent_ms = [0.0] * n
        self.think_t0: float | None = None
        self.faults: list[Fault] = []
        self.versions = [""] * n
        self.actions: list[str] = []
        self.restarts = [0] * n
        self.request_id = 0
        self.thinking: int | None = None
        self.is_ready = [False] * n
        #: seats that failed during the start-up now running (None outside it): their faults
        #: are recorded and the policy is applied once every seat has answered or failed.
        self.down: set[int] | None = None
        self.t0 = time.perf_counter()
        self.wall_deadline = self.t0 + spec.wall_s
        self.state: State | None = None

    # ------------------------------------------------------------ helpers

    def tick(self) -> None:
        """Housekeeping while waiting: other seats' processes, the wall budget."""
        down = self.down
        for seat, proc in enumerate(self.pool.procs):
            if proc is not None and seat != self.thinking and not (down and seat in down):
                if down is not None and not self.is_ready[seat] and _left_a_line(proc):
                    continue  # exited at start-up after writing: its line decides the fault (protocol, not crash)
                t = time.perf_counter()
                try:
                    proc.check()
                finally:  # a bot slow to check spends the match's wall time, not whoever thinks
                    self.spent_ms[seat] += (time.perf_counter() - t) * 1000.0
        if time.perf_counter() > self.wall_deadline:
            raise WallBudgetExceeded(self.thinking)

    def pause(self, seat: int, proc: BotProcess) -> None:
        """Stop ``seat``'s processes (``pause_idle``), the time it takes charged to that seat's share
        of the match's wall time (:attr:`spent_ms`, what :meth:`wall_culprit` weighs): a bot whose
        tree is slow to stop (thousands of threads) spends it, not whoever thinks next."""
        t = time.perf_counter()
        proc.pause()
        self.spent_ms[seat] += (time.perf_counter() - t) * 1000.0

    def record(self, seat: int, fault: BotFault) -> None:
        """Append a :class:`Fault` of ``seat`` at the current move index, with the tail of its
        stderr (of the process that faulted; read to the end of the pipe if it has exited)."""
        proc = getattr(fault, "process", None) or self.pool.procs[seat]
        tail = ""
        if proc is not None:
            proc.drain_stderr(STDERR_DRAIN_S)
            tail = proc.stderr.tail_text()
        self.faults.append(Fault(seat, self.spec.seats[seat], fault.fault_class, len(self.actions),
                                 fault.detail, tail))

    def fault_seat(self, fault: BotFault, default: int) -> int:
        """The seat to blame for ``fault``: its process's seat, else ``fault.seat``, else ``default``."""
        proc = getattr(fault, "process", None)
        if proc is not None and proc.seat >= 0:
            return proc.seat
        return getattr(fault, "seat", default)

    # ------------------------------------------------------------ handshake

    def reset_seat(self, seat: int) -> None:
        """Empty the working folder of ``seat``'s process (spawning it if needed) before a match."""
        self.pool.get(seat).reset_workdir()

    def start_seat(self, seat: int, resume: bool = False, reset: bool = True) -> None:
        """Send ``start`` to ``seat`` (spawning if needed; its folder emptied first unless
        ``resume`` or not ``reset``); the ``ready`` is awaited by :meth:`ready`."""
        self.is_ready[seat] = False
        proc = self.pool.get(seat)
        if not resume and reset:
            proc.reset_workdir()
        spec = self.spec
        proc.start_sent = time.perf_counter()  # type: ignore[attr-defined]
        proc.send(encode_start(game=spec.game, options=spec.options, players=spec.players, seat=seat,
                               teams=spec.teams, match=spec.token, seed=spec.bot_seeds[seat],
                               move_ms=self.clock.move_ms, bank_ms=int(self.bank[seat]),
                               resume=resume))

    def ready(self, seat: int) -> None:
        """Wait for the ``ready`` of ``seat``.

        :raises BotStall: no ``ready`` in time; :raises ProtocolError, BotCrashed: as raised.
        """
        if self.is_ready[seat]:
            return
        proc = self.pool.procs[seat]
        assert proc is not None
        limit = self.clock.startup_ms if proc.fresh else self.clock.move_ms
        deadline = proc.start_sent + (limit + self.clock.grace_ms) / 1000.0  # type: ignore[attr-defined]
        while True:
            self.thinking = seat
            try:
                line, _t = self.pool.hub.wait_line(proc, min(deadline, self.wall_deadline), self.tick)
            except BotTimeout:
                if time.perf_counter() >= self.wall_deadline:
                    raise WallBudgetExceeded(seat) from None
                raise proc._tag(BotStall(f"bot {proc.name!r} sent no 'ready' within {limit} ms; "
                                         f"{LINE_HINT}")) from None
            except BotFault as e:
                other = self.fault_seat(e, seat)
                if other == seat:
                    raise
                if self.down is not None:  # start-up: note it, act once every seat is known
                    self.fail_at_startup(other, e)
                else:
                    self.handle(other, e)
                continue
            finally:
                self.thinking = None
            if line.startswith(b'{"type":"action"'):
                continue  # a stale reply from before this start
            try:
                r = parse_ready(line, proc.name)
            except ProtocolError as e:
                raise proc._tag(e) from None
            self.versions[seat] = r.label()
            proc.fresh = False
            self.is_ready[seat] = True
            if self.spec.pause_idle:
                self.pause(seat, proc)
            return

    def start_all(self) -> None:
        """Send ``start`` to every seat, then await every seat's ``ready`` or failure (each
        within its own window) before applying the fault policy, so that every seat that
        fails at start-up is recorded: under ``forfeit`` all of them rank last; under
        ``random`` each is restarted in turn."""
        self.down = set()
        first = len(self.faults)
        try:
            if self.spec.pause_idle:
                self.start_one_by_one()
            else:
                # every folder emptied before any start is sent: emptying one a bot filled with
                # 150,000 folders took seconds, charged to the seats started before it
                # (adversarial trial, 2026-12-04: their ready missed move_ms)
                self._each_live_seat(self.reset_seat)
                self._each_live_seat(lambda seat: self.start_seat(seat, reset=False))
                self._each_live_seat(self.ready)
        finally:
            down, self.down = self.down, None
            # detection order is a race between processes: record start-up faults by seat
            self.faults[first:] = sorted(self.faults[first:], key=lambda f: f.seat)
        if not down:
            return
        if self.spec.faults.policy != "random":
            raise _Forfeit()
        for seat in down:  # gone from the housekeeping while the others restart
            self.pool.retire(seat)
        for seat in sorted(down):
            self.recover(seat)

    def _each_live_seat(self, step: Callable[[int], None]) -> None:
        """``step(seat)`` for every seat not failed at start-up yet, a fault noted (not raised)."""
        assert self.down is not None
        for seat in range(self.n):
            if seat in self.down:
                continue
            try:
                step(seat)
            except BotFault as e:
                self.fail_at_startup(self.fault_seat(e, seat), e)

    def start_one_by_one(self) -> None:
        """``pause_idle``: start the seats one at a time, every other bot's processes stopped
        meanwhile (a seat is stopped at its ``ready``), so no bot's busy processes take the CPU
        from another's start-up (adversarial finding: 20 busy ``setsid`` loops made an opponent
        miss its ``ready`` three times and be disabled)."""
        assert self.down is not None
        for seat in range(self.n):
            if seat in self.down:
                continue  # failed already (noticed while another seat started)
            for other, proc in enumerate(self.pool.procs):
                if other != seat and proc is not None:
                    self.pause(other, proc)
            try:
                self.start_seat(seat)
                self.ready(seat)
            except BotFault as e:
                self.fail_at_startup(self.fault_seat(e, seat), e)

    def fail_at_startup(self, seat: int, fault: BotFault) -> None:
        """Record the start-up fault of ``seat`` (once); the policy is applied by :meth:`start_all`."""
        assert self.down is not None
        if seat not in self.down:
            self.down.add(seat)
            self.record(seat, fault)

    def restart(self, seat: int) -> None:
        """``random`` policy: a new process for ``seat``, resumed into this match."""
        self.restarts[seat] += 1
        if self.restarts[seat] > self.spec.faults.max_restarts_per_match:
            raise _Forfeit()
        self.pool.retire(seat)
        self.start_seat(seat, resume=True)
        self.ready(seat)

    def handle(self, seat: int, fault: BotFault) -> None:
        """Record ``fault`` of ``seat``; forfeit or (``random``) restart."""
        self.record(seat, fault)
        if self.spec.faults.policy != "random":
            raise _Forfeit()
        if isinstance(fault, BotIllegalAction):
            return
        self.recover(seat)

    def recover(self, seat: int) -> None:
        """``random`` policy: restart ``seat`` until it is ready again (every failed attempt is
        recorded); :class:`_Forfeit` after ``max_restarts_per_match``."""
        while True:
            try:
                self.restart(seat)
                return
            except BotFault as e:
                self.record(seat, e)

    # ------------------------------------------------------------ moves

    def seat_times(self, seat: int) -> Sequence[float]:
        """The decision times (ms) that pace ``seat``: its own in this match, else its bot's in
        earlier matches of this process (:data:`HISTORY`), else none."""
        return self.move_ms[seat] or HISTORY.get(self.pool.bots[seat], ())

    def forced_delay_ms(self, seat: int) -> float:
        """How long a forced move of ``seat`` takes when paced (ms): one of :meth:`seat_times`
        drawn uniformly (an RNG keyed by the deal seed and the move index: the bots know
        neither), so paced moves are distributed like the seat's decisions, not only centred
        on them; else :data:`FIRST_PACE_FRACTION` of ``move_ms``. Never from other seats'
        times (a prober's instant replies would set the pace)."""
        times = self.seat_times(seat)
        if times:
            rng = random.Random(h64(b"cardarena-pace", self.spec.deal_seed, len(self.actions)))
            return float(times[rng.randrange(len(times))])
        return FIRST_PACE_FRACTION * self.clock.move_ms

    def remember_times(self) -> None:
        """Add this match's decision times to each seat's bot in :data:`HISTORY`."""
        for seat, times in enumerate(self.move_ms):
            if times:
                HISTORY.setdefault(self.pool.bots[seat], deque(maxlen=HISTORY_LEN)).extend(times)

    def pace(self, seat: int, since: float | None = None, delay_ms: float | None = None) -> None:
        """Wait until ``delay_ms`` (default :meth:`forced_delay_ms`) after ``since``
        (``perf_counter``; default now) before a move of ``seat`` is played, keeping the pipes
        drained and the housekeeping (other seats' processes, the wall budget) running."""
        entered = time.perf_counter()
        start = entered if since is None else since
        delay = self.forced_delay_ms(seat) if delay_ms is None else delay_ms
        deadline = start + delay / 1000.0
        try:
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return
                self.pool.hub.pump(min(left, 0.05))
                self.tick()
        finally:  # the wait counts as the seat's time (its decision, if any, is counted already)
            self.spent_ms[seat] += (time.perf_counter() - entered) * 1000.0

    def decide(self, seat: int, legal_actions: list, legal: list[str]) -> Any:
        """Ask ``seat`` for its move and return the engine action (or the random replacement)."""
        move_index = len(self.actions)
        clock = self.clock
        assert self.state is not None
        obs = self.state.observation(seat)  # the state does not change while this seat decides
        while True:
            proc = self.pool.procs[seat]
            if proc is None:
                proc = self.pool.get(seat)
            self.request_id += 1
            rid = self.request_id
            data = encode_act(rid, obs, legal, clock.move_ms, int(self.bank[seat]))
            self.thinking = seat
            try:
                t0 = self.think_t0 = time.perf_counter()
                proc.send(data)
                limit_ms = clock.move_ms + self.bank[seat] + clock.grace_ms
                deadline = t0 + limit_ms / 1000.0
                stale: list[int | None] = []
                while True:
                    try:
                        line, t1 = self.pool.hub.wait_line(proc, min(deadline, self.wall_deadline), self.tick)
                    except BotTimeout:
                        if time.perf_counter() >= self.wall_deadline and self.wall_deadline < deadline:
                            raise WallBudgetExceeded(seat) from None
                        budget = (f"within {limit_ms:.0f} ms (move_ms {clock.move_ms} + bank "
                                  f"{self.bank[seat]:.0f} + grace {clock.grace_ms})")
                        if stale:
                            more = f"; {len(stale)} replies with other ids" if len(stale) > 1 else ""
                            msg = (f"bot {proc.name!r} answered id {stale[-1]} (stale or wrong id), "
                                   f"expected {rid}{more}; no reply with id {rid} {budget}")
                        else:
                            msg = f"bot {proc.name!r} did not answer act {rid} {budget}"
                        raise proc._tag(BotTimeout(msg)) from None
                    except BotFault as e:
                        other = self.fault_seat(e, seat)
                        if other == seat:
                            raise
                        self.handle(other, e)  # another seat failed while this one thinks
                        continue
                    try:
                        reply = parse_action(line, rid, proc.name)
                    except ProtocolError as e:
                        raise proc._tag(e) from None
                    if reply is not None:
                        break
                    stale.append(action_id(line))
                if self.spec.pause_idle:
                    self.pause(seat, proc)
                elapsed = (t1 - t0) * 1000.0
                charged = max(0.0, elapsed - clock.grace_ms)
                if charged > clock.move_ms + self.bank[seat]:
                    raise proc._tag(BotTimeout(
                        f"bot {proc.name!r} answered act {rid} after {elapsed:.0f} ms; the limit was "
                        f"{limit_ms:.0f} ms"))
                self.bank[seat] -= max(0.0, charged - clock.move_ms)
                self.move_ms[seat].append(round(elapsed, 3))
                self.spent_ms[seat] += elapsed
                if reply.info is not None and self.info_sink is not None:
                    self.info_sink(seat, move_index, reply.info)
                try:
                    idx = legal.index(reply.action)
                except ValueError:
                    shown = ", ".join(legal[:20]) + (" ..." if len(legal) > 20 else "")
                    raise proc._tag(BotIllegalAction(
                        f"bot {proc.name!r} played {reply.action!r}, which is not legal; legal: {shown}")) from None
                return legal_actions[idx]
            except BotFault as e:
                self.thinking = None
                culprit = self.fault_seat(e, seat)
                self.handle(culprit, e)
                if culprit != seat:
                    continue
                return replacement_action(self.spec.deal_seed, move_index, legal_actions)
            finally:
                self.thinking = self.think_t0 = None

    def wall_culprit(self, thinking: int | None) -> tuple[int | None, float]:
        """The seat charged with an exceeded wall budget: the one that took the most of the
        match's time (:attr:`spent_ms`, the decision under way included) when that is more than
        its share (``wall_s`` / seats) — so a bot cannot spend the budget and let it run out on an
        opponent's move, nor on its own paced forced move; else the seat thinking now; None when
        neither (the arena or the machine was slow: the match is ``aborted`` and played again).

        :returns: ``(seat or None, the time it took in ms)``.
        """
        spent = list(self.spent_ms)
        if thinking is not None and self.think_t0 is not None:
            spent[thinking] += (time.perf_counter() - self.think_t0) * 1000.0
        top = max(range(self.n), key=lambda s: (spent[s], s == thinking))
        if spent[top] > self.spec.wall_s * 1000.0 / self.n:
            return top, spent[top]
        return thinking, 0.0 if thinking is None else spent[thinking]

    def play(self) -> MatchResult:
        """Play, then send ``end``; the :class:`MatchResult` (``time_ms`` in ms). Bot faults never raise."""
        spec = self.spec
        status = "ok"
        outcome: dict[str, list] | None = None
        try:
            state = self.state = self.game.new_match(spec.players, spec.deal_seed, **spec.options)
            self.start_all()
            fmt = self.game.format_action
            forced_ok = [self.pool.bots[s].ask_forced for s in range(self.n)]
            while not state.is_terminal():
                seat = state.current_player()
                legal_actions = state.legal_actions()
                legal = [fmt(a) for a in legal_actions]
                if len(legal_actions) == 1 and not forced_ok[seat]:
                    action = legal_actions[0]
                    if spec.pace_forced:
                        self.pace(seat)
                elif spec.pace_forced and not self.seat_times(seat):
                    floor, t_ask = self.forced_delay_ms(seat), time.perf_counter()
                    action = self.decide(seat, legal_actions, legal)  # no pace known: the floor
                    self.pace(seat, since=t_ask, delay_ms=floor)       # holds real decisions too
                else:
                    action = self.decide(seat, legal_actions, legal)
                self.actions.append(fmt(action))
                state.apply(action)
            outcome = state.outcome().to_json()
        except _Forfeit:
            status = "forfeit"
        except WallBudgetExceeded as e:
            culprit, took = self.wall_culprit(e.seat)
            if culprit is not None:
                who = spec.seats[culprit]
                why = (f"bot {who!r} took {took / 1000.0:.1f} s of it, more than its share"
                       if took * self.n > spec.wall_s * 1000.0 else f"while bot {who!r} was thinking")
                self.record(culprit, BotTimeout(f"the match exceeded its wall budget of {spec.wall_s} s: {why}"))
                status = "forfeit"
            else:
                status = "aborted"
        self.remember_times()
        faulty = {f.seat for f in self.faults}
        if status == "forfeit":
            outcome = forfeit_outcome(spec.teams, faulty)
        self.finish(outcome, faulty if status != "ok" else set())
        return MatchResult(spec.match_id, status, outcome, self.faults,
                           round((time.perf_counter() - self.t0) * 1000.0, 3), self.move_ms,
                           self.actions, self.versions)

    def finish(self, outcome: dict[str, list] | None, retire: set[int]) -> None:
        """Send ``end`` to every healthy seat; retire faulty processes."""
        for seat in range(self.n):
            proc = self.pool.procs[seat]
            if proc is None:
                continue
            if seat in retire or outcome is None:
                self.pool.retire(seat)
                continue
            try:
                obs: dict[str, Any] = self.state.observation(seat) if self.state is not None else {}
                proc.send(encode_end(outcome, obs))
            except BotFault:
                self.pool.retire(seat)


def play_match(spec: MatchSpec, pool: SeatPool, info_sink: InfoSink | None = None) -> MatchResult:
    """Play ``spec`` with the processes of ``pool`` (one per seat, spawned as needed).

    :param info_sink: called as ``info_sink(seat, move_index, info)`` for every ``info``
        object a bot attaches to its action.
    :returns: the :class:`MatchResult` (``status`` ok | forfeit | aborted; ``move_ms`` per
        seat in milliseconds, forced moves excluded). Bot faults never raise; they are in
        ``faults``.
    :raises engine errors: only for a broken spec (unknown game, bad options).
    """
    return _Match(spec, pool, info_sink).play()


__all__ = ["SeatPool", "play_match", "BotCrashed", "ProtocolError"]


def _left_a_line(proc: Any) -> bool:
    """Whether a process that has exited left a line on its stdout, unread (read now)."""
    hub = getattr(proc, "_hub", None)
    return hub is not None and not proc.alive() and hub._drain(proc)
