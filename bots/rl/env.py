"""The PettingZoo AEC environment over any game of the registry (``pip install -e ".[rl]"``).

``env("agram", players=2)`` is a :class:`pettingzoo.AECEnv` with agents ``player_0`` ..
``player_{n-1}`` (agent ``player_i`` is seat ``i``). Each agent's observation is a dict, as in
PettingZoo's classic environments:

* ``observation``: ``float32[layout.size]``, the seat's observation dict encoded by
  :func:`bots.rl.layouts.layout` (built only from what a protocol bot receives);
* ``action_mask``: ``int8[N]``, 1 for the legal actions of the seat to act (zeros for the
  others), over the game's full action list :class:`bots.rl.actions.ActionSpace`.

Actions are ``Discrete(N)`` indexes into that list. Rewards are 0 until the match ends, then
the engine's rank rewards ``Outcome.rewards(game.teams(n))`` in [0, 1] (partners share).
``infos[agent]`` of the agent to act holds ``observation`` (the JSON observation dict) and
``legal`` (the protocol strings); at the end every agent's info holds its final observation
and the ``outcome``. ``reset(seed=s)`` makes the deal (and every later reset without a seed)
reproducible: deal seeds are drawn from a ``numpy`` generator seeded with ``s``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from bots.rl.actions import ActionSpace, ActionSpaceError
from bots.rl.layouts import layout
from engine import registry
from engine.core import Game, State
from engine.errors import PlayerCountError


def env_configs() -> Iterator[tuple[str, int, dict]]:
    """Every ``(game, players, options)`` an env is built and tested for: each game's
    ``Game.configs`` plus every player count it supports with default options (no repeats)."""
    for game in registry.all_games():
        seen: set[str] = set()
        counts: list[tuple[int, dict]] = [(n, {}) for n in range(game.min_players, game.max_players + 1)]
        for n, opts in list(game.configs) + counts:
            try:
                game.check_players(n)
            except PlayerCountError:
                continue
            k = f"{n}:{json.dumps(opts, sort_keys=True)}"
            if k not in seen:
                seen.add(k)
                yield game.name, n, dict(opts)


class CardArenaEnv(AECEnv):
    """One match of ``game`` for ``players`` seats as a PettingZoo AEC env (see the module docstring).

    :param game: a registry name or a :class:`~engine.core.Game`.
    :param players: number of seats (default: the game's minimum).
    :param options: game options (validated by the engine).
    :param max_steps: truncate every agent after this many actions (None: play to the end).
    :param render_mode: ``None`` or ``"ansi"`` (``render()`` returns the acting seat's JSON).
    :raises UnknownGameError, PlayerCountError, OptionError: on bad arguments (from the engine).
    """

    metadata = {"name": "cardarena_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(self, game: str | Game, players: int | None = None, options: dict | None = None,
                 max_steps: int | None = None, render_mode: str | None = None) -> None:
        super().__init__()
        self.game = registry.get_game(game) if isinstance(game, str) else game
        self.n = players if players is not None else self.game.min_players
        self.options = self.game.resolve_options(options, self.n)
        self.teams = self.game.teams(self.n)
        self.layout = layout(self.game, self.n, self.options)
        self.space = ActionSpace.of(self.game)
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict({
            "observation": spaces.Box(-1e6, 1e6, (self.layout.size,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.space.size,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.space.size) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._state: State | None = None
        self._seen: dict[int, dict[str, Any]] = {}

    @property
    def state(self) -> State | None:
        """The match being played (None before the first reset)."""
        return self._state

    @state.setter
    def state(self, value: State | None) -> None:
        """Replace the match (tests put sampled worlds here); forgets the cached observations."""
        self._state = value
        self._seen = {}

    def observation_space(self, agent: str) -> spaces.Space:
        """The ``Dict(observation=Box, action_mask=Box)`` space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(N)`` over the game's action list."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC protocol

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new match; ``seed`` reseeds the generator of deal seeds (``options`` is unused)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.deal_seed = int(self._rng.integers(0, 2**62))
        self.state = self.game.new_match(self.n, self.deal_seed, **self.options)
        self.steps = 0
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._select()

    def _observation(self, seat: int) -> dict[str, Any]:
        """``state.observation(seat)``, computed once per step (infos and observe share it)."""
        obs = self._seen.get(seat)
        if obs is None:
            assert self.state is not None
            obs = self._seen[seat] = self.state.observation(seat)
        return obs

    def _select(self) -> None:
        """Point ``agent_selection`` at the seat to act and fill its info."""
        state = self.state
        assert state is not None
        seat = state.current_player()
        self._seen = {}
        self.agent_selection = self.possible_agents[seat]
        for a in self.agents:
            self.infos[a] = {}
        self.infos[self.agent_selection] = {"observation": self._observation(seat),
                                            "legal": state.legal_strings()}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 vector}`` of ``agent``'s seat."""
        state = self.state
        assert state is not None, "call reset() first"
        seat = self.agent_seat[agent]
        vec = self.layout.encode(self._observation(seat))
        if not state.is_terminal() and state.current_player() == seat:
            mask = self.space.mask(state.legal_actions())
        else:
            mask = np.zeros(self.space.size, dtype=np.int8)
        return {"observation": vec, "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play action index ``action`` for the agent to act.

        :raises ActionSpaceError: if the index is outside ``0..N-1`` or not legal now (naming
            the action and the legal ones).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state
        assert state is not None
        engine_action = self.space.action_at(action)  # type: ignore[arg-type]
        legal = state.legal_actions()
        if engine_action not in legal:
            raise ActionSpaceError(
                f"{self.game.name}: action {action} ({self.game.format_action(engine_action)!r}) is not "
                f"legal for {agent}; legal: {state.legal_strings()} (use the action_mask)")
        self._cumulative_rewards[agent] = 0.0
        state.apply(engine_action)
        self.steps += 1
        self.rewards = {a: 0.0 for a in self.agents}
        if state.is_terminal():
            self._finish(state)
        else:
            self._select()
            if self.max_steps is not None and self.steps >= self.max_steps:
                self.truncations = {a: True for a in self.agents}
        self._accumulate_rewards()

    def _finish(self, state: State) -> None:
        """Terminal: rank rewards (partners share), every agent's final observation in its info."""
        outcome = state.outcome()
        rewards = outcome.rewards(self.teams)
        self._seen = {}
        for a in self.agents:
            seat = self.agent_seat[a]
            self.rewards[a] = float(rewards[seat])
            self.terminations[a] = True
            self.infos[a] = {"observation": self._observation(seat), "outcome": outcome.to_json()}
        self.agent_selection = self.agents[0]

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the acting seat's observation as JSON text."""
        if self.render_mode is None or self.state is None:
            return None
        seat = max(self.state.current_player(), 0)
        return json.dumps(self.state.observation(seat))

    def close(self) -> None:
        """Nothing to release."""


def raw_env(game: str | Game, players: int | None = None, options: dict | None = None,
            **kwargs: Any) -> CardArenaEnv:
    """The unwrapped :class:`CardArenaEnv`."""
    return CardArenaEnv(game, players, options, **kwargs)


def env(game: str | Game, players: int | None = None, options: dict | None = None,
        **kwargs: Any) -> AECEnv:
    """:class:`CardArenaEnv` inside PettingZoo's ``OrderEnforcingWrapper`` (the usual entry point)."""
    return wrappers.OrderEnforcingWrapper(raw_env(game, players, options, **kwargs))
