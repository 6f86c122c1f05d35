"""The typed match record every table reads (DESIGN "Journal"): one frozen value per match.

:class:`MatchRecord` is built once from a journal line (:meth:`MatchRecord.from_json`);
sides, side ranks and seat rewards are computed there from the game's teams, so the
ratings, the tables, the live board and ``report.html`` never re-derive them. The
journal's on-disk format is unchanged (``arena/journal.py`` writes plain dicts).

Compact on purpose (a tournament may hold a million of them in memory): ``__slots__``,
tuples (ranks, scores, rewards, versions shared between equal records), interned bot/game/status names, one shared ``teams`` tuple per (game, players),
``sides`` computed when asked; the actions are not kept (no table reads them). The decision
times (``array('d')`` per seat) are kept unless the reader collects them elsewhere
(``from_json(..., moves=False)``: :func:`arena.results.standings` streams them into
per-bot arrays, :class:`Latency`) — at 1M records they were a third of the memory.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from engine.core import rank_rewards

_intern = sys.intern
_SHARED: dict[tuple, tuple] = {}
_SHARED_MAX = 1 << 16


def _share(t: tuple) -> tuple:
    """One shared tuple per distinct value and element types (ranks, scores, rewards, versions repeat
    across a million records); beyond ``_SHARED_MAX`` distinct values, ``t`` itself."""
    key = (t, tuple(type(x) for x in t))
    got = _SHARED.get(key)
    if got is not None:
        return got
    if len(_SHARED) < _SHARED_MAX:
        _SHARED[key] = t
    return t


@lru_cache(maxsize=128)
def teams_of(game: str, players: int) -> tuple[tuple[int, ...], ...]:
    """``Game.teams(players)`` of a registered game as a shared tuple of seat tuples.

    :raises engine errors: for an unknown game.
    """
    from engine import registry

    return tuple(tuple(t) for t in registry.get_game(game).teams(players))


@dataclass(frozen=True, slots=True)
class RecordFault:
    """One fault of a record: ``cls`` in timeout | crash | illegal | protocol | stall | disabled.

    :ivar seat: the faulty seat (None if the journal line had none).
    :ivar move: the move index at which it happened (0: before the first move).
    """

    seat: int | None
    bot: str | None
    cls: str
    move: int | None
    detail: str
    stderr_tail: str = ""

    @classmethod
    def from_json(cls, f: Mapping[str, Any]) -> RecordFault:
        """From the journal form ``{"seat","bot","class","move","detail","stderr_tail"}``."""
        bot = f.get("bot")
        return cls(f.get("seat"), _intern(bot) if isinstance(bot, str) else None,
                   _intern(str(f.get("class", "protocol"))), f.get("move"), str(f.get("detail", "")),
                   str(f.get("stderr_tail") or ""))


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """One journal record, typed (``status`` ok | forfeit | aborted).

    :ivar lineup: the lineup key (the match id's second part).
    :ivar ranks: per seat, 0 = first; None when there is no outcome (aborted).
    :ivar scores: per seat, the game's scores (forfeits: 0 faulty, 1 others); None without outcome.
    :ivar move_ms: per seat, the decision times in ms (forced moves excluded).
    :ivar bot_versions: per seat, what the bot announced in ``ready`` ("" if it never did;
        empty when the record holds none).
    :ivar teams: the game's sides as seat tuples (``Game.teams``).
    :ivar side_ranks: per side, the rank of its first seat (empty without outcome).
    :ivar rewards: per seat, the reward in [0, 1] (ties count half; empty without outcome).
    """

    match_id: str
    lineup: str
    game: str
    deal_index: int
    rotation: int
    seats: tuple[str, ...]
    status: str
    ranks: tuple[int, ...] | None
    scores: tuple[float, ...] | None
    faults: tuple[RecordFault, ...]
    bot_versions: tuple[str, ...]
    move_ms: tuple[array, ...]
    time_ms: float | None
    fingerprint: str
    teams: tuple[tuple[int, ...], ...]
    side_ranks: tuple[int, ...]
    rewards: tuple[float, ...]

    @classmethod
    def from_json(cls, rec: Mapping[str, Any], moves: bool = True) -> MatchRecord:
        """The record of one journal line (a dict as :func:`arena.journal.record_of` writes it).

        :param moves: keep the decision times (``move_ms``); False: an empty tuple (the
            caller reads them from ``rec``).

        :raises KeyError, TypeError: for a line without ``match_id``, ``game``, ``seats``,
            ``deal_index`` or ``rotation`` (the journal reader validates lines first).
        """
        seats = tuple(_intern(s) for s in rec["seats"])
        game = _intern(rec["game"])
        teams = teams_of(game, len(seats))
        status = _intern(str(rec.get("status", "aborted")))
        outcome = rec.get("outcome")
        if not isinstance(outcome, dict):
            outcome = {}
        ranks = _share(tuple(outcome["ranks"])) if outcome.get("ranks") else None
        scores = (_share(tuple(outcome["scores"])) if ranks is not None and outcome.get("scores") is not None
                  else None)
        side_ranks = _share(tuple(ranks[t[0]] for t in teams)) if ranks is not None else ()
        rewards = _share(tuple(rank_rewards(list(ranks), teams))) if ranks is not None else ()
        mid = rec["match_id"]
        parts = mid.split("/")
        return cls(mid, _intern(parts[1]) if len(parts) > 1 else "", game, rec["deal_index"], rec["rotation"],
                   seats, status, ranks, scores,
                   tuple(RecordFault.from_json(f) for f in rec.get("faults") or []),
                   _share(tuple(_intern(str(v or "")) for v in rec.get("bot_versions") or [])),
                   tuple(array("d", t) for t in rec.get("move_ms") or []) if moves else (),
                   rec.get("time_ms"), str(rec.get("fingerprint", "")), teams, side_ranks, rewards)

    @property
    def sides(self) -> tuple[tuple[str, ...], ...]:
        """Per side, its distinct bots in seat order (computed: not stored per record)."""
        seats = self.seats
        return tuple(tuple(dict.fromkeys(seats[s] for s in t)) for t in self.teams)

    @property
    def finished(self) -> bool:
        """Whether the record has an outcome that counts (``ok`` or ``forfeit``; not aborted)."""
        return self.ranks is not None and self.status != "aborted"

    @property
    def played(self) -> bool:
        """Whether its ranks come from play (``ok`` with an outcome), not from a forfeit."""
        return self.status == "ok" and self.ranks is not None

    @property
    def disabled(self) -> bool:
        """Whether it is a match not played because a bot was disabled (a fault ``disabled``)."""
        return self.status == "forfeit" and any(f.cls == "disabled" for f in self.faults)

    def rated(self, rate_forfeits: bool = False) -> bool:
        """``ok`` records are rated; forfeits (``disabled`` ones included) only with ``rate_forfeits``."""
        if self.ranks is None:
            return False
        return self.status == "ok" or (self.status == "forfeit" and rate_forfeits)

    def replay_key(self) -> tuple[int, int, str]:
        """Sort key of the ordered replay: (deal_index, rotation, lineup key)."""
        return (self.deal_index, self.rotation, self.lineup)


def records_of(records: Sequence[Mapping[str, Any] | MatchRecord]) -> list[MatchRecord]:
    """``records`` as :class:`MatchRecord` values (dicts converted, records kept as they are)."""
    return [r if isinstance(r, MatchRecord) else MatchRecord.from_json(r) for r in records]


def id_hash(mid: str) -> int:
    """A match id's 64-bit hash, the same in every process (unlike :func:`hash`): the journal
    cache keeps them per chunk, so a read never hashes the cached ids again; the tables'
    counters key lineups by it."""
    import hashlib

    return int.from_bytes(hashlib.blake2b(mid.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "little", signed=True)
