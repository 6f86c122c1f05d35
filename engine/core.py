"""The engine contract: ``Game``, ``State``, ``InfoSet``, ``Outcome`` (DESIGN "Engine contract").

Every game module in :mod:`engine.games` subclasses these. Actions are
state-independent hashable values (ints or tuples, chosen per game) so they can key
search-tree edges across determinizations; ``Game.format_action`` /
``Game.parse_action`` convert them to and from the protocol strings of DESIGN.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.errors import (
    GameOverError,
    IllegalActionError,
    InconsistentObservationError,
    OptionError,
    PlayerCountError,
)
from engine.sampling import Sampler, SamplingProblem
from engine.seeds import hand_rng

if TYPE_CHECKING:
    from typing import Self

#: an action: a per-game hashable value (an int or a tuple) that never depends on the state;
#: ``Any`` for the type checker, so that each game's methods may name their own action type
Action = Any
Seat = int


# ---------------------------------------------------------------- outcome and placings

@dataclass(frozen=True)
class Outcome:
    """Result of a finished match.

    :ivar ranks: per seat, 0 = best; equal results share a place; partners share their
        side's rank (rules files §0 "Placings and scores").
    :ivar scores: per seat, as the game's rules file defines ``Outcome.scores`` (points,
        deals won, chips, lives ...).
    """

    ranks: tuple[int, ...]
    scores: tuple[float, ...]

    def to_json(self) -> dict[str, list]:
        """``{"ranks": [...], "scores": [...]}`` for the protocol and the journal."""
        return {"ranks": list(self.ranks), "scores": list(self.scores)}

    @classmethod
    def from_json(cls, data: Mapping[str, Sequence]) -> Outcome:
        """Inverse of :meth:`to_json`."""
        return cls(tuple(int(r) for r in data["ranks"]), tuple(data["scores"]))

    def rewards(self, teams: Sequence[Sequence[int]] | None = None) -> list[float]:
        """Per seat reward in [0, 1] from the ranks (see :func:`rank_rewards`).

        :param teams: the sides (``Game.teams(n)``); default: every seat is its own side.
        """
        return rank_rewards(self.ranks, teams)


def rank_rewards(ranks: Sequence[int], teams: Sequence[Sequence[int]] | None = None) -> list[float]:
    """Rewards in [0, 1] per seat from per-seat ranks.

    :param ranks: per seat, 0 = best.
    :param teams: sides as lists of seats (partners share a side); default: each seat alone.
    :returns: per seat ``(#sides strictly worse + 0.5 * #other sides tied) / (#sides - 1)``;
        1.0 for everybody if there is a single side.
    """
    n = len(ranks)
    if teams is None:
        teams = [[i] for i in range(n)]
    side_rank = [ranks[t[0]] for t in teams]
    m = len(teams)
    out = [0.0] * n
    if m <= 1:
        return [1.0] * n
    for si, t in enumerate(teams):
        r = side_rank[si]
        worse = sum(1 for x in side_rank if x > r)
        tied = sum(1 for x in side_rank if x == r) - 1
        val = (worse + 0.5 * tied) / (m - 1)
        for seat in t:
            out[seat] = val
    return out


def ranks_from_results(results: Sequence[float], higher_is_better: bool = True) -> list[int]:
    """Places from per-side results: a side's rank is the number of sides strictly better.

    Rules files §0 "Placings and scores": results 50/30/10 give ranks 0, 1, 2; 40/40/10
    give 0, 0, 2.
    """
    if higher_is_better:
        return [sum(1 for o in results if o > r) for r in results]
    return [sum(1 for o in results if o < r) for r in results]


def seat_ranks_from_sides(side_results: Sequence[float], teams: Sequence[Sequence[int]],
                          higher_is_better: bool = True) -> list[int]:
    """Per-seat ranks from per-side results (partners share their side's rank)."""
    side_ranks = ranks_from_results(side_results, higher_is_better)
    n = sum(len(t) for t in teams)
    out = [0] * n
    for r, t in zip(side_ranks, teams):
        for seat in t:
            out[seat] = r
    return out


# ---------------------------------------------------------------- options

@dataclass(frozen=True)
class Option:
    """A game option (a ``[CONFIG name, default X]`` tag of the rules file).

    :ivar name: key in ``options``.
    :ivar default: value used when the key is absent.
    :ivar doc: one line for ``arena rules``.
    :ivar choices: the accepted values, if a finite set.
    :ivar check: predicate for other values (e.g. ``lambda v: isinstance(v, int) and v >= 1``).
    :ivar expected: wording of what is accepted, for error messages.
    """

    name: str
    default: Any
    doc: str
    choices: tuple | None = None
    check: Callable[[Any], bool] | None = None
    expected: str = ""

    def validate(self, game: str, value: Any) -> Any:
        """Return ``value`` if accepted.

        :raises OptionError: naming the game, the key, the value and what is expected.
        """
        # the type must match too: True == 1 and 1.0 == 1 in Python, but are not seat 1
        if self.choices is not None and any(value == c and type(value) is type(c) for c in self.choices):
            return value
        if self.check is not None and self.check(value):
            return value
        if self.choices is None and self.check is None:
            return value
        what = self.expected or (" | ".join(repr(c) for c in self.choices) if self.choices else "a valid value")
        raise OptionError(f"{game}: option {self.name!r} got {value!r}; expected {what}")


def int_at_least(lo: int) -> Callable[[Any], bool]:
    """Predicate: an ``int`` (not bool) ``>= lo``."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= lo


def seat_or_random(below: int | None = None) -> Callable[[Any], bool]:
    """Predicate: ``"random"``, or a seat number (an ``int``, not bool, ``>= 0`` and ``< below`` if given)."""
    def check(v: Any) -> bool:
        """True for ``"random"`` or a non-bool ``int`` seat ``>= 0`` (and ``< below`` if given)."""
        return v == "random" or (isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                 and (below is None or v < below))
    return check


def seat_option(name: str = "first_dealer",
                doc: str = "seat of the first dealer, or 'random' (drawn from the deal seed)",
                expected: str = "a seat number 0..n-1 or 'random'", below: int | None = None) -> Option:
    """An option naming a seat (default 0) or ``"random"`` (``first_dealer``, ``first_start``).

    :param doc: the line for ``arena rules`` (default: the first dealer's).
    :param below: seats accepted at validation are ``0..below-1`` (usually ``max_players``);
        ``None``: any seat, checked against the player count by :meth:`Game.seat_from_option`.
    :param expected: wording of what is accepted, for error messages.
    """
    return Option(name, 0, doc, check=seat_or_random(below), expected=expected)


# ---------------------------------------------------------------- game

class Game(ABC):
    """A card game: static facts, options and the factory of states.

    Subclasses set the class attributes and implement :meth:`new_match`,
    :meth:`infoset`, :meth:`parse_action` and :meth:`format_action`.

    :cvar name: registry key (``"agram"``).
    :cvar version: bumped only when behaviour changes (recorded with every result).
    :cvar min_players, max_players: supported seat counts.
    :cvar options: the game's options by name.
    :cvar summary: a few lines for ``arena rules GAME``.
    :cvar actions_doc: the action strings with one example each, for ``arena rules``.
    :cvar observation_doc: the observation fields, for ``arena rules``.
    """

    name: str = ""
    version: int = 1
    min_players: int = 2
    max_players: int = 2
    options: Mapping[str, Option] = {}
    summary: str = ""
    actions_doc: str = ""
    observation_doc: str = ""
    #: representative ``(players, options)`` pairs exercised by the conformance suite and
    #: by ``bench/`` (which iterate over the registry, never over game names).
    configs: tuple[tuple[int, dict], ...] = ()

    def teams(self, n: int) -> list[list[int]]:
        """Sides for ``n`` players: singletons by default; partnership games override."""
        self.check_players(n)
        return [[i] for i in range(n)]

    def check_players(self, n: int) -> None:
        """:raises PlayerCountError: if ``n`` is outside ``min_players..max_players``."""
        if not isinstance(n, int) or not self.min_players <= n <= self.max_players:
            raise PlayerCountError(
                f"{self.name}: {n!r} players not supported; expected {self.min_players}..{self.max_players}")

    def resolve_options(self, options: Mapping[str, Any] | None = None, n: int | None = None) -> dict[str, Any]:
        """Defaults merged with ``options``, every value validated.

        :raises OptionError: for an unknown key (naming it and the known keys) or a bad value.
        """
        options = dict(options or {})
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            import difflib

            close = difflib.get_close_matches(unknown[0], list(self.options), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise OptionError(f"{self.name}: unknown option {unknown[0]!r}{hint}; known options: {known}")
        out = {}
        for key, opt in self.options.items():
            out[key] = opt.validate(self.name, options[key]) if key in options else opt.default
        return out

    def seat_from_option(self, opts: Mapping[str, Any], key: str, n: int, deal_seed: int,
                         purpose: str | None = None) -> int:
        """The seat a validated seat-or-``"random"`` option (:func:`seat_option`) gives for ``n`` players.

        ``"random"`` draws ``hand_rng(deal_seed, 0, purpose or key).randrange(n)``, so the
        seat comes from the deal seed and never shifts another stream.

        :raises OptionError: naming the game, the key and the value if the seat is ``>= n``.
        """
        value = opts[key]
        if value == "random":
            return hand_rng(deal_seed, 0, purpose or key).randrange(n)
        if value >= n:
            raise OptionError(f"{self.name}: option {key!r} got {value!r}; expected a seat 0..{n - 1} or 'random'")
        return int(value)

    @abstractmethod
    def new_match(self, n: int, deal_seed: int, **options: Any) -> State:
        """The state at the start of a match of ``n`` players dealt from ``deal_seed``.

        :raises PlayerCountError, OptionError: on bad arguments.
        """

    @abstractmethod
    def infoset(self, observation: Mapping[str, Any]) -> InfoSet:
        """The information set implied by one seat's ``observation``.

        :raises InconsistentObservationError: if no world is consistent with it.
        """

    def rollout_action(self, state: State, rng: random.Random) -> Action:
        """The action a rollout plays in ``state`` (default: uniform among legal actions).

        ``int(rng.random() * n)`` is uniform on ``0..n-1`` for the small ``n`` of a legal set
        and about twice as fast as ``rng.randrange`` (a quarter of an Agram search's time).
        """
        legal = state.legal_actions()
        return legal[int(rng.random() * len(legal))]

    @abstractmethod
    def parse_action(self, text: str) -> Action:
        """The action written ``text`` in the notation of DESIGN.

        :raises ActionParseError: naming the text and the expected notation.
        """

    @abstractmethod
    def format_action(self, action: Action) -> str:
        """The protocol string of ``action``."""


# ---------------------------------------------------------------- state

class State(ABC):
    """A complete world: every card's location, whose turn, the current hand's history.

    Implementations use ``__slots__`` and clone by copying ints and small lists.
    ``hand_start()`` / ``hand_history()`` support the determinization audit: replaying
    the history from the hand start must reproduce the state.
    """

    __slots__ = ()

    game: Game

    @property
    @abstractmethod
    def num_players(self) -> int:
        """Number of seats."""

    @abstractmethod
    def current_player(self) -> int:
        """The seat to act (``-1`` when terminal)."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """The legal actions of the current player, in a canonical order; never empty unless terminal."""

    @abstractmethod
    def apply(self, action: Action) -> None:
        """Play ``action`` for the current player.

        The ``apply`` that ends a hand increments :meth:`hand_index` and deals the next
        hand in the same call.

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the state is terminal.
        """

    @abstractmethod
    def is_terminal(self) -> bool:
        """True once the match is over."""

    @abstractmethod
    def outcome(self) -> Outcome:
        """The match result.

        :raises GameOverError: if the match is not over.
        """

    @abstractmethod
    def observation(self, seat: int) -> dict[str, Any]:
        """Everything ``seat`` has seen and nothing else, JSON-ready (DESIGN "Information sets").

        Always holds ``game``, ``players``, ``seat``, ``options``, ``hand_index`` and
        ``actions``: the current hand's actions as ``[[seat, public_action(a, seat)], ...]``
        in order (empty right after a deal); never a seed.
        """

    @abstractmethod
    def clone(self) -> State:
        """An independent copy (cheap: ints and small lists)."""

    @abstractmethod
    def hand_index(self) -> int:
        """Hands completed so far in this match."""

    @abstractmethod
    def hand_rewards(self) -> list[float]:
        """Per seat in [0, 1]: the last completed hand's result (the match reward for one-hand matches)."""

    @abstractmethod
    def public_action(self, action: Action, seat: int) -> str:
        """``action`` as ``seat`` observes it (full string, or a masked form like ``bid ?``)."""

    @abstractmethod
    def hand_start(self) -> State:
        """A copy of this state right after the current hand was dealt."""

    @abstractmethod
    def hand_history(self) -> list[Action]:
        """The actions applied since the current hand was dealt, in order."""

    @abstractmethod
    def world_key(self) -> Hashable:
        """A hashable description of the whole current-hand world (all hidden cards included)."""

    # conveniences shared by every game -------------------------------------------

    def legal_strings(self) -> list[str]:
        """``legal_actions()`` formatted with the game's notation."""
        fmt = self.game.format_action
        return [fmt(a) for a in self.legal_actions()]

    def apply_string(self, text: str) -> None:
        """Parse ``text`` and apply it.

        :raises ActionParseError, IllegalActionError: naming the text.
        """
        action = self.game.parse_action(text)
        self.apply(action)

    def _illegal(self, action: Action, reason: str | None = None) -> IllegalActionError:
        """The error for an illegal ``action`` in this state (naming the legal set)."""
        try:
            shown = self.game.format_action(action)
        except Exception:  # noqa: BLE001 - an unformattable value is shown raw
            shown = repr(action)
        return IllegalActionError(self.game.name, shown, self.legal_strings(), self.current_player(), reason)

    def _require_live(self) -> None:
        if self.is_terminal():
            raise GameOverError(f"{self.game.name}: the match is over; no action can be applied")


class SnapshotState(State):
    """A state that records its hand as a snapshot plus the actions since.

    Subclasses keep ``start`` (a copy taken right after the deal by :meth:`_snapshot`; the
    copy is its own ``start``) and ``hist`` (the actions applied since the deal, reset by
    the deal); clones share ``start``. A subclass naming its action list otherwise
    overrides :meth:`hand_history`.
    """

    __slots__ = ("start",)

    #: the snapshot right after the deal (``None`` only while it is being taken)
    start: Self | None
    #: the actions since the deal (a slot of the subclass)
    hist: list[Action]

    if TYPE_CHECKING:
        def clone(self) -> Self: ...

    def _snapshot(self: Self) -> None:
        """Keep a copy of this state, taken right after the deal, as the hand's ``start``."""
        self.start = None  # set before the first deal's clone; the copy never keeps the old snapshot
        snap = self.clone()
        snap.start = snap
        self.start = snap

    def _deal_snapshot(self) -> Self:
        """The (shared, not copied) snapshot right after the current hand's deal."""
        assert self.start is not None, "_snapshot() runs at every deal"
        return self.start

    def hand_start(self) -> State:
        """A copy of this state right after the current hand was dealt."""
        return self._deal_snapshot().clone()

    def hand_history(self) -> list[Action]:
        """The actions applied since the current hand was dealt, in order."""
        return list(self.hist)


# ---------------------------------------------------------------- information set

class InfoSet(ABC):
    """The constraints one observation implies, and a sampler of consistent worlds.

    Subclasses implement :meth:`problem` (the unseen cards, the hidden locations with
    their capacities, who may hold each card, hidden non-card choices) and
    :meth:`world` (build the complete world from one assignment). :meth:`sample`
    draws through :mod:`engine.sampling` and is uniform over physical deals.
    """

    __slots__ = ("observation", "seat", "_sampler")

    def __init__(self, observation: Mapping[str, Any]) -> None:
        self.observation = observation
        self.seat: int = int(observation["seat"])
        self._sampler: Sampler | None = None

    @abstractmethod
    def problem(self) -> SamplingProblem:
        """The sampling problem of this information set (see :class:`engine.sampling.SamplingProblem`)."""

    @abstractmethod
    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> State:
        """The complete world given one assignment of unseen cards to hidden locations.

        :param assignment: per location of :meth:`problem`, its cards (in stock order for
            ordered locations).
        :param choices: one value per hidden choice of the problem.
        :param rng: source of fresh chance keys for hands not yet dealt.
        :raises InconsistentObservationError: (or ``IllegalActionError`` while replaying) when
            the assignment is not consistent with the observation.
        """

    @property
    def sampler(self) -> Sampler:
        """The exact sampler of :meth:`problem`, built on first use."""
        if self._sampler is None:
            self._sampler = Sampler(self.problem())
        return self._sampler

    def sample(self, rng: random.Random) -> State:
        """A complete world for the current hand, uniform over physical deals consistent with the observation.

        :raises InconsistentObservationError: if none exists.
        """
        assignment, choices = self.sampler.sample(rng)
        return self.world(assignment, choices, rng)

    def count(self) -> int:
        """Number of physical deals (times hidden-choice combinations) consistent with the constraints."""
        return self.sampler.total


__all__ = [
    "Action", "Game", "InfoSet", "Option", "Outcome", "SamplingProblem", "Seat", "State",
    "InconsistentObservationError", "int_at_least", "rank_rewards", "ranks_from_results",
    "SnapshotState", "seat_option", "seat_or_random", "seat_ranks_from_sides", "field",
]
