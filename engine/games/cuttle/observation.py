"""What one Cuttle seat sees (``docs/rules/cuttle.md`` §3.9): the JSON observation of a state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.cards import cards_of, french_str
from engine.games.cuttle.actions import (
    COUNTER,
    DRAW_KINDS,
    EIGHTS,
    ORDER,
    OVER,
    PHASE_NAMES,
    card_list,
    format_action,
)

if TYPE_CHECKING:
    from engine.games.cuttle.state import CuttleState


def observation(st: CuttleState, seat: int) -> dict[str, Any]:
    """Everything ``seat`` has seen in ``st`` (§3.9), JSON-ready; fields in ``Cuttle.observation_doc``."""
    o = 1 - seat
    glasses = bool(st.perm[seat] & EIGHTS)
    draws = []
    for (p, stamp, kind, cards, seen) in st.draws:
        vis = p == seat or seen
        draws.append([p, stamp, DRAW_KINDS[kind],
                      [french_str(x) for x in cards] if vis else ["?"] * len(cards)])
    stacks = []
    for base in sorted(cards_of(st.ctrl[0] | st.ctrl[1]), key=ORDER.__getitem__):
        js = st.jacks.get(base, ())
        side = 0 if st.ctrl[0] >> base & 1 else 1
        stacks.append({"base": french_str(base), "controller": side, "owner": side ^ (len(js) & 1),
                       "jacks": [french_str(j) for j in js]})
    if st.phase == COUNTER or (st.susp and st.phase != OVER):
        oneoff = {"card": french_str(st.susp[-1]), "player": st.turn_p,
                  "target": french_str(st.target) if st.target >= 0 else None,
                  "counters": [french_str(x) for x in st.chain],
                  "suspended": [french_str(x) for x in st.susp]}
    else:
        oneoff = None
    if st.phase == OVER:
        result = {"winner": st.winner if st.winner in (0, 1) else None,
                  "reason": "win" if st.winner in (0, 1) else ("passes" if st.passes >= 3 else "max_turns"),
                  "ranks": list(st.outcome().ranks)}
    else:
        result = None
    fmt = format_action
    return {
        "game": "cuttle",
        "players": 2,
        "seat": seat,
        "options": dict(st.options),
        "hand_index": st.hand_index(),
        "dealer": st.dealer,
        "turn": st.turns,
        "turn_player": st.turn_p,
        "to_act": st.current_player(),
        "phase": PHASE_NAMES[st.phase],
        "hand": card_list(st.hands[seat]),
        "initial_hand": card_list(st.init[seat]),
        "hand_sizes": [st.hands[0].bit_count(), st.hands[1].bit_count()],
        "opponent_hand": card_list(st.hands[o]) if glasses else None,
        "opponent_known": card_list(st.hands[o] & st.exposed[o]),
        "known_to_opponent": card_list(st.hands[seat] & st.exposed[seat]),
        "deck_size": len(st.deck),
        "scrap": card_list(st.scrap),
        "stacks": stacks,
        "permanents": [card_list(st.perm[0]), card_list(st.perm[1])],
        "points": [st.points(0), st.points(1)],
        "thresholds": [st.threshold(0), st.threshold(1)],
        "oneoff": oneoff,
        "seven_card": french_str(st.seven) if st.seven >= 0 and seat == st.turn_p else None,
        "frozen": [card_list(st.frozen[0] & st.hands[0]), card_list(st.frozen[1] & st.hands[1])],
        "passes": st.passes,
        "draws": draws,
        "shown": [[p, stamp, french_str(c)] for (p, stamp, c) in st.shown],
        "glimpses": [[stamp, card_list(m)] for (stamp, m) in st.glimpses[seat]],
        "actions": [[p, fmt(a)] for p, a in zip(st.actors, st.history, strict=True)],
        "result": result,
    }
