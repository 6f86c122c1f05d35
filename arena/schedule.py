"""The schedule of a tournament: lineups, duplicate blocks, rotations, match ids, seeds.

DESIGN "Competitions": the unit is the duplicate block — one deal played once per
rotation of a lineup. ``deal_seed = H(salt, game, deal_index)`` is the same for every
lineup and rotation; ``bot_seed = H(salt, match_id, seat)``; the ``match`` token sent
to bots is keyed by the salt too, so nothing a bot receives reproduces the deal.

Lineup keys: free-for-all and ``partners: self`` lineups are the sorted bot names
joined by ``+``; ``partners: mixed`` lineups are ``a+b~c+d`` (two sorted teams, sorted).
Match id: ``<tournament>/<lineup key>/d<deal:05>/r<rotation:02>``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from arena.specs import MatchSpec
from engine.seeds import bot_seed, deal_seed, h64


@dataclass(frozen=True)
class Lineup:
    """A lineup and its seatings.

    :ivar key: the lineup key used in match ids.
    :ivar bots: the distinct bots of the lineup, sorted.
    :ivar seatings: per rotation, the bot name of each seat.
    """

    key: str
    bots: tuple[str, ...]
    seatings: tuple[tuple[str, ...], ...]


def _ffa_lineups(bots: list[str], players: int, rotations: str, lineups, salt: str) -> list[Lineup]:
    if isinstance(lineups, str):
        subsets = [tuple(sorted(c)) for c in itertools.combinations(sorted(bots), players)]
    else:  # {sample: {per_bot: M}}
        subsets = mixing_sample(sorted(bots), lineups.sample.per_bot, players, salt)
    out = []
    for sub in subsets:
        if rotations == "cyclic":
            seatings = tuple(tuple(sub[(i + r) % players] for i in range(players)) for r in range(players))
        else:
            seatings = tuple(itertools.permutations(sub))
        out.append(Lineup("+".join(sub), sub, seatings))
    return out


def mixing_sample(bots: list[str], per_bot: int, players: int, salt: str) -> list[tuple[str, ...]]:
    """The ``sample`` design: about ``per_bot`` lineups per bot, meeting as many distinct opponents as possible.

    Lineups are built one at a time, one bot at a time, from the salt (``H(salt, "lineups")``):
    each place goes to a bot among those with the fewest appearances so far (appearances stay
    within one of each other, and rotations balance the seats), choosing the one that has met
    the lineup's bots least often (ties broken at random). With ``per_bot · (players − 1)``
    opponent slots a bot meets close to that many distinct opponents when the field allows it;
    a lineup is never drawn twice. When the budget covers every lineup, every lineup is played.

    :returns: the lineups (sorted bot tuples), sorted.
    """
    import numpy as np

    n = len(bots)
    target = -(-per_bot * n // players)
    if target >= math.comb(n, players):
        return [tuple(c) for c in itertools.combinations(bots, players)]
    rng = np.random.default_rng(h64(salt, "lineups"))
    met = np.zeros((n, n), dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)
    chosen: set[tuple[int, ...]] = set()
    big = np.iinfo(np.int64).max
    while len(chosen) < target:
        pick: list[int] = []
        acc = seen * (16 * n * n * players)  # fewest appearances first, then fewest meetings
        noise = rng.integers(0, 4 * n, size=(players, n))
        for place in range(players):
            score = acc + noise[place]
            score[pick] = big
            best = int(np.argmin(score))
            if place == players - 1 and tuple(sorted(pick + [best])) in chosen:  # never a lineup twice
                best = next(int(b) for b in np.argsort(score) if tuple(sorted(pick + [int(b)])) not in chosen)
            pick.append(best)
            acc = acc + met[best] * (4 * n)
        key = tuple(sorted(pick))
        chosen.add(key)
        seen[list(key)] += 1
        idx = np.array(key)
        met[np.ix_(idx, idx)] += 1
        met[idx, idx] -= 1
    return sorted(tuple(bots[i] for i in c) for c in chosen)


def design_mixing(lineups: list[Lineup] | list[tuple[str, ...]], bots: list[str]) -> dict[str, float]:
    """How well a design mixes the field: distinct opponents per bot (``min``, ``median``, of ``possible``).

    :param lineups: the lineups played (a lineup's bots, or :class:`Lineup`).
    :returns: ``{"min", "median", "max", "possible"}`` (``possible`` = other bots in the field).
    """
    opp: dict[str, set[str]] = {b: set() for b in bots}
    for lu in lineups:
        names = lu.bots if isinstance(lu, Lineup) else lu
        for b in names:
            opp.setdefault(b, set()).update(x for x in names if x != b)
    counts = sorted(len(v) for v in opp.values())
    if not counts:
        return {"min": 0, "median": 0.0, "max": 0, "possible": 0}
    mid = len(counts) // 2
    median = counts[mid] if len(counts) % 2 else (counts[mid - 1] + counts[mid]) / 2
    return {"min": counts[0], "median": median, "max": counts[-1], "possible": max(0, len(bots) - 1)}


def _self_partner_lineups(bots: list[str], teams: list[list[int]]) -> list[Lineup]:
    """``partners: self``: a lineup is a pair of bots, each filling both seats of its side; rotations swap sides."""
    n = sum(len(t) for t in teams)
    out = []
    for a, b in itertools.combinations(sorted(bots), 2):
        seatings = []
        for first, second in ((a, b), (b, a)):
            seats = [""] * n
            for s in teams[0]:
                seats[s] = first
            for s in teams[1]:
                seats[s] = second
            seatings.append(tuple(seats))
        out.append(Lineup(f"{a}+{b}", (a, b), tuple(seatings)))
    return out


def _mixed_partner_lineups(bots: list[str], teams: list[list[int]]) -> list[Lineup]:
    """``partners: mixed``: every pair of disjoint two-bot teams; 4 rotations (sides and partner order swap)."""
    pairs = list(itertools.combinations(sorted(bots), 2))
    out = []
    for t1, t2 in itertools.combinations(pairs, 2):
        if set(t1) & set(t2):
            continue
        a, b = t1
        c, d = t2
        orders = [((a, b), (c, d)), ((c, d), (a, b)), ((b, a), (d, c)), ((d, c), (b, a))]
        seatings = []
        for (x0, x1), (y0, y1) in orders:
            seats = [""] * 4
            seats[teams[0][0]], seats[teams[0][1]] = x0, x1
            seats[teams[1][0]], seats[teams[1][1]] = y0, y1
            seatings.append(tuple(seats))
        key = f"{a}+{b}~{c}+{d}"
        out.append(Lineup(key, tuple(sorted({a, b, c, d})), tuple(seatings)))
    return out


def _gauntlet_lineups(bots: list[str], panel: list[str], players: int, teams: list[list[int]],
                      rotations: str) -> list[Lineup]:
    """``lineups: gauntlet``: every entrant (a bot not on the panel) with each choice of panel bots
    for the other seats — never two entrants together, so the cost grows linearly with entrants."""
    entrants = sorted(b for b in bots if b not in panel)
    if any(len(t) > 1 for t in teams):  # partners: self — entrant against each panel bot
        return [lu for e in entrants for p in sorted(panel) for lu in _self_partner_lineups([e, p], teams)]
    out = []
    for e in entrants:
        for others in itertools.combinations(sorted(panel), players - 1):
            out.extend(_ffa_lineups([e, *others], players, rotations, "all", ""))
    return out


def lineups_for(bots: list[str], players: int, teams: list[list[int]], rotations: str = "cyclic",
                lineups="all", partners: str = "self", salt: str = "",
                panel: list[str] | None = None) -> list[Lineup]:
    """Every lineup of a tournament with its seatings (DESIGN "Schedule").

    :param teams: ``Game.teams(players)``; a partnership game has a side of two seats.
    :raises ValueError: if there are too few bots for one lineup.
    """
    partnership = any(len(t) > 1 for t in teams)
    if lineups == "gauntlet":
        out = _gauntlet_lineups(bots, panel or [], players, teams, rotations)
    elif partnership and partners == "self":
        out = _self_partner_lineups(bots, teams)
    elif partnership:
        out = _mixed_partner_lineups(bots, teams)
    else:
        out = _ffa_lineups(bots, players, rotations, lineups, salt)
    if not out:
        raise ValueError(f"{len(bots)} bots make no lineup for {players} players (partners: {partners})")
    return out


def side_entities(seats: tuple[str, ...], teams: list[list[int]], partners: str) -> list[str]:
    """The rated entity of each side: the bot name, or ``"a+b"`` for a mixed team (seat order)."""
    out = []
    for t in teams:
        names = [seats[s] for s in t]
        if len(set(names)) == 1:
            out.append(names[0])
        else:
            out.append("+".join(names))
    return out


def fingerprint(spec_fields: dict) -> str:
    """SHA-256 (16 hex digits) of the canonical JSON of a match's defining fields."""
    blob = json.dumps(spec_fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def bot_commands(seats: tuple[str, ...], bots: dict) -> list[dict]:
    """Per seat, what identifies the bot's program: ``{"cmd": [...], "version": "..."}``."""
    return [{"cmd": list(bots[b].cmd), "version": bots[b].version} for b in seats]


def fingerprint_fields(game: str, game_version: int, options: dict, players: int, deal_seed_: int,
                       seats: tuple[str, ...], bot_commands_: list[dict], clock: dict) -> dict:
    """The fields a match's fingerprint covers (listed by name when a resume is refused).

    The keys are also journal-record keys, so a refused resume can name what changed:
    a bot's command or version, the clock, the options, the seats, the deal.
    """
    return {"game": game, "game_version": game_version, "options": options, "players": players,
            "deal_seed": deal_seed_, "seats": list(seats), "bot_commands": bot_commands_, "clock": clock}


def tournament_settings(tournament) -> dict:
    """The settings every recorded match of a tournament shares (JSON values, ``tournament.json``).

    A results folder holds one tournament: a rerun whose settings differ from the recorded ones
    is refused (:meth:`arena.journal.Journal.check_settings`). Bots and deals may change (the
    schedule grows or shrinks); these may not: the game and its version, the player count, the
    options and the clock — and, where they shape the seatings, ``partners`` (partnership games)
    and ``rotations`` (free-for-all with 3 or more players; for 2 the two schemes coincide).
    """
    from engine import registry

    m = tournament.model
    game = registry.get_game(m.game)
    out = {"game": m.game, "game_version": game.version, "players": m.players, "options": dict(m.options),
           "clock": asdict(tournament.clock())}
    if any(len(t) > 1 for t in game.teams(m.players)):
        out["partners"] = m.partners
    elif m.players > 2:
        out["rotations"] = m.rotations
    if getattr(m, "mode", "tournament") == "sprt":  # the test's design and hypotheses (arena/sprt)
        out["sprt"] = {k: v for k, v in m.sprt.model_dump().items() if k != "max_matches"}
    return json.loads(json.dumps(out))  # as read back from tournament.json (tuples become lists)


def build_schedule(tournament, salt: str) -> list[MatchSpec]:
    """Every match of a tournament, ordered for replay: by (deal, rotation, lineup key).

    :param tournament: an :class:`arena.config.Tournament`.
    :param salt: the tournament's secret salt.
    :raises ValueError: for ``lineups: {adaptive: ...}``, whose rounds are planned from the journal
        (:func:`arena.adaptive.adaptive_schedule`).
    """
    from engine import registry

    m = tournament.model
    if getattr(m, "mode", "tournament") == "sprt":
        return build_sprt_schedule(tournament, salt)
    if hasattr(m.lineups, "adaptive"):
        raise ValueError("lineups: adaptive is planned from the journal: use arena.adaptive.adaptive_schedule")
    game = registry.get_game(m.game)
    teams = game.teams(m.players)
    lus = lineups_for(m.bots, m.players, teams, m.rotations, m.lineups, m.partners, salt,
                      getattr(m, "panel", None))
    specs = specs_for(tournament, salt, lus, range(m.deals))
    specs.sort(key=replay_key)
    return specs


def lineup_of(bots: Sequence[str], players: int, teams: list[list[int]], rotations: str = "cyclic") -> Lineup:
    """The :class:`Lineup` of one set of bots: free-for-all (``players`` bots, ``rotations``) or,
    in a partnership game with ``partners: self``, two bots (one per side)."""
    if any(len(t) > 1 for t in teams):
        return _self_partner_lineups(list(bots), teams)[0]
    return _ffa_lineups(list(bots), players, rotations, "all", "")[0]


def specs_for(tournament, salt: str, lus: Sequence[Lineup], deals: Sequence[int]) -> list[MatchSpec]:
    """The matches of ``lus`` on the deals ``deals`` (every seating of each), unsorted.

    Ids ``<tournament>/<lineup key>/d<deal:05>/r<rotation:02>``; seeds, tokens and fingerprints
    as the module docstring says.
    """
    from engine import registry

    m = tournament.model
    game = registry.get_game(m.game)
    teams = game.teams(m.players)
    clock, faults, limits = tournament.clock(), tournament.fault_policy(), tournament.limits()
    specs = []
    shared_teams = tuple(tuple(t) for t in teams)
    # one command dict per bot, shared by its specs (equal to bot_commands'; ~600 bytes a spec saved)
    per_bot = {b: bot_commands((b,), tournament.bots)[0] for b in {b for lu in lus for st in lu.seatings for b in st}}
    for d in deals:
        ds = deal_seed(salt, m.game, d)
        for lu in lus:
            for r, seats in enumerate(lu.seatings):
                mid = f"{m.name}/{lu.key}/d{d:05d}/r{r:02d}"
                cmds = [per_bot[b] for b in seats]
                fp = fingerprint(fingerprint_fields(m.game, game.version, m.options, m.players, ds, seats,
                                                    cmds, asdict(clock)))
                specs.append(MatchSpec(
                    match_id=mid, tournament=m.name, token=f"{h64(salt, 'token', mid):016x}",
                    game=m.game, options=dict(m.options), players=m.players, deal_index=d, deal_seed=ds,
                    rotation=r, lineup=lu.bots, seats=tuple(seats),
                    teams=shared_teams,
                    bot_seeds=tuple(bot_seed(salt, mid, s) for s in range(m.players)),
                    fingerprint=fp, clock=clock, faults=faults, limits=limits,
                    wall_s=m.execution.match_wall_s, bot_commands=tuple(cmds),
                    pace_forced=bool(getattr(tournament, "pace_forced", False)),
                    pause_idle=bool(getattr(tournament, "pace_forced", False))))
    return specs


def split_by_schedule(records, schedule: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """Split journal records into those of the schedule and the others.

    A record belongs to the schedule if its match id is scheduled with the record's
    fingerprint. The others (deals beyond a lowered ``deals``, a bot no longer listed, ...)
    stay in the journal but are never rated.

    :param schedule: ``match id -> fingerprint`` of the tournament as configured.
    :returns: ``(inside, outside)``, each in the order given.
    """
    inside: list[dict] = []
    outside: list[dict] = []
    for rec in records:
        fp = schedule.get(rec.get("match_id"))
        (inside if fp is not None and fp == rec.get("fingerprint") else outside).append(rec)
    return inside, outside


def replay_key(spec_or_record) -> tuple:
    """Sort key of the ordered replay: (deal_index, rotation, lineup key)."""
    if isinstance(spec_or_record, dict):
        mid = spec_or_record["match_id"]
        return (spec_or_record["deal_index"], spec_or_record["rotation"], mid.split("/")[1])
    return (spec_or_record.deal_index, spec_or_record.rotation, spec_or_record.match_id.split("/")[1])


def batches(specs: list[MatchSpec], size: int) -> list[list[MatchSpec]]:
    """Group matches into batches of one lineup and one rotation over distinct deals.

    A bot process serves one batch, so it never sees two matches of the same deal.
    Batches are ordered by their first deal, interleaving lineups and rotations.
    """
    groups: dict[tuple[str, int], list[MatchSpec]] = {}
    for s in specs:
        groups.setdefault((s.match_id.split("/")[1], s.rotation), []).append(s)
    out = []
    for ms in groups.values():
        ms.sort(key=lambda s: s.deal_index)
        for i in range(0, len(ms), size):
            out.append(ms[i:i + size])
    out.sort(key=lambda b: (b[0].deal_index, b[0].rotation, b[0].match_id.split("/")[1]))
    return out


# ---------------------------------------------------------------------------- mode: sprt
# The schedule of an SPRT (arena/sprt/, docs/regression.md): duplicate replacement (default)
# or head-to-head game pairs.
#
# A test is a sequence of **blocks**, one per deal ``d`` (block index = deal index):
#
# * ``replace`` — duplicate replacement, any number of players. For every rotation ``r``
#   (the focal seat, ``0..players-1``) the deal is played twice: the candidate in seat ``r``
#   and the same deal, the same opponents in the same seats, the same bot seeds, with the
#   baseline in seat ``r``. The other seats hold the ``opponents`` (cycled from seat ``r+1``
#   on; default: the baseline itself). The block score is ``(1 + mean reward of the candidate
#   − mean reward of the baseline in the focal seat) / 2`` in [0, 1]: 0.5 means no difference.
#   Lineup keys: the candidate's name and the baseline's name; ``2·players`` matches per block.
# * ``pairs`` — two players only: the deal with the candidate in seat 0 and again in seat 1
#   against the baseline (fastchess' game pairs). The block score is the candidate's mean
#   reward. Lineup key ``<candidate>+<baseline>``; 2 matches per block.
#
# Match ids follow the tournament's: ``<test>/<key>/d<deal>/r<rot>``.
# Seeds: the deal seed is the tournament's (``H(salt, game, deal)``); in ``replace`` the bot
# seeds are keyed by ``(test, deal, rotation, seat)`` without the focal bot, so candidate and
# baseline matches of a block send the same seed to each seat.

DESIGNS = ("replace", "pairs")


@dataclass(frozen=True)
class SprtDesign:
    """Who plays an SPRT and how (the part of ``sprt:`` that shapes the schedule).

    :ivar candidate, baseline: bot names.
    :ivar opponents: bots of the other seats in ``replace`` (cycled; empty: the baseline).
    :ivar design: ``replace`` | ``pairs``.
    """

    candidate: str
    baseline: str
    opponents: tuple[str, ...] = ()
    design: str = "replace"

    def seatings(self, players: int) -> list[tuple[str, tuple[str, ...], int]]:
        """Per match of a block: ``(lineup key, seats, rotation)``, in the order of the block.

        :raises ValueError: for an unknown design, or ``pairs`` with other than 2 players.
        """
        c, b = self.candidate, self.baseline
        if self.design == "pairs":
            if players != 2:
                raise ValueError(f"design 'pairs' is for two-player games; {players} players need 'replace'")
            return [(f"{c}+{b}", (c, b), 0), (f"{c}+{b}", (b, c), 1)]
        if self.design != "replace":
            raise ValueError(f"unknown design {self.design!r}; expected one of {', '.join(DESIGNS)}")
        others = self.opponents or (b,)
        out = []
        for focal, key in ((c, c), (b, b)):
            for r in range(players):
                seats = [""] * players
                seats[r] = focal
                for j in range(players - 1):
                    seats[(r + 1 + j) % players] = others[j % len(others)]
                out.append((key, tuple(seats), r))
        return out

    def per_block(self, players: int) -> int:
        """Matches per block."""
        return 2 if self.design == "pairs" else 2 * players

    def bots(self) -> list[str]:
        """Every bot the test runs (candidate, baseline, opponents), once each, in that order."""
        return list(dict.fromkeys([self.candidate, self.baseline, *self.opponents]))


def design_of(model) -> SprtDesign:
    """The :class:`SprtDesign` of a ``mode: sprt`` tournament model (:class:`arena.config.TournamentModel`)."""
    s = model.sprt
    return SprtDesign(s.candidate, s.baseline, tuple(s.opponents), s.design)


def build_sprt_schedule(tournament, salt: str) -> list[MatchSpec]:
    """Every match of the test up to its cap (``deals`` blocks), ordered by (deal, rotation, key).

    The driver plays them in that order and stops early once the test decides
    (:mod:`arena.sprt.runner`); ids, tokens and fingerprints as in :func:`build_schedule`.
    """
    from engine import registry

    m = tournament.model
    game = registry.get_game(m.game)
    teams = tuple(tuple(t) for t in game.teams(m.players))
    design = design_of(m)
    clock, faults, limits = tournament.clock(), tournament.fault_policy(), tournament.limits()
    block = design.seatings(m.players)
    specs = []
    for d in range(m.deals):
        ds = deal_seed(salt, m.game, d)
        for key, seats, r in block:
            mid = f"{m.name}/{key}/d{d:05d}/r{r:02d}"
            if design.design == "replace":
                seeds = tuple(bot_seed(salt, f"{m.name}/d{d:05d}/r{r:02d}", s) for s in range(m.players))
            else:
                seeds = tuple(bot_seed(salt, mid, s) for s in range(m.players))
            cmds = bot_commands(seats, tournament.bots)
            fp = fingerprint(fingerprint_fields(m.game, game.version, m.options, m.players, ds, seats, cmds,
                                                asdict(clock)))
            specs.append(MatchSpec(
                match_id=mid, tournament=m.name, token=f"{h64(salt, 'token', mid):016x}", game=m.game,
                options=dict(m.options), players=m.players, deal_index=d, deal_seed=ds, rotation=r,
                lineup=tuple(sorted(set(seats))), seats=seats, teams=teams, bot_seeds=seeds, fingerprint=fp,
                clock=clock, faults=faults, limits=limits, wall_s=m.execution.match_wall_s,
                bot_commands=tuple(cmds)))
    specs.sort(key=lambda s: (s.deal_index, s.rotation, s.match_id.split("/")[1]))
    return specs
