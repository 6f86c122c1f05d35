"""ISMCTS iterations per second per game, from a fixed set of positions, on one core.

For every registered game: the setting of ``bench/strength.py`` (the first one for that
game; otherwise the game's first ``configs`` entry), the first decision of deals 0..P-1
(deal seeds from a fixed salt: "from the first trick"), ``--iterations`` SO-ISMCTS
iterations from each with hand rollouts (as the strength runs use them). Prints one line
per game, ``<game> <iterations/s>``, where the rate is iterations per CPU second of this
process (``time.process_time``), so a busy machine slows the figure less than wall time
would. Details (players, options, wall rate) go to stderr. No network.

``--openspiel`` adds, in the same run, OpenSpiel's ISMCTS (Python and C++ bots, random
rollouts, ``uct_c`` = 0.7, unlimited world samples) on its ``oh_hell`` and ``hearts``
games and on ``bridge`` card play (``use_double_dummy_result=false``, after a fixed 1NT
auction) from their first decision, printed as ``openspiel-<impl>:<game> <iterations/s>``,
and the ratios to this engine's comparable trick-taking games (Agram 3-player for
``oh_hell``, Guiñote 4-player for ``hearts``, Sedma 4-player for ``bridge``). OpenSpiel runs in a subprocess of the
git-ignored virtual environment ``bench/.venv-openspiel``, created once with pip
(``open_spiel`` from PyPI; never a project dependency), because it can segfault.

Compiled core: when this process runs the compiled engine (``engine/compiled.py``), each
game is also measured right after in a subprocess with ``CARDARENA_PURE_PYTHON=1`` and the
line reads ``<game> <compiled it/s> pure <pure it/s> x<ratio>`` (``--no-pure`` skips it).

Run: ``python bench/ismcts_speed.py [--iterations N] [--positions P] [--openspiel] [--no-pure] [GAME[:PLAYERS] ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, ROOT)
sys.path.insert(0, BENCH)

from strength import SETTINGS  # noqa: E402

from engine import compiled, registry  # noqa: E402
from engine.search.ismcts import ISMCTS  # noqa: E402
from engine.seeds import deal_seed  # noqa: E402

VENV = os.path.join(BENCH, ".venv-openspiel")
#: OpenSpiel game -> (our game, players, options) compared with it.
COMPARE: dict[str, tuple[str, int, dict]] = {"oh_hell": ("agram", 3, {}), "hearts": ("guinote", 4, {}), "bridge": ("sedma", 4, {})}
#: OpenSpiel game -> its ``pyspiel.load_game`` string; bridge is its card play only: after the deal
#: the runner bids a fixed auction (1NT by North, three passes), so the first decision is the lead.
LOAD = {"oh_hell": "oh_hell", "hearts": "hearts", "bridge": "bridge(use_double_dummy_result=false)"}

OPENSPIEL_RUNNER = r'''
import json, sys, time, random
import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as py_ismcts
from open_spiel.python.algorithms import mcts as py_mcts
games, iters, positions, impls = sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
AUCTION = {"bridge": (59, 52, 52, 52)}  # 1NT, pass, pass, pass (OpenSpiel's bridge action ids)
for label in games:
    name = label.split("(")[0]
    game = pyspiel.load_game(label)
    for impl in impls:
        done = 0
        cpu = wall = 0.0
        for p in range(positions):
            rng = random.Random(p)
            state = game.new_initial_state()
            while state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            for a in AUCTION.get(name, ()):
                state.apply_action(a)
            if impl == "cpp":
                ev = pyspiel.RandomRolloutEvaluator(1, p)
                bot = pyspiel.ISMCTSBot(p, ev, 0.7, iters, -1, pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                                        False, False)
            else:
                ev = py_mcts.RandomRolloutEvaluator(1, np.random.RandomState(p))
                bot = py_ismcts.ISMCTSBot(game, ev, 0.7, iters, random_state=np.random.RandomState(p))
            c0, w0 = time.process_time(), time.perf_counter()
            bot.step(state)
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
            done += iters
        print(json.dumps({"game": name, "impl": impl, "iterations": done, "cpu_s": cpu, "wall_s": wall}), flush=True)
'''


def setting_for(game, players: int | None = None) -> tuple[int, dict]:
    """``(players, options)`` benchmarked for ``game``: its first strength setting (of ``players``
    seats when given), else its first config (``players`` seats and no options when given)."""
    for _, name, n, opts in SETTINGS:
        if name == game.name and players in (None, n):
            return n, dict(opts)
    if players is not None:
        return players, {}
    return game.configs[0] if game.configs else (game.min_players, {})


def first_decisions(game, n: int, opts: dict, count: int) -> list[dict]:
    """Observations of the seat to act at the first real decision (two or more legal moves) of deals 0..count-1."""
    out = []
    for d in range(count):
        s = game.new_match(n, deal_seed("ismcts-speed", game.name, d), **opts)
        while not s.is_terminal() and len(s.legal_actions()) == 1:
            s.apply(s.legal_actions()[0])
        out.append(s.observation(s.current_player()))
    return out


def measure(game, n: int, opts: dict, iterations: int, positions: int,
            opponent_model: str = "tree") -> tuple[float, float]:
    """``(iterations per CPU second, iterations per wall second)`` of SO-ISMCTS with hand rollouts."""
    search = ISMCTS(game, c=0.7, variant="so", hand_rollouts=True, opponent_model=opponent_model)
    obs = first_decisions(game, n, opts, positions)
    done = 0
    cpu = wall = 0.0
    for i, o in enumerate(obs):
        c0, w0 = time.process_time(), time.perf_counter()
        res = search.search(o, random.Random(i), iterations=iterations)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        done += res.iterations
    return done / cpu, done / wall


def pure_rate(name: str, args: argparse.Namespace) -> float | None:
    """Iterations per CPU second of ``name`` with pure Python forced, in a subprocess (``None`` on failure)."""
    env = dict(os.environ, **{compiled.PURE_ENV: "1"})
    cmd = [sys.executable, os.path.abspath(__file__), "--no-pure", "--iterations", str(args.iterations),
           "--positions", str(args.positions), "--opponent-model", args.opponent_model, name]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == name:
            return float(parts[1])
    return None


def ensure_venv() -> str:
    """The Python of ``bench/.venv-openspiel``, creating the environment with pip on first use.

    :raises subprocess.CalledProcessError: if venv creation or the install fails.
    """
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        print(f"# creating {VENV}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    if subprocess.run([py, "-c", "import pyspiel"], capture_output=True).returncode != 0:
        print(f"# installing open_spiel into {VENV}", file=sys.stderr, flush=True)
        subprocess.run([py, "-m", "pip", "install", "--quiet", "open_spiel"], check=True)
    return py


def openspiel_rates(iterations: int, positions: int) -> dict[tuple[str, str], float | str]:
    """``{(impl, game): iterations per CPU second}`` of OpenSpiel's ISMCTS, or an error text per entry.

    Each implementation runs in its own subprocess (a segfault loses only that entry).
    """
    py = ensure_venv()
    out: dict[tuple[str, str], float | str] = {}
    for impl in ("cpp", "python"):
        for g in COMPARE:
            its = iterations if impl == "cpp" else max(20, iterations // 5)
            proc = subprocess.run([py, "-c", OPENSPIEL_RUNNER, LOAD[g], str(its), str(positions), impl],
                                  capture_output=True, text=True, timeout=1800)
            lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
            if proc.returncode != 0 or not lines:
                out[(impl, g)] = f"failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"
            else:
                rec = lines[0]
                out[(impl, g)] = rec["iterations"] / rec["cpu_s"]
    return out


def main() -> None:
    """Print ``<game> <iterations/s>`` per game (and the OpenSpiel comparison with ``--openspiel``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*",
                    help="games, GAME or GAME:PLAYERS (default: every registered game, its strength setting)")
    ap.add_argument("--iterations", type=int, default=400, help="iterations per position")
    ap.add_argument("--positions", type=int, default=5, help="positions (deals) per game")
    ap.add_argument("--opponent-model", choices=("tree", "rollout"), default="tree",
                    help="ISMCTS opponent model (engine/search/ismcts.py)")
    ap.add_argument("--openspiel", action="store_true", help="compare with OpenSpiel's ISMCTS (oh_hell, hearts, bridge card play)")
    ap.add_argument("--no-pure", action="store_true", help="skip the pure-Python side-by-side run")
    args = ap.parse_args()
    side = not args.no_pure and compiled.mode() != "pure"
    print(f"# engine {compiled.mode()} (build: {compiled.build_status()})", file=sys.stderr)
    print(f"# python {platform.python_version()} on {platform.machine()}, one core, "
          f"{args.positions} positions x {args.iterations} iterations, SO, hand rollouts, "
          f"opponent model {args.opponent_model}; iterations per CPU second",
          file=sys.stderr)
    ours: dict[tuple[str, int, str], float] = {}

    def rate_of(name: str, n: int, opts: dict) -> float:
        """Our iterations per CPU second for ``name``, ``n`` players, ``opts`` (measured once, cached)."""
        key = (name, n, json.dumps(opts, sort_keys=True))
        if key not in ours:
            ours[key] = measure(registry.get_game(name), n, opts, args.iterations, args.positions)[0]
        return ours[key]

    for spec in args.games or registry.names():
        name, _, players = spec.partition(":")
        game = registry.get_game(name)
        n, opts = setting_for(game, int(players) if players else None)
        cpu_rate, wall_rate = measure(game, n, opts, args.iterations, args.positions, args.opponent_model)
        ours[(name, n, json.dumps(opts, sort_keys=True))] = cpu_rate
        pure = pure_rate(spec, args) if side else None
        extra = f" pure {pure:.0f} x{cpu_rate / pure:.2f}" if pure else ""
        print(f"{spec} {cpu_rate:.0f}{extra}", flush=True)
        print(f"#   {name}: {n}p {json.dumps(opts)}  wall {wall_rate:.0f}/s", file=sys.stderr, flush=True)
    if args.openspiel:
        rates = openspiel_rates(args.iterations, args.positions)
        for (impl, g), rate in rates.items():
            mine, n, opts = COMPARE[g]
            if isinstance(rate, str):
                print(f"openspiel-{impl}:{g} {rate}", flush=True)
                continue
            mine_rate = rate_of(mine, n, opts)
            print(f"openspiel-{impl}:{g} {rate:.0f}", flush=True)
            print(f"#   cardarena {mine} {n}p / openspiel-{impl} {g}: {mine_rate:.0f} / {rate:.0f} = "
                  f"{mine_rate / rate:.2f}", file=sys.stderr, flush=True)

if __name__ == "__main__":
    main()
