"""The Cuckoo rollout policy: a threshold on the actor's own card, for search rollouts.

``Cuckoo.rollout_action`` (used by ISMCTS and PIMC rollouts, and by ISMCTS's
``opponent_model="rollout"``) plays on a determinized state and looks only at the actor's
own card, which the actor always knows (never at the others' cards or the stock):

* a non-dealer swaps when its card's value (A = 1 … Q = 12, docs/rules/cuckoo.md §3.1) is
  at most :data:`THRESHOLD` and keeps otherwise (a king is always kept);
* the dealer cuts under the same threshold and keeps otherwise;
* answering a swap, a king-holder blocks (accepting gives the king away, C-A2); without a
  king the only legal answer is ``accept``;
* with probability :data:`NOISE` the action is uniform among the legal ones instead, so
  rollouts still try every line.

Uniform rollouts (the default ``Game.rollout_action``) swap or keep a high card half of the
time; search then believes every low card is likely to be passed on, and the seats that kept
their cards are modelled as holding anything.
"""

from __future__ import annotations

import random

from engine.games.cuckoo.actions import BLOCK, CUT, KEEP, RESPOND, SWAP, TURN, VALUE
from engine.games.cuckoo.state import CuckooState

__all__ = ["NOISE", "THRESHOLD", "rollout_action"]

#: the highest card value that is exchanged (6: below the middle of A..Q).
THRESHOLD = 6
#: share of uniformly random actions.
NOISE = 0.1


def rollout_action(state: CuckooState, rng: random.Random) -> int:
    """A legal action of the Cuckoo ``state`` by the policy of the module docstring.

    :param state: a live :class:`engine.games.cuckoo.state.CuckooState`.
    :returns: an action value (``KEEP``, ``SWAP``, ``ACCEPT``, ``BLOCK`` or ``CUT``).
    """
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    if rng.random() < NOISE:
        return legal[int(rng.random() * len(legal))]
    if state.phase == RESPOND:
        return BLOCK
    if state.phase != TURN:
        return legal[0]
    value = VALUE[state.cards[state.current_player()]]
    if value == 13 or value > THRESHOLD:
        return KEEP
    return CUT if CUT in legal else SWAP
