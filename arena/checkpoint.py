"""The TrueSkill replay state checkpointed next to the journal (issue 18).

``<folder>/checkpoint.json`` holds the :class:`arena.ratings.Rater` state after several
prefixes of the **replay order** (records sorted by ``(deal_index, rotation, lineup)``):
at its end and at a few earlier positions (``BACKOFFS`` records back), because a parallel run
finishes matches a little out of replay order. Each snapshot carries a digest of its prefix
(match id, fingerprint, status, side ranks of every record in it, in order).

:func:`replay` sorts the rated records, finds the longest snapshot whose prefix digest
still matches, restores it and replays only the records after it; a snapshot whose digest
differs (a record inserted earlier in the replay order, another schedule, other rating
settings, another ``draw_probability: auto`` value) is ignored. The restored state is the
exact floating-point state of the Gaussians (``pi``, ``tau``), so the table equals a full
rebuild **bit for bit**. Without history (``history=False``, what ``arena leaderboard``
prints) the cost is the sort, the digest and the new records; with history (the report's
rating plots) the replay is full, and the checkpoint is rewritten either way.

Given the journal's vouched-for prefixes (``journal=``, from :func:`arena.journal_cache.read`),
the checkpoint also records the journal prefix it covers, the last replay key and the tie
counts of ``draw_probability: auto``; an update whose new rated records all sort after that key
(the schedule plays in replay order) restores the end snapshot and sorts, hashes and replays
only the new records (the prefix digest is chained record by record, so it goes on from a
snapshot's digest). Anything else takes the general path above.

The checkpoint is a cache: deleting it only costs time; an unreadable one is ignored.

``<folder>/checkpoint-fit.json`` keeps the batch fit's parameters (:func:`fit_start`,
:func:`save_fit`): the next fit of the same bots starts from them (the same optimum in
fewer Newton steps; the fit is order-independent, so no prefix is involved).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trueskill

from arena import replay_columns
from arena.ratings import Rater, RatingResult
from arena.record import MatchRecord
from arena.record_view import RecordView
from arena.results_folder import discard

NAME = "checkpoint.json"
FIT_NAME = "checkpoint-fit.json"
FORMAT = 3
#: snapshot positions kept, as records before the end of the replay
BACKOFFS = (0, 16, 256, 4096)


def _key(bots: Sequence[str], dp: float, tau: float | str, fixed: Sequence[str], mu: float, sigma: float,
         rate_forfeits: bool) -> str:
    """A digest of everything besides the records that the replay depends on."""
    blob = json.dumps([FORMAT, list(bots), repr(dp), str(tau), sorted(fixed), repr(mu), repr(sigma),
                       bool(rate_forfeits)])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


class _Chain:
    """The prefix digest, chained record by record (``d_i = blake2b(d_{i−1} ‖ record i)``), so a
    replay can go on from a snapshot's digest without the records before it."""

    def __init__(self, digest: str = "") -> None:
        self.d = bytes.fromhex(digest) if digest else b""

    def copy(self) -> _Chain:
        """An independent chain at the same digest (goes on from a snapshot)."""
        c = _Chain()
        c.d = self.d
        return c

    def hexdigest(self) -> str:
        """The chained digest so far, as hex ("" before any record)."""
        return self.d.hex()


def _feed(h: _Chain, rec: MatchRecord) -> None:
    h.d = hashlib.blake2b(h.d + replay_columns.record_bytes(rec), digest_size=16).digest()


def _ties(records: Sequence[MatchRecord]) -> tuple[int, int]:
    """``(tied, pairs)`` of :func:`arena.ratings.auto_draw_probability` over ``records``' played ones."""
    tied = pairs = 0
    for rec in records:
        if rec.played:
            r = sorted(rec.side_ranks)
            pairs += len(r) - 1
            tied += sum(a == b for a, b in zip(r, r[1:]))
    return tied, pairs


def _auto(tied: int, pairs: int) -> float:
    p = tied / pairs if pairs else 0.1
    return min(0.9, max(0.01, p))


