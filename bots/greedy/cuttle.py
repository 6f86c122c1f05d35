"""Greedy Cuttle heuristic (``docs/rules/cuttle.md``): score points, scuttle when it pays.

Every legal action gets a one-ply score from the observation; the best is played
(ties broken by ``rng``):

* a play that wins at the end of this turn (enough points, or a king lowering the
  threshold below the points already held) scores highest;
* points: the card's value; a scuttle: the target's value minus half the card's (more
  when the opponent is close to winning); a jack: twice the stolen value;
* kings, queens and glasses have fixed worths; 2s / 9s on the opponent's permanents pay,
  on one's own they cost; an ace or a 6 only when it hurts the opponent more than us;
* drawing is the fallback; passing the last resort.
* Counter window: counter an opponent's one-off that hurts us (and re-counter to save
  our own); otherwise decline. 3: take the most valuable card; 4: discard the cheapest.
"""

from __future__ import annotations

import random

from engine.cards import parse_french

_VALUE = {"A": 1, "T": 10, "J": 0, "Q": 0, "K": 0}
_THRESH = (21, 14, 10, 7, 5)


def _value(card: str) -> int:
    r = card[0]
    return _VALUE[r] if r in _VALUE else int(r)


def _keep_worth(card: str) -> float:
    """How much a card in hand is worth keeping (for the 4's discards and the 3's pick)."""
    r = card[0]
    if r == "K":
        return 9.0
    if r == "Q":
        return 7.0
    if r == "J":
        return 8.0
    if r == "2":
        return 6.5
    return float(_value(card))


class _View:
    """Small facts about the table for one seat."""

    def __init__(self, obs: dict) -> None:
        self.me = obs["seat"]
        self.opp = 1 - self.me
        self.points = obs["points"]
        self.thresholds = obs["thresholds"]
        self.perms = obs["permanents"]
        self.stacks = {s["base"]: s for s in obs["stacks"]}
        self.kings = [sum(1 for c in self.perms[p] if c[0] == "K") for p in (0, 1)]
        self.top_jack_side = {}
        for s in obs["stacks"]:
            if s["jacks"]:
                self.top_jack_side[s["jacks"][-1]] = s["controller"]

    def side_of(self, card: str) -> int:
        """The side a permanent or top jack lies on."""
        if card in self.top_jack_side:
            return self.top_jack_side[card]
        return 0 if card in self.perms[0] else 1

    def stack_value(self, base: str) -> int:
        """Point value of the stack whose base card is ``base`` (A = 1, 2..10 face value)."""
        return _value(base)


def _score_oneoff(card: str, target: str | None, v: _View, obs: dict) -> float:
    me, opp = v.me, v.opp
    r = card[0]
    if r in "29" and target is not None:
        side = v.side_of(target)
        t = target[0]
        if t == "J":
            worth = 2.0 * v.stack_value(next(b for b, s in v.stacks.items() if s["jacks"] and s["jacks"][-1] == target))
        else:
            worth = {"K": 6.0, "Q": 4.5, "8": 3.0}.get(t, 2.0)
        gain = worth if side == opp else -worth
        return gain - (1.0 if r == "2" else 0.5)
    if r == "A":
        return (v.points[opp] - v.points[me]) - 2.0
    if r == "6":
        mine = len(v.perms[me]) + sum(1 for s in v.stacks.values() if s["controller"] == me and len(s["jacks"]) % 2)
        theirs = len(v.perms[opp]) + sum(1 for s in v.stacks.values() if s["controller"] == opp and len(s["jacks"]) % 2)
        return 2.5 * (theirs - mine) - 2.0
    if r == "4":
        return 0.5 * min(2, obs["hand_sizes"][opp]) + 0.5
    if r == "5":
        return 2.2
    if r == "3":
        best = max((_keep_worth(c) for c in obs["scrap"]), default=0.0)
        return best - 4.0
    if r == "7":
        return 1.8
    return 0.0


def _score(action: str, v: _View, obs: dict) -> float:
    me, opp = v.me, v.opp
    w = action.split()
    kind = w[0]
    need = v.thresholds[me] - v.points[me]
    opp_need = v.thresholds[opp] - v.points[opp]
    if kind == "draw":
        return 1.5
    if kind == "pass":
        return -50.0
    if kind == "points":
        val = _value(w[1])
        return 100.0 if val >= need else float(val)
    if kind == "scuttle":
        target, card = w[1], w[3]
        tv, cv = v.stack_value(target), _value(card)
        urgency = 6.0 if opp_need <= tv + 3 else 0.0
        return tv - 0.5 * cv + urgency - 0.5
    if kind == "jack":
        base = w[3]
        st = v.stacks[base]
        val = v.stack_value(base)
        if st["controller"] == opp:
            return 100.0 if val >= need else 2.0 * val + 0.5
        return -2.0 * val
    if kind == "king":
        new_need = _THRESH[min(4, v.kings[me] + 1)] - v.points[me]
        return 100.0 if new_need <= 0 else 5.0
    if kind == "queen":
        return 3.5
    if kind == "glasses":
        return 2.5
    if kind == "oneoff":
        target = w[3] if len(w) == 4 else None
        return _score_oneoff(w[1], target, v, obs)
    return 0.0


def _counter_decision(obs: dict, legal: list[str]) -> str:
    counters = [a for a in legal if a.startswith("counter")]
    if not counters:
        return "decline"
    pending = obs["oneoff"]
    me = obs["seat"]
    chain = pending["counters"]
    # whose card would our counter cancel? the last 2 of the chain, else the one-off
    mine_on_top = (pending["player"] == me) == (len(chain) % 2 == 0)
    if mine_on_top:
        return "decline"
    own_oneoff = pending["player"] == me
    if own_oneoff:
        return counters[0]  # re-counter to save our own one-off
    v = _View(obs)
    # what the one-off is worth to its player (scored from their side) is our loss
    harm = _score_oneoff(pending["card"], pending["target"], _mirror(v), obs)
    return counters[0] if harm >= 3.0 else "decline"


def _mirror(v: _View) -> _View:
    m = object.__new__(_View)
    m.__dict__.update(v.__dict__)
    m.me, m.opp = v.opp, v.me
    return m


def act(observation: dict, legal: list[str], rng: random.Random) -> str:
    """Choose one of ``legal`` for a Cuttle observation (see the module docstring)."""
    if len(legal) == 1:
        return legal[0]
    phase = observation["phase"]
    if phase == "counter":
        return _counter_decision(observation, legal)
    if phase == "take":
        return max(legal, key=lambda a: (_keep_worth(a.split()[1]), parse_french(a.split()[1])))
    if phase == "discard":
        return min(legal, key=lambda a: (sum(_keep_worth(c) for c in a.split()[1:]), a))
    v = _View(observation)
    best = None
    best_score = float("-inf")
    order = list(legal)
    rng.shuffle(order)
    for a in order:
        s = _score(a, v, observation)
        if s > best_score:
            best, best_score = a, s
    return best
