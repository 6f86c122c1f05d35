"""Small picklable specifications passed from the driver to workers, and the match result.

The driver (``arena/driver.py``) builds these from the validated config
(``arena/config.py``); a worker receives them and builds the bot processes itself
(``arena/batch.py`` -> ``arena/match.py`` -> ``arena/process/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

#: a bot's name: letters, digits, "_", "." and "-", starting with a letter or digit (config keys,
#: results folders, file names)
BOT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


@dataclass(frozen=True)
class Clock:
    """Time control (DESIGN "Bot protocol v1": clock). All values in milliseconds.

    :ivar move_ms: time each decision may use.
    :ivar bank_ms: extra time per match, consumed beyond ``move_ms``.
    :ivar startup_ms: time a new process has to answer its first ``start``.
    :ivar grace_ms: fixed allowance per reply never charged (pipe latency).
    """

    move_ms: int = 1000
    bank_ms: int = 10000
    startup_ms: int = 5000
    grace_ms: int = 20


@dataclass(frozen=True)
class FaultPolicy:
    """Fault handling (DESIGN "Faults").

    :ivar policy: ``forfeit`` | ``random``.
    :ivar disable_after: disable a bot after this many faults in the tournament (None: never).
    :ivar disable_on_startup: disable a bot whose first N matches all failed at start-up with
        the same fault (:class:`arena.faults.StartupWatch`; None: never).
    :ivar max_restarts_per_match: restarts under ``random`` before the match is forfeited.
    :ivar rate_forfeits: rate forfeited matches (only the faulty sides move).
    """

    policy: str = "forfeit"
    disable_after: int | None = None
    disable_on_startup: int | None = 3
    max_restarts_per_match: int = 2
    rate_forfeits: bool = True


@dataclass(frozen=True)
class Limits:
    """Per-bot process limits (DESIGN "Isolation").

    :ivar max_rss_mb: resident memory limit in MiB (cgroup memory.max or RSS polling).
    :ivar cpu_s: RLIMIT_CPU seconds per process (None: no limit).
    :ivar max_open_files: RLIMIT_NOFILE.
    :ivar max_disk_mb: size cap of the bot's private ``/tmp`` (holding its working folder)
        and ``/dev/shm`` in a sandbox, MiB each.
    :ivar max_files: files (inodes) in each of those two, counted every second: a tmpfs's
        inodes hold ~1 KiB of kernel memory each, outside ``max_rss_mb`` and ``max_disk_mb``.
    :ivar network: ``deny`` (an empty network namespace) | ``allow``.
    :ivar sandbox: ``auto`` | ``required`` | ``bwrap`` | ``unshare`` | ``none``
        (:mod:`arena.process.sandbox`).
    :ivar bot_user: run bots as this user when the arena is root (None: same user).
    :ivar hidden_files: files a sandbox shows empty (``/dev/null`` bound over them): the
        tournament's config file, which may hold its ``salt`` (docs/security.md).
    """

    max_rss_mb: int = 2048
    cpu_s: int | None = None
    max_open_files: int = 64
    max_disk_mb: int = 256
    max_files: int = 100_000
    network: str = "deny"
    sandbox: str = "auto"
    bot_user: str | None = None
    hidden_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class BotSpec:
    """How to run one bot.

    :ivar name: the bot's name in the config.
    :ivar cmd: argv; a first element ``python``/``python3`` runs under the arena's interpreter.
    :ivar env: extra environment keys.
    :ivar fresh_process: start a new process for every match.
    :ivar ask_forced: send ``act`` even when only one action is legal.
    :ivar cwd: directory the command's relative paths refer to (the project root).
    :ivar version: the config's ``version`` of the bot (part of every match's fingerprint).
    :ivar submitted: an entrant's submission (``bots: {from: DIR}``; its ``cwd`` is its folder):
        its command may name files of that folder only (:func:`arena.process.preflight.outside_files`).
    """

    name: str
    cmd: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    fresh_process: bool = False
    ask_forced: bool = False
    cwd: str = "."
    version: str = ""
    submitted: bool = False


@dataclass(frozen=True)
class MatchSpec:
    """One match to play.

    :ivar match_id: ``<tournament>/<lineup key>/d<deal:05>/r<rotation:02>``.
    :ivar token: opaque token sent to bots as ``match`` (not the id: it reveals nothing).
    :ivar seats: bot name per seat.
    :ivar teams: sides as lists of seats (singletons in free-for-all games).
    :ivar bot_seeds: per seat, the ``seed`` sent in ``start``.
    :ivar wall_s: wall budget of the whole match, seconds.
    :ivar bot_commands: per seat ``{"cmd": [...], "version": ...}`` (recorded; part of the fingerprint).
    :ivar pace_forced: forced moves take as long as one of the seat's own decisions
        (``preset: competition``; :mod:`arena.match`).
    :ivar pause_idle: every process of a bot is stopped (SIGSTOP) while it is not its turn
        (``preset: competition``: no pondering, no CPU taken from the opponent).
    """

    match_id: str
    tournament: str
    token: str
    game: str
    options: dict[str, Any]
    players: int
    deal_index: int
    deal_seed: int
    rotation: int
    lineup: tuple[str, ...]
    seats: tuple[str, ...]
    teams: tuple[tuple[int, ...], ...]
    bot_seeds: tuple[int, ...]
    fingerprint: str
    clock: Clock = field(default_factory=Clock)
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    limits: Limits = field(default_factory=Limits)
    wall_s: float = 600.0
    bot_commands: tuple = ()
    pace_forced: bool = False
    pause_idle: bool = False


@dataclass
class Fault:
    """One fault: ``cls`` in timeout | crash | illegal | protocol | stall | disabled."""

    seat: int
    bot: str
    cls: str
    move: int
    detail: str
    stderr_tail: str = ""

    def to_json(self) -> dict[str, Any]:
        """The journal form ``{"seat","bot","class","move","detail","stderr_tail"}``."""
        return {"seat": self.seat, "bot": self.bot, "class": self.cls, "move": self.move,
                "detail": self.detail, "stderr_tail": self.stderr_tail}


@dataclass
class MatchResult:
    """What a worker returns for one match (the driver adds the remaining journal fields).

    :ivar status: ``ok`` | ``forfeit`` | ``aborted``.
    :ivar outcome: ``{"ranks": [...], "scores": [...]}`` (None when aborted).
    :ivar time_ms: wall time of the match.
    :ivar move_ms: per seat, the list of the bot's decision times in ms (forced moves excluded).
    :ivar actions: the match's actions as protocol strings, in order.
    :ivar bot_versions: per seat, the ``name``/``version`` the bot announced in ``ready``.
    """

    match_id: str
    status: str
    outcome: dict[str, list] | None
    faults: list[Fault]
    time_ms: float
    move_ms: list[list[float]]
    actions: list[str]
    bot_versions: list[str]

    def to_json(self) -> dict[str, Any]:
        """A plain dict (faults in journal form)."""
        d = asdict(self)
        d["faults"] = [f.to_json() for f in self.faults]
        return d


def files_digest(cmd: Sequence[str], cwd: str | None = None) -> str:
    """A short digest of the files a bot's command names (its script, a compiled binary; paths
    relative to ``cwd``): it changes when the bot's code does. ``"1"`` when it names no file.

    Used as an SPRT candidate's ``version`` and, in ``tournament.json``, to warn that recorded
    matches rate a bot's old code (:func:`arena.driver.changed_bots`).
    """
    import hashlib
    import os

    h = hashlib.blake2b(digest_size=6)
    found = False
    for a in cmd:
        p = a if cwd is None or os.path.isabs(a) else os.path.join(cwd, a)
        try:
            if os.path.isfile(p) and os.path.getsize(p) <= 64 * 2**20:
                with open(p, "rb") as f:
                    h.update(os.path.realpath(p).encode() + b"\0" + f.read())
                found = True
        except OSError:
            continue
    return h.hexdigest() if found else "1"
