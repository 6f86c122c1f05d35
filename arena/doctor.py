"""``arena doctor GAME -- CMD...``: check a bot's protocol compliance before a competition.

:func:`doctor` runs the bot through the handshake, a few full matches against the random
bot (the candidate in a different seat each match), measures its move times (p50/p99)
and checks that it exits cleanly when the arena closes its stdin. The
:class:`DoctorReport` lists every check as pass / warn / fail with a message a student can
act on.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.batch import play_batch
from arena.errors import LINE_HINT, BotFault, BotStall, BotTimeout
from arena.process import (
    FAULT_TAIL_CHARS,
    STDERR_DRAIN_S,
    BotProcess,
    BotSetupError,
    Hub,
    SandboxUnavailable,
    check_access,
    check_command,
    check_sandbox,
    effective_mode,
    foreign_files,
    foreign_message,
    new_workdir,
    outside_files,
    remove_workdir,
    stderr_excerpt,
)
from arena.protocol import encode_end, encode_start, parse_ready
from arena.specs import BotSpec, Clock, Fault, FaultPolicy, Limits, MatchResult, MatchSpec
from engine import registry
from engine.seeds import bot_seed, deal_seed

PASS, WARN, FAIL = "pass", "warn", "fail"
#: characters of the bot's stderr quoted in a failed check (its last whole lines).
EXCERPT_CHARS = 300
_PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Check:
    """One line of the report: ``status`` in pass | warn | fail."""

    name: str
    status: str
    message: str


@dataclass
class DoctorReport:
    """The result of :func:`doctor`.

    :ivar checks: every check in order.
    :ivar move_ms: the candidate's decision times, milliseconds.
    :ivar results: the matches played.
    """

    game: str
    cmd: list[str]
    checks: list[Check] = field(default_factory=list)
    move_ms: list[float] = field(default_factory=list)
    results: list[MatchResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed (warnings allowed)."""
        return all(c.status != FAIL for c in self.checks)

    def add(self, name: str, status: str, message: str) -> None:
        """Append a check."""
        self.checks.append(Check(name, status, message))

    def render(self):
        """A rich renderable (a table plus a verdict line)."""
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        style = {PASS: "green", WARN: "yellow", FAIL: "bold red"}
        table = Table(title=f"arena doctor: {self.game} -- {' '.join(self.cmd)}", show_lines=False)
        table.add_column("check")
        table.add_column("result")
        table.add_column("details", overflow="fold")
        for c in self.checks:
            table.add_row(c.name, Text(c.status.upper(), style=style[c.status]), Text(c.message))
        verdict = Text("PASS: the bot is ready for a tournament" if self.passed
                       else "FAIL: fix the failed checks above", style="bold green" if self.passed else "bold red")
        return Group(table, verdict)

    def text(self) -> str:
        """Plain-text form of the report."""
        lines = [f"arena doctor: {self.game} -- {' '.join(self.cmd)}"]
        lines += [f"  [{c.status.upper():4}] {c.name}: {c.message}" for c in self.checks]
        lines.append("PASS" if self.passed else "FAIL")
        return "\n".join(lines)


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def doctor(game: str, cmd: list[str], matches: int = 3, clock: Clock | None = None,
           cwd: str | None = None, limits: Limits | None = None, players: int | None = None,
           options: dict | None = None, name: str | None = None,
           env: tuple[tuple[str, str], ...] = (), from_config: bool = False) -> DoctorReport:
    """Check the bot started by ``cmd`` on ``game``.

    The first check ("command") says whether the command and its script exist; with
    ``limits`` asking for a sandbox or a ``bot_user``, "sandbox" says whether it can start
    and "bot_user" whether that user can execute the interpreter and read the script. The
    others run the bot: handshake, full matches, timing, exit on end of input.

    :param game: a registered game name.
    :param cmd: the bot's argv (``python`` runs under the arena's interpreter; relative
        paths resolve against ``cwd``, default the current directory).
    :param matches: full matches against the random bot (the candidate's seat rotates); at
        least one per seat, so with 4 players every seat is tested.
    :param clock: time control (default: DESIGN's defaults, 1000 ms per move).
    :param limits: process limits the bot runs under (default: DESIGN's defaults).
    :param players: seats (default: the game's minimum, at least 2).
    :param options: game options (default: the game's defaults).
    :param name: what the messages call the bot (default: its script's or program's name).
    :param env: the bot's extra environment keys (as in the config).
    :param from_config: the bot is an entry of a tournaments file (``cwd`` its folder): a missing
        script's hint says paths resolve against the file's folder.
    :returns: the report (never raises for a misbehaving bot).
    :raises UnknownGameError: for an unknown game.
    :raises PlayerCountError, OptionError: for players or options the game refuses.
    """
    g = registry.get_game(game)
    game = g.name
    n = players or max(2, g.min_players)
    g.check_players(n)
    opts = g.resolve_options(options or {})
    g.new_match(n, 0, **opts)  # options that depend on the player count
    clock = clock or Clock()
    limits = limits or Limits()
    cwd = os.path.abspath(cwd or os.getcwd())
    report = DoctorReport(game, list(cmd))
    cand = BotSpec(name or bot_name(cmd), tuple(cmd), env=tuple(env), cwd=cwd)
    matches = max(matches, n)  # every seat at least once
    if not _setup(report, cand, limits, from_config):
        return report
    _handshake(report, cand, game, clock, limits, n, opts)
    if report.checks[-1].status == FAIL:
        return report
    faults = _play_matches(report, cand, g, n, opts, clock, limits, matches)
    if faults is None:
        return report
    if faults:
        f, fspec, fres = faults[0]
        excerpt = stderr_excerpt(f.stderr_tail, EXCERPT_CHARS, cut=len(f.stderr_tail) >= FAULT_TAIL_CHARS)
        tail = f" | stderr: {excerpt}" if excerpt else ""
        where = fault_place(fspec, fres.actions, f.seat, f, cand.ask_forced)
        report.add("matches", FAIL, f"{len(faults)} fault(s) in {matches} matches; first: {f.cls} {where}: "
                   f"{f.detail}{tail}")
    else:
        report.add("matches", PASS, f"{matches} full matches against the random bot, seats "
                   f"{sorted({m % n for m in range(matches)})}, every reply legal and on time")
    late = sum(1 for f, _, _ in faults if f.cls == "timeout")
    if report.move_ms:
        p50, p99 = statistics.median(report.move_ms), _pct(report.move_ms, 0.99)
        # over move_ms (and its grace) a decision is paid from the bank: on most of them, a longer
        # match runs out of it (a new user's 1.5 s bot passed under move_ms 200 on a 10 s bank)
        over = sum(1 for t in report.move_ms if t > clock.move_ms + clock.grace_ms)
        banked = 2 * over > len(report.move_ms)
        status = FAIL if late or banked else PASS if p99 <= 0.5 * clock.move_ms else WARN
        report.add("timing", status, f"{len(report.move_ms)} answered decisions: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
                   f"max {max(report.move_ms):.1f} ms (move_ms {clock.move_ms}"
                   + (f"; {late} not answered in time: the matches row" if late else
                      f"; {over} over it, paid from the bank (bank_ms {clock.bank_ms}): a longer match runs out "
                      "of it; make the bot answer within move_ms" if banked else
                      ", p99 above half of it: risky under load" if status == WARN else "") + ")")
    _exit_check(report, cand, game, clock, n, limits)
    return report