def load(folder: str | Path) -> dict[str, Any] | None:
    """The checkpoint of ``folder`` (None if missing, unreadable or not matching its CRC: it is only a cache)."""
    try:
        data = json.loads((Path(folder) / NAME).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.pop("crc", None) != _crc(data):
        return None
    return data if data.get("format") == FORMAT and _well_formed(data) else None


def _well_formed(data: dict[str, Any]) -> bool:
    """Whether a checkpoint's fields have the types :func:`save` writes (a damaged or edited one is
    ignored and rebuilt, never a traceback): snapshots of ``n``, ``digest``, ``fallbacks`` and
    ``cur`` rows ``[bot, pi, tau]`` of finite floats; the journal entry's counts."""
    def num(x: Any) -> bool:
        """A finite int or float (not a bool)."""
        return type(x) in (int, float) and math.isfinite(x)

    snaps = data.get("snapshots", [])
    if not isinstance(snaps, list) or not isinstance(data.get("key", ""), str):
        return False
    for snap in snaps:
        if not (isinstance(snap, dict) and type(snap.get("n")) is int and isinstance(snap.get("digest"), str)
                and type(snap.get("fallbacks", 0)) is int and isinstance(snap.get("cur"), list)):
            return False
        if not all(isinstance(c, list) and len(c) == 3 and isinstance(c[0], str) and num(c[1]) and num(c[2])
                   for c in snap["cur"]):
            return False
    jr = data.get("journal")
    if jr is not None:
        if not isinstance(jr, dict):
            return False
        counts = ("end", "count", "tied", "pairs", "rated")
        if not all(type(jr.get(k, 0)) is int for k in counts) or not isinstance(jr.get("digest", ""), str):
            return False
        last = jr.get("last_key")
        if last is not None and not (isinstance(last, list) and len(last) == 3):
            return False
    return True


def _crc(data: dict[str, Any]) -> int:
    """CRC-32 of ``data``'s JSON (what :func:`save` writes before the ``crc`` key; ``json.loads``
    keeps the key order and every float's digits, so the loaded dict gives the same bytes)."""
    return zlib.crc32(json.dumps(data).encode())


def save(folder: str | Path, data: dict[str, Any]) -> None:
    """Write the checkpoint atomically (tmp + rename) with the CRC-32 of its content (a flipped bit
    is a checkpoint rebuilt, not a rating changed); a folder that cannot be written is left as is."""
    path = Path(folder) / NAME
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({**data, "crc": _crc(data)}))
        os.replace(tmp, path)
    except OSError:
        discard(tmp)


def _state(rater: Rater) -> dict[str, Any]:
    return {"cur": [[b, r.pi, r.tau] for b, r in rater.cur.items()], "fallbacks": rater.fallbacks}


def _restore(rater: Rater, snap: dict[str, Any]) -> None:
    rater.cur = {}
    for b, pi, tau in snap["cur"]:
        r = trueskill.Rating(0.0, 1.0)
        r.pi, r.tau = pi, tau
        rater.cur[b] = r
    rater.fallbacks = snap["fallbacks"]


