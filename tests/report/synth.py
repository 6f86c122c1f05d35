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

from arena import tables
from arena.journal import Journal, record_of
from arena.ratings import RatingResult
from arena.specs import MatchSpec
from arena.tables import Standings

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


def synth_standings(n_bots: int, n_matches: int, seed: int = 3) -> Standings:
    """Standings of a synthetic field without a journal (for sizes a journal cannot reach in a test):
    leaderboard rows, a dense crosstable (every pair met — the page's worst case), reliability
    rows and a TrueSkill history of ``n_matches`` rated matches of 3 bots each; no records."""
    rng = random.Random(seed)
    bots = bot_names(n_bots, seed)
    mu = {b: rng.gauss(25, 3) for b in bots}
    sigma = {b: rng.uniform(0.8, 2.5) for b in bots}
    steps = [(round(rng.gauss(25, 4), 2), round(rng.uniform(0.8, 8.3), 2)) for _ in range(4096)]
    history = [{b: steps[(i * 7 + k) % 4096] for k, b in enumerate(rng.sample(bots, 3))} for i in range(n_matches)]
    rows = []
    for b in sorted(bots, key=lambda b: -(mu[b] - 3 * sigma[b])):
        m = rng.randint(2000, 4000)
        w = rng.randint(0, m)
        s = w / m
        rows.append({"bot": b, "mu": mu[b], "sigma": sigma[b], "conservative": mu[b] - 3 * sigma[b], "matches": m,
                     "wins": w, "win_rate": s, "mean_rank": 1 - s, "score": s, "score_low": max(0, s - .02),
                     "score_high": min(1, s + .02), "faults": 0, "forfeits": 0})
    for i, r in enumerate(rows):
        r["rank"] = i + 1
        r["p_above_next"] = tables.skill_above(r, rows[i + 1]) if i + 1 < len(rows) else None
    cross = {a: {b: {"score": rng.random(), "matches": rng.randint(1, 20)} for b in bots if b != a} for a in bots}
    rel = {b: {"faults": dict.fromkeys(tables.FAULT_CLASSES, 0), "moves": 10_000, "p50_ms": 1.2, "p99_ms": 7.5,
               "first_fault": None} for b in bots}
    meta = {"name": f"field-{n_bots}", "game": "agram", "players": 3, "bots": bots, "ratings": {}}
    return Standings(meta["name"], meta, [], RatingResult({b: (mu[b], sigma[b]) for b in bots}, history), rows,
                     cross, rel, {"factor": float("nan"), "blocks": 0})