def _play_matches(report: DoctorReport, cand: BotSpec, g: Any, n: int, opts: dict, clock: Clock,
                  limits: Limits, matches: int) -> list | None:
    """Play ``matches`` full matches of the candidate against random bots, its seat rotating;
    record them in ``report``. Returns the candidate's faults as (fault, spec, result), or None
    when the opponent cannot run at all (a failed check was added)."""
    game = g.name
    teams = g.teams(n)
    rival = "random" if cand.name != "random" else "random-opponent"
    opponent = BotSpec(rival, ("python", "bots/random_bot.py"), cwd=_PROJECT)
    bots = {cand.name: cand, rival: opponent}
    faults = []
    for m in range(matches):
        seat = m % n
        seats = tuple(cand.name if s == seat else rival for s in range(n))
        mid = f"doctor/{game}/d{m:05d}/r{seat:02d}"
        spec = MatchSpec(match_id=mid, tournament="doctor", token=f"doctor-{m}", game=game, options=dict(opts),
                         players=n, deal_index=m, deal_seed=deal_seed("doctor", game, m), rotation=seat,
                         lineup=(cand.name, rival), seats=seats,
                         teams=tuple(tuple(t) for t in teams),
                         bot_seeds=tuple(bot_seed("doctor", mid, s) for s in range(n)), fingerprint="",
                         clock=clock, faults=FaultPolicy(), limits=limits, wall_s=600.0)
        # every seat but the candidate's is a separate random-bot process
        try:
            (res,) = play_batch([spec], bots, None)
        except BotSetupError as e:  # the opponent cannot run with these limits
            report.add("matches", FAIL, f"could not play: {e}")
            return None
        report.results.append(res)
        report.move_ms += res.move_ms[seat]
        faults += [(f, spec, res) for f in res.faults if f.seat == seat]
        others = [f for f in res.faults if f.seat != seat]
        if others:
            report.add(f"match {m + 1}", WARN, f"the random opponent faulted: {others[0].detail}")
    return faults


