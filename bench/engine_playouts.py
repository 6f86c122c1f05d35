"""Random-playout matches, search rollouts and sampler samples per second for every registered game.

Iterates over the registry and each game's ``Game.configs`` (no per-game code).
Prints one line per (game, config): ``<game> <players>p <options> <matches/s> <actions>
<playouts/s> <rollouts/s> <kernel> <samples/s>``: matches/s is whole matches by the per-move
loop (``legal_actions`` + ``apply``, uniform); playouts/s is whole matches from a fresh deal
(``new_match`` included) by :func:`engine.playouts.random_playout` (uniform too, the game's
rollout kernel where its rollout policy is uniform); rollouts/s is whole hands from a dealt state through
:func:`engine.search.rollout.rollout_rewards` with ``hand_rollouts`` (what every ISMCTS / PIMC
rollout runs: the game's ``rollout_action``, and its kernel ``Game.playout`` or
``finish_hand`` when it has one — ``kernel`` says which), a clone included.
Rates are per CPU second (``time.process_time``). When the compiled core is in use
(``engine/compiled.py``) every config is also measured right after in a subprocess with
``CARDARENA_PURE_PYTHON=1``, printed as four more columns (``--no-pure`` skips it).

Then, when OpenSpiel is importable in ``bench/.venv-openspiel`` (created once with
``python -m venv bench/.venv-openspiel && bench/.venv-openspiel/bin/pip install open_spiel``,
never a project dependency; ``--no-openspiel`` skips it), the side-by-side with its all-C++
random playouts (:mod:`bench.openspiel_playouts`), ``--rounds`` interleaved rounds of
cardarena compiled / pure / OpenSpiel: Agram 3p against ``oh_hell`` (3p), Guiñote 4p against
``hearts``; medians and ratios at the end.
Run: ``python bench/engine_playouts.py [--seconds S] [--no-pure] [--no-openspiel] [--rounds R] [GAME ...]``;
record figures in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(BENCH))
sys.path.insert(0, BENCH)

import openspiel_playouts  # noqa: E402

from engine import compiled, registry  # noqa: E402
from engine.playouts import random_playout  # noqa: E402
from engine.search.rollout import rollout_rewards  # noqa: E402


def playouts_per_second(game, n, opts, seconds: float) -> tuple[float, float]:
    """(matches/s, mean actions per match) of uniformly random playouts for ``seconds``."""
    rng = random.Random(1)
    done = actions = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        s = game.new_match(n, rng.getrandbits(62), **opts)
        while not s.is_terminal():
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
            actions += 1
        done += 1
    dt = time.process_time() - t0
    return done / dt, actions / max(done, 1)


def fresh_playouts_per_second(game, n, opts, seconds: float) -> float:
    """Whole matches per second from a fresh deal: ``new_match`` + :func:`random_playout`."""
    rng = random.Random(4)
    done = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for _ in range(20):
            random_playout(game, game.new_match(n, rng.getrandbits(62), **opts), rng)
        done += 20
    return done / (time.process_time() - t0)


def rollouts_per_second(game, n, opts, seconds: float) -> float:
    """Hand rollouts per second (clone + ``rollout_rewards(..., hand_rollouts=True)``) from 20 fresh deals."""
    rng = random.Random(3)
    starts = [game.new_match(n, rng.getrandbits(62), **opts) for _ in range(20)]
    teams = game.teams(n)
    done = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        for s in starts:
            rollout_rewards(game, s.clone(), rng, teams, s.hand_index(), True)
        done += len(starts)
    return done / (time.process_time() - t0)


def kernel_kind(game, state) -> str:
    """``playout`` (the game's rollout kernel), ``finish`` (``finish_hand``) or ``loop``."""
    if getattr(game, "playout", None) is not None:
        return "playout"
    return "finish" if getattr(state, "finish_hand", None) is not None else "loop"


def samples_per_second(game, n, opts, seconds: float) -> float:
    """Determinizations per second (``infoset.sample``) from mid-hand positions, infosets built once."""
    rng = random.Random(2)
    infos = []
    for _ in range(20):
        s = game.new_match(n, rng.getrandbits(62), **opts)
        depth = rng.randrange(1, 12)
        for _ in range(depth):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
        if not s.is_terminal():
            infos.append(game.infoset(s.observation(s.current_player())))
    if not infos:
        return float("nan")
    done = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        infos[done % len(infos)].sample(rng)
        done += 1
    return done / (time.process_time() - t0)


def measure(game, ci: int, seconds: float) -> dict[str, float | str]:
    """Every figure of config ``ci`` of ``game`` (per CPU second), keyed as :data:`COLUMNS`."""
    n, opts = game.configs[ci]
    mps, acts = playouts_per_second(game, n, opts, seconds)
    return {"matches": mps, "actions": acts, "playouts": fresh_playouts_per_second(game, n, opts, seconds),
            "rollouts": rollouts_per_second(game, n, opts, seconds),
            "kernel": kernel_kind(game, game.new_match(n, 1, **opts)),
            "samples": samples_per_second(game, n, opts, seconds)}


#: the columns of a measured line: (key, heading, format)
COLUMNS = (("matches", "matches/s", ">10.1f"), ("actions", "actions", ">8.1f"), ("playouts", "playouts/s", ">10.0f"),
           ("rollouts", "rollouts/s", ">10.0f"), ("kernel", "kernel", ">7"), ("samples", "samples/s", ">10.0f"))
#: the pure-Python side-by-side columns: (key, heading)
PURE = (("matches", "pure m/s"), ("playouts", "pure p/s"), ("rollouts", "pure r/s"), ("samples", "pure s/s"))
#: what the columns mean, printed above them (all rates per CPU second)
LEGEND = ("# matches/s   whole matches, uniform legal_actions + apply loop (actions: per match)\n"
          "# playouts/s  whole matches from a fresh deal (engine.playouts)\n"
          "# rollouts/s  hands from a dealt state, as ISMCTS/PIMC roll out; kernel: what they ran (playout = "
          "the game's rollout kernel, finish = its finish_hand, loop = the Python loop)\n"
          "# samples/s   determinizations from mid-hand information sets")
PURE_LEGEND = "\n# pure m/s, p/s, r/s, s/s: the same four rates with CARDARENA_PURE_PYTHON=1 (a subprocess)"


def main() -> None:
    """Print the figures for every game (or the games named), then the OpenSpiel side-by-side."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", help="games to run (default: every registered game)")
    ap.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    ap.add_argument("--no-pure", action="store_true", help="skip the pure-Python side-by-side run")
    ap.add_argument("--no-openspiel", action="store_true", help="skip the side-by-side with OpenSpiel")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the OpenSpiel side-by-side")
    ap.add_argument("--config", type=int, default=None, help=argparse.SUPPRESS)  # one config (subprocess)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one JSON line per config
    args = ap.parse_args()
    for name in args.games:
        if name not in registry.names():
            ap.error(f"unknown game {name!r}; registered: {', '.join(registry.names())}")
    if args.json:
        game = registry.get_game(args.games[0])
        print(json.dumps(measure(game, args.config or 0, args.seconds)), flush=True)
        return
    side = not args.no_pure and compiled.mode() != "pure"
    print(f"# python {platform.python_version()} on {platform.machine()}, one core, per CPU second, "
          f"engine {compiled.mode()}, load average {os.getloadavg()[0]:.1f}")
    print(LEGEND + (PURE_LEGEND if side else ""))
    names = args.games or registry.names()
    width = max([34] + [len(f"{n}p {json.dumps(o, separators=(',', ':')) if o else ''}")
                        for g in names for n, o in registry.get_game(g).configs])
    print(f"{'game':<14} {'config':<{width}} " + " ".join(f"{h:>{f[1:].split('.')[0]}}" for _, h, f in COLUMNS)
          + ("".join(f" {h:>9}" for _, h in PURE) if side else ""))
    for name in names:
        game = registry.get_game(name)
        for ci, (n, opts) in enumerate(game.configs):
            got = measure(game, ci, args.seconds)
            cfg = f"{n}p {json.dumps(opts, separators=(',', ':')) if opts else ''}"
            line = f"{name:<14} {cfg:<{width}} " + " ".join(f"{got[k]:{f}}" for k, _, f in COLUMNS)
            if side:
                pure = pure_rates(name, ci, args.seconds)
                line += "".join(f" {pure.get(k, float('nan')):>9.0f}" for k, _ in PURE)
            print(line, flush=True)
    if not args.no_openspiel:
        versus_openspiel(args.seconds, args.rounds, side)


def pure_rates(name: str, config: int, seconds: float) -> dict[str, float]:
    """:func:`measure`'s figures of one config with ``CARDARENA_PURE_PYTHON=1``, in a subprocess
    (empty on failure: the columns print ``nan``)."""
    env = dict(os.environ, **{compiled.PURE_ENV: "1"})
    cmd = [sys.executable, os.path.abspath(__file__), "--json", "--seconds", str(seconds),
           "--config", str(config), name]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            return {k: v for k, v in json.loads(line).items() if isinstance(v, float)}
    return {}


def versus_openspiel(seconds: float, rounds: int, side: bool) -> None:
    """The interleaved side-by-side with OpenSpiel's all-C++ random playouts (medians, ratios)."""
    py = openspiel_playouts.venv_python()
    if py is None:
        print(f"# OpenSpiel side-by-side skipped: open_spiel is not importable in {openspiel_playouts.VENV} "
              f"(install it there: {openspiel_playouts.INSTALL})")
        return
    print(f"# versus OpenSpiel {openspiel_playouts.version(py)}: {rounds} interleaved rounds "
          "(cardarena compiled, pure, OpenSpiel C++), per CPU second; load average "
          f"{os.getloadavg()[0]:.1f}")
    print("#   fresh = whole matches from a fresh deal, uniformly random legal moves (ours: new_match + "
          "random_playout; OpenSpiel: evaluate_bots with C++ uniform random bots from new_initial_state, "
          "chance nodes deal); after deal = hands/games from a dealt state (ours: clone + hand "
          "rollout_rewards; OpenSpiel: RandomRolloutEvaluator rollouts inside a 2-simulation C++ ISMCTSBot)")
    table: dict[tuple[str, str], list[float]] = {}
    for r in range(rounds):
        for og, (name, n) in openspiel_playouts.COMPARE.items():
            game = registry.get_game(name)
            ci = next(i for i, (m, o) in enumerate(game.configs) if m == n and not o)
            cfg = game.configs[ci]
            mine = {"playouts": fresh_playouts_per_second(game, *cfg, seconds),
                    "rollouts": rollouts_per_second(game, *cfg, seconds)}
            pure = pure_rates(name, ci, seconds) if side else {}
            theirs = openspiel_playouts.rates(py, og, seconds)
            row = [("ours", mine), ("pure", pure), ("openspiel", theirs)]
            for who, got in row:
                for k in ("playouts", "rollouts"):
                    if isinstance(got.get(k), float):
                        table.setdefault((f"{name} {n}p / {og}", f"{who} {k}"), []).append(got[k])
            print(f"round {r + 1} {name} {n}p: fresh {mine['playouts']:.0f} (pure {pure.get('playouts', float('nan')):.0f}) "
                  f"after deal {mine['rollouts']:.0f} (pure {pure.get('rollouts', float('nan')):.0f}) | "
                  f"{og}: fresh {theirs.get('playouts', float('nan')):.0f} after deal "
                  f"{theirs.get('rollouts', float('nan')):.0f} {theirs.get('error', '')}", flush=True)
    for pair in dict.fromkeys(p for p, _ in table):
        med = {who: statistics.median(v) for (p, who), v in table.items() if p == pair}
        parts = [f"{k} {med.get('ours ' + k, float('nan')):.0f} / {med.get('openspiel ' + k, float('nan')):.0f} = "
                 f"x{med.get('ours ' + k, float('nan')) / med.get('openspiel ' + k, float('nan')):.2f}"
                 + (f" (pure x{med['pure ' + k] / med['openspiel ' + k]:.2f})" if 'pure ' + k in med
                    and 'openspiel ' + k in med else "")
                 for k in ("playouts", "rollouts")]
        print(f"median {pair}: fresh {parts[0]}; after deal {parts[1]}", flush=True)


if __name__ == "__main__":
    main()
