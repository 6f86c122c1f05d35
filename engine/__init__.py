"""cardarena engine: pure game logic (no I/O, no processes, no Ray).

The contract every game implements lives in :mod:`engine.core`; the one exact
determinization sampler in :mod:`engine.sampling`; the explicit game table in
:mod:`engine.registry`.
"""

from engine import compiled as _compiled

_compiled.activate()  # CARDARENA_PURE_PYTHON=1 / stale builds load the .py (engine/compiled.py)

ENGINE_VERSION = "1"

__all__ = ["ENGINE_VERSION"]
