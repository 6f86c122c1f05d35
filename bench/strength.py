"""Duplicate strength of the ISMCTS bot against random, greedy and PIMC (issue 7, "Must show").

Every pairing plays duplicate blocks — one deal per block, played once per rotation (every
cyclic shift of the seats; in the 4-player partnership games ISMCTS fills one side and the
rotations swap sides) — as real bot processes through :func:`arena.batch.play_batch`.
ISMCTS's score in a match is its rank reward in [0, 1] (``engine.core.rank_rewards``:
1 = alone first, 0 = alone last, ties halve); a block's score is the mean over its
rotations, so equal strength scores 0.5 whatever the number of seats.

A pairing stops when the SPRT of :mod:`arena.stats` (H0: score 0.5, H1: 0.55,
α = β = 0.05, on block scores) decides — but not before ``--min-blocks`` blocks — or when
the bot processes of the pairing have used ``--cap-cpu-min`` CPU-minutes (the issue asks
for 20), or after ``--max-blocks`` blocks.

Resumable: each finished chunk of blocks is appended to
``<out>/<setting>__<opponent>.jsonl`` (one JSON line per block); a rerun replays the SPRT
from the file and continues where it stopped. ``--report`` rewrites the table between the
markers of ``docs/strength.md`` from every file found.

Run::

    python bench/strength.py --games agram-3p --opponents random --cap-cpu-min 3
    python bench/strength.py --report
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arena.batch import play_batch  # noqa: E402
from arena.specs import BotSpec, Clock, FaultPolicy, Limits, MatchSpec  # noqa: E402
from arena.stats import SPRT, bootstrap_ci  # noqa: E402
from engine import registry  # noqa: E402
from engine.core import rank_rewards  # noqa: E402
from engine.seeds import bot_seed, deal_seed  # noqa: E402

#: (setting label, game, players, options): short matches set through the games' own options
#: (one deal of Agram, single-hand Sedma, a short Whiskey Poker session, Argute to a low
#: target, one life of Cuckoo; Guiñote, Cuttle and Gargon as defined) and the 4-player
#: partnership variants.
SETTINGS: list[tuple[str, str, int, dict]] = [
    ("agram-3p", "agram", 3, {}),
    ("argute-3p", "argute", 3, {"target_score": 2, "max_hands": 12}),
    ("cuckoo-3p", "cuckoo", 3, {"lives": 1}),
    ("cuttle-2p", "cuttle", 2, {}),
    ("gargon-3p", "gargon", 3, {}),
    ("guinote-2p", "guinote", 2, {}),
    ("guinote-4p", "guinote", 4, {}),
    ("sedma-2p", "sedma", 2, {}),
    ("sedma-4p", "sedma", 4, {}),
    ("whiskey_poker-3p", "whiskey_poker", 3, {"hands_per_match": 3}),
]
OPPONENTS = ("random", "greedy", "pimc")
#: further opponents run on request: ``mo`` = the ISMCTS bot with ``--variant mo`` (SO against MO,
#: reported for the games with partially observable moves, Argute and Gargon).
EXTRA_OPPONENTS = ("mo",)
SALT = "cardarena-strength-v1"
MARK_BEGIN = "<!-- strength-table:begin -->"
MARK_END = "<!-- strength-table:end -->"


def bot_cmd(kind: str, iterations: int, opponent_model: str = "tree") -> tuple[str, ...]:
    """The command of a bot kind (``ismcts``, ``random``, ``greedy``, ``pimc``).

    :param opponent_model: the measured ISMCTS bot's ``--opponent-model`` (``tree``, the
        default, or ``rollout``).
    :raises ValueError: for an unknown kind.
    """
    if kind == "ismcts":
        extra = ("--opponent-model", opponent_model) if opponent_model != "tree" else ()
        return ("python", "bots/ismcts_bot.py", "--iterations", str(iterations), "--hand-rollouts", *extra)
    if kind == "mo":
        return ("python", "bots/ismcts_bot.py", "--iterations", str(iterations), "--hand-rollouts", "--variant", "mo")
    if kind == "pimc":
        return ("python", "bots/pimc_bot.py", "--iterations", str(iterations), "--hand-rollouts")
    if kind == "random":
        return ("python", "bots/random_bot.py")
    if kind == "greedy":
        return ("python", "bots/greedy_bot.py")
    raise ValueError(f"unknown bot kind {kind!r}; expected ismcts, mo, random, greedy or pimc")


def seatings(n: int, teams: list[list[int]]) -> list[tuple[list[int], int]]:
    """Per rotation, the ISMCTS seats and one of them (whose reward is the score).

    Free-for-all: one ISMCTS seat, every cyclic shift (``n`` rotations). Two sides of
    several seats (partnerships): ISMCTS fills one side, two rotations swapping sides.
    """
    if len(teams) == 2 and all(len(t) > 1 for t in teams):
        return [(list(teams[0]), teams[0][0]), (list(teams[1]), teams[1][0])]
    return [([r], r) for r in range(n)]


def make_specs(label: str, game: str, n: int, options: dict, opponent: str, deals: list[int],
               rotation: int, ismcts_seats: list[int], iterations: int,
               opponent_model: str = "tree") -> tuple[list[MatchSpec], dict[str, BotSpec]]:
    """The match specifications of one rotation over ``deals`` and the bots they name."""
    g = registry.get_game(game)
    teams = g.teams(n)
    names = []
    opp_i = 0
    for seat in range(n):
        if seat in ismcts_seats:
            names.append("ismcts" if len(ismcts_seats) == 1 or seat == ismcts_seats[0] else f"ismcts-{seat}")
        else:
            names.append(opponent if opp_i == 0 else f"{opponent}-{opp_i}")
            opp_i += 1
    bots = {}
    for name in names:
        kind = name.split("-")[0]
        model = opponent_model if kind == "ismcts" else "tree"
        bots[name] = BotSpec(name=name, cmd=bot_cmd(kind, iterations, model), cwd=ROOT)
    seats = tuple(names)
    lineup = tuple(sorted(set(names)))
    specs = []
    for d in deals:
        mid = f"strength-{label}/{'+'.join(lineup)}/d{d:05d}/r{rotation:02d}"
        specs.append(MatchSpec(
            match_id=mid, tournament=f"strength-{label}", token=f"s{d}-{rotation}", game=game,
            options=dict(options), players=n, deal_index=d, deal_seed=deal_seed(SALT, game, d),
            rotation=rotation, lineup=lineup, seats=seats, teams=tuple(tuple(t) for t in teams),
            bot_seeds=tuple(bot_seed(SALT, mid, s) for s in range(n)), fingerprint="strength",
            clock=Clock(move_ms=120_000, bank_ms=600_000, startup_ms=30_000, grace_ms=20),
            faults=FaultPolicy(policy="forfeit"), limits=Limits(), wall_s=3600.0))
    return specs, bots


def children_cpu_s() -> float:
    """CPU seconds (user + system) of every reaped child process so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def pairing_path(out: str, label: str, opponent: str, iterations: int, opponent_model: str = "tree") -> str:
    """The file of one pairing: ``<label>__<opponent>.jsonl`` (``__it<N>`` added unless 1,000
    iterations, ``__om-<model>`` unless the tree opponent model)."""
    suffix = "" if iterations == 1000 else f"__it{iterations}"
    if opponent_model != "tree":
        suffix += f"__om-{opponent_model}"
    return os.path.join(out, f"{label}__{opponent}{suffix}.jsonl")


