"""A stable enumeration of every action of a game: the ``Discrete(N)`` action space of the RL envs.

The engine has no ``Game.all_actions()``; :func:`all_actions` derives it generically from the
public contract. Every game's actions are small non-negative ``int`` values (engine/core.py:
state-independent hashable values); an ``int`` ``a`` belongs to the game's action list when
``Game.format_action(a)`` succeeds and ``Game.parse_action`` of that string gives ``a`` back
(the round trip keeps exactly one value per protocol string). The list is sorted, so index
``i`` means the same action in every state, config and process. A few entries are never legal
(e.g. Cuttle's ``points Jh``: the notation allows it, the rules do not); the mask hides them.
If an engine change ever made a legal action fall outside the scan, :meth:`ActionSpace.mask`
raises :class:`ActionSpaceError` naming it (the tests play every config to check this).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from engine.core import Action, Game

#: the scanned range of action values (Cuttle's largest is 13 << 12 | 51 << 6 | 51 = 56563)
SCAN_LIMIT = 1 << 16


class ActionSpaceError(ValueError):
    """An action or index outside a game's enumeration (names the game and the value)."""


def all_actions(game: Game, limit: int = SCAN_LIMIT) -> list[Action]:
    """Every action value of ``game`` in ``0..limit-1``, sorted (see the module docstring).

    :raises ActionSpaceError: if the game has no ``int`` action in the range.
    """
    out: list[Action] = []
    for a in range(limit):
        try:
            if game.parse_action(game.format_action(a)) == a:
                out.append(a)
        except Exception:  # noqa: BLE001 - any refusal means "not an action of this game"
            continue
    if not out:
        raise ActionSpaceError(f"{game.name}: no action value in 0..{limit - 1} round-trips through "
                               "format_action/parse_action; bots/rl/actions.py cannot enumerate it")
    return out


_spaces: dict[str, ActionSpace] = {}


class ActionSpace:
    """Index <-> action <-> protocol string for one game (shared by every config of it).

    :ivar actions: the sorted action values; ``len(actions)`` is the ``Discrete`` size.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.actions = all_actions(game)
        self.index = {a: i for i, a in enumerate(self.actions)}

    @classmethod
    def of(cls, game: Game) -> ActionSpace:
        """The cached space of ``game`` (the scan takes about 0.3 s once per process)."""
        space = _spaces.get(game.name)
        if space is None:
            space = _spaces[game.name] = cls(game)
        return space

    @property
    def size(self) -> int:
        """Number of actions ``N`` (the ``Discrete(N)`` size)."""
        return len(self.actions)

    def index_of(self, action: Action) -> int:
        """The index of ``action``.

        :raises ActionSpaceError: if it is not in the enumeration.
        """
        try:
            return self.index[action]
        except KeyError:
            raise ActionSpaceError(f"{self.game.name}: action {action!r} is not in the RL action list "
                                   f"({self.size} actions); bots/rl/actions.py must be extended") from None

    def action_at(self, i: int) -> Action:
        """The action at index ``i``.

        :raises ActionSpaceError: if ``i`` is not in ``0..N-1``.
        """
        if isinstance(i, bool) or not 0 <= int(i) < self.size:
            raise ActionSpaceError(f"{self.game.name}: action index {i!r} is outside 0..{self.size - 1}")
        return self.actions[int(i)]

    def mask(self, legal: Iterable[Action]) -> np.ndarray:
        """``int8`` vector of length ``N``: 1 at the index of every action in ``legal``."""
        m = np.zeros(self.size, dtype=np.int8)
        for a in legal:
            m[self.index_of(a)] = 1
        return m

    def mask_from_strings(self, legal: Iterable[str]) -> np.ndarray:
        """As :meth:`mask`, from protocol strings (the ``legal`` list of an ``act`` message)."""
        return self.mask(self.game.parse_action(s) for s in legal)

    def string_at(self, i: int) -> str:
        """The protocol string of the action at index ``i``."""
        return self.game.format_action(self.action_at(i))
