"""Random-playout matches per second for every registered game, and the sampler's samples per second.

Iterates over the registry and each game's ``Game.configs`` (no per-game code).
Prints one line per (game, config): ``<game> <players>p <options> <matches/s> <samples/s>``.
Run: ``python bench/engine_playouts.py [--seconds S] [GAME ...]``; record figures in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from engine import registry


def playouts_per_second(game, n, opts, seconds: float) -> tuple[float, float]:
    """(matches/s, mean actions per match) of uniformly random playouts for ``seconds``."""
    rng = random.Random(1)
    done = actions = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s = game.new_match(n, rng.getrandbits(62), **opts)
        while not s.is_terminal():
            legal = s.legal_actions()
            s.apply(legal[rng.randrange(len(legal))])
            actions += 1
        done += 1
    dt = time.perf_counter() - t0
    return done / dt, actions / max(done, 1)


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
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        infos[done % len(infos)].sample(rng)
        done += 1
    return done / (time.perf_counter() - t0)


def main() -> None:
    """Print the figures for every game (or the games named)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", help="games to run (default: every registered game)")
    ap.add_argument("--seconds", type=float, default=1.5, help="time per measurement")
    args = ap.parse_args()
    print(f"# python {platform.python_version()} on {platform.machine()}, one core")
    print(f"{'game':<14} {'config':<34} {'matches/s':>10} {'actions':>8} {'samples/s':>10}")
    for name in args.games or registry.names():
        game = registry.get_game(name)
        for n, opts in game.configs:
            mps, acts = playouts_per_second(game, n, opts, args.seconds)
            sps = samples_per_second(game, n, opts, args.seconds)
            cfg = f"{n}p {json.dumps(opts, separators=(',', ':')) if opts else ''}"
            print(f"{name:<14} {cfg:<34} {mps:>10.1f} {acts:>8.1f} {sps:>10.0f}", flush=True)


if __name__ == "__main__":
    main()
