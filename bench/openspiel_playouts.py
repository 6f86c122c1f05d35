"""OpenSpiel's all-C++ random playouts, measured in a subprocess of ``bench/.venv-openspiel``.

Two figures per OpenSpiel game, per CPU second of that subprocess (``time.process_time``):

* ``playouts``: whole games from a fresh deal with uniformly random legal moves —
  ``pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)`` with
  ``pyspiel.make_uniform_random_bot`` C++ bots: the loop, the chance nodes (the deal), the
  bots and the state are C++; one Python call per game (as ours: one ``random_playout`` call).
* ``rollouts``: the random rollouts OpenSpiel's own searches run, ``RandomRolloutEvaluator``
  (C++; not callable from Python in 2.0.2) with ``R`` rollouts per evaluation inside a
  2-simulation ``ISMCTSBot`` from the first decision after the deal: ``2 R`` rollouts (from
  the root's determinization and from one child) per ``bot.step``, the deal not included.

Used by ``bench/engine_playouts.py``; OpenSpiel is never a project dependency (it runs in
its own venv because it can segfault; a failure gives an ``error`` entry, not a crash).
"""

from __future__ import annotations

import json
import os
import subprocess

BENCH = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(BENCH, ".venv-openspiel")
#: how to create the venv (printed when it is missing)
INSTALL = "python -m venv bench/.venv-openspiel && bench/.venv-openspiel/bin/pip install open_spiel"
#: OpenSpiel game -> (our game, players): trick-taking engines of similar size, not the same game
COMPARE = {"oh_hell": ("agram", 3), "hearts": ("guinote", 4)}
#: rollouts per RandomRolloutEvaluator evaluation (the ISMCTS set-up is amortized over them)
ROLLOUTS_PER_EVAL = 500

RUNNER = r'''
import json, random, sys, time
import pyspiel
name, seconds, per_eval = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
game = pyspiel.load_game(name)
bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(game.num_players())]
done = plies = 0
t0 = time.process_time()
while time.process_time() - t0 < seconds:
    state = game.new_initial_state()
    pyspiel.evaluate_bots(state, bots, done)
    plies += len(state.history())
    done += 1
fresh = done / (time.process_time() - t0)
ev = pyspiel.RandomRolloutEvaluator(per_eval, 7)
k = 0
cpu = 0.0
while cpu < seconds:
    rng = random.Random(k)
    state = game.new_initial_state()
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
    bot = pyspiel.ISMCTSBot(k, ev, 0.7, 2, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False)
    c0 = time.process_time()
    bot.step(state)
    cpu += time.process_time() - c0
    k += 1
print(json.dumps({"playouts": fresh, "plies": plies / max(done, 1), "rollouts": 2 * k * per_eval / cpu}))
'''


def venv_python() -> str | None:
    """The venv's Python if ``pyspiel`` imports there, else ``None`` (the side-by-side is skipped)."""
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        return None
    ok = subprocess.run([py, "-c", "import pyspiel"], capture_output=True, timeout=120).returncode == 0
    return py if ok else None


def version(py: str) -> str:
    """The installed ``open_spiel`` version (``?`` if unknown)."""
    code = "import importlib.metadata as m; print(m.version('open_spiel'))"
    proc = subprocess.run([py, "-c", code], capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() or "?"


def rates(py: str, game: str, seconds: float) -> dict[str, float | str]:
    """``{"playouts", "plies", "rollouts"}`` per CPU second for OpenSpiel ``game``, or ``{"error": text}``."""
    proc = subprocess.run([py, "-c", RUNNER, game, str(seconds), str(ROLLOUTS_PER_EVAL)],
                          capture_output=True, text=True, timeout=600)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        return {"error": f"openspiel {game} failed (exit {proc.returncode}): {tail[0]}"}
    return json.loads(lines[0])
