"""The ``arena sprt`` command (registered by :mod:`arena.cli`): options → test → verdict → exit code."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from arena.interrupts import terminate_as_interrupt
from engine.errors import CardArenaError

#: set once the test has a verdict (the CLI maps click's usage errors, exit 2, to 3 otherwise)
FINISHED = False


# longer than 80 lines: most of it is the typer option declarations (the signature is the help)
def sprt(
    game: Annotated[str | None, typer.Argument(help="game (see `arena games`); omit with -t")] = None,
    candidate: Annotated[str | None, typer.Option("--candidate", help="the new version: a command line, or a bot name of the config")] = None,
    baseline: Annotated[str | None, typer.Option("--baseline", help="the version to beat: a command line, or a bot name")] = None,
    opponents: Annotated[str | None, typer.Option("--opponents", help="bots of the other seats, by name, comma-separated (default: the baseline)")] = None,
    players: Annotated[int | None, typer.Option("--players", "-n", min=1, help="seats (default: the game's minimum, at least 2)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="game option KEY=VALUE (YAML value; repeatable)")] = None,
    design: Annotated[str, typer.Option("--design", help="replace (duplicate replacement) | pairs (2 players: game pairs)")] = "replace",
    elo0: Annotated[float, typer.Option("--elo0", help="H0 in normalized Elo per block")] = 0.0,
    elo1: Annotated[float, typer.Option("--elo1", help="H1 in normalized Elo per block")] = 40.0,
    score0: Annotated[float | None, typer.Option("--score0", help="H0 as a mean block score (with --score1, instead of Elo)")] = None,
    score1: Annotated[float | None, typer.Option("--score1", help="H1 as a mean block score")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="false-positive rate (H1 accepted wrongly)")] = 0.05,
    beta: Annotated[float, typer.Option("--beta", help="false-negative rate (H0 accepted wrongly)")] = 0.05,
    max_matches: Annotated[int | None, typer.Option("--max-matches", min=1, help="cap: matches (rounded down to whole blocks; default 6000, or the entry's with -t)")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="concurrent matches (default: CPUs)")] = None,
    inline: Annotated[bool, typer.Option("--inline", help="run in this process, without Ray")] = False,
    address: Annotated[str | None, typer.Option("--address", help="join a Ray cluster: auto or HOST:PORT")] = None,
    move_ms: Annotated[int, typer.Option("--move-ms", min=1, help="time per move (ms)")] = 1000,
    bank_ms: Annotated[int, typer.Option("--bank-ms", min=0, help="extra time per match (ms)")] = 10000,
    salt: Annotated[str | None, typer.Option("--salt", help="deal salt (default: a secret one, kept in the results folder)")] = None,
    name: Annotated[str, typer.Option("--name", help="test name: its folder under --results")] = "sprt",
    results: Annotated[Path, typer.Option("--results", help="results root (holds <name>/)")] = Path("results"),
    config: Annotated[Path | None, typer.Option("--config", help="tournaments file: bots by name, -t entries")] = None,
    tournament: Annotated[str | None, typer.Option("-t", "--tournament", help="run the `mode: sprt` entry of --config")] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text | json | md (what stdout gets at the end)")] = "text",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines")] = False,
) -> None:
    """Is the candidate stronger than the baseline? A GSPRT on duplicate blocks (docs/regression.md).

    Exit code: 0 H1 accepted (stronger), 1 H0 accepted, 2 inconclusive at --max-matches,
    3 could not run (bad input, a bot that does not start). A rerun resumes the same test.
    """
    from arena.sprt import render
    from arena.sprt.runner import EXIT, run_sprt
    from arena.sprt.setup import build, from_config, parse_options

    if format not in ("text", "json", "md"):
        _fail(f"--format must be text, json or md, got {format!r}")
    signals = terminate_as_interrupt()
    try:
        if tournament:
            t = from_config(config or Path("tournaments.yaml"), tournament, max_matches)
        else:
            if not game or not candidate or not baseline:
                _fail("give GAME, --candidate and --baseline (or -t NAME of a `mode: sprt` entry), e.g. "
                      "arena sprt agram -n 3 --candidate 'python bots/greedy_bot.py' --baseline 'python bots/random_bot.py'")
            sp = {"design": design, "elo0": elo0, "elo1": elo1, "alpha": alpha, "beta": beta,
                  "max_matches": 6000 if max_matches is None else max_matches}
            if score0 is not None or score1 is not None:
                sp.update(score0=score0, score1=score1)
            opp = [o.strip() for o in (opponents or "").split(",") if o.strip()]
            t = build(game, candidate, baseline, opponents=opp, players=players, options=parse_options(option),
                      sprt=sp, clock={"move_ms": move_ms, "bank_ms": bank_ms}, name=name, salt=salt,
                      config=config, workers=workers)
        last = [0.0, 0.0]
        seen: list[Any] = [None]

        def progress(tr) -> None:
            """A progress line at most every second, and once at the verdict."""
            seen[0] = tr
            now = time.monotonic()
            verdict = tr.book.test.verdict is not None
            if quiet or last[1] or (now - last[0] < 1.0 and not verdict):
                return
            last[0], last[1] = now, float(verdict)
            print(render.progress_line(tr), file=sys.stderr, flush=True)

        def warn(msg: str) -> None:
            """Print a warning line on stderr."""
            print(f"warning: {msg}", file=sys.stderr, flush=True)

        r = run_sprt(t, results, inline=inline, workers=workers, address=address, on_progress=progress, warn=warn)
    except (typer.Exit, typer.Abort):
        raise
    except CardArenaError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        print(f"interrupted: {_recorded(results, name)} finished matches are recorded; run the same command again to "
              "resume", file=sys.stderr)
        raise typer.Exit(143 if signals else 130) from None
    except Exception as e:  # noqa: BLE001 - infrastructure (Ray failing to start...): "could not run", exit 3
        _fail(f"the test could not run: {type(e).__name__}: {str(e)[:500]}. Finished matches are recorded; "
              "rerun the same command to resume (or use --inline to run without Ray)")
    if r.reason and r.verdict == "error":
        print(f"error: {r.reason}", file=sys.stderr, flush=True)
    elif r.verdict == "inconclusive" and not quiet and not last[1] and seen[0] is not None:
        # the test never decided: the last state, once, with the verdict (as a decided test ends)
        print(f"{render.progress_line(seen[0])} → inconclusive at the cap", file=sys.stderr, flush=True)
    global FINISHED
    FINISHED = True
    if format == "json":
        print(json.dumps(render.as_json(r), indent=2))
    else:
        sys.stdout.write(render.markdown(r))
    raise typer.Exit(EXIT[r.verdict])


def _recorded(results: Path, name: str) -> str:
    """How many matches the test's journal holds (its complete lines), or "the" if unknown."""
    try:
        with open(Path(results) / name / "matches.jsonl", "rb") as f:
            return str(sum(1 for line in f if line.endswith(b"\n")))
    except OSError:
        return "the"


def _fail(msg: str) -> NoReturn:
    """Print ``msg`` as the error and exit 3 (the test could not run)."""
    print(f"error: {msg}", file=sys.stderr, flush=True)
    raise typer.Exit(3)
