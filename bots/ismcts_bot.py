"""The ISMCTS bot: :class:`engine.search.ismcts.ISMCTS` behind the bot protocol.

Run: ``python bots/ismcts_bot.py [--iterations N] [--time-ms T] [--c C] [--variant so|mo]
[--hand-rollouts] [--opponent-model tree|rollout]`` (speaks protocol v1 on stdin/stdout).

* ``--iterations N`` alone: a fixed budget, reproducible for the match's ``seed`` (the
  SDK reseeds ``ctx.rng`` at every ``start``).
* ``--time-ms T``: a time budget per decision, capped by the clock the arena sends:
  ``min(T, move_ms + bank_ms / BANK_SHARE - safety)`` (see :func:`time_budget_ms`).
  With both flags, the search stops at whichever comes first.
* With ``--iterations`` only, the clock is a hard cap and nothing else: the search stops
  early only where finishing would exceed ``move_ms + bank_ms - safety`` (a sure timeout),
  so iteration budgets stay deterministic whenever the clock is generous enough.
* The reply's ``info`` holds ``iterations``, ``value`` (the chosen move's mean reward for
  this seat, in [0, 1]), ``elapsed_ms`` and ``visits`` of the five most visited moves.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bots import sdk  # noqa: E402
from engine import registry  # noqa: E402
from engine.core import Game  # noqa: E402
from engine.search.ismcts import ISMCTS  # noqa: E402

#: the share of the remaining bank one decision may spend beyond ``move_ms``.
BANK_SHARE = 20
#: fixed part of the safety margin (ms): JSON, infoset building, one slow iteration.
SAFETY_MS = 60
#: proportional part of the safety margin (fraction of ``move_ms``).
SAFETY_FRACTION = 0.1


def time_budget_ms(time_ms: float | None, clock: dict | None, started_ms: float = 0.0) -> float | None:
    """The search time of one decision, in ms, inside the arena's clock.

    :param time_ms: the bot's own per-decision budget (None: no time budget of its own).
    :param clock: the ``clock`` of the ``act`` message, ``{"move_ms", "bank_ms"}`` in ms
        (None or empty: no clock).
    :param started_ms: ms already spent on this decision before the search starts.
    :returns: ``min(time_ms, move_ms + bank_ms / BANK_SHARE - safety) - started_ms`` with
        ``safety = SAFETY_MS + SAFETY_FRACTION * move_ms``, at least 1 ms; ``time_ms`` when
        there is no clock; None when neither is given (iterations only).
    """
    cap = None
    if clock and clock.get("move_ms") is not None:
        move = float(clock["move_ms"])
        bank = float(clock.get("bank_ms") or 0)
        cap = move + bank / BANK_SHARE - (SAFETY_MS + SAFETY_FRACTION * move)
    if time_ms is None:
        return None if cap is None else max(1.0, cap - started_ms)
    if cap is None:
        return max(1.0, time_ms - started_ms)
    return max(1.0, min(time_ms, cap) - started_ms)


def hard_cap_ms(clock: dict | None, started_ms: float = 0.0) -> float | None:
    """The most one decision may use before the arena calls it a timeout, minus the safety margin (ms).

    ``move_ms + bank_ms - safety - started_ms`` (at least 1 ms); None without a clock.
    """
    if not clock or clock.get("move_ms") is None:
        return None
    move = float(clock["move_ms"])
    bank = float(clock.get("bank_ms") or 0)
    return max(1.0, move + bank - (SAFETY_MS + SAFETY_FRACTION * move) - started_ms)


def choose(result_action, visits: dict, legal: list[str], fmt) -> str:
    """The protocol string to play: the search's action if legal, else the most visited legal one.

    :param result_action: the action chosen by the search (an engine action).
    :param visits: root action -> visit count.
    :param legal: the ``legal`` strings of the ``act`` message.
    :param fmt: the game's ``format_action``.
    """
    text = fmt(result_action)
    if text in legal:
        return text
    ranked = sorted(visits.items(), key=lambda kv: -kv[1])
    for action, _ in ranked:
        t = fmt(action)
        if t in legal:
            return t
    return legal[0]


def search_act(new_searcher: Callable[[Game], Any], iterations: int | None, time_ms: float | None,
               counts_key: str = "visits"):
    """An ``act(observation, legal, ctx)`` function for :func:`bots.sdk.run` around a searcher.

    :param new_searcher: builds the searcher of a game (one is cached per game); it has
        ``game`` and ``search(observation, rng, iterations=, time_ms=) -> SearchResult``.
    :param iterations: the iteration budget (None: time only).
    :param time_ms: the bot's own time budget (None: iterations, with the clock as a hard
        cap only, see :func:`hard_cap_ms`); else capped by the clock (:func:`time_budget_ms`).
    :param counts_key: the ``info`` key of the five largest ``SearchResult.visits``.
    """
    searchers: dict[str, Any] = {}

    def act(observation: dict, legal: list[str], ctx: sdk.Context):
        """``(action string, info)`` chosen by the search within the budget (``elapsed_ms`` in ms)."""
        t0 = time.perf_counter()
        if len(legal) == 1:
            return legal[0], {"iterations": 0, "value": None, "elapsed_ms": 0.0}
        game_name = ctx.game or observation["game"]
        search = searchers.get(game_name)
        if search is None:
            search = searchers[game_name] = new_searcher(registry.get_game(game_name))
        spent = (time.perf_counter() - t0) * 1000
        if time_ms is not None:
            budget = time_budget_ms(time_ms, ctx.clock, spent)
        else:
            budget = hard_cap_ms(ctx.clock, spent)
        res = search.search(observation, ctx.rng, iterations=iterations, time_ms=budget)
        fmt = search.game.format_action
        action = choose(res.action, res.visits, legal, fmt)
        top = sorted(res.visits.items(), key=lambda kv: -kv[1])[:5]
        info = {"iterations": res.iterations, "value": round(res.value, 4),
                "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
                counts_key: {fmt(a): v for a, v in top}}
        return action, info

    return act


def make_act(iterations: int | None, time_ms: float | None, c: float, variant: str, hand_rollouts: bool,
             opponent_model: str = "tree"):
    """An ``act(observation, legal, ctx)`` function for :func:`bots.sdk.run` searching with ISMCTS.

    With neither budget, 1,000 iterations. Searchers are cached per game.
    ``opponent_model`` is :class:`engine.search.ismcts.ISMCTS`'s (``"tree"`` or ``"rollout"``).
    """
    if iterations is None and time_ms is None:
        iterations = 1000
    return search_act(lambda game: ISMCTS(game, c=c, variant=variant, hand_rollouts=hand_rollouts,
                                          opponent_model=opponent_model),
                      iterations, time_ms, "visits")


def main(argv: list[str] | None = None) -> int:
    """Parse the flags and serve the protocol until stdin closes."""
    ap = argparse.ArgumentParser(description="ISMCTS bot (protocol v1 on stdin/stdout)")
    ap.add_argument("--iterations", type=sdk.positive_int, default=None, help="iterations per decision")
    ap.add_argument("--time-ms", type=sdk.positive_float, default=None, help="time per decision (ms), capped by the clock")
    ap.add_argument("--c", type=sdk.non_negative_float, default=0.7, help="exploration constant (rewards in [0, 1])")
    ap.add_argument("--variant", choices=("so", "mo"), default="so", help="single- or multiple-observer trees")
    ap.add_argument("--hand-rollouts", action="store_true", help="stop rollouts at the end of the current hand")
    ap.add_argument("--opponent-model", choices=("tree", "rollout"), default="tree",
                    help="opponents choose in the tree (UCB) or play the game's rollout policy on each determinization")
    ap.add_argument("--name", default="ismcts", help="name announced in ready")
    args = ap.parse_args(argv)
    act = make_act(args.iterations, args.time_ms, args.c, args.variant, args.hand_rollouts, args.opponent_model)
    return sdk.run(act, name=args.name, version="1")


if __name__ == "__main__":
    sys.exit(main())
