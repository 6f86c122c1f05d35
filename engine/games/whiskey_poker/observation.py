"""Whiskey Poker observations: what one seat has seen of a state (rules whiskey_poker.md §2.9).

Split out of :mod:`engine.games.whiskey_poker.state` (its ``observation`` calls :func:`observe`);
the fields are documented in ``WhiskeyPoker.observation_doc``.
"""

from __future__ import annotations

import copy
from typing import Any

from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker.actions import BET1, BET2, BET3, EX1, EX2, OVER, PHASE_NAMES
from engine.games.whiskey_poker.actions import cards_text as _cards

__all__ = ["observe"]


def observe(state: Any, seat: int) -> dict[str, Any]:
    """What ``seat`` has seen in ``state`` (rules §2.9; a dealt state, not pending); fields are
    listed in ``WhiskeyPoker.observation_doc``."""
    r = state.rules
    n = r.n
    ph = state.phase
    st = state._deal_snapshot()
    live = ph != OVER
    betting_round = ph in (BET1, BET2, BET3)
    exchange = ph in (EX1, EX2)
    return {
        "game": "whiskey_poker",
        "players": n,
        "seat": seat,
        "options": dict(r.options),
        "hand_index": state.hidx,
        "mode": "BETTING" if r.betting else "LOWEST_PAYS",
        "phase": PHASE_NAMES[ph],
        "dealer": state.dealer,
        "to_act": state.current_player(),
        "dealt_in": [p for p in range(n) if state.dealt_in >> p & 1] if live else [],
        "folded": [p for p in range(n) if state.dealt_in >> p & 1 and not state.active >> p & 1] if live else [],
        "hand": _cards(state.hands[seat]),
        "dealt": _cards(st.hands[seat]) if live else [],
        "received": [_cards(m) for p, m in state.rx if p == seat],
        "widow": _cards(state.widow) if state.exposed else None,
        "widow_exposed": _cards(state.exposed) if state.exposed else None,
        "shown": [[p, _cards(m)] for p, m in state.shown],
        "knocker": state.knocker if exchange and state.knocker >= 0 else None,
        "passed": [p for p in range(n) if state.passed >> p & 1] if exchange else [],
        "turns": state.turns if exchange else 0,
        "pot": state.pot,
        "put": list(state.put),
        "round_bets": list(state.rc) if betting_round else [0] * n,
        "bets": state.bets if betting_round else 0,
        "unit": (r.big if ph == BET3 else r.small) if betting_round else 0,
        "scores": list(state.score),
        "out": [None if o < 0 else o for o in state.out],
        "hands": copy.deepcopy(list(state.past)),
        "actions": [[p, A.format_action(a)] for p, a in zip(_actors(state), state.hist)],
    }

def _actors(state: Any) -> list[int]:
    """The seat that took each action of ``hist`` (replayed from the hand start)."""
    s = state._deal_snapshot().clone()
    seats = []
    for a in state.hist:
        seats.append(s.turn)
        s.apply(a)
    return seats
