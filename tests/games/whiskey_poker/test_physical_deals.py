"""Whiskey Poker: the sampler against a brute force over physical deals (issue 15).

All 52 cards are distinct and the unused stub is never seen nor ordered, so every
assignment of the dealt hands and the widow stands for the same number of deck orders: the
exact distribution over physical deals is uniform over the assignments that replay to the
observer's observation. The brute force below builds each assignment with the test
helpers' ``setup`` (never the information set), replays the hand and keeps those that
reproduce the observation.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from itertools import combinations

import pytest

from engine.cards import cards_of, french_str
from tests.games.test_whiskey_poker import GAME, mask, play, setup

DEAL = {0: "2c 7d 9h Js Ah", 1: "3d 5c 8s Th Kd"}
WIDOW = "4h 6s 9c Qd As"


def _world(s) -> tuple:
    """The world as the brute force and the sampler both give it: dealt and current holdings."""
    st = s.hand_start()
    return tuple(st.hands), st.widow, tuple(s.hands), s.widow


def _replay(hands: dict[int, str], widow: str, moves: list[str]):
    s = setup(2, hands, widow, mode="LOWEST_PAYS")
    play(s, *moves)
    return s


def brute_force(moves: list[str], seat: int, where: str, pinned: list[str]) -> Counter:
    """Every deal consistent with ``seat``'s observation after ``moves``, by world.

    ``where`` ("1" for seat 1's dealt hand, "widow") is the location whose cards ``seat``
    has not seen, except ``pinned`` (cards it saw leave that location). Its other slots are
    filled with every combination of the cards of no other dealt location; a deal counts if
    the replay gives ``seat``'s observation. That the pinned cards are forced is checked:
    exchanging any of them for a free card changes the observation.
    """
    true = _replay(DEAL, WIDOW, moves)
    target = true.observation(seat)
    locs = {"0": DEAL[0], "1": DEAL[1], "widow": WIDOW}
    fixed = {c for k, v in locs.items() if k != where for c in v.split()}
    pool = sorted({french_str(c) for c in range(52)} - fixed - set(pinned))
    free = 5 - len(pinned)

    def deal_with(cards: list[str]):
        new = dict(locs)
        new[where] = " ".join(cards)
        try:
            s = _replay({0: new["0"], 1: new["1"]}, new["widow"], moves)
        except Exception:                                                       # an illegal replay
            return None
        return s if s.observation(seat) == target else None

    here = locs[where].split()
    for p in pinned:
        for c in [c for c in pool if c not in here][:8]:
            assert deal_with([c if x == p else x for x in here]) is None, f"{p} is not forced into {where}"
    out: Counter = Counter()
    for combo in combinations(pool, free):
        s = deal_with(list(combo) + pinned)
        if s is not None:
            out[_world(s)] += 1
    return out


#: (moves, observer, unseen location, cards the observer saw leave it); dealer 0, seat 1 first
POSITIONS = {
    # seat 1 gives three of its dealt cards into the open widow: two of them stay unseen
    "gives-three": (["knock", "stand", "take 9c give 3d", "take 3d give 2c", "take 6s give 5c",
                     "take 5c give 7d", "take Qd give 8s"], 0, "1", ["3d", "5c", "8s"]),
    # both swap blind in phase 1: seat 0 then holds seat 1's dealt hand; seat 1 the original
    # widow, three of which it gives away in phase 2
    "blind-swaps": (["exchange", "exchange", "knock", "stand", "take 2c give 4h", "take 4h give 3d",
                     "take 7d give 6s", "take 6s give 5c", "take 9h give 9c"], 0, "widow", ["4h", "6s", "9c"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_samples_are_uniform_over_physical_deals(name):
    from scipy.stats import chisquare

    moves, seat, where, pinned = POSITIONS[name]
    exact = brute_force(moves, seat, where, pinned)
    assert len(exact) == 741 and set(exact.values()) == {1}                   # C(39, 2) worlds, one deal each
    state = _replay(DEAL, WIDOW, moves)
    info = GAME.infoset(json.loads(json.dumps(state.observation(seat))))
    rng = random.Random(11)
    samples = 10000
    got = Counter(_world(info.sample(rng)) for _ in range(samples))
    assert set(got) <= set(exact), f"sampled worlds no physical deal gives: {len(set(got) - set(exact))}"
    keys = sorted(exact)
    f_obs = [got[k] for k in keys]
    p = chisquare(f_obs, [samples / len(keys)] * len(keys)).pvalue
    assert p > 0.001, f"{name}: χ² rejects uniformity over physical deals (p = {p:.3g})"


def test_pinned_cards_are_public():
    """The positions' premise: the observer sees the given cards leave the hidden location."""
    moves, seat, where, pinned = POSITIONS["gives-three"]
    s = _replay(DEAL, WIDOW, moves)
    assert set(pinned) <= {french_str(c) for c in cards_of(s.hand_start().hands[1])}
    assert not mask(" ".join(pinned)) & s.hands[1]
