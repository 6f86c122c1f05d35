"""The compiled core gives the same results as pure Python for the same seeds (engine/compiled.py).

The trace (random playouts and SO-ISMCTS searches with hand rollouts, every game) is computed
in this process and, with ``CARDARENA_PURE_PYTHON=1``, in a subprocess; they must agree move
by move. Needs the compiled build (``python setup.py build_ext --inplace`` or
``pip install -e ".[dev]"``); under CI a missing build fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from engine import compiled
from tests.conftest import require

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRACE = r'''
import json, random, sys
from engine import compiled, registry
from engine.search.ismcts import ISMCTS
out = {"mode": compiled.mode(), "games": {}}
for name in registry.names():
    game = registry.get_game(name)
    n, opts = game.configs[0]
    rng = random.Random(7)
    moves = []
    for d in range(2):                      # two random playouts
        s = game.new_match(n, 1000 + d, **opts)
        while not s.is_terminal():
            legal = s.legal_actions()
            a = legal[rng.randrange(len(legal))]
            moves.append(repr(a))
            s.apply(a)
        moves.append(repr(s.outcome().rewards(game.teams(n))))
    s = game.new_match(n, 99, **opts)       # searched moves from the first decisions
    search = ISMCTS(game, c=0.7, variant="so", hand_rollouts=True)
    for k in range(3):
        if s.is_terminal():
            break
        res = search.search(s.observation(s.current_player()), random.Random(k), iterations=60)
        moves.append(repr((res.action, sorted(map(repr, res.visits.items())))))
        s.apply(res.action)
    out["games"][name] = moves
print(json.dumps(out))
'''


def trace(pure: bool) -> dict:
    """The move trace, in a subprocess (pure Python forced or not)."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env[compiled.PURE_ENV] = "1" if pure else "0"
    proc = subprocess.run([sys.executable, "-c", TRACE], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_forced_pure_loads_sources() -> None:
    env = dict(os.environ, PYTHONPATH=ROOT, **{compiled.PURE_ENV: "1"})
    code = "import engine.sampling as s, engine.compiled as c; print(s.__file__, c.mode())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    assert out[0].endswith(os.path.join("engine", "sampling.py"))
    assert out[1] == "pure"


def test_status_names_every_game() -> None:
    st = compiled.status()
    assert "engine.sampling" in st and "engine.search.ismcts" in st
    for g in ("agram", "argute", "cuckoo", "cuttle", "gargon", "guinote", "sedma", "whiskey_poker"):
        assert f"engine.games.{g}.state" in st
    assert set(st.values()) <= {"compiled", "pure", "stale"}


@pytest.mark.slow
def test_compiled_and_pure_agree_move_by_move() -> None:
    require(compiled.mode() == "compiled" or bool(os.environ.get("CI")),
            "compiled core not built (python setup.py build_ext --inplace)")
    fast, slow = trace(False), trace(True)
    assert fast["mode"] == "compiled", compiled.status()
    assert slow["mode"] == "pure"
    assert fast["games"].keys() == slow["games"].keys()
    for name, moves in slow["games"].items():
        got = fast["games"][name]
        assert len(moves) > 10, name
        for i, (a, b) in enumerate(zip(moves, got)):
            assert a == b, f"{name}: move {i} differs: pure {a} vs compiled {b}"
        assert len(moves) == len(got), name


def test_an_extension_older_than_its_pxd_is_stale(tmp_path, monkeypatch):
    # a typed module's .pxd changes its compiled code: editing only the .pxd must not run the old build
    import importlib.machinery
    import time as _time

    pkg = tmp_path / "games" / "toy"
    pkg.mkdir(parents=True)
    (pkg / "rollout.py").write_text("x = 1\n")
    ext = pkg / ("rollout" + importlib.machinery.EXTENSION_SUFFIXES[0])
    ext.write_bytes(b"")
    monkeypatch.setattr(compiled, "ENGINE_DIR", str(tmp_path))
    name = "engine.games.toy.rollout"
    past = _time.time() - 100
    os.utime(pkg / "rollout.py", (past, past))
    assert not compiled._stale(name)
    (pkg / "rollout.pxd").write_text("cdef int x\n")  # newer than the extension
    os.utime(ext, (past + 10, past + 10))
    assert compiled._stale(name)
    os.utime(ext, None)  # rebuilt after the .pxd
    assert not compiled._stale(name)
