"""The Agram world (``docs/rules/agram.md`` §4.2–4.5): deals, tricks, match score.

The state is a handful of ints and small lists so that ISMCTS can clone and play out
thousands of deals per second: hands are card masks, the current trick is tracked
incrementally (led-suit mask, best card, its seat) and nothing is built as a string
until an observation is asked for.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Any

from engine.cards import FRENCH_SUITS, cards_of, mask_of
from engine.compiled import kernel
from engine.core import Game, Outcome, SnapshotState, rank_rewards, ranks_from_results
from engine.deal import deal_masks
from engine.errors import GameOverError
from engine.games.agram.actions import (
    ACTION_STR,
    CARD_STR,
    DECK,
    HAND_SIZE,
    POWER,
    SUIT_MASK_OF,
    SUIT_OF,
    TRICKS_PER_DEAL,
)
from engine.tricks import trick_winner

#: the typed hand rollout (``engine/games/agram/_kernel.pyx``), ``None`` when not built or pure Python is forced
_KERNEL = kernel("engine.games.agram._kernel")
#: finish_hand's rewards, by ``(-1, n, winner)`` (match goes on) or by the deals won (match over)
_REWARDS: dict[tuple[int, ...], list[float]] = {}


class _Match:
    """Per-match constants shared (not copied) by every clone of a state.

    :ivar n: number of seats (2..5).
    :ivar match_wins: deals needed to win the match (§4.5 ``match_wins``).
    :ivar deal_seed: the chance key of the match (never shown in an observation).
    :ivar options: the resolved options (JSON-ready).
    """

    __slots__ = ("n", "match_wins", "deal_seed", "options", "game")

    def __init__(self, game: Game, n: int, match_wins: int, deal_seed: int, options: dict) -> None:
        self.game = game
        self.n = n
        self.match_wins = match_wins
        self.deal_seed = deal_seed
        self.options = options


class AgramState(SnapshotState):
    """A complete Agram world (§4.2–4.5).

    Fields: ``hands`` (per seat a card mask), ``cur`` (seat to act, -1 when terminal),
    ``lmask`` (mask of the led suit, 0 before the lead), ``best``/``bseat`` (the best card
    of the led suit so far and its player), ``k`` (cards in the current trick), ``tno``
    (tricks completed this deal), ``dealer``, ``wins`` (deals won per seat), ``hidx``
    (deals completed), ``hist`` (this deal's actions), ``past`` (per completed deal
    ``(dealer, winner)``), ``undealt`` (mask of the cards set aside), ``start`` (the
    snapshot right after this deal's deal).
    """

    __slots__ = ("m", "hands", "cur", "lmask", "best", "bseat", "k", "tno", "dealer", "wins",
                 "hidx", "hist", "past", "undealt")

    m: _Match
    hands: list[int]
    cur: int
    lmask: int
    best: int
    bseat: int
    k: int
    tno: int
    dealer: int
    wins: list[int]
    hidx: int
    hist: list[int]
    past: tuple[tuple[int, int], ...]
    undealt: int

    @property
    def game(self) -> Game:  # type: ignore[override]
        """The :class:`Agram` game (kept in the shared match constants)."""
        return self.m.game

    @property
    def num_players(self) -> int:
        """Number of seats, 2..5 (§4.1)."""
        return self.m.n

    # ------------------------------------------------------------ construction

    @classmethod
    def _blank(cls, m: _Match, dealer: int, wins: list[int], hidx: int,
               past: tuple[tuple[int, int], ...]) -> AgramState:
        s = object.__new__(cls)
        s.m = m
        s.hands = [0] * m.n
        s.cur = -1
        s.lmask = 0
        s.best = -1
        s.bseat = -1
        s.k = 0
        s.tno = 0
        s.dealer = dealer
        s.wins = wins
        s.hidx = hidx
        s.hist = []
        s.past = past
        s.undealt = 0
        s.start = None
        return s

    def _begin_deal(self, hands: list[int], undealt: int) -> None:
        """Start the deal whose hands are given: the player after the dealer leads (§4.2)."""
        n = self.m.n
        self.hands = hands
        self.undealt = undealt
        self.cur = (self.dealer + 1) % n
        self.lmask = 0
        self.best = -1
        self.bseat = -1
        self.k = 0
        self.tno = 0
        self.hist = []
        self._snapshot()

    def _deal(self) -> None:
        """Shuffle from ``(deal_seed, hidx)`` and deal 6 cards to each seat (§4.2)."""
        n = self.m.n
        hands, rest = deal_masks(DECK, self.m.deal_seed, self.hidx, n, HAND_SIZE, first=(self.dealer + 1) % n)
        self._begin_deal(hands, mask_of(rest))

    def clone(self) -> AgramState:
        """An independent copy (card masks and small lists; match constants and snapshot shared)."""
        s = object.__new__(AgramState)
        s.m = self.m
        s.hands = self.hands[:]
        s.cur = self.cur
        s.lmask = self.lmask
        s.best = self.best
        s.bseat = self.bseat
        s.k = self.k
        s.tno = self.tno
        s.dealer = self.dealer
        s.wins = self.wins[:]
        s.hidx = self.hidx
        s.hist = self.hist[:]
        s.past = self.past
        s.undealt = self.undealt
        s.start = self.start
        return s

    # ------------------------------------------------------------ play

    def current_player(self) -> int:
        """The seat to act (the dealer's left leads the first trick, §4.2), -1 once the match is over."""
        return self.cur

    def is_terminal(self) -> bool:
        """True once a seat has won ``match_wins`` deals (§4.5)."""
        return self.cur < 0

    def legal_mask(self) -> int:
        """Mask of the cards the current player may play (§4.3: follow suit if able); 0 when terminal."""
        if self.cur < 0:
            return 0
        h = self.hands[self.cur]
        f = h & self.lmask
        return f if f else h

    def legal_actions(self) -> list[int]:
        """The playable card ids, ascending (empty only when terminal)."""
        if self.cur < 0:
            return []
        h = self.hands[self.cur]
        f = h & self.lmask
        m = f if f else h
        out = []
        while m:
            low = m & -m
            out.append(low.bit_length() - 1)
            m ^= low
        return out

    def apply(self, action: int) -> None:
        """Play card ``action`` for the current player (§4.3).

        Ends the trick after ``n`` cards (highest card of the led suit wins and leads
        next); after the sixth trick its winner wins the deal, and the next deal is dealt
        in the same call (the winner deals, §4.5) unless the match is over.

        :raises IllegalActionError: card not held, or not following suit when able.
        :raises GameOverError: if the match is over.
        """
        w = self._play(action)
        if w >= 0:
            self._end_deal(w)

    def _play(self, action: int) -> int:
        """:meth:`apply` up to the end of the deal: the seat winning the sixth trick, else -1."""
        p = self.cur
        if p < 0:
            raise GameOverError("agram: the match is over; no action can be applied")
        h = self.hands[p]
        try:
            b = 1 << action
        except (TypeError, ValueError):
            raise self._illegal(action, "not a card id") from None
        if not h & b or isinstance(action, bool):
            raise self._illegal(action, "card not in hand")
        lm = self.lmask
        if lm:
            if b & lm:
                if action > self.best:
                    self.best = action
                    self.bseat = p
            elif h & lm:
                raise self._illegal(action, "must follow the suit led")
        else:
            self.lmask = SUIT_MASK_OF[action]
            self.best = action
            self.bseat = p
        self.hands[p] = h ^ b
        self.hist.append(action)
        n = self.m.n
        k = self.k + 1
        if k < n:
            self.k = k
            self.cur = p + 1 if p + 1 < n else 0
            return -1
        w = self.bseat
        self.k = 0
        self.lmask = 0
        t = self.tno + 1
        self.tno = t
        if t < TRICKS_PER_DEAL:
            self.cur = w
            return -1
        return w

    def finish_hand(self, rng: random.Random, teams: list[list[int]]) -> list[float]:
        """Play the current deal out in place with the rollout policy, without dealing the
        next, and return the rollout's rewards: :meth:`hand_rewards`, or
        ``outcome().rewards(teams)`` when the deal ended the match.

        The moves and random numbers are exactly those of applying
        :func:`engine.games.agram.rollout.rollout_action` until the deal ends (the typed
        kernel :mod:`engine.games.agram._kernel` when built, else that loop). Afterwards
        only :meth:`is_terminal`, :meth:`hand_index`, :meth:`hand_rewards` and
        :meth:`outcome` are meaningful (the hands and this deal's history are not updated
        by the kernel, and the next deal is not dealt): for hand rollouts (issue 19).

        :raises GameOverError: if the match is over.
        """
        if self.cur < 0:
            raise GameOverError("agram: the match is over; no action can be applied")
        if _KERNEL is not None:
            w = _KERNEL.play_out_hand(self.hands, self.cur, self.lmask, self.best, self.bseat, self.k,
                                      self.tno, self.m.n, TRICKS_PER_DEAL, rng)
        else:
            roll = self.m.game.rollout_action  # engine.games.agram.rollout.rollout_action
            w = -1
            while w < 0:
                w = self._play(roll(self, rng))
        self._end_deal(w, deal=False)
        n = self.m.n
        if self.cur >= 0:
            key: tuple[int, ...] = (-1, n, w)
        elif len(teams) == n:  # every seat its own side: the rewards depend on the deals won only
            key = tuple(self.wins)
        else:
            return self.outcome().rewards(teams)
        got = _REWARDS.get(key)
        if got is None:
            got = self.hand_rewards() if self.cur >= 0 else self.outcome().rewards(teams)
            if len(_REWARDS) < 4096:
                _REWARDS[key] = got
        return got[:]

    def _end_deal(self, w: int, deal: bool = True) -> None:
        """Seat ``w`` won the sixth trick: it wins the deal (§4.3), deals the next (§4.5) if ``deal``."""
        self.wins[w] += 1
        self.past = self.past + ((self.dealer, w),)
        self.hidx += 1
        if self.wins[w] >= self.m.match_wins:
            self.cur = -1
            return
        self.dealer = w
        if deal:
            self._deal()
        else:
            self.cur = w  # the next deal's dealer; its hands are not dealt (finish_hand)

    # ------------------------------------------------------------ results

    def outcome(self) -> Outcome:
        """Ranks by deals won (equal counts share a place), scores = deals won (§4.5).

        :raises GameOverError: if the match is not over.
        """
        if self.cur >= 0:
            raise GameOverError("agram: the match is not over")
        return Outcome(tuple(ranks_from_results(self.wins)), tuple(self.wins))

    def hand_rewards(self) -> list[float]:
        """The last completed deal: its winner ranks first, the others share second
        (:func:`engine.core.rank_rewards`); 0.5 each before any deal is completed."""
        n = self.m.n
        if not self.past:
            return [0.5] * n
        w = self.past[-1][1]
        return rank_rewards([0 if i == w else 1 for i in range(n)])

    def hand_index(self) -> int:
        """Deals completed so far in this match (§4.5)."""
        return self.hidx

    def world_key(self) -> Hashable:
        """Deal number, dealer, seat to act, hands, undealt, this deal's plays, deals won, past deals."""
        return (self.hidx, self.dealer, self.cur, tuple(self.hands), self.undealt,
                tuple(self.hist), tuple(self.wins), self.past)

    def public_action(self, action: int, seat: int) -> str:
        """Every Agram action is public: ``play Ah`` for every seat."""
        return self.m.game.format_action(action)

    # ------------------------------------------------------------ observation

    def _tricks(self) -> tuple[list[tuple[int, list[tuple[int, int]], int]], int, list[tuple[int, int]]]:
        """This deal's completed tricks ``(leader, [(seat, card)], winner)``, the current
        leader and the current trick's ``(seat, card)`` plays, rebuilt from ``hist``."""
        n = self.m.n
        done = []
        leader = (self.dealer + 1) % n
        cur: list[tuple[int, int]] = []
        for a in self.hist:
            cur.append(((leader + len(cur)) % n, a))
            if len(cur) == n:
                w = cur[trick_winner([c for _, c in cur], SUIT_OF, POWER)][0]
                done.append((leader, cur, w))
                leader = w
                cur = []
        return done, leader, cur

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (§4.4), JSON-ready.

        Keys: ``game``, ``players``, ``seat``, ``options``, ``hand_index``, ``actions``
        (``[[seat, "play Ah"], ...]`` of this deal), ``dealer``, ``to_act`` (-1 when
        over), ``hand`` (own cards, ascending id), ``hand_sizes``, ``undealt`` (number of
        cards set aside), ``trick_number`` (1..6, the trick in progress), ``leader``,
        ``trick`` (``[[seat, card], ...]`` of the trick in progress), ``tricks`` (completed
        tricks of this deal: ``{"leader", "cards", "winner"}``), ``voids`` (per seat the
        suits it has shown void in this deal), ``deals_won``, ``history`` (earlier deals:
        ``{"dealer", "winner"}``), ``match_over``.
        """
        n = self.m.n
        done, leader, cur = self._tricks()
        voids: list[set[str]] = [set() for _ in range(n)]
        for _, plays, _ in done + ([(leader, cur, -1)] if cur else []):
            led = SUIT_MASK_OF[plays[0][1]]
            for s, c in plays[1:]:
                if not (1 << c) & led:
                    voids[s].add(FRENCH_SUITS[plays[0][1] // 13])
        actions: list[list[Any]] = []
        for _leader, plays, _ in done:
            actions.extend([s, ACTION_STR[c]] for s, c in plays)
        actions.extend([s, ACTION_STR[c]] for s, c in cur)
        return {
            "game": "agram",
            "players": n,
            "seat": seat,
            "options": dict(self.m.options),
            "hand_index": self.hidx,
            "actions": actions,
            "dealer": self.dealer,
            "to_act": self.cur,
            "hand": [CARD_STR[c] for c in cards_of(self.hands[seat])],
            "hand_sizes": [h.bit_count() for h in self.hands],
            "undealt": len(DECK) - HAND_SIZE * n,
            "trick_number": min(self.tno + 1, TRICKS_PER_DEAL),
            "leader": leader,
            "trick": [[s, CARD_STR[c]] for s, c in cur],
            "tricks": [{"leader": tl, "cards": [[s, CARD_STR[c]] for s, c in plays], "winner": w}
                       for tl, plays, w in done],
            "voids": [sorted(v, key=FRENCH_SUITS.index) for v in voids],
            "deals_won": list(self.wins),
            "history": [{"dealer": d, "winner": w} for d, w in self.past],
            "match_over": self.cur < 0,
        }


