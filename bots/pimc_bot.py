"""The PIMC baseline bot: perfect-information Monte Carlo with voting.

For each of ``D`` determinizations (``game.infoset(observation).sample(rng)``), every legal
move is evaluated by ``r`` rollouts with ``game.rollout_action``; the determinization votes
for its best move (highest mean reward of the searching seat); the move with most votes is
played (ties: the higher mean reward over all its rollouts). The iteration budget is the
total number of rollouts, so ``--iterations 1000`` costs about what 1,000 ISMCTS iterations
cost: ``D = min(--determinizations, N // k)`` worlds for ``k`` legal moves and
``r = N // (D k)`` rollouts per move and world (at least one each).

Run: ``python bots/pimc_bot.py [--iterations N] [--time-ms T] [--determinizations D]
[--hand-rollouts]`` (protocol v1 on stdin/stdout). With ``--time-ms``, worlds are drawn
until the time is up (same clock rules as ``bots/ismcts_bot.py``), each with ``r`` =
``--rollouts-per-move`` rollouts per move.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Mapping
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bots import sdk  # noqa: E402
from bots.ismcts_bot import search_act  # noqa: E402
from engine.core import Game  # noqa: E402
from engine.search.ismcts import SearchResult  # noqa: E402
from engine.search.rollout import rollout_rewards  # noqa: E402


class PIMC:
    """Determinize, evaluate every move by rollouts in each world, vote.

    :param game: the game.
    :param determinizations: worlds per decision with an iteration budget (``D``).
    :param hand_rollouts: stop rollouts at the end of the current hand (``hand_rewards``).
    :param rollouts_per_move: rollouts per move and world with a time budget only.
    """

    def __init__(self, game: Game, determinizations: int = 20, hand_rollouts: bool = False,
                 rollouts_per_move: int = 5) -> None:
        if determinizations < 1 or rollouts_per_move < 1:
            raise ValueError("determinizations and rollouts_per_move must be >= 1")
        self.game = game
        self.determinizations = determinizations
        self.hand_rollouts = hand_rollouts
        self.rollouts_per_move = rollouts_per_move

    def search(self, observation: Mapping[str, Any], rng: random.Random, iterations: int | None = 1000,
               time_ms: float | None = None) -> SearchResult:
        """Choose a move for the observing seat.

        :param iterations: total rollouts (None: time only).
        :param time_ms: wall time in ms (None: iterations only).
        :returns: a :class:`SearchResult` whose ``visits`` are the votes per move,
            ``iterations`` the rollouts played and ``value`` the chosen move's mean reward.
        :raises ValueError: if neither budget is given.
        :raises InconsistentObservationError: if the observation admits no world.
        """
        if iterations is None and time_ms is None:
            raise ValueError("give an iteration or a time budget")
        t0 = time.perf_counter()
        deadline = t0 + time_ms / 1000.0 if time_ms is not None else None
        game = self.game
        hand_rollouts = self.hand_rollouts
        info = game.infoset(observation)
        seat = info.seat
        teams = self.game.teams(int(observation["players"]))
        world = info.sample(rng)
        k = len(world.legal_actions())
        if iterations is not None:
            worlds = min(self.determinizations, max(1, iterations // k))
            per = max(1, iterations // (worlds * k))
        else:
            worlds, per = 1 << 62, self.rollouts_per_move
        votes: dict[Any, int] = {}
        total: dict[Any, float] = {}
        count: dict[Any, int] = {}
        done = 0
        for w in range(worlds):
            if w:
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                world = info.sample(rng)
            hand0 = world.hand_index()
            best_a, best_v = None, -1.0
            for a in world.legal_actions():
                acc = 0.0
                for _ in range(per):
                    s = world.clone()
                    s.apply(a)
                    acc += rollout_rewards(game, s, rng, teams, hand0, hand_rollouts)[seat]
                done += per
                total[a] = total.get(a, 0.0) + acc
                count[a] = count.get(a, 0) + per
                if acc / per > best_v:
                    best_a, best_v = a, acc / per
            votes[best_a] = votes.get(best_a, 0) + 1
        best = max(votes, key=lambda a: (votes[a], total[a] / count[a]))
        return SearchResult(best, done, total[best] / count[best], dict(votes), (time.perf_counter() - t0) * 1000)


def make_act(iterations: int | None, time_ms: float | None, determinizations: int, hand_rollouts: bool,
             rollouts_per_move: int = 5):
    """An ``act(observation, legal, ctx)`` function for :func:`bots.sdk.run` searching with PIMC.

    With neither budget, 1,000 rollouts. Clock handling as :func:`bots.ismcts_bot.make_act`;
    the reply's ``info`` holds the five largest vote counts as ``votes``.
    """
    if iterations is None and time_ms is None:
        iterations = 1000
    return search_act(lambda game: PIMC(game, determinizations, hand_rollouts, rollouts_per_move),
                      iterations, time_ms, "votes")


def main(argv: list[str] | None = None) -> int:
    """Parse the flags and serve the protocol until stdin closes."""
    ap = argparse.ArgumentParser(description="PIMC baseline bot (protocol v1 on stdin/stdout)")
    ap.add_argument("--iterations", type=sdk.positive_int, default=None, help="total rollouts per decision")
    ap.add_argument("--time-ms", type=sdk.positive_float, default=None, help="time per decision (ms), capped by the clock")
    ap.add_argument("--determinizations", type=sdk.positive_int, default=20, help="worlds per decision (iteration budget)")
    ap.add_argument("--rollouts-per-move", type=sdk.positive_int, default=5, help="rollouts per move and world (time budget)")
    ap.add_argument("--hand-rollouts", action="store_true", help="stop rollouts at the end of the current hand")
    ap.add_argument("--name", default="pimc", help="name announced in ready")
    args = ap.parse_args(argv)
    act = make_act(args.iterations, args.time_ms, args.determinizations, args.hand_rollouts,
                   args.rollouts_per_move)
    return sdk.run(act, name=args.name, version="1")


if __name__ == "__main__":
    sys.exit(main())
