"""``arena play GAME``: a person plays a whole match against bots in the terminal.

The bots are ordinary protocol bots run exactly as in a tournament (their own processes,
the arena's clock, limits and sandbox, the match's fault policy). The person is an
in-process seat of the same match loop (:class:`arena.match._Match`): at each of their
decisions they see their observation (:mod:`arena.terminal`: hand, table, public history,
other fields) and the numbered legal moves, and type a number or the action itself. Their
seat has no clock unless ``clock=True``, when it gets the bots' ``move_ms`` and bank.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from arena.errors import ArenaError, BotCrashed, BotTimeout
from arena.match import SeatPool, _Match
from arena.process import default_sigchld, preflight
from arena.specs import BotSpec, Clock, FaultPolicy, Limits, MatchResult, MatchSpec
from arena.terminal import legal_view, observation_view, outcome_view
from engine import registry
from engine.seeds import bot_seed

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: ``--vs`` names of the reference bots (commands relative to the checkout)
REFERENCE: dict[str, tuple[str, ...]] = {
    "random": ("python", "bots/random_bot.py"),
    "greedy": ("python", "bots/greedy_bot.py"),
    "ismcts": ("python", "bots/ismcts_bot.py", "--time-ms", "800", "--hand-rollouts"),
    "ismcts-fast": ("python", "bots/ismcts_bot.py", "--iterations", "200", "--hand-rollouts"),
    "pimc": ("python", "bots/pimc_bot.py", "--time-ms", "800", "--hand-rollouts"),
}
PERSON = "you"
#: a person's match has no wall budget worth the name (a day); the bots keep their move clock
WALL_S = 86400.0


#: the fault detail of a person who resigned (``q``): printed as "you resigned", not as a crash
RESIGNED = "the person resigned"

def opponent(text: str) -> BotSpec:
    """The bot ``--vs text`` names: a reference bot's name, else a command (split like a shell).

    :raises ArenaError: for an empty command.
    """
    if text in REFERENCE:
        return BotSpec(text, REFERENCE[text], cwd=PROJECT)
    declared = _declared_bots()
    if text in declared:
        return declared[text]
    cmd = tuple(shlex.split(text))
    if not cmd:
        raise ArenaError(f"--vs {text!r}: give a reference bot ({', '.join(REFERENCE)}) or a command")
    if len(cmd) == 1 and not shutil.which(cmd[0]) and not os.path.exists(cmd[0]):
        import difflib

        names = [*REFERENCE, *declared]
        close = difflib.get_close_matches(text, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ArenaError(f"--vs {text!r}: no such bot or command; {hint}give a reference bot "
                         f"({', '.join(REFERENCE)}), a bot of ./tournaments.yaml, or a command "
                         "such as \"python mybot/bot.py\"")
    from arena.doctor import bot_name

    return BotSpec(bot_name(cmd), cmd, cwd=os.getcwd())


def _declared_bots() -> dict[str, BotSpec]:
    """The ``bots:`` of ``./tournaments.yaml`` (commands relative to its folder); ``{}`` when
    there is none or it cannot be read (the reference bots and commands still work)."""
    import yaml

    path = os.path.join(os.getcwd(), "tournaments.yaml")
    try:
        with open(path, encoding="utf-8") as f:
            raw = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError):
        return {}
    bots = raw.get("bots") if isinstance(raw, dict) else None
    out = {}
    for name, b in (bots or {}).items():
        if isinstance(b, dict) and isinstance(b.get("cmd"), list) and all(isinstance(x, str) for x in b["cmd"]):
            out[str(name)] = BotSpec(str(name), tuple(b["cmd"]), cwd=os.path.dirname(path))
    return out


class _PersonMatch(_Match):
    """A match whose seat ``person`` is played by a person at this terminal."""

    def __init__(self, spec: MatchSpec, pool: SeatPool, person: int, console: Console,
                 ask: Callable[[str], str], clock: bool) -> None:
        super().__init__(spec, pool, None)
        self.person = person
        self.console = console
        self.ask = ask
        self.person_clock = clock
        self.seen = 0  # the actions already shown to the person

    def reset_seat(self, seat: int) -> None:
        """The person has no working folder."""
        if seat != self.person:
            super().reset_seat(seat)

    def start_seat(self, seat: int, resume: bool = False, reset: bool = True) -> None:
        """The person needs no ``start``; the bots get theirs."""
        if seat == self.person:
            self.is_ready[seat] = True
            self.versions[seat] = "person"
            return
        super().start_seat(seat, resume, reset)

    def ready(self, seat: int) -> None:
        """The person is always ready."""
        if seat != self.person:
            super().ready(seat)

    def decide(self, seat: int, legal_actions: list, legal: list[str]) -> Any:
        """The person's move from the terminal; a bot's through the protocol."""
        if seat != self.person:
            return super().decide(seat, legal_actions, legal)
        assert self.state is not None  # set by play() before any decision
        obs = self.state.observation(seat)
        self.console.rule(f"move {len(self.actions) + 1}")
        self.console.print(observation_view(obs, self.spec.seats, self.person))
        self.console.print(legal_view(legal))
        limit_ms = self.clock.move_ms + self.bank[seat]
        t0 = time.perf_counter()
        while True:
            clock = f", {limit_ms / 1000 - (time.perf_counter() - t0):.0f} s left" if self.person_clock else ""
            try:
                answer = self.ask(f"your move [1-{len(legal)}, or the action; q resigns{clock}]: ").strip()
            except EOFError:
                answer = "q"
            if answer in ("q", "quit"):
                self.handle(seat, BotCrashed(RESIGNED))
            idx = _choice(answer, legal)
            if idx is not None:
                break
            self.console.print(f"[red]not a legal move:[/] {answer!r} — type a number from 1 to {len(legal)}")
        elapsed = (time.perf_counter() - t0) * 1000.0
        if self.person_clock:
            if elapsed > limit_ms + self.clock.grace_ms:
                self.handle(seat, BotTimeout(f"the person took {elapsed / 1000:.1f} s; the limit was "
                                             f"{limit_ms / 1000:.1f} s"))
            self.bank[seat] -= max(0.0, elapsed - self.clock.move_ms)
        self.move_ms[seat].append(round(elapsed, 3))
        return legal_actions[idx]


def _choice(answer: str, legal: Sequence[str]) -> int | None:
    """The index in ``legal`` of a typed answer: its number (from 1) or the action's text."""
    if answer.isdigit() and 1 <= int(answer) <= len(legal):
        return int(answer) - 1
    for i, a in enumerate(legal):
        if a.lower() == answer.lower():
            return i
    return None


