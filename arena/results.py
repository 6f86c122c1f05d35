"""Turn a results folder into ratings, tables and exports (used after a run and by ``arena leaderboard``).

Only the records of the tournament as configured count: ``tournament.json`` holds the
schedule of the last run (``match id -> fingerprint``), and a record whose id is not in it
with that fingerprint (deals beyond a lowered ``deals``, a bot no longer listed) stays in
``matches.jsonl`` but is left out of every table. ``arena run`` and ``arena leaderboard``
both go through :func:`standings`, so their tables agree.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arena import journal_cache, render, results_folder, schedule_file, tables, tallies_checkpoint
from arena.checkpoint import fit_start, replay, save_fit
from arena.errors import ArenaError
from arena.heap import release_heap
from arena.record import MatchRecord
from arena.record_view import RecordView
from arena.strength import fit_info, save_fit_info, strength_of_results
from arena.tables import Standings

__all__ = ["Standings", "drop_caches", "export", "in_schedule", "load_meta", "outside_note", "rated_records", "standings"]


def load_meta(folder: str | Path) -> dict[str, Any]:
    """``tournament.json`` of a results folder, checked (:mod:`arena.results_folder`).

    :raises ArenaError: if the folder is not a tournament's results folder, holds a symbolic
        link, or its ``tournament.json`` is damaged.
    """
    path = Path(folder) / "tournament.json"
    if not os.path.lexists(folder):
        raise ArenaError(f"{folder}: no such folder; give results/<tournament> as written by `arena run` "
                         "(`ls results` lists them)")
    if not Path(folder).is_dir():
        raise ArenaError(f"{folder}: not a folder; give results/<tournament> as written by `arena run`")
    if not path.exists():
        raise ArenaError(f"{folder}: not a results folder (no tournament.json); "
                         "give results/<tournament> as written by `arena run`")
    results_folder.refuse_links(folder)
    return results_folder.read_meta(path)


def drop_caches(folder: str | Path) -> list[str]:
    """Delete ``folder``'s checkpoints and caches (``checkpoint*``: the journal cache, the replay's,
    the counters' and the fit's), so the next tables are computed from ``matches.jsonl`` alone —
    what to do with a results folder someone else wrote (a cache is trusted when its journal
    prefix matches: docs/security.md). Returns the names deleted.

    :raises ArenaError: if the folder is not a results folder, holds a link, or a file cannot be deleted.
    """
    load_meta(folder)  # a results folder, without links
    gone = []
    for f in sorted(Path(folder).glob("checkpoint*")):
        try:
            f.unlink()
        except OSError as e:
            raise _undeletable(Path(folder), f, e) from e
        gone.append(f.name)
    return gone


def _undeletable(folder: Path, cache: Path, e: OSError) -> ArenaError:
    """The error for a cache ``--rebuild`` cannot delete: for a folder the user cannot write
    (someone else's), the command that copies it and rebuilds the copy."""
    if e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ArenaError(f"cannot delete the cache {cache}: {e.strerror or e}; delete it by hand "
                          "(it is rebuilt from matches.jsonl), then run the command again")
    copy = shlex.quote(str(Path.home() / f"{folder.resolve().name}-copy"))
    return ArenaError(f"cannot delete the cache {cache}: {e.strerror or e} — you cannot write this results "
                      "folder (someone else's, or read-only), so --rebuild cannot drop its caches. Rebuild a copy "
                      f"of your own instead (cp keeps the folder's modes, hence the chmod): `cp -r "
                      f"{shlex.quote(str(folder))} {copy} && chmod -R u+w {copy} && arena leaderboard --rebuild {copy}`")


def in_schedule(meta: dict[str, Any]) -> Callable[[MatchRecord], bool]:
    """Whether a record belongs to the schedule recorded in ``meta`` (see :func:`rated_records`)."""
    try:
        schedule = schedule_file.schedule_of(meta)  # plain or compact (arena.schedule_file)
    except ValueError as e:
        raise ArenaError(f"tournament.json of {meta.get('name')!r}: its compact schedule is damaged ({e}); "
                         "run `arena run` again to rewrite it") from e
    if schedule is not None:
        def scheduled(rec: MatchRecord) -> bool:
            """In the recorded schedule with the same fingerprint."""
            fp = schedule.get(rec.match_id)
            return fp is not None and fp == rec.fingerprint
        # for the journal cache (:func:`arena.journal_cache.read`): the schedule itself (a cached
        # split is checked from the ids at once) and its digest (the same schedule: no check at all)
        scheduled.schedule = schedule  # type: ignore[attr-defined]
        scheduled.schedule_key = _schedule_key(meta)  # type: ignore[attr-defined]
        return scheduled
    current = set(meta["bots"])

    def listed(rec: MatchRecord) -> bool:
        """Old folders without a schedule: every seat a current bot, same game and players."""
        return (current.issuperset(rec.seats) and rec.game == meta.get("game", rec.game)
                and len(rec.seats) == meta.get("players", len(rec.seats)))
    listed.schedule_key = _schedule_key(meta)  # type: ignore[attr-defined]
    return listed


def _schedule_key(meta: dict[str, Any]) -> str:
    """A digest of what :func:`in_schedule` decides by: the recorded schedule (plain or compact),
    or, without one, the bots, game and player count."""
    h = hashlib.sha256()
    compact = meta.get(schedule_file.KEY)
    if isinstance(compact, dict):
        for part in (compact.get("ids", ""), compact.get("fingerprints", "")):
            h.update(str(part).encode("utf-8", "surrogatepass"))
            h.update(b"\x00")
    elif isinstance(meta.get("schedule"), dict):
        h.update(json.dumps(meta["schedule"], sort_keys=True).encode("utf-8", "surrogatepass"))
    else:
        h.update(json.dumps([sorted(meta["bots"]), meta.get("game"), meta.get("players")]).encode())
    return h.hexdigest()


def rated_records(records: Iterable[MatchRecord], meta: dict[str, Any]) -> tuple[list[MatchRecord], list[MatchRecord]]:
    """``(inside, outside)``: the records of the schedule recorded in ``meta``, and the others,
    each in the order given.

    A record belongs to the schedule if its match id is scheduled with the record's
    fingerprint (``meta["schedule"]``: ``match id -> fingerprint``). A ``tournament.json``
    written before schedules were recorded: the records of its game and player count whose
    bots are all still listed.
    """
    ok = in_schedule(meta)
    inside: list[MatchRecord] = []
    outside: list[MatchRecord] = []
    for rec in records:
        (inside if ok(rec) else outside).append(rec)
    return inside, outside


def _read(folder: str | Path, meta: dict[str, Any]) -> tuple[Sequence[MatchRecord], int, tables.Latency, list]:
    """The schedule's records (without their decision times), the count of the others, and the
    decision times of the schedule's records: the journal's cached typed prefix plus its new
    lines (:mod:`arena.journal_cache`; only the lines after the cached prefix are parsed), and
    the journal's vouched-for prefixes (for :func:`arena.tallies_checkpoint.tallies`)."""
    latency = tables.Latency(meta["bots"])
    prefixes: list = []
    inside, outside, latency.times, _info = journal_cache.read(folder, in_schedule(meta), meta["bots"],
                                                               prefixes=prefixes)
    release_heap()  # the schedule's lookup arrays, freed now, handed back to the system
    return inside, outside, latency, prefixes


def _scheduled(meta: dict[str, Any]) -> int | None:
    """The number of matches ``tournament.json`` schedules (None if it records no schedule)."""
    compact = meta.get(schedule_file.KEY)
    if isinstance(compact, dict) and type(compact.get("count")) is int:
        return compact["count"]  # checked against its ids when the journal was read (in_schedule)
    try:
        schedule = schedule_file.schedule_of(meta)
    except ValueError:
        return None
    return None if schedule is None else len(schedule)


def standings(folder: str | Path, history: bool = True) -> Standings:
    """Replay the ratings of ``folder`` (ordered replay) and compute every table.

    Only the records of the tournament's schedule are rated (:func:`rated_records`). The
    journal is read from its cached typed prefix plus the new lines (``checkpoint-journal.bin``,
    :mod:`arena.journal_cache`); the replay resumes from ``folder/checkpoint.json``
    (:mod:`arena.checkpoint`) when ``history``
    is False (the tables only; the report's rating plots need the full history); the batch
    fit starts from the checkpointed one (``checkpoint-fit.json``); the tables' counters (scores,
    faults, duplicate blocks, the pairs met, the fit's results) are resumed from
    ``checkpoint-tables.pkl`` for the journal's unchanged prefix (:mod:`arena.tallies`).
    """
    meta = load_meta(folder)
    bots = meta["bots"]
    records, outside, latency, prefixes = _read(folder, meta)
    meta["scheduled"] = _scheduled(meta)
    meta.pop(schedule_file.KEY, None)  # read: the compact schedule's strings (~60 MB at 1M) are not kept
    r = meta.get("ratings", {})
    ratings = replay(folder, records, bots, draw_probability=r.get("draw_probability", "auto"),
                     tau=r.get("tau", "default"), fixed=r.get("fixed", []), mu=r.get("mu", 25.0),
                     sigma=r.get("sigma", 25.0 / 3),
                     rate_forfeits=meta.get("rate_forfeits", False), history=history, journal=prefixes)
    rf = meta.get("rate_forfeits", False)
    if isinstance(records, RecordView):  # the counters read the journal's pieces one at a time; no table reads
        records.cols.release()  # a record after them (read again if one is asked for: 155 MB at 1M)
    release_heap()  # the replay's temporaries (~100 MB at 1M), before the counters grow
    tal = tallies_checkpoint.tallies(folder, records, bots, rf, prefixes, close=True)
    # every table's part of the counters first, then the counters dropped: the fit does not
    # run beside them (~240 MB at 1M four-player records)
    counts, rel, eff, mix = tal.bot_stats(), tables.reliability_of(tal, bots, latency), tal.efficiency(), tal.mixing()
    contests = tal.contests()
    del tal
    release_heap()
    start = fit_start(folder, bots, rf)
    info0 = None if start is None else fit_info(folder, len(start))
    fit = strength_of_results(contests, bots, beta0=None if start is None else np.array(start), info0=info0,
                              folder=folder)
    del contests
    release_heap()  # the fit's chunked temporaries, freed now, handed back to the system (~70 MB at 1M)
    save_fit(folder, bots, rf, fit.fit.beta)
    save_fit_info(folder, fit.fit.info)
    rows = tables.leaderboard(records, bots, ratings, fit, counts=counts)
    return Standings(meta["name"], meta, records, ratings, rows, tables.LazyCrosstable(records),
                     rel, eff, outside, fit, mix)


def outside_note(st: Standings) -> str:
    """The sentence saying how many recorded matches the tables leave out ("" if none)."""
    if not st.outside:
        return ""
    n = st.outside
    return (f"{n} recorded match{'es are' if n != 1 else ' is'} outside the current schedule and not rated "
            "(kept in matches.jsonl)")


def leaderboard_doc(st: Standings) -> dict[str, Any]:
    """The leaderboard document — ``leaderboard.json`` and ``arena leaderboard --format json``
    alike: the tournament, game, players, sandbox, record counts by status, the design, the
    duplicate efficiency, the design's mixing, the order notes, the strength pairs, the draw
    probability and the rows (non-finite numbers as ``null``)."""
    counts = {"matches": len(st.records),
              "ok": sum(1 for r in st.records if r.status == "ok"),
              "forfeit": sum(1 for r in st.records if r.status == "forfeit"),
              "aborted": sum(1 for r in st.records if r.status == "aborted"),
              "outside_schedule": st.outside}
    return render.clean({
        "tournament": st.name, "game": st.meta["game"], "players": st.meta["players"],
        "sandbox": st.meta.get("sandbox"), **counts,
        **({"design": st.meta["design"]} if st.meta.get("design") else {}),
        "duplicate_efficiency": st.efficiency or tables.duplicate_efficiency(st.records),
        "design_mixing": st.mixing, "order_notes": tables.order_notes(st.rows),
        "pairs": st.strength.pairs() if st.strength is not None else {},
        "draw_probability": st.ratings.draw_probability, "rows": [dict(r) for r in st.rows]})


def export(folder: str | Path, st: Standings) -> None:
    """Write the leaderboard, crosstable and reliability exports and ``report.html`` of ``st`` into ``folder``."""
    from arena import report_html

    results_folder.refuse_links(folder, inside=("bots", "replays"))  # the pages are written there

    doc = leaderboard_doc(st)
    from arena.bot_pages import write_class_pages

    try:
        render.write_exports(folder, doc, render.notes_lines(st), st.rows, st.cross, st.rel)
        write_class_pages(folder, st)  # first: report.html links the pages it finds (report_html.default_links)
        report_html.write_report(folder, st)
    except OSError as e:
        raise ArenaError(f"cannot write the tables into {folder}: {e.strerror or e} ({e.filename}). The "
                         f"{len(st.records)} recorded matches are kept in matches.jsonl. Remedies: free disk space "
                         f"or make the folder writable, then run `arena leaderboard {folder} --write`") from e
