"""The tables' numbers from match records: leaderboard rows, crosstable, reliability,
duplicate efficiency, and :class:`Standings` (everything the tables show for one folder).

Pure computation over :class:`arena.record.MatchRecord` values and a
:class:`arena.ratings.RatingResult`; drawing and exporting them is :mod:`arena.render` and
:mod:`arena.report_html`, reading a results folder is :mod:`arena.results`.

A fault count alone does not say why a bot fails: the reliability figures keep each bot's
first fault — class, detail, the last line of its stderr, and whether it happened at
start-up (:func:`arena.faults.first_fault`), one line each (:func:`fault_lines`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.faults import fault_line, first_fault
from arena.latency import DecisionTimes, Latency, summary
from arena.protocol import printable
from arena.ratings import RatingResult
from arena.record import MatchRecord
from arena.schedule import design_mixing
from arena.strength import Strength
from arena.tallies import Tallies, credits

FAULT_CLASSES = ("timeout", "crash", "illegal", "protocol", "stall", "disabled")


@dataclass
class Standings:
    """Everything the tables show for one tournament folder (built by :func:`arena.results.standings`).

    :ivar meta: ``tournament.json``; :ivar records: the rated schedule's records;
    :ivar outside: recorded matches outside the schedule, not rated.
    """

    name: str
    meta: dict[str, Any]
    records: Sequence[MatchRecord]
    ratings: RatingResult
    rows: list[dict[str, Any]]
    cross: dict
    rel: dict
    efficiency: dict[str, Any] = field(default_factory=dict)
    outside: int = 0
    strength: Strength | None = None  #: the batch fit that orders the rows
    mixing: dict[str, Any] = field(default_factory=dict)  #: :func:`mixing`


def _block(rec: MatchRecord) -> tuple[str, int]:
    return (rec.lineup, rec.deal_index)


def new_stats() -> dict[str, Any]:
    """Empty per-bot counters for :func:`tally`."""
    return {"matches": 0, "wins": 0, "rank_sum": 0.0, "score_sum": 0.0, "faults": 0, "forfeits": 0,
            "blocks": defaultdict(list)}


def tally(out: dict[str, dict[str, Any]], rec: MatchRecord) -> None:
    """Add one record to per-bot counters (``matches``, ``wins``, ``rank_sum``, ``score_sum``,
    ``faults``, ``forfeits``, ``blocks``); used by :func:`bot_stats` and the live board."""
    if not rec.finished:
        return
    for b, _seat, win, rank, score in credits(rec):
        st = out.setdefault(b, new_stats())
        st["matches"] += 1
        st["wins"] += win
        st["rank_sum"] += rank
        st["score_sum"] += score
        st["blocks"][_block(rec)].append(score)
    for f in rec.faults:
        if f.bot in out:
            out[f.bot]["faults"] += 1
    if rec.status == "forfeit":
        for fb in {f.bot for f in rec.faults}:
            if fb in out:
                out[fb]["forfeits"] += 1


def bot_stats(records: Sequence[MatchRecord], bots: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per bot: matches, wins, mean rank, mean score with its 95% interval, faults.

    A bot's score in a match is its seat's reward in [0, 1] (beating every other side = 1,
    ties count half). Aborted matches are not counted. A bot that faulted in a forfeited
    match never counts a win in it (when every side faulted, all share rank 0). A match not
    played because a bot was disabled counts only for the disabled bots, as a loss
    (:func:`credits`). The interval: the block bootstrap below :data:`arena.stats.T_FROM`
    duplicate blocks, from there the blocks' Wilson interval (:meth:`arena.tallies.Tallies.bot_stats`).
    """
    return Tallies(bots).add_all(records).bot_stats()


def row_order(row: dict[str, Any]) -> tuple:
    """Sort key of a table row (``bot``, ``mu``, ``sigma``, ``score``, ``faults``): μ−3σ, then μ,
    then score, then fewer faults, then name — a bot with more faults never wins a name tie.
    A missing score (no match counted) sorts below every score."""
    score = row.get("score")
    score = score if isinstance(score, (int, float)) and math.isfinite(score) else -math.inf
    return (-(row["mu"] - 3 * row["sigma"]), -row["mu"], -score, row.get("faults", 0), row["bot"])


def skill_above(a: dict[str, Any], b: dict[str, Any]) -> float:
    """P(skill of a > skill of b) under the TrueSkill posteriors: ``Φ((μa − μb) / sqrt(σa² + σb²))``.

    It agrees with the table's order (sorted by μ−3σ), unlike a test on raw scores, which
    weighs every match alike whoever the opponents were.
    """
    d = math.sqrt(a["sigma"] ** 2 + b["sigma"] ** 2)
    if d == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((a["mu"] - b["mu"]) / (d * math.sqrt(2.0))))


