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
import random
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
    subsets = [tuple(sorted(c)) for c in itertools.combinations(sorted(bots), players)]
    if not isinstance(lineups, str):  # {sample: {per_bot: M}}
        subsets = _balanced_sample(subsets, sorted(bots), lineups.sample.per_bot, players, salt)
    out = []
    for sub in subsets:
        if rotations == "cyclic":
            seatings = tuple(tuple(sub[(i + r) % players] for i in range(players)) for r in range(players))
        else:
            seatings = tuple(itertools.permutations(sub))
        out.append(Lineup("+".join(sub), sub, seatings))
    return out


def _balanced_sample(subsets, bots, per_bot: int, players: int, salt: str):
    """A deterministic, balanced design: lineups drawn (from the salt) favouring bots seen least."""
    rng = random.Random(h64(salt, "lineups"))
    pool = list(subsets)
    rng.shuffle(pool)
    target = -(-per_bot * len(bots) // players)
    chosen = []
    seen = {b: 0 for b in bots}
    while pool and len(chosen) < target:
        pool.sort(key=lambda s: sum(seen[b] for b in s))
        pick = pool.pop(0)
        chosen.append(pick)
        for b in pick:
            seen[b] += 1
    return sorted(chosen)


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


def lineups_for(bots: list[str], players: int, teams: list[list[int]], rotations: str = "cyclic",
                lineups="all", partners: str = "self", salt: str = "") -> list[Lineup]:
    """Every lineup of a tournament with its seatings (DESIGN "Schedule").

    :param teams: ``Game.teams(players)``; a partnership game has a side of two seats.
    :raises ValueError: if there are too few bots for one lineup.
    """
    partnership = any(len(t) > 1 for t in teams)
    if partnership and partners == "self":
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
    return json.loads(json.dumps(out))  # as read back from tournament.json (tuples become lists)


def build_schedule(tournament, salt: str) -> list[MatchSpec]:
    """Every match of a tournament, ordered for replay: by (deal, rotation, lineup key).

    :param tournament: an :class:`arena.config.Tournament`.
    :param salt: the tournament's secret salt.
    """
    from engine import registry

    m = tournament.model
    game = registry.get_game(m.game)
    teams = game.teams(m.players)
    lus = lineups_for(m.bots, m.players, teams, m.rotations, m.lineups, m.partners, salt)
    clock, faults, limits = tournament.clock(), tournament.fault_policy(), tournament.limits()
    specs = []
    for d in range(m.deals):
        ds = deal_seed(salt, m.game, d)
        for lu in lus:
            for r, seats in enumerate(lu.seatings):
                mid = f"{m.name}/{lu.key}/d{d:05d}/r{r:02d}"
                cmds = bot_commands(seats, tournament.bots)
                fp = fingerprint(fingerprint_fields(m.game, game.version, m.options, m.players, ds, seats,
                                                    cmds, asdict(clock)))
                specs.append(MatchSpec(
                    match_id=mid, tournament=m.name, token=f"{h64(salt, 'token', mid):016x}",
                    game=m.game, options=dict(m.options), players=m.players, deal_index=d, deal_seed=ds,
                    rotation=r, lineup=lu.bots, seats=tuple(seats),
                    teams=tuple(tuple(t) for t in teams),
                    bot_seeds=tuple(bot_seed(salt, mid, s) for s in range(m.players)),
                    fingerprint=fp, clock=clock, faults=faults, limits=limits,
                    wall_s=m.execution.match_wall_s, bot_commands=tuple(cmds),
                    pace_forced=bool(getattr(tournament, "pace_forced", False))))
    specs.sort(key=replay_key)
    return specs


def split_by_schedule(records, schedule: dict[str, str]) -> tuple[list[dict], list[dict]]:
    """Split journal records into those of the schedule and the others.

    A record belongs to the schedule if its match id is scheduled with the record's
    fingerprint. The others (deals beyond a lowered ``deals``, a bot no longer listed, ...)
    stay in the journal but are never rated.

    :param schedule: ``match id -> fingerprint`` of the tournament as configured.
    :returns: ``(inside, outside)``, each in the order given.
    """
    inside, outside = [], []
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
