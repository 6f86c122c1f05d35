"""Position builders shared by the Cuttle tests (not a test module)."""

from __future__ import annotations

from engine.cards import parse_french
from engine.games.cuttle import Cuttle
from engine.games.cuttle.state import CuttleState

GAME = Cuttle()


def C(text: str) -> int:
    """Card id of ``'9d'``."""
    return parse_french(text)


def M(cards) -> int:
    """Mask of card strings."""
    m = 0
    for t in cards:
        m |= 1 << C(t)
    return m


def names(mask: int) -> set[str]:
    """Card strings of a mask."""
    from engine.cards import french_str
    return {french_str(c) for c in range(52) if mask >> c & 1}


def position(hands=((), ()), deck=(), stacks=(), perms=((), ()), scrap=(), turn=0, **options) -> CuttleState:
    """A position with seat ``turn`` to move (its opponent dealt).

    :param hands: per seat card strings.
    :param deck: the stock, top card first.
    :param stacks: ``(base, owner, [jacks oldest first])``; the side follows the jack parity.
    :param perms: per seat glasses 8s, queens, kings.
    :param scrap: cards in the scrap.
    """
    opts = GAME.resolve_options(options)
    s = CuttleState.from_deal(GAME, opts, 1 - turn, [M(hands[0]), M(hands[1])], [C(x) for x in deck], 0)
    for base, owner, jacks in stacks:
        side = owner ^ (len(jacks) & 1)
        s.ctrl[side] |= 1 << C(base)
        if jacks:
            s.jacks[C(base)] = tuple(C(j) for j in jacks)
        s.public |= M([base, *jacks])
    s.perm = [M(perms[0]), M(perms[1])]
    s.scrap = M(scrap)
    s.public |= s.perm[0] | s.perm[1] | s.scrap
    s._legal = None
    s.start = None
    s.start = s.clone()
    return s


def play(state: CuttleState, *actions: str) -> CuttleState:
    """Apply action strings in order."""
    for a in actions:
        state.apply_string(a)
    return state


def stack_side(state: CuttleState, base: str) -> int:
    """The seat controlling the stack of ``base`` (-1 if it is not on the table)."""
    b = 1 << C(base)
    return 0 if state.ctrl[0] & b else 1 if state.ctrl[1] & b else -1
