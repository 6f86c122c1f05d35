"""A Gymnasium single-agent env: one learning seat, every other seat a reference bot in-process.

``CardArenaGymEnv("agram", players=2, opponents="random")``: ``reset()`` deals a match and
plays the opponents until the learner's turn; ``step(i)`` plays action index ``i`` for the
learner, then the opponents, and returns the learner's next observation. Observation and
action spaces are those of :class:`bots.rl.env.CardArenaEnv` (``Dict(observation, action_mask)``,
``Discrete(N)``); the reward is 0 until the end, then the learner's rank reward in [0, 1]
(partners share). ``info`` holds the JSON ``observation`` and ``legal`` strings, and at the
end the ``outcome``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from bots.rl.actions import ActionSpace, ActionSpaceError
from bots.rl.env import CardArenaEnv
from bots.rl.opponents import Opponent, opponent
from engine import registry
from engine.core import Game, State


class CardArenaGymEnv(gym.Env):
    """One seat of a match against reference bots.

    :param game: registry name or :class:`~engine.core.Game`.
    :param players: seats (default: the game's minimum).
    :param options: game options.
    :param opponents: one spec for every other seat, or one per seat (the learner's entry is
        ignored); specs as :func:`bots.rl.opponents.opponent` (``"random"``, ``"greedy"``,
        ``"ismcts:200"`` or a callable).
    :param seat: the learner's seat, or ``"random"`` (drawn at every reset, the default: every
        seat gets trained).
    :param illegal: what an illegal action index does: ``"raise"`` (an
        :class:`~bots.rl.actions.ActionSpaceError`, the default) or ``"lose"`` (the episode
        ends with reward 0 and ``info["illegal"]`` set, for learners that ignore the mask).
    :raises ValueError: for a bad opponent spec, seat, list length or ``illegal``.
    """

    metadata = {"render_modes": []}

    def __init__(self, game: str | Game, players: int | None = None, options: dict | None = None,
                 opponents: str | Opponent | Sequence[str | Opponent] = "random",
                 seat: int | str = "random", illegal: str = "raise") -> None:
        if illegal not in ("raise", "lose"):
            raise ValueError(f"illegal must be 'raise' or 'lose', got {illegal!r}")
        self.illegal = illegal
        self.game = registry.get_game(game) if isinstance(game, str) else game
        self.aec = CardArenaEnv(self.game, players, options)
        self.n = self.aec.n
        self.layout = self.aec.layout
        self.space: ActionSpace = self.aec.space
        specs = [opponents] * self.n if isinstance(opponents, str) or callable(opponents) else list(opponents)
        if len(specs) != self.n:
            raise ValueError(f"opponents: {len(specs)} specs for {self.n} seats; give one spec or one per seat")
        self.opponents = [opponent(s, self.game) for s in specs]
        if seat != "random" and not (isinstance(seat, int) and 0 <= seat < self.n):
            raise ValueError(f"seat must be 0..{self.n - 1} or 'random', got {seat!r}")
        self.seat_spec = seat
        self.observation_space = self.aec.observation_spaces["player_0"]
        self.action_space = self.aec.action_spaces["player_0"]
        self._np = np.random.default_rng()
        self.state: State | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Deal (reproducibly for ``seed``), play the opponents up to the learner's turn."""
        super().reset(seed=seed)
        if seed is not None:
            self._np = np.random.default_rng(seed)
        deal_seed = int(self._np.integers(0, 2**62))
        self.seat = int(self._np.integers(self.n)) if self.seat_spec == "random" else int(self.seat_spec)
        self.rng = random.Random(int(self._np.integers(0, 2**62)))
        self.state = self.game.new_match(self.n, deal_seed, **self.aec.options)
        return self._advance()

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        """Play action index ``action`` for the learner, then the opponents.

        :raises ActionSpaceError: if the action is not legal now (naming it and the legal ones)
            and ``illegal="raise"``.
        """
        state = self.state
        assert state is not None, "call reset() first"
        a = self.space.action_at(action)
        if a not in state.legal_actions():
            if self.illegal == "lose":
                obs, info = self._advance()
                return obs, 0.0, True, False, {**info, "illegal": self.game.format_action(a)}
            raise ActionSpaceError(f"{self.game.name}: action {action} ({self.game.format_action(a)!r}) is "
                                   f"not legal; legal: {state.legal_strings()} (use the action_mask)")
        state.apply(a)
        obs, info = self._advance()
        if state.is_terminal():
            reward = float(state.outcome().rewards(self.aec.teams)[self.seat])
            return obs, reward, True, False, info
        return obs, 0.0, False, False, info

    def _advance(self) -> tuple[dict, dict]:
        """Let the opponents act until the learner's turn or the end; the learner's view."""
        state = self.state
        assert state is not None
        while not state.is_terminal() and state.current_player() != self.seat:
            p = state.current_player()
            text = self.opponents[p](state.observation(p), state.legal_strings(), self.rng)
            state.apply_string(text)
        obs_json = state.observation(self.seat)
        vec = self.layout.encode(obs_json)
        if state.is_terminal():
            mask = np.zeros(self.space.size, dtype=np.int8)
            info: dict[str, Any] = {"observation": obs_json, "outcome": state.outcome().to_json()}
        else:
            mask = self.space.mask(state.legal_actions())
            info = {"observation": obs_json, "legal": state.legal_strings()}
        return {"observation": vec, "action_mask": mask}, info
