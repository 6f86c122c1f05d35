"""The schedule of an SPRT: duplicate replacement (default) or head-to-head game pairs.

A test is a sequence of **blocks**, one per deal ``d`` (block index = deal index):

* ``replace`` — duplicate replacement, any number of players. For every rotation ``r``
  (the focal seat, ``0..players-1``) the deal is played twice: the candidate in seat ``r``
  and the same deal, the same opponents in the same seats, the same bot seeds, with the
  baseline in seat ``r``. The other seats hold the ``opponents`` (cycled from seat ``r+1``
  on; default: the baseline itself). The block score is ``(1 + mean reward of the candidate
  − mean reward of the baseline in the focal seat) / 2`` in [0, 1]: 0.5 means no difference.
  Lineup keys: the candidate's name and the baseline's name; ``2·players`` matches per block.
* ``pairs`` — two players only: the deal with the candidate in seat 0 and again in seat 1
  against the baseline (fastchess' game pairs). The block score is the candidate's mean
  reward. Lineup key ``<candidate>+<baseline>``; 2 matches per block.

Match ids follow the tournament's (:mod:`arena.schedule`): ``<test>/<key>/d<deal>/r<rot>``.
Seeds: the deal seed is the tournament's (``H(salt, game, deal)``); in ``replace`` the bot
seeds are keyed by ``(test, deal, rotation, seat)`` without the focal bot, so candidate and
baseline matches of a block send the same seed to each seat.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from arena.schedule import bot_commands, fingerprint, fingerprint_fields
from arena.specs import MatchSpec
from engine.seeds import bot_seed, deal_seed, h64

DESIGNS = ("replace", "pairs")


@dataclass(frozen=True)
class Design:
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


def design_of(model) -> Design:
    """The :class:`Design` of a ``mode: sprt`` tournament model (:class:`arena.config.TournamentModel`)."""
    s = model.sprt
    return Design(s.candidate, s.baseline, tuple(s.opponents), s.design)


def build_sprt_schedule(tournament, salt: str) -> list[MatchSpec]:
    """Every match of the test up to its cap (``deals`` blocks), ordered by (deal, rotation, key).

    The driver plays them in that order and stops early once the test decides
    (:mod:`arena.sprt.runner`); ids, tokens and fingerprints as in :func:`arena.schedule.build_schedule`.
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
