"""Arena errors (subclasses of the root :class:`engine.errors.CardArenaError`).

Bot faults (``BotFault`` and its classes) are kept apart from configuration errors
(``ConfigError``) and from results-store errors (``JournalError``).
"""

from __future__ import annotations

from engine.errors import CardArenaError

#: said after a missing ``ready`` (a stall): the two causes met in practice.
LINE_HINT = ("end each reply with a newline and flush stdout after every line (C: fflush(stdout); "
             "Python: print(..., flush=True)); read stdin line by line, without waiting for end of "
             "input (awk: mawk -W interactive or gawk)")


class ArenaError(CardArenaError):
    """Root of the arena's errors."""


class ConfigError(ArenaError):
    """A tournaments.yaml problem; the message names the file, tournament and key."""


class JournalError(ArenaError):
    """A results folder that cannot be resumed (e.g. a changed match fingerprint)."""


class BotFault(ArenaError):
    """A bot misbehaved. ``fault_class`` is one of timeout, crash, illegal, protocol, stall."""

    fault_class = "fault"

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


class BotTimeout(BotFault):
    """No reply before the move deadline (move_ms + remaining bank + grace)."""

    fault_class = "timeout"


class BotCrashed(BotFault):
    """The process exited or closed stdout mid-match."""

    fault_class = "crash"


class BotIllegalAction(BotFault):
    """The reply named an action not in ``legal``."""

    fault_class = "illegal"


class ProtocolError(BotFault):
    """Malformed, oversized or unrequested output."""

    fault_class = "protocol"


class BotStall(BotFault):
    """No ``ready`` in reply to ``start`` in time."""

    fault_class = "stall"
