"""A tournament's schedule built one match at a time when asked, so the driver never holds it (issue 18).

:func:`arena.schedule.build_schedule` returns every :class:`arena.specs.MatchSpec` of a run as a
list — ~0.9 KB a match, ~0.9 GB at 1M matches. :class:`LazySchedule` is the same sequence (equal
spec for spec, same replay order: deal, rotation, lineup key) over the lineups and the deal range
alone: an item, a lookup by match id (:meth:`LazySchedule.get`) or an iteration builds each spec
when asked. :class:`arena.driver.LazyBatcher` cuts the driver's batches from it exactly as
:class:`arena.executors.Batcher` cuts them from the list of pending specs (same batches, same
order), holding one cursor per (lineup, rotation) group instead of the specs.

Used by :func:`arena.driver.prepare` for the plain designs (``all``, ``sample``, ``gauntlet``,
partnerships); SPRT and adaptive schedules stay lists (they are small or planned per round).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import Any, overload

from arena.schedule import Lineup, bot_commands, fingerprint, fingerprint_fields
from arena.specs import MatchSpec
from engine.seeds import bot_seed, deal_seed, h64


class LazySchedule(Sequence[MatchSpec]):
    """The specs of ``lineups`` on ``deals``, in replay order, built on demand (see the module docstring).

    :raises ValueError: if two lineups share a key (their order would need the list's stable sort:
        use :func:`arena.schedule.build_schedule`).
    """

    def __init__(self, tournament: Any, salt: str, lineups: Sequence[Lineup], deals: range) -> None:
        from engine import registry

        m = tournament.model
        self.name, self.salt, self.deals = m.name, salt, deals
        self.lineups = list(lineups)
        self.key_index = {lu.key: i for i, lu in enumerate(self.lineups)}
        if len(self.key_index) != len(self.lineups):
            raise ValueError("two lineups share a key")
        game = registry.get_game(m.game)
        self._game, self._version, self._options, self._players = m.game, game.version, m.options, m.players
        self._teams = tuple(tuple(t) for t in game.teams(m.players))
        self._clock, self._faults, self._limits = tournament.clock(), tournament.fault_policy(), tournament.limits()
        self._clock_d = asdict(self._clock)
        self.wall_s = m.execution.match_wall_s
        self._pace = bool(getattr(tournament, "pace_forced", False))
        names = {b for lu in self.lineups for st in lu.seatings for b in st}
        self._cmd = {b: bot_commands((b,), tournament.bots)[0] for b in names}  # one dict per bot, shared
        rots = max(len(lu.seatings) for lu in self.lineups)
        #: per rotation, the lineups that have it, by key (the replay order within a deal and rotation)
        self.by_rot = [sorted((i for i, lu in enumerate(self.lineups) if r < len(lu.seatings)),
                              key=lambda i: self.lineups[i].key) for r in range(rots)]
        self._rot_start = [0]
        for ids in self.by_rot:
            self._rot_start.append(self._rot_start[-1] + len(ids))
        self.per_deal = self._rot_start[-1]
        self._seed: tuple[int, int] = (-1, 0)
        self._rank: list[dict[int, int]] | None = None

    def __len__(self) -> int:
        return len(self.deals) * self.per_deal

    def deal_seed(self, d: int) -> int:
        """``H(salt, game, d)`` (the last one remembered)."""
        if self._seed[0] != d:
            self._seed = (d, deal_seed(self.salt, self._game, d))
        return self._seed[1]

    def match_id(self, lu: int, d: int, r: int) -> str:
        """The id of lineup ``lu``'s match on deal ``d``, rotation ``r``."""
        return f"{self.name}/{self.lineups[lu].key}/d{d:05d}/r{r:02d}"

    def fingerprint(self, lu: int, d: int, r: int) -> str:
        """The match's fingerprint (:func:`arena.schedule.fingerprint`) without building its spec."""
        seats = self.lineups[lu].seatings[r]
        return fingerprint(fingerprint_fields(self._game, self._version, self._options, self._players,
                                              self.deal_seed(d), seats, [self._cmd[b] for b in seats], self._clock_d))

    def spec(self, lu: int, d: int, r: int) -> MatchSpec:
        """The :class:`MatchSpec` of lineup ``lu`` on deal ``d``, rotation ``r`` (as :func:`arena.schedule.specs_for`)."""
        line = self.lineups[lu]
        seats = line.seatings[r]
        mid = self.match_id(lu, d, r)
        cmds = [self._cmd[b] for b in seats]
        ds = self.deal_seed(d)
        fp = fingerprint(fingerprint_fields(self._game, self._version, self._options, self._players, ds, seats,
                                            cmds, self._clock_d))
        return MatchSpec(
            match_id=mid, tournament=self.name, token=f"{h64(self.salt, 'token', mid):016x}",
            game=self._game, options=dict(self._options), players=self._players, deal_index=d, deal_seed=ds,
            rotation=r, lineup=line.bots, seats=tuple(seats), teams=self._teams,
            bot_seeds=tuple(bot_seed(self.salt, mid, s) for s in range(self._players)),
            fingerprint=fp, clock=self._clock, faults=self._faults, limits=self._limits,
            wall_s=self.wall_s, bot_commands=tuple(cmds), pace_forced=self._pace, pause_idle=self._pace)

    def _at(self, i: int) -> tuple[int, int, int]:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        k, rem = divmod(i, self.per_deal)
        r = next(r for r in range(len(self.by_rot)) if rem < self._rot_start[r + 1])
        return self.by_rot[r][rem - self._rot_start[r]], self.deals[k], r

    @overload
    def __getitem__(self, i: int) -> MatchSpec: ...

    @overload
    def __getitem__(self, i: slice) -> list[MatchSpec]: ...

    def __getitem__(self, i: int | slice) -> MatchSpec | list[MatchSpec]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self.spec(*self._at(i))

    def __iter__(self) -> Iterator[MatchSpec]:
        for d in self.deals:
            for r, ids in enumerate(self.by_rot):
                for lu in ids:
                    yield self.spec(lu, d, r)

    def locate(self, match_id: object) -> tuple[int, int, int] | None:
        """``(lineup, deal, rotation)`` of a scheduled match id, else None."""
        if not isinstance(match_id, str):
            return None
        head, sep, rest = match_id.rpartition("/d")
        if not sep or not head.startswith(self.name + "/"):
            return None
        lu = self.key_index.get(head[len(self.name) + 1:])
        ds, sep, rs = rest.partition("/r")
        if lu is None or not sep or not (ds.isdigit() and rs.isdigit()):
            return None
        d, r = int(ds), int(rs)
        if d not in self.deals or r >= len(self.lineups[lu].seatings) or self.match_id(lu, d, r) != match_id:
            return None
        return lu, d, r

    def get(self, match_id: object, default: Any = None) -> MatchSpec | Any:
        """The spec of ``match_id`` (built now), else ``default``."""
        at = self.locate(match_id)
        return default if at is None else self.spec(*at)

    def __contains__(self, match_id: object) -> bool:
        return self.locate(match_id) is not None

    def position(self, match_id: str) -> int:
        """The index of a scheduled match id in replay order (:meth:`locate` must find it)."""
        at = self.locate(match_id)
        if at is None:
            raise KeyError(match_id)
        lu, d, r = at
        if self._rank is None:
            self._rank = [{lu: j for j, lu in enumerate(ids)} for ids in self.by_rot]
        return self.deals.index(d) * self.per_deal + self._rot_start[r] + self._rank[r][lu]

    def sorted_pairs(self) -> Iterator[tuple[str, str]]:
        """``(match id, fingerprint)`` of every match, ids in UTF-8 byte order (``tournament.json``'s
        compact schedule, :func:`arena.schedule_file.encode_sorted`), one lineup at a time."""
        order = sorted(range(len(self.lineups)), key=lambda i: (self.lineups[i].key + "/").encode("utf-8", "surrogatepass"))
        for lu in order:
            rows = sorted(((self.match_id(lu, d, r), d, r) for d in self.deals
                           for r in range(len(self.lineups[lu].seatings))),
                          key=lambda x: x[0].encode("utf-8", "surrogatepass"))
            for mid, d, r in rows:
                yield mid, self.fingerprint(lu, d, r)
