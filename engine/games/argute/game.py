"""The Argute game object: options, docs, configs, match factory, notation (``docs/rules/argute.md``)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from engine.core import Game, Option, int_at_least, seat_option
from engine.games.argute.actions import COPIES, DECK, HAND_SIZE, VALUES, format_argute, parse_argute
from engine.games.argute.infoset import ArguteInfoSet
from engine.games.argute.rollout import playout
from engine.games.argute.state import ArguteState, _Match


class Argute(Game):
    """Argute for 2–7 players (``docs/rules/argute.md``)."""

    name = "argute"
    version = 1
    min_players = 2
    max_players = 7
    options = {
        "first_dealer": seat_option(below=7),
        "target_score": Option(
            "target_score", 6, "a unique leader on at least this score after a hand wins",
            check=int_at_least(1), expected="an integer >= 1"),
        "max_hands": Option(
            "max_hands", 200, "safety cap: the match ends after this many hands",
            check=int_at_least(1), expected="an integer >= 1"),
    }
    summary = (
        "Argute (Seattle GameCo, 2018), 2-7 players, 42 cards: 7 copies each of the values 0-5.\n"
        "Six cards each, the rest put aside unseen. Everyone bids 0-3 tricks face down, then three\n"
        "tricks: everyone puts 3 cards (one per turn, round the table 3 times) into trick 1, 2 into\n"
        "trick 2, 1 into trick 3. The highest total wins a trick (ties: who reached that total first).\n"
        "Exact bid b >= 1 scores +b, exact 0 scores 0, a miss scores -1. A unique leader on\n"
        "target_score (6) or more after a hand wins."
    )
    actions_doc = (
        "bid <b>    bid b = 0..3 tricks (others see 'bid ?'), e.g. 'bid 2'\n"
        "play <v>   play a card of value v = 0..5, e.g. 'play 5'"
    )
    observation_doc = (
        "game, players, seat, options, hand_index: as every game\n"
        "actions: this hand's actions [[seat, 'bid ?' | 'bid 2' | 'play 5'], ...] (own bid in full)\n"
        "dealer; to_act: seat to act (-1 when over); phase: 'bid' | 'play' | 'over'\n"
        "hand: own values [0, 3, 5, ...]; bid: own bid or null; has_bid: per seat\n"
        "trick_number: 1..3; cards_per_player: 3/2/1; leader; trick: [[seat, value], ...] so far;\n"
        "totals: per seat in this trick; tricks: completed [{leader, plays, winner}]; tricks_won\n"
        "hand_sizes; undealt: cards put aside; scores\n"
        "history: earlier hands [{dealer, bids, tricks_won, changes}]; match_over: bool"
    )
    #: the rollout kernel (uniform policy, same draws as ``rollout_action``; issue 19)
    playout = staticmethod(playout)
    #: random play rarely reaches the target (misses cost a point), so most configs cap
    #: the match length to keep conformance runs and benchmarks short.
    configs = (
        (2, {"max_hands": 30}),
        (3, {"max_hands": 20}),
        (6, {"first_dealer": "random", "target_score": 3, "max_hands": 8}),
        (7, {"first_dealer": 6, "max_hands": 6}),
    )

    def new_match(self, n: int, deal_seed: int, **options: Any) -> ArguteState:
        """First hand of a match (§1.2).

        :raises PlayerCountError: unless 2 <= n <= 7.
        :raises OptionError: unknown option, bad value, or a first dealer seat >= n.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        st = ArguteState._blank(_Match(self, n, opts, deal_seed), dealer, [0] * n, 0, ())
        st._deal()
        return st

    def state_from_hands(self, hands: list[list[int]], dealer: int = 0, scores: list[int] | None = None,
                         deal_seed: int = 0, **options: Any) -> ArguteState:
        """A match whose first hand has the given hands of values (tests, worked examples).

        :param hands: per seat 6 values 0..5; the other copies are put aside.
        :param scores: starting scores (default all 0).
        :raises ValueError: if a hand is not 6 values or a value is used more than 7 times.
        """
        n = len(hands)
        self.check_players(n)
        opts = self.resolve_options(options)
        ptr = [0] * VALUES
        masks = []
        for h in hands:
            if len(h) != HAND_SIZE:
                raise ValueError(f"argute: a hand holds {HAND_SIZE} values, got {h}")
            m = 0
            for v in h:
                if not 0 <= v < VALUES or ptr[v] >= COPIES:
                    raise ValueError(f"argute: value {v} is not available")
                m |= 1 << (COPIES * v + ptr[v])
                ptr[v] += 1
            masks.append(m)
        used = 0
        for m in masks:
            used |= m
        st = ArguteState._blank(_Match(self, n, opts, deal_seed), dealer, list(scores or [0] * n), 0, ())
        st._begin_hand(masks, ((1 << len(DECK)) - 1) & ~used)
        return st

    def infoset(self, observation: Mapping[str, Any]) -> ArguteInfoSet:
        """:raises InconsistentObservationError: if the observation admits no world."""
        return ArguteInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """``'bid 2'`` / ``'play 5'`` -> the action.

        :raises ActionParseError: naming the text and the notation.
        """
        return parse_argute(text)

    def format_action(self, action: Hashable) -> str:
        """``bid b`` / ``play v``.

        :raises ActionParseError: if ``action`` is not an Argute action.
        """
        return format_argute(action)


__all__ = ["Argute"]
