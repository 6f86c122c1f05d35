"""``tournaments.yaml``: schema (pydantic), merging of ``defaults``, validation.

DESIGN "Configuration". Unknown keys are errors; every error names the file, the
tournament and the key, and says what is expected.

Reading the YAML, the submission folders and the wording of validation errors are in
:mod:`arena.config_read`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from arena.config_read import (
    BOT_NAME,
    NAME_WORDS,
    did_you_mean,
    expand_submissions,
    merge,
    read_yaml,
    validation_errors,
)
from arena.errors import ConfigError
from arena.specs import BotSpec, Clock, FaultPolicy, Limits

PRESETS = {
    "strict": {"policy": "forfeit", "disable_after": 3},
    "lenient": {"policy": "random", "disable_after": 20},
}
#: what ``preset: competition`` does to ``limits`` (with strict faults and paced forced moves)
COMPETITION_LIMITS = {"sandbox": "required", "network": "deny"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# an integer setting: YAML ``true`` is an error, not 1 (pydantic's lax mode takes a bool as 0/1)
Int = Annotated[int, Field(strict=True)]
# a number setting: an int or a float, finite; not a bool, not a string
Num = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class ClockModel(_Strict):
    """Time control in milliseconds (DESIGN "Bot protocol v1")."""

    move_ms: Int = Field(1000, ge=1)
    bank_ms: Int = Field(10000, ge=0)
    startup_ms: Int = Field(5000, ge=1)
    grace_ms: Int = Field(20, ge=0)


class FaultsModel(_Strict):
    """Fault policy (DESIGN "Faults"); ``preset`` strict | lenient fills the others."""

    preset: Literal["strict", "lenient"] | None = None
    policy: Literal["forfeit", "random"] = "forfeit"
    disable_after: Int | None = Field(None, ge=1)
    disable_on_startup: Int | None = Field(3, ge=1)
    max_restarts_per_match: Int = Field(2, ge=0)
    rate_forfeits: bool = True


class LimitsModel(_Strict):
    """Per-bot process limits (DESIGN "Isolation")."""

    max_rss_mb: Int = Field(2048, ge=16)
    cpu_s: Int | None = Field(None, ge=1)
    max_open_files: Int = Field(64, ge=8)
    max_disk_mb: Int = Field(256, ge=1)
    max_files: Int = Field(100_000, ge=16)
    network: Literal["allow", "deny"] = "deny"
    sandbox: Literal["auto", "required", "bwrap", "unshare", "none"] = "auto"
    bot_user: str | None = None




class BotModel(_Strict):
    """One bot: its command and how to run it."""

    cmd: list[str] = Field(min_length=1)
    fresh_process: bool = False
    ask_forced: bool = False
    env: dict[str, str] = {}
    version: str | None = None

    @field_validator("env")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        """Environment names as a shell writes them and values without NUL (a process cannot get
        others: the bot would never start, and every match of its lineups fail)."""
        for k, x in v.items():
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                raise ValueError(f"{k!r} is not an environment variable name (letters, digits and '_', "
                                 "not starting with a digit)")
            if "\0" in x or "\0" in k:
                raise ValueError(f"the value of {k!r} holds a NUL character")
        return v

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: Any) -> Any:
        """A YAML number (``version: 2``, ``version: 1.5``) is taken as its text; a bool is an error."""
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return str(v)
        return v


class SampleLineups(_Strict):
    """A balanced sample of lineups: each bot in about ``per_bot`` lineups."""

    per_bot: Int = Field(ge=1)


class LineupsSample(_Strict):
    """``{sample: {per_bot: M}}``."""

    sample: SampleLineups


class AdaptiveLineups(_Strict):
    """``{adaptive: {...}}`` of ``lineups`` (docs/config.md).

    :ivar max_matches: the match budget: no round starts that would exceed it (the last is cut).
    :ivar per_round: lineups per bot per round, on average (a round = ``per_round · bots / players`` lineups).
    :ivar first: lineups per bot in round 0 (the ``sample`` design).
    :ivar explore: share of each round's lineups built for mixing, not for uncertainty (0..1).
    :ivar width: stop early once the mean rank-interval width (high − low) is at most this (None: budget only).
    """

    max_matches: int = Field(strict=True, ge=1)
    per_round: int = Field(2, strict=True, ge=1)
    first: int = Field(4, strict=True, ge=1)
    explore: float = Field(0.2, ge=0, le=1, allow_inf_nan=False)
    width: float | None = Field(None, ge=0, allow_inf_nan=False)


class LineupsAdaptive(_Strict):
    """``lineups: {adaptive: {max_matches: N, ...}}``."""

    adaptive: AdaptiveLineups


SPRT_BATCH = 16  # mode: sprt — default execution.batch_size (matches per batch)


class SprtModel(_Strict):
    """``sprt:`` of a ``mode: sprt`` entry: is ``candidate`` stronger than ``baseline``? (docs/regression.md)"""

    candidate: str
    baseline: str
    opponents: list[str] = []
    design: Literal["replace", "pairs"] = "replace"
    elo0: Num = 0.0
    elo1: Num = 40.0
    score0: Annotated[Num, Field(gt=0, lt=1)] | None = None
    score1: Annotated[Num, Field(gt=0, lt=1)] | None = None
    alpha: Annotated[Num, Field(gt=0, lt=0.5)] = 0.05
    beta: Annotated[Num, Field(gt=0, lt=0.5)] = 0.05
    max_matches: Int = Field(6000, ge=1)


class RatingsModel(_Strict):
    """TrueSkill settings (DESIGN "Ratings").

    ``tau`` (TrueSkill's dynamics factor) is 0 by default: a bot is a fixed program whose
    skill does not change during a tournament, and any ``tau`` > 0 makes μ forget old
    results (it follows roughly the last few hundred matches), so its probabilities stop
    meaning what they say (docs/ratings.md). ``tau: default`` is TrueSkill's own σ/100, for
    entrants that learn; folders written before record their ``tau`` in tournament.json and
    are re-rated with it.
    """

    draw_probability: Annotated[Num, Field(ge=0, lt=1)] | Literal["auto"] = "auto"
    tau: Annotated[Num, Field(ge=0)] | Literal["default"] = 0.0
    fixed: list[str] = []
    mu: Num = 25.0
    sigma: Annotated[Num, Field(gt=0)] = 25.0 / 3


class ExecutionModel(_Strict):
    """How the matches run: ``workers`` concurrent matches (auto = CPUs)."""

    workers: Annotated[Int, Field(ge=1)] | Literal["auto"] = "auto"
    match_wall_s: Annotated[Num, Field(gt=0)] = 600.0
    max_retries: Int = Field(2, ge=0)
    batch_size: Annotated[Int, Field(ge=1)] | Literal["auto"] = "auto"


class TournamentModel(_Strict):
    """One tournament of ``tournaments.yaml``."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    default: bool = False
    game: str
    players: Int = Field(ge=1)
    options: dict[str, Any] = {}
    bots: list[str] = Field(min_length=1)
    deals: Int = Field(ge=1)
    rotations: Literal["cyclic", "permutations"] = "cyclic"
    lineups: Literal["all", "gauntlet"] | LineupsSample | LineupsAdaptive = "all"
    panel: list[str] = []  # lineups: gauntlet — the reference bots every other bot meets
    mode: Literal["tournament", "sprt"] = "tournament"
    sprt: SprtModel | None = None
    partners: Literal["self", "mixed"] = "self"
    salt: str | None = None
    ratings: RatingsModel = RatingsModel()
    execution: ExecutionModel = ExecutionModel()
    clock: ClockModel = ClockModel()
    faults: FaultsModel = FaultsModel()
    limits: LimitsModel = LimitsModel()
    preset: Literal["competition"] | None = None
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _sprt_defaults(cls, raw: Any) -> Any:
        """``mode: sprt``: ``bots`` default to candidate, baseline, opponents; ``deals`` (blocks) to
        ``sprt.max_matches`` over the matches of a block (rounded down, at least 1)."""
        if not isinstance(raw, dict) or raw.get("mode") != "sprt" or not isinstance(raw.get("sprt"), dict):
            return raw
        s = raw["sprt"]
        out = dict(raw)
        names = [s.get("candidate"), s.get("baseline"), *(s.get("opponents") or [])]
        if "bots" not in out and all(isinstance(n, str) for n in names):
            out["bots"] = list(dict.fromkeys(names))
        players, cap = raw.get("players"), s.get("max_matches", 6000)
        if "deals" not in out and isinstance(players, int) and isinstance(cap, int) and players >= 1:
            per = 2 if s.get("design") == "pairs" else 2 * players
            out["deals"] = max(1, cap // per)
        ex = out.get("execution")
        if isinstance(ex, dict) and "batch_size" not in ex or ex is None:
            # small batches: a block is complete only when every seating reached it, so large
            # batches would play far past the verdict before the driver can stop
            out["execution"] = {**(ex or {}), "batch_size": SPRT_BATCH}
        return out

    @field_validator("bots")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dup = sorted({b for b in v if v.count(b) > 1})
        if dup:
            raise ValueError(f"bot {dup[0]!r} is listed twice")
        return v


class DefaultsModel(_Strict):
    """``defaults:`` merged into every tournament."""

    clock: dict[str, Any] = {}
    faults: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    ratings: dict[str, Any] = {}
    execution: dict[str, Any] = {}


class _DefaultsCheck(_Strict):
    """``defaults:`` validated on its own, so that a bad value there is blamed on ``defaults``."""

    clock: ClockModel = ClockModel()
    faults: FaultsModel = FaultsModel()
    limits: LimitsModel = LimitsModel()
    ratings: RatingsModel = RatingsModel()
    execution: ExecutionModel = ExecutionModel()


class FileModel(_Strict):
    """The whole file."""

    defaults: DefaultsModel = DefaultsModel()
    bots: dict[str, BotModel]
    tournaments: list[dict[str, Any]]


class Tournament:
    """A validated tournament with its bots resolved.

    :ivar model: the pydantic model (after merging defaults).
    :ivar bots: ``name -> BotSpec`` for the tournament's bots.
    :ivar root: the directory of the config file (bots' relative paths resolve there).
    :ivar skipped: the ``bots: {from: DIR}`` subfolders that hold no bot.
    """

    def __init__(self, model: TournamentModel, bots: dict[str, BotSpec], root: Path, source: str) -> None:
        self.model = model
        self.bots = bots
        self.root = root
        self.source = source
        #: ``bots: {from: DIR}`` subfolders holding no bot (said by the commands, not an error)
        self.skipped: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        """The tournament name (also its results folder name)."""
        return self.model.name

    def clock(self) -> Clock:
        """The time control as :class:`arena.specs.Clock`."""
        return Clock(**self.model.clock.model_dump())

    def fault_policy(self) -> FaultPolicy:
        """The fault policy (a preset expanded) as :class:`arena.specs.FaultPolicy`."""
        d = self.model.faults.model_dump()
        preset = d.pop("preset")
        if self.model.preset == "competition":
            preset = "strict"
        if preset:
            d.update(PRESETS[preset])
        return FaultPolicy(**d)

    def limits(self) -> Limits:
        """The process limits as :class:`arena.specs.Limits` (``preset: competition``: sandbox
        required, network denied)."""
        d = self.model.limits.model_dump()
        if self.model.preset == "competition":
            d.update(COMPETITION_LIMITS)
        if Path(self.source).is_file():  # it may hold the salt: a secret (docs/security.md)
            d["hidden_files"] = (str(Path(self.source).resolve()),)
        return Limits(**d)

    @property
    def pace_forced(self) -> bool:
        """Whether forced moves take as long as the seat's median decision (``preset: competition``)."""
        return self.model.preset == "competition"


def load(path: str | Path) -> list[Tournament]:
    """Read, merge and validate a tournaments file.

    :returns: every tournament, in file order.
    :raises ConfigError: naming the file, the tournament and the key for any problem
        (YAML syntax, unknown key, wrong type, unknown bot or game, bad game option,
        too few bots for the players, duplicate names).
    """
    path = Path(path)
    return load_data(read_yaml(path), path, path.resolve().parent)


# 90 lines: one pass of checks in the order errors should be reported (split next time it grows)
def load_data(raw: Any, path: Path, root: Path) -> list[Tournament]:
    """Merge and validate a tournaments file already read (``raw``: its mapping), as :func:`load`.

    ``path`` names the source in messages (``bots: {from: DIR}`` resolves against its folder);
    ``root``: the directory bots' relative paths resolve in. Also used by ``arena sprt``, which
    builds one ``mode: sprt`` entry from its options.
    """
    from engine import registry
    from engine.errors import CardArenaError

    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with keys 'bots' and 'tournaments'")
    skipped: list[Path] = []
    folders = expand_submissions(raw, path, skipped)
    try:
        fm = FileModel.model_validate(raw)
    except ValidationError as e:
        bad = [x["loc"][1] for x in e.errors() if len(x["loc"]) > 1 and x["loc"][0] == "bots"]
        where = f" (bot {bad[0]!r} comes from {folders[bad[0]] / 'bot.yaml'})" if bad and bad[0] in folders else ""
        raise ConfigError(f"{path}: {validation_errors(e, model=FileModel)}{where}") from e
    bots = {}
    for name, bm in fm.bots.items():
        if not re.match(BOT_NAME, name):
            raise ConfigError(f"{path}: key 'bots.{name}': {NAME_WORDS.replace('a name', 'a bot name')}")
        bots[name] = BotSpec(name=name, cmd=tuple(bm.cmd), env=tuple(sorted(bm.env.items())),
                             fresh_process=bm.fresh_process, ask_forced=bm.ask_forced,
                             cwd=str(folders.get(name, root)), version=bm.version or "",
                             submitted=name in folders)
    defaults = fm.defaults.model_dump()
    try:
        _DefaultsCheck.model_validate(defaults)
    except ValidationError as e:
        raise ConfigError(f"{path}: defaults: {validation_errors(e, model=_DefaultsCheck)}") from e
    out: list[Tournament] = []
    seen: set[str] = set()
    for i, traw in enumerate(fm.tournaments):
        tname = traw.get("name", f"#{i + 1}") if isinstance(traw, dict) else f"#{i + 1}"
        where = f"{path}: tournament {tname!r}"
        if not isinstance(traw, dict):
            raise ConfigError(f"{where}: expected a mapping")
        merged = dict(traw)
        if merged.get("bots") == "all":  # every bot of the file (a class's submissions)
            merged["bots"] = list(bots)
        for key in ("clock", "faults", "limits", "ratings", "execution"):
            merged[key] = merge(defaults.get(key) or {}, traw.get(key) or {})
        _check_adaptive(merged.get("lineups"), where)
        try:
            tm = TournamentModel.model_validate(merged)
        except ValidationError as e:
            raise ConfigError(f"{where}: {validation_errors(e, model=TournamentModel)}") from e
        if tm.name in seen:
            raise ConfigError(f"{where}: the name is used by another tournament")
        seen.add(tm.name)
        for b in tm.bots:
            if b not in bots:
                raise ConfigError(f"{where}: key 'bots': unknown bot {b!r}{did_you_mean(b, bots)}; declared bots: "
                                  f"{', '.join(sorted(bots))}")
        for b in tm.ratings.fixed:
            if b not in tm.bots:
                src = "" if "fixed" in (traw.get("ratings") or {}) else " (from defaults)"
                raise ConfigError(f"{where}: key 'ratings.fixed'{src}: {b!r} is not one of the tournament's bots")
        try:
            game = registry.get_game(tm.game)
            tm.game = game.name  # the registered spelling (``Sedma``, ``whiskey-poker`` are accepted)
            game.check_players(tm.players)
            tm.options = game.resolve_options(tm.options)
            game.new_match(tm.players, 0, **tm.options)  # options that depend on the player count
        except CardArenaError as e:
            key = "game" if "unknown game" in str(e) else ("players" if "players" in str(e) else "options")
            raise ConfigError(f"{where}: key {key!r}: {e}") from e
        teams = game.teams(tm.players)
        partnership = any(len(t) > 1 for t in teams)
        if isinstance(tm.lineups, LineupsAdaptive) and partnership and tm.partners == "mixed":
            raise ConfigError(f"{where}: key 'lineups': adaptive works with free-for-all games and partners: self; "
                              "use lineups: all or sample with partners: mixed")
        if tm.mode == "sprt" or tm.lineups == "gauntlet":
            _check_sprt_or_gauntlet(tm, where, partnership)
        elif partnership:
            need = 2 if tm.partners == "self" else 4
            if len(tm.bots) < need:
                raise ConfigError(f"{where}: key 'bots': partners: {tm.partners} needs at least "
                                  f"{need} bots, got {len(tm.bots)}")
        elif len(tm.bots) < tm.players:
            raise ConfigError(f"{where}: key 'bots': {len(tm.bots)} bots for a {tm.players}-player game; "
                              f"a lineup never holds one bot twice, so at least {tm.players} bots are needed")
        if tm.faults.preset and "policy" in (traw.get("faults") or {}):
            raise ConfigError(f"{where}: key 'faults': give either 'preset' or 'policy', not both")
        if tm.preset == "competition":
            fixed = [f"limits.{k}" for k in COMPETITION_LIMITS if k in (traw.get("limits") or {})]
            fixed += [f"faults.{k}" for k in ("preset", "policy", "disable_after") if k in (traw.get("faults") or {})]
            if fixed:
                raise ConfigError(f"{where}: key 'preset': 'competition' sets {', '.join(fixed)} itself (sandbox "
                                  "required, network deny, strict faults); remove them from the tournament, or "
                                  "drop the preset")
        out.append(Tournament(tm, {b: bots[b] for b in tm.bots}, root, str(path)))
        out[-1].skipped = tuple(skipped)
    return out


def _check_adaptive(lineups: Any, where: str) -> None:
    """``lineups: {adaptive: ...}`` validated on its own, so its errors name ``lineups.adaptive.<key>``.

    :raises ConfigError: naming the key, with the closest known key for a misspelt one.
    """
    if not (isinstance(lineups, dict) and "adaptive" in lineups):
        return
    try:
        LineupsAdaptive.model_validate(lineups)
    except ValidationError as e:
        msg = validation_errors(e, model=LineupsAdaptive).replace("key '", "key 'lineups.")
        raise ConfigError(f"{where}: {msg} (lineups: adaptive takes max_matches, per_round, first, explore, "
                          "width; docs/config.md)") from e


def _check_sprt_or_gauntlet(tm: TournamentModel, where: str, partnership: bool) -> None:
    """The keys of ``mode: sprt`` and ``lineups: gauntlet`` that the schema alone cannot check.

    :raises ConfigError: naming the key.
    """
    if tm.mode == "sprt":
        s = tm.sprt
        if s is None:
            raise ConfigError(f"{where}: key 'sprt': mode: sprt needs an 'sprt:' mapping with candidate and baseline")
        if s.candidate == s.baseline:
            raise ConfigError(f"{where}: key 'sprt.baseline': the candidate and the baseline are the same bot "
                              f"{s.candidate!r}; give the baseline its own name (a copy of the entry under 'bots')")
        for key, names in (("candidate", [s.candidate]), ("baseline", [s.baseline]), ("opponents", s.opponents)):
            for n in names:
                if n not in tm.bots:
                    raise ConfigError(f"{where}: key 'sprt.{key}': {n!r} is not one of the entry's bots")
        if s.design == "pairs" and tm.players != 2:
            raise ConfigError(f"{where}: key 'sprt.design': 'pairs' is for two-player games; with "
                              f"{tm.players} players use 'replace'")
        if (s.score0 is None) != (s.score1 is None):
            raise ConfigError(f"{where}: key 'sprt': give both score0 and score1 (score bounds), or neither")
        lo, hi = (s.score0, s.score1) if s.score0 is not None else (s.elo0, s.elo1)
        if not hi > lo:  # type: ignore[operator]
            raise ConfigError(f"{where}: key 'sprt': the H1 bound must lie above the H0 bound, got {lo} and {hi}")
        if tm.lineups != "all":
            raise ConfigError(f"{where}: key 'lineups': an SPRT has its own schedule; remove 'lineups'")
        return
    if partnership and tm.partners == "mixed":
        raise ConfigError(f"{where}: key 'lineups': gauntlet works with free-for-all games and partners: self")
    if not tm.panel:
        raise ConfigError(f"{where}: key 'panel': lineups: gauntlet needs the panel of reference bots")
    for b in tm.panel:
        if b not in tm.bots:
            raise ConfigError(f"{where}: key 'panel': {b!r} is not one of the tournament's bots")
    entrants = [b for b in tm.bots if b not in tm.panel]
    if not entrants:
        raise ConfigError(f"{where}: key 'panel': every bot is on the panel; a gauntlet needs entrants")
    seats = 1 if partnership else tm.players - 1
    if len(tm.panel) < seats:
        raise ConfigError(f"{where}: key 'panel': {len(tm.panel)} panel bots for {seats} other seats; a lineup "
                          "never holds one bot twice")


def select(tournaments: list[Tournament], names: list[str] | None, all_: bool,
           source: str | Path | None = None) -> list[Tournament]:
    """The tournaments to run: ``names``, or all, or those marked ``default: true``.

    :param source: the config file (for the messages; default: the tournaments' file).
    :raises ConfigError: naming the file, for a file without tournaments (whatever the selection),
        an unknown name (listing the known ones), or no default.
    """
    if source is None:
        source = tournaments[0].source if tournaments else "the config file"
    if not tournaments:
        raise ConfigError(f"{source}: defines no tournaments; add one under 'tournaments:' (docs/config.md)")
    if all_:
        return tournaments
    if names:
        by = {t.name: t for t in tournaments}
        out = []
        for n in names:
            if n not in by:
                raise ConfigError(f"{source}: unknown tournament {n!r}{did_you_mean(n, by)}; known: {', '.join(by)}")
            out.append(by[n])
        return out
    out = [t for t in tournaments if t.model.default]
    if not out:
        raise ConfigError(f"{source}: no tournament is marked 'default: true'; name one with -t NAME or use "
                          f"--all (tournaments: {', '.join(t.name for t in tournaments)})")
    return out
