"""Run an SPRT: the tournament driver plays the test's schedule until the GSPRT decides.

The test is an ordinary ``mode: sprt`` tournament (:func:`arena.schedule.build_sprt_schedule` builds its
schedule), so it runs on the same pieces as ``arena run``: pre-flight, the journal (resume
exactly once, a changed bot command refused), batches on Ray or inline, retries, the fault
policy and its disable rules. The driver asks :meth:`Tracker.decided` before each batch; once
the ordered prefix of blocks has crossed a bound, no new batch starts (batches in flight
finish and are recorded, but the verdict is the prefix's, so it does not move).

Exit codes (:data:`EXIT`): 0 H1 accepted (candidate stronger), 1 H0 accepted, 2 inconclusive
at the cap, 3 the test could not run (bad input, a bot that does not start).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.faults import StartupWatch
from arena.gsprt import GSPRT, Estimate, estimate
from arena.journal import read_records
from arena.record import MatchRecord
from arena.schedule import design_of
from arena.sprt.blocks import BlockBook
from engine.errors import CardArenaError

EXIT = {"H1": 0, "H0": 1, "inconclusive": 2, "error": 3}


def make_test(model) -> GSPRT:
    """The :class:`GSPRT` of a ``mode: sprt`` model: score bounds if given, else normalized Elo."""
    s = model.sprt
    if s.score0 is not None and s.score1 is not None:
        return GSPRT(s.score0, s.score1, s.alpha, s.beta, kind="score")
    return GSPRT(s.elo0, s.elo1, s.alpha, s.beta, kind="nelo")


@dataclass
class Tracker:
    """The live state of a test: the block book, start-up failures, timings.

    :ivar book: :class:`BlockBook` (scores, faults, the GSPRT).
    :ivar cannot_start: bot → why it never started (the start-up rule, ``faults.disable_on_startup``).
    """

    book: BlockBook
    watch: StartupWatch
    cannot_start: dict[str, str] = field(default_factory=dict)
    played: int = 0
    t0: float = field(default_factory=time.monotonic)
    announced: dict[str, str] = field(default_factory=dict)

    def add(self, rec: MatchRecord, new: bool = True) -> int:
        """Account one record (``new``: played in this run); returns the blocks fed."""
        for b, why in self.watch.add(rec):
            self.cannot_start[b] = why
        for b, v in zip(rec.seats, rec.bot_versions):
            if v:
                self.announced[b] = v
        self.played += int(new)
        return self.book.add(rec)

    def decided(self) -> bool:
        """True once the verdict is reached or a bot cannot start (no new batch then)."""
        return self.book.test.verdict is not None or bool(self.cannot_start)


@dataclass
class SprtResult:
    """What a test concluded.

    :ivar verdict: ``H1`` | ``H0`` | ``inconclusive`` | ``error``; ``code``: the exit code.
    :ivar reason: for ``error``, what could not run and why.
    """

    name: str
    folder: Path
    verdict: str
    code: int
    llr: float
    lower: float
    upper: float
    blocks: int
    matches: int
    played: int
    est: Estimate
    void: int
    lost: int
    faults: dict[str, int]
    seconds: float
    reason: str = ""
    settings: dict[str, Any] = field(default_factory=dict)


def run_sprt(tournament, results_root: str | Path = "results", *, inline: bool = False,
             workers: int | None = None, address: str | None = None,
             on_progress: Callable[[Tracker], None] | None = None,
             warn: Callable[[str], None] = lambda m: None) -> SprtResult:
    """Run (or resume) the SPRT ``tournament`` (``mode: sprt``) and return its result.

    :raises CardArenaError: (BotSetupError, JournalError, ConfigError) when it cannot run —
        the CLI turns these into exit code 3.
    """
    from arena.driver import run_tournament

    m = tournament.model
    design = design_of(m)
    book = BlockBook(design, m.players, m.deals, make_test(m))
    tr = Tracker(book, StartupWatch(tournament.fault_policy().disable_on_startup))
    folder = Path(results_root) / m.name
    if (folder / "matches.jsonl").exists():
        recs = read_records(folder)
        for rec in sorted(recs, key=MatchRecord.replay_key):
            tr.add(rec, new=False)
    def on_start(summary) -> None:
        """The journal's state, once the run has checked the settings (a refused rerun prints
        only its error, not the old verdict first)."""
        if on_progress:
            on_progress(tr)

    def on_result(rec: MatchRecord, summary) -> None:
        """A new record: feed it; report progress when blocks were fed."""
        if tr.add(rec) and on_progress:
            on_progress(tr)

    summary = run_tournament(tournament, results_root, inline=inline or tr.decided(), workers=workers,
                             address=address, on_result=on_result, on_start=on_start, warn=warn,
                             stop=tr.decided)
    return result_of(tournament, tr, summary.folder, time.monotonic() - tr.t0)


def tested_bots(tournament, tr: Tracker) -> list[dict[str, str]]:
    """Per bot of the test (candidate, baseline, opponents, in that order): its ``name``, its
    ``role``, the command line ``cmd``, the digest of the files it names (``files``,
    :func:`arena.specs.files_digest`) and the version it announced in ``ready`` (``announced``,
    empty before it played), so a pasted result says exactly which code was compared."""
    from arena.specs import files_digest

    s = tournament.model.sprt
    roles = {s.candidate: "candidate", s.baseline: "baseline"}
    for o in s.opponents or []:
        roles.setdefault(o, "opponent")
    out = []
    for name, role in roles.items():
        spec = tournament.bots[name]
        out.append({"name": name, "role": role, "cmd": " ".join(spec.cmd),
                    "files": files_digest(spec.cmd, spec.cwd), "announced": tr.announced.get(name, "")})
    return out


def software(tournament) -> dict[str, str]:
    """The arena's version, whether the engine ran compiled or pure Python, and the sandbox the
    bots ran in (``limits.sandbox`` resolved on this machine)."""
    from importlib.metadata import PackageNotFoundError, version

    import engine.compiled

    try:
        arena_version = version("cardarena")
    except PackageNotFoundError:
        arena_version = "unknown"
    from arena.driver import sandbox_mode

    try:  # the sandbox the bots had here (auto resolved: bwrap, unshare or none)
        sandbox = sandbox_mode(tournament)
    except CardArenaError:
        sandbox = str(tournament.model.limits.sandbox)
    return {"cardarena": arena_version, "engine": engine.compiled.mode(), "sandbox": sandbox}


def result_of(tournament, tr: Tracker, folder: Path, seconds: float) -> SprtResult:
    """The :class:`SprtResult` of a tracker's state."""
    m = tournament.model
    book, test = tr.book, tr.book.test
    reason = ""
    if tr.cannot_start:
        verdict = "error"
        reason = "; ".join(f"bot {b!r} cannot start: {why}" for b, why in sorted(tr.cannot_start.items()))
    elif test.verdict:
        verdict = test.verdict
    else:
        verdict = "inconclusive"
        if not book.complete:
            reason = f"{book.next} of {book.cap} blocks complete (matches missing: see the warnings)"
    used = test.stopped_at if test.stopped_at is not None else len(book.scores)
    settings = {"game": m.game, "players": m.players, "options": dict(m.options), **m.sprt.model_dump(),
                "kind": test.kind, "blocks_cap": m.deals, "clock": m.clock.model_dump(),
                "bots": tested_bots(tournament, tr), "software": software(tournament)}
    return SprtResult(m.name, folder, verdict, EXIT[verdict], test.last_llr if test.n else 0.0, test.lower,
                      test.upper, used, used * book.design.per_block(m.players), tr.played,
                      estimate(book.scores[:used]), book.void, sum(book.lost_at[:used]), dict(book.faults), seconds, reason,
                      settings)