_GENERIC = {"bot", "main", "index", "run"}  # a script so named is called after its folder (arena new bot)


def bot_name(cmd: list[str] | tuple[str, ...]) -> str:
    """What doctor calls a bot given by its command: the stem of its script (``my_bot`` for
    ``python my_bot.py``), else of its program; ``alice/bot.py`` and ``./alice/bot`` -> ``alice``."""
    for part in list(cmd[1:]) + [cmd[0]]:
        stem = os.path.splitext(os.path.basename(part))[0]
        if part.startswith("-") or not stem:
            continue
        if "." in os.path.basename(part) or part is cmd[0]:
            folder = os.path.basename(os.path.dirname(os.path.normpath(part)))
            return folder if stem in _GENERIC and folder not in ("", ".", "..") else stem
    return "bot"


def fault_place(spec: MatchSpec, actions: list[str], seat: int, fault: Fault, ask_forced: bool = False) -> str:
    """Where ``fault`` of ``seat`` happened, counted in the bot's own moves (the ``act``
    messages it was sent; forced moves count only with ``ask_forced``): ``at start-up``,
    ``at its move K (move N of the match, seat S)`` when it was the seat's turn, else
    ``after its move K (...)`` (noticed while another seat played). The actions are replayed."""
    if fault.cls == "stall" and "'ready'" in fault.detail and fault.move == 0:
        return "at start-up"
    g = registry.get_game(spec.game)
    state = g.new_match(spec.players, spec.deal_seed, **spec.options)
    done = 0  # the seat's decisions before the fault: the acts it was sent (forced moves are not asked)
    for text in actions[:fault.move]:
        if state.current_player() == seat and (ask_forced or len(state.legal_actions()) > 1):
            done += 1
        state.apply(g.parse_action(text))
    match = f"move {fault.move + 1} of the match, seat {seat}"
    if not state.is_terminal() and state.current_player() == seat:
        return f"at its move {done + 1} ({match})"
    return f"after its move {done} ({match})"


def _setup(report: DoctorReport, cand: BotSpec, limits: Limits, from_config: bool = False) -> bool:
    """The checks that need no process of the bot: command, sandbox, bot_user. False if one failed."""
    reason = check_command(cand)
    if reason:
        report.add("command", FAIL, reason.replace(f"bot {cand.name!r}: ", "")
                   + (" -- in a config file, paths resolve against the file's folder"
                      if from_config or os.path.abspath(cand.cwd) != os.getcwd()
                      else " -- give the path relative to the folder doctor runs in, or absolute"))
        return False
    report.add("command", PASS, "found: " + " ".join(cand.cmd))
    if limits.sandbox == "bwrap" or limits.network == "deny":
        reason = check_sandbox(limits)
        report.add("sandbox", FAIL if reason else PASS, reason or
                   f"starts (sandbox: {limits.sandbox}, network: {limits.network})")
        if reason:
            return False
    if limits.bot_user and os.geteuid() == 0:
        reason = check_access(cand, limits)
        report.add("bot_user", FAIL if reason else PASS, reason or
                   f"{limits.bot_user!r} can execute the interpreter and read the script")
        if reason:
            return False
    return True


