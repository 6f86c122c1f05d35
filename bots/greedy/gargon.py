"""Greedy Gargon: play the strongest amulet-rich cards, pass and draw when the match is poor.

Strategy (docs/rules/gargon.md):

* Each card is worth ``p_win × gain``: ``p_win`` grows with the value (``v/15``, a zero
  0.1) and ``gain`` is the card's amulets, doubled per zero of its colour already in our
  stash, plus 2 for the colour bonus race; a zero's gain is the amulets it would multiply
  (our stash's amulets in that colour) plus 2. A play scores the sum of its cards minus
  ``0.6`` per card (the card is spent).
* Start player: the best legal play (1–3 cards). Follower: the best play matching the
  pattern (and the last player's colours); it passes when that play scores below 0.3.
* Plays are entered card by card: the plan is recomputed at every decision from hand plus
  current selection, restricted to plays that extend the selection, so it stays consistent.
* Drawing: the pile whose top colour we value most (amulets already won in it); a leader
  takes the last card of a pile (ending the game), a trailer avoids it; a passer stops
  after two cards once holding 14 or more.
"""

from __future__ import annotations

import random

from engine.games.gargon import actions as A
from engine.games.gargon import rules as R

CARD_COST = 0.6
PASS_BELOW = 0.3


def _gain_tables(obs: dict) -> tuple[list[float], list[int]]:
    """Per colour: amulets of our stash, and zeros in our stash."""
    amulets = obs["options"]["amulets"]
    am = [0.0] * A.NCOL
    zeros = [0] * A.NCOL
    for f in map(A.parse_face, obs["stash"][obs["seat"]]):
        c, v = divmod(f, 16)
        am[c] += amulets[v]
        zeros[c] += v == 0
    return am, zeros


def card_score(face: int, obs: dict, tables: tuple[list[float], list[int]]) -> float:
    """Expected gain of playing one card (see the module docstring)."""
    amulets = obs["options"]["amulets"]
    am, zeros = tables
    c, v = divmod(face, 16)
    if v == 0:
        return 0.1 * (am[c] * (2 ** zeros[c]) + 2)
    return (v / 15) * (amulets[v] * (2 ** zeros[c]) + 2)


def best_play(obs: dict) -> tuple[tuple[int, ...], float] | None:
    """The best complete play extending the current selection, with its score (None if none)."""
    seat = obs["seat"]
    sel = [A.parse_face(x) for x in obs["table"][seat]]
    hand = [A.parse_face(x) for x in obs["hand"]] + sel
    is_start = seat == obs["start_player"]
    pattern = None if is_start else tuple(obs["pattern"])
    allowed = 0b111111
    n = obs["players"]
    if not is_start and seat == (obs["start_player"] - 1) % n:
        allowed = 0
        for ch in obs["colours_played"]:
            allowed |= 1 << A.COLOURS.index(ch)
    tables = _gain_tables(obs)
    best = None
    for play in R.legal_plays(hand, pattern, allowed):
        if list(play[:len(sel)]) != sel:
            continue
        score = sum(card_score(f, obs, tables) for f in play) - CARD_COST * len(play)
        key = (score, [-f for f in play])
        if best is None or key > best[0]:
            best = (key, play)
    if best is None:
        return None
    return best[1], best[0][0]


def _pile_choice(obs: dict, legal: list[str]) -> str:
    seat = obs["seat"]
    piles = obs["piles"]
    scores = obs["scores"]
    leading = scores[seat] >= max(scores)
    am, zeros = _gain_tables(obs)
    best = None
    for name in ("a", "b"):
        act = "draw " + name
        if act not in legal or not piles[name]:
            continue
        c = A.COLOURS.index(piles[name][0])
        pref = am[c] + 2 * zeros[c] + len(piles[name]) * 0.01
        if len(piles[name]) == 1:
            pref += 100 if leading else -100
        if best is None or pref > best[0]:
            best = (pref, act)
    return best[1] if best else legal[0]


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """One greedy decision; returns an element of ``legal``."""
    if len(legal) == 1:
        return legal[0]
    phase = observation["phase"]
    if phase in ("pass_draw", "replacement"):
        if "stop" in legal and observation["draws_taken"] >= 2 and len(observation["hand"]) >= 14:
            return "stop"
        return _pile_choice(observation, legal)
    plan = best_play(observation)
    sel_len = len(observation["table"][observation["seat"]])
    if plan is None:
        return "pass" if "pass" in legal else legal[0]
    play, score = plan
    if sel_len == 0 and "pass" in legal and score < PASS_BELOW:
        return "pass"
    if sel_len < len(play):
        choice = "select " + A.FACE_STR[play[sel_len]]
    else:
        choice = "done"
    return choice if choice in legal else legal[rng.randrange(len(legal))]
