"""Synthetic tournaments for the report tests and bench: a results folder written through the
arena's own journal (:func:`arena.journal.record_of` + :class:`arena.journal.Journal`), with a
``tournament.json`` whose schedule lists every match, so :func:`arena.results.standings` reads
it exactly as it reads a real run.

Bots have a hidden strength (normal, fixed seed); each match seats ``players`` bots of a random
lineup, and the seat ranks follow strength plus Gumbel noise (a Plackett–Luce draw). Names vary
in length (some long) so the page's labels are tested with awkward names.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

from arena.journal import Journal, record_of
from arena.specs import MatchSpec

SYLLABLES = ("ka", "lo", "mi", "ren", "to", "sha", "vi", "dor", "el", "qu", "zan", "bri", "no", "ux", "fe")


def bot_names(n: int, seed: int = 1) -> list[str]:
    """``n`` distinct bot names of 3 to ~28 characters (every 17th one long)."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        k = 5 if len(out) % 17 == 16 else rng.randint(1, 3)
        name = "".join(rng.choice(SYLLABLES) for _ in range(k)) + ("-bot" if len(out) % 7 == 3 else "")
        name = f"{name}{len(out)}" if name in seen else name
        seen.add(name)
        out.append(name)
    return out


def synth_folder(path: str | Path, n_bots: int, n_matches: int, players: int = 3, seed: int = 7,
                 game: str = "agram", name: str = "synthetic") -> tuple[Path, dict[str, float]]:
    """Write a results folder of ``n_matches`` rated matches among ``n_bots`` bots.

    :returns: the folder and each bot's hidden strength.
    """
    rng = random.Random(seed)
    folder = Path(path)
    bots = bot_names(n_bots, seed)
    strength = {b: rng.gauss(0.0, 1.0) for b in bots}
    schedule: dict[str, str] = {}
    journal = Journal(folder)
    try:
        for m in range(n_matches):
            seats = rng.sample(bots, players)
            lineup = tuple(sorted(seats))
            mid = f"{name}/m{m:07d}/d00000/r00"
            fp = f"fp{m:x}"
            spec = MatchSpec(match_id=mid, tournament=name, token=f"t{m}", game=game, options={}, players=players,
                             deal_index=m, deal_seed=m, rotation=0, lineup=lineup, seats=tuple(seats),
                             teams=tuple((i,) for i in range(players)), bot_seeds=tuple(range(players)),
                             fingerprint=fp)
            perf = [strength[b] - math.log(-math.log(rng.random() or 1e-12)) for b in seats]
            order = sorted(range(players), key=lambda i: -perf[i])
            ranks = [0] * players
            for r, i in enumerate(order):
                ranks[i] = 0 if r == 0 else 1  # agram: one winner per match
            res = {"status": "ok", "outcome": {"ranks": ranks, "scores": [int(r == 0) for r in ranks]},
                   "faults": [], "move_ms": [[round(rng.uniform(0.05, 4.0), 3) for _ in range(6)] for _ in seats],
                   "actions": []}
            journal.append(record_of(spec, res, game_version=1))
            schedule[mid] = fp
    finally:
        journal.close()
    meta = {"name": name, "game": game, "players": players, "options": {}, "bots": bots, "deals": 1,
            "partners": "self", "ratings": {"draw_probability": "auto", "tau": "default", "fixed": []},
            "rate_forfeits": False, "schedule": schedule}
    (folder / "tournament.json").write_text(json.dumps(meta))
    return folder, strength