def leaderboard(records: Sequence[MatchRecord], bots: Sequence[str], ratings: RatingResult,
                strength: Strength | None = None, counts: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The table's rows, best first: rank, bot, strength (with ``strength_low/high``, ``rank_low/high``),
    mu, sigma, conservative, matches, wins, win_rate, mean_rank (1 = first), score, score_low,
    score_high, faults, forfeits, p_above_next.

    With ``strength`` (:func:`arena.strength.strength`, the batch fit) the rows follow it:
    rated bots by strength, and the rank interval and P(>next) come from the same fit; bots
    without rated results follow by :func:`row_order`. Without it (the live board's rules)
    the rows are sorted by :func:`row_order` and P(>next) is TrueSkill's (:func:`skill_above`).
    ``counts``: :func:`bot_stats` of the records when already known (the checkpointed counters).
    """
    st = bot_stats(records, bots) if counts is None else counts
    srows = strength.rows() if strength is not None else {}
    rows = []
    for b in bots:
        mu, sigma = ratings.ratings.get(b, (25.0, 25.0 / 3))
        s = st[b]
        rows.append({"bot": b, **srows.get(b, {}), "mu": mu, "sigma": sigma, "conservative": mu - 3 * sigma,
                     "matches": s["matches"], "wins": s["wins"], "win_rate": s["win_rate"],
                     "mean_rank": s["mean_rank"] + 1, "score": s["score"], "score_low": s["score_low"],
                     "score_high": s["score_high"], "faults": s["faults"], "forfeits": s["forfeits"]})
    if strength is not None:
        pos = {b: i for i, b in enumerate(strength.order())}
        rated = sorted((r for r in rows if r.get("strength") is not None), key=lambda r: pos[r["bot"]])
        rows = rated + sorted((r for r in rows if r.get("strength") is None), key=row_order)
    else:
        rows.sort(key=row_order)
    for i, r in enumerate(rows):
        r["rank"] = i + 1
    for i, r in enumerate(rows):
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        if nxt is None:
            r["p_above_next"] = None
        elif strength is None:
            r["p_above_next"] = skill_above(r, nxt)
        else:
            both = r.get("strength") is not None and nxt.get("strength") is not None
            r["p_above_next"] = strength.p_stronger(r["bot"], nxt["bot"]) if both else None
    return rows


def order_notes(rows: Sequence[dict[str, Any]], limit: int = 5) -> list[str]:
    """Sentences for under the table where a bot stands above the next one with a clearly lower
    score (the next one's score outside the bot's 95% interval) or clearly fewer wins in as many
    matches (by more than 5% of them): the rating weighs each result by who the opponents were,
    the score and the wins do not. Gaps inside the noise get no sentence (a new user counted 4
    notes for 10 bots over gaps of 0.001–0.003)."""
    out = []
    for a, b in zip(rows, rows[1:]):
        sa, sb, hi = a.get("score"), b.get("score"), a.get("score_high")
        lower_score = (isinstance(sa, float) and isinstance(sb, float) and math.isfinite(sa) and sb > sa
                       and (not isinstance(hi, float) or not math.isfinite(hi) or sb > hi))
        fewer_wins = a["matches"] == b["matches"] and b["wins"] - a["wins"] > 0.05 * a["matches"]
        if a.get("strength") is None or b.get("strength") is None or not (lower_score or fewer_wins):
            continue
        what = (f"a lower score ({sa:.3f} vs {sb:.3f})" if lower_score else
                f"fewer wins ({a['wins']} vs {b['wins']})")
        out.append(f"{a['bot']} stands above {b['bot']} with {what}: they met different opponents, and the "
                   "rating counts each result by the strength of the bots it was against.")
    if len(out) > limit:
        out = [*out[:limit], f"… and {len(out) - limit} more such pairs."]
    return [*separation_notes(rows, limit), *out]


def separation_notes(rows: Sequence[dict[str, Any]], limit: int = 5) -> list[str]:
    """Sentences for bots that won (or lost) every match they played: no result bounds their
    strength on that side, so its value and interval there are set by the fit's small penalty
    (:data:`arena.batchfit.RIDGE`), not measured — the order is sure, the margin is not
    (adversarial trial: a bot winning every match showed ``+1976 [+1964, +1988]``)."""
    def names(group: list[str]) -> str:
        """Up to ``limit`` bot names, then how many more."""
        return ", ".join(group[:limit]) + (f" and {len(group) - limit} more" if len(group) > limit else "")

    rated = [r for r in rows if r.get("strength") is not None and r.get("matches")]
    won = [r["bot"] for r in rated if r["wins"] == r["matches"]]
    lost = [r["bot"] for r in rated if r["wins"] == 0 and r.get("score") == 0.0]
    out = []
    for group, what, side in ((won, "won", "above"), (lost, "lost", "below")):
        if group:
            one = len(group) == 1
            out.append(f"{names(group)} {what} every match {'it' if one else 'they'} played: nothing bounds "
                       f"{'its' if one else 'their'} strength from {side}, so its size there (and that end of "
                       "the interval) comes from the fit's small penalty, not from the results.")
    return out


def mixing(records: Sequence[MatchRecord], bots: Sequence[str]) -> dict[str, Any]:
    """The design's mixing over the rated records: distinct opponents per bot (``min``,
    ``median``, ``max``) of ``possible`` (:func:`arena.schedule.design_mixing`)."""
    lineups = {r.lineup: tuple(dict.fromkeys(r.seats)) for r in records if r.finished}
    return design_mixing(list(lineups.values()), list(bots))


def mixing_line(mix: dict[str, Any]) -> str:
    """One line for beside the duplicate efficiency, e.g. ``Design mixing: each bot met 22–24 ...``."""
    if not mix or not mix.get("possible"):
        return ""
    lo, med, hi = mix["min"], mix["median"], mix["max"]
    span = f"{lo}" if lo == hi else f"{lo}–{hi}"
    med_s = f"{med:g}"
    word = "opponent" if hi == 1 else "opponents"
    return (f"Design mixing: each bot met {span} distinct {word} (median {med_s}) of the "
            f"{mix['possible']} {'other' if mix['possible'] == 1 else 'others'}")


def crosstable(records: Sequence[MatchRecord]) -> dict[str, dict[str, dict[str, float]]]:
    """Pairwise results: ``table[a][b] = {"score": mean score of a against b, "matches": n}``.

    In each match, every pair of bots on different sides scores 1 / 0.5 / 0 by their sides' ranks.
    A match not played because a bot was disabled counts only in the disabled bots' rows, as
    a 0 against every other bot of the lineup (the others never started: no credit for them).
    Kept as a running sum and count per pair (the scores are multiples of 0.5: exact).
    """
    acc: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for rec in records:
        if not rec.finished:
            continue
        sides = rec.sides
        ranks = rec.side_ranks
        disabled = {f.bot for f in rec.faults if f.cls == "disabled"} if rec.disabled else None
        for i, si in enumerate(sides):
            for j, sj in enumerate(sides):
                if i == j:
                    continue
                if disabled is not None:
                    s = 0.0
                else:
                    s = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                for a in si:
                    if disabled is not None and a not in disabled:
                        continue
                    for b in sj:
                        if a != b:
                            v = acc[a][b]
                            v[0] += s
                            v[1] += 1
    return {a: {b: {"score": v[0] / v[1], "matches": v[1]} for b, v in row.items()} for a, row in acc.items()}


class LazyCrosstable(dict):
    """:func:`crosstable` of ``records``, computed on first use (``arena leaderboard --format
    json`` never reads it; at 1,000 bots it is a million cells). A plain ``dict`` once filled."""

    def __init__(self, records: Sequence[MatchRecord]) -> None:
        super().__init__()
        self._records: Sequence[MatchRecord] | None = records

    def _fill(self) -> None:
        if self._records is not None:
            recs, self._records = self._records, None
            super().update(crosstable(recs))

    def __getitem__(self, k: str) -> dict[str, dict[str, float]]:
        self._fill()
        return super().__getitem__(k)

    def __contains__(self, k: object) -> bool:
        self._fill()
        return super().__contains__(k)

    def __iter__(self):
        self._fill()
        return super().__iter__()

    def __len__(self) -> int:
        self._fill()
        return super().__len__()

    def __eq__(self, other: object) -> bool:
        self._fill()
        if isinstance(other, LazyCrosstable):
            other._fill()
        return super().__eq__(other)

    __hash__ = None

    def get(self, k: str, default: Any = None) -> Any:
        """As ``dict.get``."""
        self._fill()
        return super().get(k, default)

    def items(self):
        """As ``dict.items``."""
        self._fill()
        return super().items()

    def keys(self):
        """As ``dict.keys``."""
        self._fill()
        return super().keys()

    def values(self):
        """As ``dict.values``."""
        self._fill()
        return super().values()


def reliability(records: Sequence[MatchRecord], bots: Sequence[str],
                latency: Latency | None = None) -> dict[str, dict[str, Any]]:
    """Per bot: faults by class, move latency p50/p99 (ms) over all its decisions, and its
    ``first_fault`` in journal order (:func:`arena.faults.first_fault`; a ``disabled`` one only if it
    has no other; None without faults).

    :param latency: the decision times, when the records do not hold them (else read from
        each record's ``move_ms``)."""
    faults = {b: dict.fromkeys(FAULT_CLASSES, 0) for b in bots}
    first: dict[str, dict[str, Any]] = {}
    lat: dict[str, DecisionTimes] = latency.times if latency is not None else {b: DecisionTimes() for b in bots}
    for rec in records:
        for f in rec.faults:
            b = f.bot
            if b in faults:
                faults[b][f.cls] = faults[b].get(f.cls, 0) + 1
                if b not in first or (first[b]["class"] == "disabled" and f.cls != "disabled"):
                    first[b] = first_fault(rec, f)
        if latency is None:
            for seat, times in enumerate(rec.move_ms):
                sb = rec.seats[seat]
                if sb in lat and times:
                    lat[sb].extend(times)
    return {b: {"faults": faults[b], **summary(lat.get(b)), "first_fault": first.get(b)} for b in bots}


def reliability_of(tallies: Any, bots: Sequence[str], latency: Latency) -> dict[str, dict[str, Any]]:
    """:func:`reliability` from the counters of an :class:`arena.tallies.Tallies` and the
    decision times (the same values)."""
    faults, firsts = tallies.fault_counts()
    first = {b: first_fault(rec, f) for b, (rec, f) in firsts.items()}
    return {b: {"faults": {**dict.fromkeys(FAULT_CLASSES, 0), **faults.get(b, {})}, **summary(latency.times.get(b)),
                "first_fault": first.get(b)} for b in bots}


def fault_lines(rel: dict[str, dict[str, Any]]) -> list[str]:
    """:func:`fault_line` for every bot of ``rel`` with faults, in ``rel``'s order."""
    out = []
    for b, r in rel.items():
        first = r.get("first_fault")
        if first:
            out.append(printable(fault_line(b, first, sum(r["faults"].values()))))
    return out  # printable: journals written before stderr was escaped at capture


def duplicate_efficiency(records: Sequence[MatchRecord]) -> dict[str, Any]:
    """The duplicate efficiency a tournament achieved: the "games saved" factor.

    Each bot's seat rewards in ``ok`` matches are grouped into duplicate blocks (one deal
    of one lineup, every rotation). Within each (bot, lineup) group the variance of a
    single result and the variance of a block mean are pooled over all groups, with
    the degrees of freedom each group's own mean uses up, and compared as in
    :func:`arena.stats.duplicate_efficiency`: ``factor = Var(single) / (k Var(block mean))``
    for blocks of ``k`` matches. With one group the factor equals
    ``stats.duplicate_efficiency`` of its blocks.

    ``factor`` > 1 means the tournament's N matches measured the bots as precisely as
    ``factor · N`` unpaired matches would; 1 means the pairing did not help. Only complete
    blocks (as many matches as the largest block) count, so a running tournament's
    unfinished deals are left out.

    :returns: ``{"factor", "blocks", "bot_blocks", "block_size", "var_single", "var_block_mean"}``
        (``blocks``: complete duplicate blocks; ``bot_blocks``: the per-bot samples of them);
        ``factor`` is ``nan`` when undefined (blocks of one match, fewer than 2 blocks
        beyond the groups' means, or no variance at all) and ``inf`` when every block
        mean equals its group's mean while single results vary.
    """
    return Tallies(()).add_all(records).efficiency()


def efficiency_line(eff: dict[str, Any]) -> str:
    """One line for under the leaderboard table, e.g. ``Duplicate efficiency: 2.14× ...``."""
    f = eff.get("factor")
    if f is None or f != f:
        return (f"Duplicate efficiency: – (cannot be estimated from the {eff.get('blocks', 0)} complete duplicate "
                "blocks here: it needs lineups that played two or more deals in every seating, with results that vary)")
    if f == float("inf"):
        return (f"Duplicate efficiency: ∞ — duplicate deals removed all the luck of the deal "
                f"({eff['blocks']} blocks of {eff['block_size']} matches)")
    return (f"Duplicate efficiency: {f:.2f}× — each match was worth {f:.2f} unpaired ones "
            f"(variance of block-paired vs unpaired results; {eff['blocks']} blocks of {eff['block_size']} matches)")


def elo_text(x: float) -> str:
    """A strength in Elo points, signed, whole: ``+57``, ``-8``, ``0`` (never ``-0`` or ``+0``)."""
    n = round(x)
    return "0" if n == 0 else f"{n:+d}"


def rank_text(r: dict[str, Any]) -> str:
    """The row's rank interval: ``"3"``, ``"2–4"``, or ``"–"`` without a batch fit."""
    lo, hi = r.get("rank_low"), r.get("rank_high")
    if lo is None or hi is None:
        return "–"
    return str(lo) if lo == hi else f"{lo}–{hi}"


def latency_text(ms: float | None) -> str:
    """A decision time at a resolution that shows it: ``83 µs``, ``2.35 ms``, ``41.2 ms``, ``1203 ms``."""
    if ms is None or ms != ms:
        return "–"
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 100:
        return f"{ms:.1f} ms"
    return f"{ms:.0f} ms"
