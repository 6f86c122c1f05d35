"""cardarena engine: pure game logic (no I/O, no processes, no Ray).

The contract every game implements lives in :mod:`engine.core`; the one exact
determinization sampler in :mod:`engine.sampling`; the explicit game table in
:mod:`engine.registry`.
"""

ENGINE_VERSION = "1"

__all__ = ["ENGINE_VERSION"]
