"""Error hierarchy of cardarena.

``CardArenaError`` is the root of every error the project raises on purpose.
Rules errors (raised by the engine) are kept apart from bot faults and
configuration errors (raised by :mod:`arena`, which subclass the same root).
"""

from __future__ import annotations


class CardArenaError(Exception):
    """Root of every error raised on purpose by cardarena."""


class RulesError(CardArenaError):
    """A request that the rules of a game do not allow."""


class IllegalActionError(RulesError):
    """An action that is not legal in the current state.

    The message names the action and the legal set, e.g.
    ``agram: 'play 9h' is not legal for seat 1; legal: play 5h, play Th``.
    """

    def __init__(self, game: str, action: object, legal: list[str] | None = None,
                 seat: int | None = None, reason: str | None = None) -> None:
        self.game = game
        self.action = action
        self.legal = legal
        self.seat = seat
        parts = [f"{game}: {action!r} is not legal"]
        if seat is not None:
            parts[0] += f" for seat {seat}"
        if reason:
            parts.append(reason)
        if legal is not None:
            shown = ", ".join(legal[:40]) + (" ..." if len(legal) > 40 else "")
            parts.append(f"legal: {shown}")
        super().__init__("; ".join(parts))


class ActionParseError(RulesError):
    """An action string that does not follow the game's notation."""


class OptionError(RulesError):
    """An unknown game option or a value the option does not accept.

    The message names the game, the option key and what is expected.
    """


class PlayerCountError(RulesError):
    """A number of players the game does not support."""


class GameOverError(RulesError):
    """An action or query that needs a non-terminal state (or the reverse)."""


class InconsistentObservationError(RulesError):
    """An observation from which no world can be built (no consistent deal).

    Raised by ``Game.infoset`` / ``InfoSet.sample`` when the constraints leave
    zero completions; it means the observation was corrupted or the game's
    inference is wrong.
    """


class UnknownGameError(CardArenaError):
    """A game name that is not in the registry."""