def play(game: str, vs: Sequence[str] = ("random",), seat: int = 0, players: int | None = None,
         options: dict[str, Any] | None = None, clock: bool = False, seed: int | None = None,
         console: Console | None = None, ask: Callable[[str], str] | None = None,
         limits: Limits | None = None, bot_clock: Clock | None = None) -> MatchResult:
    """Play one match of ``game`` with a person in ``seat`` and bots in the other seats.

    :param vs: the opponents, seat by seat after the person's (reference names or commands;
        the last is repeated to fill the seats).
    :param players: seats (default: one per ``--vs`` bot plus the person's, at least the game's
        minimum).
    :param clock: give the person the bots' clock (default: no clock).
    :param seed: the deal seed (default: a fresh random one).
    :param ask: reads the person's answer after a prompt (default: ``console.input``).
    :returns: the match result (the bots' faults in ``faults``).
    :raises ArenaError: for a bad seat or opponent; engine errors for a bad game, players or options.
    """
    g = registry.get_game(game)
    n = players or max(2, g.min_players, len(vs) + 1)
    g.check_players(n)
    opts = g.resolve_options(options or {})
    g.new_match(n, 0, **opts)
    if not 0 <= seat < n:
        raise ArenaError(f"--seat {seat}: {g.name} with {n} players has seats 0 to {n - 1}")
    console = console or Console()
    vs = list(vs) or ["random"]
    if len(vs) > n - 1:
        raise ArenaError(f"{len(vs)} --vs bots for {n} players: give -n {len(vs) + 1}, or fewer --vs")
    bots = [opponent(vs[min(i, len(vs) - 1)]) for i in range(n - 1)]
    person = BotSpec(PERSON, ("person",))
    bots.insert(seat, person)
    limits = limits or Limits()
    preflight([b for b in bots if b is not person], limits)
    deal = seed if seed is not None else secrets.randbits(63)
    mid = f"play/{g.name}/{deal}"
    spec = MatchSpec(match_id=mid, tournament="play", token=secrets.token_hex(8), game=g.name, options=opts,
                     players=n, deal_index=0, deal_seed=deal, rotation=seat,
                     lineup=tuple(dict.fromkeys(b.name for b in bots)), seats=tuple(b.name for b in bots),
                     teams=tuple(tuple(t) for t in g.teams(n)),
                     bot_seeds=tuple(bot_seed("play", mid, s) for s in range(n)), fingerprint="",
                     clock=bot_clock or Clock(), faults=FaultPolicy(), limits=limits, wall_s=WALL_S)
    console.print(f"[bold]{g.name}[/], {n} players: you are seat {seat}; "
                  + ", ".join(f"seat {i}: {b.name}" for i, b in enumerate(bots) if i != seat)
                  + f" (deal seed {deal})")
    with default_sigchld():
        pool = SeatPool(bots, limits, check=False)
        try:
            res = _PersonMatch(spec, pool, seat, console, ask or console.input, clock).play()
        finally:
            pool.close()
            pool.hub.close()
    final = g.new_match(n, deal, **opts)
    for text in res.actions:
        final.apply(g.parse_action(text))
    console.rule("match over")
    console.print(observation_view(final.observation(seat), spec.seats, seat, title=f"{g.name} — the match is over"))
    for f in res.faults:
        if f.seat == seat and f.detail == RESIGNED:
            console.print(f"you resigned at move {f.move + 1}")
        else:
            console.print(f"[yellow]fault[/] of {f.bot} (seat {f.seat}) at move {f.move + 1}: {f.cls}: {escape(f.detail)}")
    console.print(outcome_view(res.outcome, spec.seats, seat, res.status))
    return res
