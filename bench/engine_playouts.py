"""Random-playout matches, search rollouts and sampler samples per second for every registered game.

Iterates over the registry and each game's ``Game.configs`` (no per-game code).
Prints one line per (game, config): ``<game> <players>p <options> <matches/s> <actions>
<rollouts/s> <kernel> <samples/s>``: matches/s is whole matches by the per-move loop
(``legal_actions`` + ``apply``, uniform); rollouts/s is whole hands from a fresh deal through
:func:`engine.search.rollout.rollout_rewards` with ``hand_rollouts`` (what every ISMCTS / PIMC
rollout runs: the game's ``rollout_action``, and its kernel ``Game.playout`` or
``finish_hand`` when it has one — ``kernel`` says which), a clone included.
Rates are per CPU second (``time.process_time``). When the compiled core is in use
(``engine/compiled.py``) every config is also measured right after in a subprocess with
``CARDARENA_PURE_PYTHON=1``, printed as three more columns (``--no-pure`` skips it).
Run: ``python bench/engine_playouts.py [--seconds S] [--no-pure] [GAME ...]``; record figures in docs/benchmarks.md.
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

from engine import compiled, registry
from engine.search.rollout import rollout_rewards


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


def main() -> None:
    """Print the figures for every game (or the games named)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", help="games to run (default: every registered game)")
    ap.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    ap.add_argument("--no-pure", action="store_true", help="skip the pure-Python side-by-side run")
    ap.add_argument("--config", type=int, default=None, help=argparse.SUPPRESS)  # one config (subprocess)
    args = ap.parse_args()
    side = not args.no_pure and compiled.mode() != "pure"
    print(f"# python {platform.python_version()} on {platform.machine()}, one core, per CPU second, "
          f"engine {compiled.mode()}")
    print(f"{'game':<14} {'config':<34} {'matches/s':>10} {'actions':>8} {'rollouts/s':>10} {'kernel':>7} "
          f"{'samples/s':>10}" + (f" {'pure m/s':>9} {'pure r/s':>9} {'pure s/s':>9}" if side else ""))
    for name in args.games or registry.names():
        game = registry.get_game(name)
        for ci, (n, opts) in enumerate(game.configs):
            if args.config is not None and ci != args.config:
                continue
            mps, acts = playouts_per_second(game, n, opts, args.seconds)
            rps = rollouts_per_second(game, n, opts, args.seconds)
            kind = kernel_kind(game, game.new_match(n, 1, **opts))
            sps = samples_per_second(game, n, opts, args.seconds)
            cfg = f"{n}p {json.dumps(opts, separators=(',', ':')) if opts else ''}"
            extra = ""
            if side:
                pm, pr, ps = pure_rates(name, ci, args.seconds)
                extra = f" {pm:>9.1f} {pr:>9.0f} {ps:>9.0f}"
            print(f"{name:<14} {cfg:<34} {mps:>10.1f} {acts:>8.1f} {rps:>10.0f} {kind:>7} {sps:>10.0f}{extra}",
                  flush=True)


def pure_rates(name: str, config: int, seconds: float) -> tuple[float, float, float]:
    """``(matches/s, rollouts/s, samples/s)`` of one config with ``CARDARENA_PURE_PYTHON=1``, in a
    subprocess (NaN on failure)."""
    env = dict(os.environ, **{compiled.PURE_ENV: "1"})
    cmd = [sys.executable, os.path.abspath(__file__), "--no-pure", "--seconds", str(seconds),
           "--config", str(config), name]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith(name + " "):
            parts = line.split()
            return float(parts[-5]), float(parts[-3]), float(parts[-1])
    return float("nan"), float("nan"), float("nan")


if __name__ == "__main__":
    main()