def parse_pairing_name(name: str) -> tuple[str, str, int, str] | None:
    """``(label, opponent, iterations, opponent model)`` of a pairing file name, or None."""
    if not name.endswith(".jsonl"):
        return None
    parts = name[:-len(".jsonl")].split("__")
    if len(parts) < 2:
        return None
    label, opp, iterations, model = parts[0], parts[1], 1000, "tree"
    for extra in parts[2:]:
        if extra.startswith("it") and extra[2:].isdigit():
            iterations = int(extra[2:])
        elif extra.startswith("om-"):
            model = extra[3:]
        else:
            return None
    return label, opp, iterations, model


def load_blocks(path: str) -> list[dict]:
    """The block records of one pairing file (empty if absent)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def sprt_of(blocks: list[dict]) -> SPRT:
    """An SPRT (H0 0.5, H1 0.55, α = β = 0.05) fed with the block scores in order."""
    t = SPRT(p0=0.5, p1=0.55, alpha=0.05, beta=0.05)
    for b in blocks:
        t.add(sum(b["scores"]) / len(b["scores"]))
    return t


def run_pairing(label: str, game: str, n: int, options: dict, opponent: str, args) -> None:
    """Play chunks of blocks of one pairing until a stopping rule holds; append them to its file."""
    path = pairing_path(args.out, label, opponent, args.iterations, args.opponent_model)
    os.makedirs(args.out, exist_ok=True)
    g = registry.get_game(game)
    teams = g.teams(n)
    rots = seatings(n, teams)
    while True:
        blocks = load_blocks(path)
        cpu = sum(b["cpu_s"] for b in blocks)
        t = sprt_of(blocks)
        decision = t.decision() if len(blocks) >= args.min_blocks else None
        if decision or cpu >= args.cap_cpu_min * 60 or len(blocks) >= args.max_blocks:
            why = decision or ("cpu cap" if cpu >= args.cap_cpu_min * 60 else "block cap")
            m, lo, hi = bootstrap_ci([b["scores"] for b in blocks])
            print(f"{label} vs {opponent}: {len(blocks)} blocks, score {m:.3f} [{lo:.3f}, {hi:.3f}], "
                  f"LLR {t.llr():.2f}, stop: {why}, cpu {cpu / 60:.1f} min", flush=True)
            return
        start = blocks[-1]["deal"] + 1 if blocks else 0
        deals = list(range(start, start + args.chunk))
        scores: dict[int, list[float]] = {d: [] for d in deals}
        faults: dict[int, int] = {d: 0 for d in deals}
        c0, w0 = children_cpu_s(), time.time()
        for r, (iseats, scorer) in enumerate(rots):
            specs, bots = make_specs(label, game, n, options, opponent, deals, r, iseats, args.iterations,
                                     args.opponent_model)
            for spec, res in zip(specs, play_batch(specs, bots, None)):
                if res.outcome is None:  # aborted: count as a draw-less missing result
                    raise RuntimeError(f"{spec.match_id} aborted: {res.faults}")
                rew = rank_rewards(res.outcome["ranks"], teams)
                scores[spec.deal_index].append(rew[scorer])
                faults[spec.deal_index] += len(res.faults)
                for f in res.faults:
                    print(f"  fault {f.cls} seat {f.seat} ({f.bot}) in {spec.match_id}: {f.detail}", flush=True)
        cpu_chunk = children_cpu_s() - c0
        wall = time.time() - w0
        with open(path, "a", encoding="utf-8") as f:
            for d in deals:
                f.write(json.dumps({"deal": d, "scores": scores[d], "cpu_s": cpu_chunk / len(deals),
                                    "wall_s": wall / len(deals), "faults": faults[d],
                                    "iterations": args.iterations, "options": options, "players": n}) + "\n")
        done = load_blocks(path)
        print(f"  {label} vs {opponent}: {len(done)} blocks, mean {sum(sum(b['scores']) / len(b['scores']) for b in done) / len(done):.3f}, "
              f"LLR {sprt_of(done).llr():.2f}, cpu {sum(b['cpu_s'] for b in done) / 60:.1f} min", flush=True)


def report(out: str, doc: str) -> str:
    """The Markdown table of every pairing file in ``out``; replaces the marked part of ``doc`` if present.

    Rows follow ``SETTINGS`` and the opponents; the 1,000-iteration pairings not run yet
    are listed as ``not run``.
    """
    rows = ["| setting | opponent | iterations | blocks | matches | ISMCTS score | 95% interval | SPRT | CPU-min |",
            "|---|---|---:|---:|---:|---:|---|---|---:|"]
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    parsed = {f: parse_pairing_name(f) for f in files}
    for label, *_ in SETTINGS:
        for opp in OPPONENTS + EXTRA_OPPONENTS:
            found = sorted((f for f, p in parsed.items() if p and p[0] == label and p[1] == opp),
                           key=lambda f: (parsed[f][3] != "tree", -parsed[f][2]))
            if not found and opp in OPPONENTS:
                rows.append(f"| {label} | {opp} | 1000 | 0 | 0 | — | — | not run | 0 |")
            for name in found:
                model = parsed[name][3]
                blocks = load_blocks(os.path.join(out, name))
                if not blocks:
                    continue
                m, lo, hi = bootstrap_ci([b["scores"] for b in blocks])
                t = sprt_of(blocks)
                d = t.decision() if len(blocks) >= 8 else None
                verdict = {"H1": "H1 (ISMCTS ≥ 55%)", "H0": "H0 (not better)"}.get(d or "", f"open (LLR {t.llr():.2f})")
                matches = sum(len(b["scores"]) for b in blocks)
                cpu = sum(b["cpu_s"] for b in blocks) / 60
                faults = sum(b.get("faults", 0) for b in blocks)
                fault_note = f" ({faults} faults)" if faults else ""
                opp_name = "ismcts --variant mo" if opp == "mo" else opp
                subject = label if model == "tree" else f"{label}, ISMCTS `--opponent-model {model}`"
                rows.append(f"| {subject} | {opp_name} | {blocks[0].get('iterations', 1000)} | {len(blocks)} | "
                            f"{matches}{fault_note} | {m:.3f} | [{lo:.3f}, {hi:.3f}] | {verdict} | {cpu:.1f} |")
    table = "\n".join(rows)
    if os.path.exists(doc):
        text = open(doc, encoding="utf-8").read()
        if MARK_BEGIN in text and MARK_END in text:
            head, rest = text.split(MARK_BEGIN, 1)
            _, tail = rest.split(MARK_END, 1)
            with open(doc, "w", encoding="utf-8") as f:
                f.write(f"{head}{MARK_BEGIN}\n{table}\n{MARK_END}{tail}")
    return table


def main() -> None:
    """Run the selected pairings (resuming from their files), or print/write the report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="", help="comma-separated setting labels (default: all); e.g. agram-3p,sedma-4p")
    ap.add_argument("--opponents", default=",".join(OPPONENTS), help="comma-separated: random,greedy,pimc,mo")
    ap.add_argument("--iterations", type=int, default=1000, help="ISMCTS and PIMC iterations per decision")
    ap.add_argument("--opponent-model", choices=("tree", "rollout"), default="tree",
                    help="the measured ISMCTS bot's --opponent-model (results in <setting>__<opp>__om-<model>.jsonl)")
    ap.add_argument("--cap-cpu-min", type=float, default=20.0, help="CPU-minutes of the bot processes per pairing")
    ap.add_argument("--max-blocks", type=int, default=400, help="blocks per pairing at most")
    ap.add_argument("--min-blocks", type=int, default=8, help="blocks before an SPRT decision is accepted")
    ap.add_argument("--chunk", type=int, default=4, help="blocks per chunk (one process per seat and rotation)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "strength"), help="folder of the pairing files")
    ap.add_argument("--report", action="store_true", help="print the table and update docs/strength.md")
    args = ap.parse_args()
    if args.report:
        print(report(args.out, os.path.join(ROOT, "docs", "strength.md")))
        return
    chosen = [s for s in args.games.split(",") if s]
    known = {s[0] for s in SETTINGS}
    bad = [s for s in chosen if s not in known]
    if bad:
        raise SystemExit(f"unknown setting(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    opps = [o for o in args.opponents.split(",") if o]
    for label, game, n, options in SETTINGS:
        if chosen and label not in chosen:
            continue
        for opp in opps:
            run_pairing(label, game, n, options, opp, args)


if __name__ == "__main__":
    main()
