"""SIGTERM taken as Ctrl-C by the long commands (``arena run``, ``arena sprt``): a batch system's
or a service manager's stop ends a run the way an interrupt does, with what finished recorded."""

from __future__ import annotations


def terminate_as_interrupt() -> list[int]:
    """Make ``SIGTERM`` stop ``arena run`` or ``arena sprt`` like Ctrl-C: matches in progress are
    abandoned, finished ones stay recorded (and the tables are written; exit code 143).

    :returns: a list that receives the signal number when ``SIGTERM`` arrives.
    """
    import signal

    received: list[int] = []

    def on_term(signum, frame):
        """Raise ``KeyboardInterrupt`` in the main thread (once)."""
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (embedded use): leave SIGTERM alone
        pass
    return received