def _start(game: str, n: int, clock: Clock, options: dict | None = None) -> bytes:
    return encode_start(game=game, options=dict(options or {}), players=n, seat=0,
                        teams=registry.get_game(game).teams(n), match="doctor", seed=1,
                        move_ms=clock.move_ms, bank_ms=clock.bank_ms)


def _handshake(report: DoctorReport, cand: BotSpec, game: str, clock: Clock, limits: Limits,
               n: int, options: dict) -> None:
    hub = Hub()
    try:
        proc = BotProcess(cand, limits, new_workdir("doctor"), 0)
    except (BotFault, ValueError) as e:
        report.add("start", FAIL, str(e))
        hub.close()
        return
    hub.add(proc)
    try:
        t0 = time.perf_counter()
        proc.send(_start(game, n, clock, options))
        line, t1 = hub.wait_line(proc, t0 + (clock.startup_ms + clock.grace_ms) / 1000)
        r = parse_ready(line)
        report.add("handshake", PASS, f"'ready' after {(t1 - t0) * 1000:.0f} ms (startup_ms {clock.startup_ms}); "
                   f"name {r.name!r}, version {r.version!r}")
        if not r.name or not r.version:
            report.add("identity", WARN, "'ready' should carry a non-empty name and version "
                       "(recorded with every result)")
    except BotFault as e:
        proc.drain_stderr(STDERR_DRAIN_S)
        text = proc.stderr.tail_text()
        tail = stderr_excerpt(text, EXCERPT_CHARS, cut=len(text) >= FAULT_TAIL_CHARS)
        if isinstance(e, BotTimeout):
            e = BotStall(f"no 'ready' within startup_ms {clock.startup_ms}; {LINE_HINT}")
        report.add("handshake", FAIL, f"{e.fault_class}: {e}" + (f" | stderr: {tail}" if tail else "")
                   + " -- the bot must answer {\"type\":\"start\",...} with "
                   "{\"type\":\"ready\",\"protocol\":1,\"name\":...,\"version\":...} on one stdout line")
    finally:
        proc.kill()
        hub.close()
        remove_workdir(proc.workdir)


def _exit_check(report: DoctorReport, cand: BotSpec, game: str, clock: Clock, n: int,
                limits: Limits) -> None:
    hub = Hub()
    try:
        proc = BotProcess(cand, limits, new_workdir("doctor"), 0)
    except (BotFault, ValueError) as e:
        report.add("exit on EOF", WARN, f"could not start the bot again: {e}")
        hub.close()
        return
    hub.add(proc)
    try:
        proc.send(_start(game, n, clock))
        hub.wait_line(proc, time.perf_counter() + (clock.startup_ms + clock.grace_ms) / 1000)
        proc.send(encode_end({"ranks": [0] * n, "scores": [0] * n}, {}))
        hub.pump(0.05)
        t0 = time.perf_counter()
        hub.remove(proc)
        rc = proc.close(2.0)
        dt = (time.perf_counter() - t0) * 1000
        if rc is None:
            report.add("exit on EOF", WARN, "the bot did not exit within 2 s of stdin closing; it was killed "
                       "(exit when stdin reaches end of file)")
        elif rc != 0:
            report.add("exit on EOF", WARN, f"exited with code {rc} when stdin closed (not a fault; 0 expected)")
        else:
            report.add("exit on EOF", PASS, f"exited with code 0 {dt:.0f} ms after stdin closed")
    except BotFault as e:
        report.add("exit on EOF", WARN, f"could not complete the exit check: {e}")
        proc.kill()
    finally:
        hub.close()
        remove_workdir(proc.workdir)