class SampledHistory(Sequence[dict[str, tuple[float, float]]]):
    """A rating history downsampled at the source: ``len`` is every rated match, but only the
    entries at ``report.html``'s sample points (:func:`arena.report_html.data.sample_points`) are
    kept, each holding every bot moved since the previous point with its latest (μ, σ); the
    other entries read as ``{}``. Replaying it gives each bot's exact (μ, σ) at the sample points
    (what the report draws) in ~``HISTORY_POINTS`` dicts instead of one per match.
    """

    def __init__(self, n: int, at: Sequence[int]) -> None:
        self._n = n
        self._at = {int(i) for i in at if i > 0}
        self._kept: dict[int, dict[str, tuple[float, float]]] = {}
        self._pending: dict[str, tuple[float, float]] = {}
        self._i = 0

    def append(self, moved: dict[str, tuple[float, float]]) -> None:
        """Add the entry of the next rated match (kept merged until the next sample point)."""
        self._pending.update(moved)
        self._i += 1
        if self._i in self._at:
            self._kept[self._i - 1], self._pending = self._pending, {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._kept.get(i, {})


def replay(folder: str | Path | None, records: Sequence[MatchRecord], bots: Sequence[str],
           draw_probability: float | str = "auto", tau: float | str = "default", fixed: Sequence[str] = (),
           mu: float = 25.0, sigma: float = 25.0 / 3, rate_forfeits: bool = False,
           history: bool = True, journal: Sequence[tuple[int, str, int]] | None = None) -> RatingResult:
    """The ordered TrueSkill replay of :func:`arena.ratings.rate`, resumed from ``folder``'s checkpoint.

    Same parameters and result as :func:`arena.ratings.rate`; ``folder`` None: no checkpoint.

    :param history: also return the per-match history (then the replay is full: the
        checkpoint holds no history); beyond ``report.html``'s sample points it is a
        :class:`SampledHistory` (exact at those points, a few hundred dicts).
    :param journal: the journal's vouched-for byte prefixes, ``(end, digest, records of
        ``records`` before end)`` (:func:`arena.journal_cache.read`'s ``prefixes``), ``records``
        in file order. With them the checkpoint also remembers the journal prefix it covers, and
        when every new record comes after it in the replay order (the usual case: the schedule
        plays in that order) only the new records are sorted, hashed and replayed — no O(N) work.
    :returns: :class:`arena.ratings.RatingResult` whose ``ratings`` equal a full rebuild's bit for
        bit; ``history`` empty when ``history`` is False.
    """
    old = load(folder) if folder is not None and not history else None
    if old is not None and journal:
        fast = _append_only(folder, old, records, bots, draw_probability, tau, fixed, mu, sigma, rate_forfeits,
                            journal)
        if fast is not None:
            return fast
    by_columns = getattr(records, "replay_order", None)  # a RecordView (arena.columns): no record list held
    rated = (by_columns(rate_forfeits) if by_columns is not None
             else sorted((r for r in records if r.rated(rate_forfeits)), key=MatchRecord.replay_key))
    counts: list[int] | None = None
    if draw_probability == "auto":
        tied, pairs = _ties_of(rated)
        dp = _auto(tied, pairs)
    else:  # the tie counts (kept for a later ``auto``) are taken during the replay: one pass
        dp, counts = float(draw_probability), [0, 0]
    rater = Rater(dp, tau, fixed, mu, sigma)
    for b in bots:
        rater.rating(b)
    key = _key(bots, rater.dp, tau, fixed, mu, sigma, rate_forfeits)
    n = len(rated)
    marks = sorted({max(0, n - k) for k in BACKOFFS})
    snaps: dict[int, dict[str, Any]] = {}
    start = 0
    h = _Chain()
    if old is not None and old.get("key") == key:
        stored = {int(s["n"]): s for s in old.get("snapshots", [])}
        best = 0
        got = _digests(rated, h, min(n, max(stored, default=0)), stored)
        for m, d in got.items():
            if stored[m]["digest"] == d:
                best = max(best, m)
        if best:
            _restore(rater, stored[best])
            start, h = best, _Chain(got[best])
            for m in marks:  # earlier snapshots still valid: keep them
                if m <= best and m in stored and m > 0:
                    snaps[m] = stored[m]
        else:
            h = _Chain()
    if start == 0:
        h = _Chain()
    result = RatingResult({}, draw_probability=rater.dp)
    if history:
        from arena.ratings import HISTORY_POINTS, sample_points

        if n + 1 > HISTORY_POINTS:
            result.history = SampledHistory(n, [int(x) for x in sample_points(n)])  # type: ignore[assignment]
    _play(rater, rated, start, marks, h, snaps, result.history if history else None, counts=counts)
    if counts is not None:
        tied, pairs = _ties_of(rated, start) if start else (0, 0)  # the records not replayed
        tied, pairs = tied + counts[0], pairs + counts[1]
    if folder is not None:
        jr = None
        if journal and journal[-1][2] == len(records):
            jr = {"end": journal[-1][0], "digest": journal[-1][1], "count": len(records), "tied": tied,
                  "pairs": pairs, "rated": n, "last_key": list(rated[-1].replay_key()) if rated else None}
        save(folder, {"format": FORMAT, "key": key, "resumed_from": start, "journal": jr,
                      "snapshots": [snaps[m] for m in sorted(snaps)]})
    result.ratings = {b: (r.mu, r.sigma) for b, r in rater.cur.items()}
    result.fallbacks = rater.fallbacks
    return result


def _ties_of(rated: Sequence[MatchRecord], stop: int | None = None) -> tuple[int, int]:
    """:func:`_ties` of ``rated[:stop]`` (from the columns for a :class:`arena.record_view.RecordView`)."""
    if isinstance(rated, RecordView):
        return replay_columns.ties(rated, stop)
    return _ties(rated if stop is None else rated[:stop])


def _digests(rated: Sequence[MatchRecord], h: _Chain, stop: int, at: Any) -> dict[int, str]:
    """The chained digests of ``rated[:stop]`` fed into ``h`` at the positions ``at`` (1-based)."""
    if isinstance(rated, RecordView):
        return replay_columns.chain(rated, h, stop, at)
    want, out = set(at), {}
    for i in range(stop):
        _feed(h, rated[i])
        if i + 1 in want:
            out[i + 1] = h.hexdigest()
    return out


def _play(rater: Rater, rated: Sequence[MatchRecord], start: int, marks: Sequence[int], h: _Chain,
          snaps: dict[int, dict[str, Any]], history: Any, offset: int = 0, counts: list[int] | None = None) -> None:
    """Replay ``rated[start:]``, feeding the prefix digest and taking snapshots at ``marks``
    (positions counted from ``offset``: the records before ``rated[0]``); ``counts``, if given,
    gets :func:`_ties`' ``[tied, pairs]`` of the replayed records added. A
    :class:`arena.record_view.RecordView` is replayed from its columns (:mod:`arena.replay_columns`:
    the same values, no record built for the usual ones)."""
    if isinstance(rated, RecordView):
        replay_columns.play(rater, rated, start, marks, h, snaps, history, _state, offset, counts)
        return
    for i in range(start, len(rated)):
        rec = rated[i]
        if counts is not None and rec.played:
            r = sorted(rec.side_ranks)
            counts[1] += len(r) - 1
            counts[0] += sum(a == b for a, b in zip(r, r[1:]))
        moved = rater.record(rec)
        if history is not None:
            history.append(moved)
        _feed(h, rec)
        if offset + i + 1 in marks:
            snaps[offset + i + 1] = {"n": offset + i + 1, "digest": h.hexdigest(), **_state(rater)}


def _append_only(folder: str | Path | None, old: dict[str, Any], records: Sequence[MatchRecord], bots: Sequence[str],
                 draw_probability: float | str, tau: float | str, fixed: Sequence[str], mu: float, sigma: float,
                 rate_forfeits: bool, journal: Sequence[tuple[int, str, int]]) -> RatingResult | None:
    """The replay when the checkpoint covers a journal prefix still vouched for and every new
    rated record sorts after its last one: only the new records are replayed (None otherwise)."""
    jr = old.get("journal")
    if not isinstance(jr, dict) or folder is None:
        return None
    valid: dict[tuple[Any, Any], int] = {(int(e), str(d)): int(c) for e, d, c in journal}
    count = jr.get("count")
    if valid.get((jr.get("end"), jr.get("digest"))) != count or not isinstance(count, int) or count > len(records):
        return None
    tail = records[count:]
    new: Sequence[MatchRecord] = (tail.replay_order(rate_forfeits) if isinstance(tail, RecordView)
                                  else sorted((r for r in tail if r.rated(rate_forfeits)), key=MatchRecord.replay_key))
    last = tuple(jr["last_key"]) if jr.get("last_key") else None
    if len(new) and last is not None and new[0].replay_key() < last:
        return None  # a new record inside the replayed order: the general path
    dt, dpairs = _ties_of(new)
    tied, pairs = jr["tied"] + dt, jr["pairs"] + dpairs
    dp = _auto(tied, pairs) if draw_probability == "auto" else float(draw_probability)
    rater = Rater(dp, tau, fixed, mu, sigma)
    for b in bots:
        rater.rating(b)
    key = _key(bots, rater.dp, tau, fixed, mu, sigma, rate_forfeits)
    stored = {int(s["n"]): s for s in old.get("snapshots", [])}
    n_old = max(stored, default=0)
    if old.get("key") != key or n_old != jr.get("rated") or (n_old == 0 and last is not None):
        return None
    h = _Chain()
    if n_old:
        _restore(rater, stored[n_old])
        h = _Chain(stored[n_old]["digest"])
    n = n_old + len(new)
    marks = sorted({max(0, n - k) for k in BACKOFFS})
    keep = {max((m for m in stored if 0 < m <= n - k), default=0) for k in BACKOFFS}
    snaps = {m: stored[m] for m in keep if m}  # the latest valid snapshot before each back-off
    _play(rater, new, 0, marks, h, snaps, None, offset=n_old)
    jr = None
    if journal[-1][2] == len(records):
        jr = {"end": journal[-1][0], "digest": journal[-1][1], "count": len(records), "tied": tied, "pairs": pairs,
              "rated": n, "last_key": list(new[-1].replay_key()) if len(new) else (list(last) if last else None)}
    save(folder, {"format": FORMAT, "key": key, "resumed_from": n_old, "journal": jr,
                  "snapshots": [snaps[m] for m in sorted(snaps)]})
    result = RatingResult({b: (r.mu, r.sigma) for b, r in rater.cur.items()}, draw_probability=rater.dp)
    result.fallbacks = rater.fallbacks
    return result


def _fit_key(bots: Sequence[str], rate_forfeits: bool) -> str:
    blob = json.dumps([FORMAT, list(bots), bool(rate_forfeits)])
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


def fit_start(folder: str | Path | None, bots: Sequence[str], rate_forfeits: bool = False) -> list[float] | None:
    """The checkpointed batch-fit parameters of ``folder`` for these bots (None if none or other bots)."""
    if folder is None:
        return None
    try:
        data = json.loads((Path(folder) / FIT_NAME).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != _fit_key(bots, rate_forfeits):
        return None
    beta = data.get("beta")
    ok = isinstance(beta, list) and all(isinstance(x, float) and math.isfinite(x) for x in beta)
    return beta if ok else None  # a NaN / Infinity start (an edited file) is no start: fitted from zero


def save_fit(folder: str | Path | None, bots: Sequence[str], rate_forfeits: bool, beta: Any) -> None:
    """Checkpoint a batch fit's parameters (atomically; an unwritable folder is left as is)."""
    if folder is None or beta is None:
        return
    path = Path(folder) / FIT_NAME
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"key": _fit_key(bots, rate_forfeits), "beta": [float(x) for x in beta]}))
        os.replace(tmp, path)
    except OSError:
        discard(tmp)
