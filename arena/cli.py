"""The ``arena`` command (typer + rich): parses, calls the library, renders.

Errors deriving from :class:`engine.errors.CardArenaError` are caught once here and
printed as one clear message with exit code 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from arena.interrupts import terminate_as_interrupt
from engine.errors import CardArenaError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="cardarena: competitions between card-game bots (JSON-lines bots, Ray, TrueSkill).")
console = Console()
if not console.is_terminal:  # logs and pipes: wide enough for the leaderboard on one line per bot
    console = Console(width=160)
err_console = Console(stderr=True)


# longer than 80 lines: most of it is the typer option declarations (the signature is the help)
@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="tournaments file")] = Path("tournaments.yaml"),
    tournament: Annotated[list[str] | None, typer.Option("-t", "--tournament", help="tournament name (repeatable)")] = None,
    all_: Annotated[bool, typer.Option("--all", help="run every tournament of the file")] = False,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="concurrent matches (default: CPUs)")] = None,
    address: Annotated[str | None, typer.Option("--address", help="join a Ray cluster: auto or HOST:PORT")] = None,
    inline: Annotated[bool, typer.Option("--inline", help="run in this process, without Ray")] = False,
    results: Annotated[Path, typer.Option("--results", help="results root (holds <tournament>/)")] = Path("results"),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="CI logs: print nothing but the final table")] = False,
) -> None:
    """Run tournaments (default: those marked `default: true`) and print the TrueSkill tables."""
    from arena import config as cfg
    from arena import render
    from arena.driver import run_tournament
    from arena.progress import LiveProgress
    from arena.results import export, outside_note, standings

    tournaments = cfg.select(cfg.load(config), tournament, all_, config)
    for sub in tournaments[0].skipped:
        err_console.print(f"[yellow]note:[/] {sub} holds no bot.yaml and no bot.py: not entered "
                          "(README: Writing a bot; `arena doctor --config` lists it)")
    for t in [t for t in tournaments if t.model.mode == "sprt"]:  # regression tests run with `arena sprt`
        if tournament and t.name in tournament:
            raise CardArenaError(f"{config}: tournament {t.name!r} is an SPRT (mode: sprt); run it with "
                                 f"`arena sprt -t {t.name}` (docs/regression.md)")
        err_console.print(f"[yellow]note:[/] skipping {t.name} (mode: sprt): run it with `arena sprt -t {t.name}`")
    tournaments = [t for t in tournaments if t.model.mode != "sprt"]
    signals = terminate_as_interrupt()
    incomplete = False
    for t in tournaments:
        m = t.model

        def warn(msg):
            """Print ``msg`` to stderr as a yellow ``warning:`` line (``msg`` as text: it may quote a bot)."""
            from rich.text import Text

            err_console.print(Text.assemble(("warning:", "yellow"), " ", msg), highlight=False)

        def started(summary, live=None):
            """Say which sandbox the bots get (loudly when none), then start the live display."""
            if not quiet:  # --quiet: said under the final table instead
                _print_sandbox(err_console, summary)
            if live is not None:
                live.on_start(summary)

        try:
            with LiveProgress(err_console, t, quiet=quiet) as live:
                summary = run_tournament(t, results, inline=inline, workers=workers, address=address,
                                         on_result=live.on_result, on_start=lambda s: started(s, live),
                                         warn=warn)
        except KeyboardInterrupt:
            # the tables of what finished, then the message: a further Ctrl-C is ignored (the tables
            # cost time in proportion to the new records), and the message goes through a console of
            # its own (a Ctrl-C inside the live display's last render can leave err_console buffering)
            _ignore_interrupts()
            folder = results / m.name
            done = 0
            if (folder / "tournament.json").exists():
                st = standings(folder)
                export(folder, st)
                done = len(st.records)
            how = "terminated (SIGTERM)" if signals else "interrupted"
            Console(stderr=True).print(f"[yellow]{how}[/]: {done} matches of {m.name} are recorded in {folder}/ "
                                       "(tables updated); run the same command again to play the rest")
            raise typer.Exit(143 if signals else 130) from None
        st = standings(summary.folder)
        export(summary.folder, st)
        console.print(render.leaderboard_table(st.rows, title=f"{m.name} — {m.game}, {m.players} players, "
                                               f"{len(st.records)} matches (final table)"))
        for line in render.notes_lines(st):
            console.print(line, markup=False, highlight=False)
        if summary.unplayed:
            incomplete = True
            n = len(summary.unplayed)
            warn(f"{m.name}: {n} match{'es' if n != 1 else ''} could not be played (the infrastructure failed "
                 f"every attempt, see {summary.folder}/attempts.jsonl) and {'are' if n != 1 else 'is'} not "
                 "recorded: run the same command again to play them")
        if summary.replayed:
            n = summary.replayed
            warn(f"{m.name}: {n} match{'es were' if n != 1 else ' was'} played again after an infrastructure "
                 f"failure (a lost node, worker or raylet); nothing recorded was lost or played twice "
                 f"({summary.folder}/attempts.jsonl)")
        if quiet:
            if summary.sandbox == "none":
                _print_sandbox(console, summary)
            continue  # CI logs: the final table only
        if any(r["faults"] for r in st.rows):
            console.print(render.reliability_table(st.rel))
        msg = f"{summary.played} matches played now, {summary.already} already recorded"
        if st.outside:
            msg += f", {outside_note(st)}"
        msg += f", {summary.seconds:.1f} s; results in {summary.folder}/"
        if summary.disabled:
            msg += f"; disabled: {', '.join(summary.disabled)}"
        console.print(msg)
        hint = inline_hint(inline, address, summary.played, summary.seconds)
        if hint:
            console.print(hint)
    if incomplete:
        raise typer.Exit(2)


#: below this many seconds of play on <= 2 CPUs, Ray's start-up and scheduling cost more than they gain
INLINE_HINT_S = 120.0


def inline_hint(inline: bool, address: str | None, played: int, seconds: float) -> str:
    """A hint to use ``--inline`` after a short local Ray run on a machine with <= 2 CPUs, else ``""``.

    Measured on a 2-core machine (agram-demo, 600 matches): ``--inline`` about 17 s, Ray about
    20 s (new-user trial, 2026-12-04; 28 against 45 s before the compiled core); on a loaded one
    (8 other jobs) both took 165-200 s, without a clear winner.
    """
    import os

    if inline or address or not played or seconds > INLINE_HINT_S or (os.cpu_count() or 1) > 2:
        return ""
    return (f"hint: this machine has {os.cpu_count()} CPU(s); for a tournament this short `--inline` "
            "(no Ray) is often faster — on a 2-core machine the demo took about 17 s inline against "
            "20 s with Ray (Ray's start-up and scheduling); Ray pays off with more cores, a cluster or long matches")


def _print_sandbox(where: Console, summary) -> None:
    """The sandbox line of a run (at its start; under the table with ``--quiet``): dim, or a red
    warning for ``none``."""
    mode = summary.sandbox
    if mode == "none":
        where.print(f"[bold red]{summary.tournament}: sandbox: none — bots run WITHOUT A SANDBOX[/] "
                    "(they can read the results folder, other processes and the network; "
                    "see docs/security.md)", highlight=False)
    else:
        where.print(f"[dim]{summary.tournament}: sandbox: {mode}[/]", highlight=False)
    if getattr(summary, "root_bots", False):
        where.print(f"[yellow]{summary.tournament}: bots run as root[/] (no limits.bot_user): outside the "
                    "hidden folders they can read what root can, e.g. other tournaments' bots and /etc; "
                    "for a competition set limits.bot_user (docs/security.md)", highlight=False)


def _only_results_folder(root: Path) -> Path:
    """The one tournament folder under ``root`` (``arena leaderboard`` without a folder).

    :raises typer.Exit: (code 2, with the folders there) when there is none or more than one.
    """
    found = sorted(p for p in root.glob("*") if (p / "tournament.json").is_file()) if root.is_dir() else []
    if len(found) == 1:
        return found[0]
    where = (f"the folders there: {', '.join(str(p) for p in found)}" if found else
             f"no tournament folder under {root}/ (run `arena run` first, or give the folder)")
    err_console.print(f"error: name the results folder, e.g. `arena leaderboard {found[0] if found else 'results/NAME'}`"
                      f"; {where}", markup=False, highlight=False)
    raise typer.Exit(2)


@app.command()
def leaderboard(
    folder: Annotated[Path | None, typer.Argument(help="results/<tournament> folder (default: the only one "
                                                      "under ./results)")] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="table | json | csv | md")] = "table",
    write: Annotated[bool, typer.Option("--write/--no-write", help="also rewrite the export files")] = False,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="delete the folder's checkpoints and caches first: "
                                          "the tables from matches.jsonl alone (a folder from elsewhere)")] = False,
) -> None:
    """Reprint the tables of a results folder (works while the tournament still runs)."""
    from arena import render
    from arena.results import drop_caches, export, leaderboard_doc, outside_note, standings

    if format not in ("table", "json", "csv", "md"):
        raise typer.BadParameter(f"--format must be table, json, csv or md, got {format!r}")
    if folder is None:
        folder = _only_results_folder(Path("results"))
    if rebuild:
        drop_caches(folder)
    st = standings(folder, history=write)
    if write:
        export(folder, st)
    if format == "json":
        print(json.dumps(leaderboard_doc(st), indent=2))  # the same document as leaderboard.json
    elif format == "csv":
        sys.stdout.write(render.to_csv(st.rows))
    elif format == "md":
        sys.stdout.write(render.to_markdown(st.rows, f"{st.name} — leaderboard", render.notes_lines(st)))
    else:
        meta = st.meta
        console.print(render.leaderboard_table(st.rows, title=f"{st.name} — {meta.get('game', '?')}, "
                                               f"{meta.get('players', '?')} players, {render.matches_text(st)}"))
        for line in render.notes_lines(st):
            console.print(line, markup=False, highlight=False)
        if st.outside:
            console.print(outside_note(st))
        order = [r["bot"] for r in st.rows]
        console.print(render.crosstable_table(st.cross, order))
        console.print(render.reliability_table(st.rel))


@app.command()
def games() -> None:
    """List the registered games."""
    from rich.table import Table

    from engine import registry

    t = Table(title="Games")
    for c in ("game", "players", "version", "options"):
        t.add_column(c)
    for g in registry.all_games():
        opts = ", ".join(f"{k}={v.default!r}" for k, v in g.options.items())
        t.add_row(g.name, f"{g.min_players}–{g.max_players}", str(g.version), opts)
    console.print(t)


@app.command()
def rules(
    game: Annotated[str, typer.Argument(help="game name (see `arena games`)")],
    full: Annotated[bool, typer.Option("--full", help="print the whole rules file")] = False,
) -> None:
    """Print a game's summary, options, action strings and observation fields."""
    from engine import registry

    g = registry.get_game(game)
    game = g.name
    if full:
        path = Path(__file__).resolve().parent.parent / "docs" / "rules" / f"{game}.md"
        if not path.exists():
            raise CardArenaError(f"{path}: rules file missing from this installation")
        console.print(path.read_text(encoding="utf-8"), markup=False, highlight=False)
        return
    console.print(f"[bold]{g.name}[/] (version {g.version}) — {g.min_players}–{g.max_players} players")
    console.print(g.summary.strip(), markup=False, highlight=False)
    console.print("\n[bold]Options[/]")
    for k, o in g.options.items():
        console.print(f"  {k} = {o.default!r}: {o.doc}", markup=False, highlight=False)
    console.print("\n[bold]Actions[/]")
    console.print(g.actions_doc.strip(), markup=False, highlight=False)
    console.print("\n[bold]Observation[/]")
    console.print(g.observation_doc.strip(), markup=False, highlight=False)
    console.print(f"\nFull rules: arena rules {game} --full")