def _unsandboxed(limits: Limits) -> bool:
    """Whether bots run without a sandbox under ``limits`` (not when one is required but missing:
    the sandbox check names that)."""
    try:
        return effective_mode(limits) == "none"
    except SandboxUnavailable:
        return False


def doctor_config(path: str | os.PathLike, matches: int = 3, clock: Clock | None = None,
                  only: list[str] | None = None,
                  on_bot: Any = None) -> tuple[Any, bool]:
    """Check every bot of a tournaments file (``arena doctor --config FILE``), each on the game,
    players, options, clock and limits of the first tournament that enters it.

    :param clock: override the tournaments' clock (default: each tournament's own).
    :param only: check only these bots.
    :param on_bot: called as ``on_bot(k, total, name, passed, seconds)`` after each bot's check
        (the console's progress lines: a class of 150 bots takes minutes).
    :returns: ``(rich table, every bot passed)``; bots in no tournament are listed as not checked;
        ``bots: {from: DIR}`` subfolders without a bot are rows ``NO BOT`` (and fail the check).
    :raises ConfigError: for the file (as :func:`arena.config.load`), or an unknown name in ``only``.
    """
    from rich.table import Table
    from rich.text import Text

    from arena import config as cfg
    from arena.errors import ConfigError

    tournaments = cfg.load(Path(path))
    plan: dict[str, Any] = {}
    for t in tournaments:
        for name, spec in t.bots.items():
            plan.setdefault(name, (t, spec))
    if only:
        unknown = [b for b in only if b not in plan]
        if unknown:
            raise ConfigError(f"{path}: no tournament enters bot {unknown[0]!r}"
                              f"{cfg.did_you_mean(unknown[0], plan)}; bots: {', '.join(plan)}")
    table = Table(title=f"arena doctor --config {path}")
    for col in ("bot", "tournament", "result", "first problem"):
        table.add_column(col, overflow="fold")
    ok = True
    todo = [name for name in plan if not only or name in only]
    specs = [spec for _, spec in plan.values()]
    foreign = {n: foreign_message(n, f, o) for n, f, o in foreign_files(specs)}
    unsandboxed = {n for n, (t, _s) in plan.items() if _unsandboxed(t.limits())}
    for n, problem in outside_files(specs):
        if n not in unsandboxed:
            foreign.setdefault(n, problem)
    for k, name in enumerate(todo, 1):
        t, spec = plan[name]
        m = t.model
        t0 = time.monotonic()
        if name in foreign:  # never started: its sandbox would show another bot's folder
            ok = False
            table.add_row(name, f"{t.name} ({m.game}, {m.players} players)", Text("FAIL", style="bold red"),
                          Text(foreign[name]))
            if on_bot is not None:
                on_bot(k, len(todo), name, False, 0.0)
            continue
        rep = doctor(m.game, list(spec.cmd), matches=matches, clock=clock or t.clock(), cwd=spec.cwd,
                     limits=t.limits(), players=m.players, options=m.options, name=name, env=spec.env,
                     from_config=True)
        ok = ok and rep.passed
        bad = next((c for c in rep.checks if c.status == FAIL), None) or next(
            (c for c in rep.checks if c.status == WARN), None)
        verdict = Text("PASS", style="green") if rep.passed else Text("FAIL", style="bold red")
        problem = f"{bad.name}: {bad.message}" if bad else ""
        table.add_row(name, f"{t.name} ({m.game}, {m.players} players)", verdict, Text(problem))
        if on_bot is not None:
            on_bot(k, len(todo), name, rep.passed, time.monotonic() - t0)
    for sub in (tournaments[0].skipped if tournaments and not only else ()):  # a submission without a bot
        ok = False
        table.add_row(sub.name, "–", Text("NO BOT", style="bold red"),
                      f"{sub} holds no bot.yaml and no bot.py (README: Writing a bot)")
    return table, ok