def _options(option: list[str] | None) -> dict:
    """``-o KEY=VALUE`` options as a dict (values read as YAML)."""
    import yaml

    opts = {}
    for o in option or []:
        key, sep, value = o.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--option expects KEY=VALUE, got {o!r}")
        opts[key.strip()] = yaml.safe_load(value)
    return opts


_DOCTOR_OPTIONS = "--matches N, --move-ms MS, -n/--players N, -o/--option KEY=VALUE, --config FILE"


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def doctor(
    ctx: typer.Context,
    game: Annotated[str | None, typer.Argument(help="game to test the bot on")] = None,
    matches: Annotated[int, typer.Option("--matches", min=1, help="full matches against the random bot (at least one per seat)")] = 3,
    move_ms: Annotated[int, typer.Option("--move-ms", min=1, help="time per move (ms)")] = 1000,
    players: Annotated[int | None, typer.Option("--players", "-n", min=1, help="seats (default: the game's minimum)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="game option KEY=VALUE (YAML value; repeatable)")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="check every bot of this tournaments file (one table)")] = None,
) -> None:
    """Check a bot's protocol compliance: `arena doctor [OPTIONS] GAME -- CMD ...` (exit 0 = pass).

    Options go before `--`; everything after it is the bot's command. With `--config FILE
    [BOT ...]` every bot of the file (or those named) is checked on the game, players, options,
    clock and limits of the first tournament that enters it.
    """
    from arena.doctor import doctor as run_doctor
    from arena.specs import Clock

    cmd = list(ctx.args)
    for word in ([game] if game else []) + cmd[:1]:
        if word.startswith("-"):  # typer hands an unknown option over as the game or the command
            raise typer.BadParameter(f"unknown option {word!r} for arena doctor; its options are "
                                     f"{_DOCTOR_OPTIONS} (before --)")
    opts = _options(option)
    if config is not None:
        from arena.doctor import doctor_config

        only = ([game] if game else []) + cmd  # `--config FILE [BOT ...]`: typer gives the first as GAME
        clock = Clock(move_ms=move_ms) if move_ms != 1000 else None  # else each tournament's own clock
        def progress(k: int, total: int, name: str, passed: bool, seconds: float) -> None:
            """One stderr line per checked bot: ``[k/total] name: pass|FAIL (seconds s)``."""
            err_console.print(f"[{k}/{total}] {name}: {'pass' if passed else 'FAIL'} ({seconds:.1f} s)",
                              markup=False, highlight=False)

        table, ok = doctor_config(config, matches=matches, clock=clock, only=only or None, on_bot=progress)
        console.print(table)
        raise typer.Exit(0 if ok else 1)
    if game is None:
        raise typer.BadParameter("give the game and the bot's command: arena doctor agram -- python my_bot.py")
    if not cmd:
        raise typer.BadParameter("give the bot's command after --, e.g. arena doctor agram -- python my_bot.py")
    rep = run_doctor(game, cmd, matches=matches, clock=Clock(move_ms=move_ms), players=players, options=opts)
    console.print(rep.render())
    raise typer.Exit(0 if rep.passed else 1)


from arena.sprt import command as _sprt_state  # noqa: E402
from arena.sprt.command import sprt as _sprt  # noqa: E402 - `arena sprt` (docs/regression.md)

app.command(name="sprt")(_sprt)
@app.command()
def play(
    game: Annotated[str, typer.Argument(help="game to play (see `arena games`)")],
    seat: Annotated[int, typer.Option("--seat", min=0, help="your seat (0 moves first in most games)")] = 0,
    vs: Annotated[list[str] | None, typer.Option("--vs", help="opponent: random, greedy, ismcts, ismcts-fast, pimc, "
                                                 "or a command in quotes (repeatable: one per seat)")] = None,
    players: Annotated[int | None, typer.Option("--players", "-n", min=1, help="seats (default: the game's minimum)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="game option KEY=VALUE (repeatable)")] = None,
    clock: Annotated[bool, typer.Option("--clock", help="put your seat under the bots' clock too")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="deal seed (default: a fresh random deal)")] = None,
) -> None:
    """Play a whole match against bots in this terminal: type the number of your move."""
    from arena.play import play as run_play

    res = run_play(game, vs or ["random"], seat=seat, players=players, options=_options(option), clock=clock,
                   seed=seed, console=console)
    raise typer.Exit(0 if res.status == "ok" else 1)


@app.command()
def replay(
    folder: Annotated[Path, typer.Argument(help="results/<tournament> folder")],
    match: Annotated[str, typer.Argument(help="match id, its end (d00003/r01) or its number in matches.jsonl")],
    seat: Annotated[int | None, typer.Option("--seat", min=0, help="the seat whose view to show")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="write the HTML viewer to this file instead")] = None,
) -> None:
    """Step through a recorded match from one seat's point of view (every seat's once its deal is complete)."""
    from arena.replay import deal_complete, find_record, show_terminal

    rec = find_record(folder, match)
    everyone = deal_complete(folder, rec)
    if seat is None and not everyone:
        from arena.errors import ArenaError

        raise ArenaError(f"the deal of {rec['match_id']} is still being played by other seatings; give "
                         "--seat N for one seat's view (docs/security.md)")
    if html is not None:
        from arena.replay_html import write_page

        seats = None if seat is None else [seat]
        path = write_page(html, rec, seats, everyone=everyone and seat is None)
        console.print(f"replay of {rec['match_id']} written to {path}", markup=False)
        return
    ask = console.input if console.is_terminal and sys.stdin.isatty() else None
    show_terminal(rec, seat, console, ask, everyone=seat is None)


new_app = typer.Typer(help="Start something new from a template: `arena new bot NAME`.", no_args_is_help=True)
app.add_typer(new_app, name="new")


@new_app.command("bot")
def new_bot(
    name: Annotated[str, typer.Argument(help="the bot's name (also its folder)")],
    lang: Annotated[str, typer.Option("--lang", "-l", help="python | js | c | sh")] = "python",
) -> None:
    """Write a working, commented bot in NAME/ (it passes `arena doctor` as it is)."""
    from arena.scaffold import new_bot as make

    made = make(name, lang)
    console.print(f"[green]made[/] {made.folder}/ ({made.lang}): "
                  f"{', '.join(sorted(p.name for p in made.folder.iterdir()))}")
    if made.lang == "c" and not made.built:
        console.print(f"[yellow]no C compiler found[/]: build it with `cd {made.folder} && cc -O2 -Wall -o bot bot.c`")
    console.print(f"check it:  arena doctor agram -- {' '.join(made.doctor_cmd())}", markup=False)
    console.print(f"play it:   arena play agram --vs \"{' '.join(made.doctor_cmd())}\"", markup=False)
    console.print("add to tournaments.yaml (paths relative to the file's folder; or collect a folder of bots "
                  "with `bots: {from: DIR}`):", markup=False)
    console.print(made.yaml_lines(), markup=False, highlight=False)


def main() -> None:
    """Console-script entry point: run the app, turning cardarena errors into one message and exit code 2."""
    from arena.heap import fix_mmap_threshold

    fix_mmap_threshold()  # large tables' freed arrays leave the resident set (arena/heap.py)
    try:
        app()
    except SystemExit as e:
        # `arena sprt`: a usage error (click exits 2) must not read as "inconclusive" (2) in CI
        if e.code == 2 and sys.argv[1:2] == ["sprt"] and not _sprt_state.FINISHED:
            sys.exit(3)
        raise
    except CardArenaError as e:
        from rich.markup import escape

        # the message is plain text: a bot's cmd "[python, bot.py]" is not markup
        err_console.print(f"[bold red]error:[/] {escape(str(e))}", markup=True, highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:  # a second Ctrl-C (the first one's tables cut short) or a command's own
        _ignore_interrupts()
        Console(stderr=True).print("[yellow]interrupted[/]: finished matches are recorded; run again to resume")
        sys.exit(130)
    finally:
        _stop_ray()


def _ignore_interrupts() -> None:
    """Ignore Ctrl-C and SIGTERM from here on (the command is ending; what finished is recorded)."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def _stop_ray() -> None:
    """Shut a Ray instance this command started down now, with Ctrl-C ignored: everything is
    recorded by then, and Ray's own exit handler, interrupted, printed a traceback (a new user's
    second Ctrl-C). Ray's shutdown is bounded (it kills its processes)."""
    ray = sys.modules.get("ray")
    if ray is None or not getattr(ray, "is_initialized", lambda: False)():
        return
    _ignore_interrupts()
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - a broken instance: its processes die with the guard
        pass


if __name__ == "__main__":
    main()
