"""The Cuckoo game object: options, documentation, match factory, notation glue (cuckoo.md §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core import Game, Option, int_at_least, seat_option
from engine.games.cuckoo.actions import format_action, parse_action
from engine.games.cuckoo.infoset import CuckooInfoSet
from engine.games.cuckoo.rollout import playout, rollout_action
from engine.games.cuckoo.state import CuckooState


class Cuckoo(Game):
    """Cuckoo for 2–20 players (cuckoo.md §3)."""

    name = "cuckoo"
    version = 1
    #: a threshold on the actor's own card (:mod:`engine.games.cuckoo.rollout`) instead of uniform rollouts
    rollout_action = staticmethod(rollout_action)  # type: ignore[assignment]  # takes the game's own states
    #: the rollout kernel: the same moves and draws as a ``rollout_action`` loop (issue 19)
    playout = staticmethod(playout)
    min_players = 2
    max_players = 20
    options: Mapping[str, Option] = {
        "lives": Option("lives", 3, "lives per player (§3.1)", check=int_at_least(1),
                        expected="an int >= 1"),
        "king_block": Option("king_block", "optional",
                             "optional: a king-holder may block a swap; automatic: a king always blocks (§3.3)",
                             choices=("optional", "automatic")),
        "max_hands": Option("max_hands", 1000, "safety cap on hands; survivors then share first (§3.4.6)",
                            check=int_at_least(1), expected="an int >= 1"),
        "first_dealer": seat_option("first_dealer",
                                    "seat of the first dealer, or 'random' (drawn from the deal seed) (§3.2)",
                                    expected="a seat number or 'random'"),
    }
    summary = (
        "Cuckoo (Ranter-Go-Round, Chase the Ace), 2-20 players, 52 cards, aces low, kings high.\n"
        "Each hand every active player gets one card. From the dealer's left, each player keeps\n"
        "it or swaps with the next active player, who must accept unless holding a king, which it\n"
        "may show to block (and then skips its own turn; option king_block=automatic forces the\n"
        "block). The dealer, last, keeps or cuts: the stock's top card replaces the dealer's\n"
        "unless it is a king. Everyone holding the lowest card loses a life (if that would knock\n"
        "out every player the hand is void). The last player with lives wins; placings follow\n"
        "the order of elimination, scores are lives left."
    )
    actions_doc = (
        "keep     keep your card (any player's turn, dealer included)    e.g. keep\n"
        "swap     offer to trade cards with the next active player (non-dealer)  e.g. swap\n"
        "accept   answer a swap: the trade happens (always legal without a king; with a king\n"
        "         only under king_block=optional)                          e.g. accept\n"
        "block    answer a swap holding a king: show it, no trade; your turn is skipped  e.g. block\n"
        "cut      dealer: turn up the stock's top card; take it unless it is a king  e.g. cut"
    )
    observation_doc = (
        "game, players, seat, options, hand_index (hands completed so far)\n"
        "actions        this hand's actions [[seat, 'swap'], [seat, 'accept'], ...] (all public)\n"
        "lives          per seat, lives left\n"
        "eliminated_in  per seat, the hand index it was eliminated in, or null\n"
        "dealer         this hand's dealer; turn_order: active seats from the dealer's left, dealer last\n"
        "phase          'turn' | 'respond' | 'over'; to_act: the seat to act (-1 when over)\n"
        "dealt_card     your card as dealt this hand (e.g. 'Kd'), null if not dealt in\n"
        "card           your card now, null if not dealt in\n"
        "known          per seat, the card it holds now if you know it (yours, cards you traded,\n"
        "               followed through later trades, blocked kings), else null\n"
        "blocks         [[seat, king], ...] kings shown by blocks this hand\n"
        "hands          earlier hands: {dealer, cards (final card per seat, null if not dealt in),\n"
        "               cut (the card the dealer turned up, or null), losers, void, discard (the\n"
        "               dealer's discarded card if you knew it: you dealt or traded it, else null)}"
    )
    configs = (
        (2, {}),
        (3, {"king_block": "automatic"}),
        (4, {}),
        (6, {"lives": 2, "first_dealer": "random"}),
        (12, {"lives": 1, "king_block": "automatic"}),
    )

    def new_match(self, n: int, deal_seed: int, **options: Any) -> CuckooState:
        """A match of ``n`` players, the first hand dealt from ``deal_seed`` (§3.2).

        :raises PlayerCountError: if ``n`` is outside 2..20.
        :raises OptionError: on an unknown option, a bad value or ``first_dealer >= n``.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        state = CuckooState(self, n, opts, deal_seed)
        state.dealer = dealer
        state._deal()
        return state

    def infoset(self, observation: Mapping[str, Any]) -> CuckooInfoSet:
        """The information set of one seat's observation (§3.5).

        :raises InconsistentObservationError: if no deal is consistent with it.
        """
        return CuckooInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """``keep`` / ``swap`` / ``accept`` / ``block`` / ``cut`` to its action value.

        :raises ActionParseError: for any other text.
        """
        return parse_action(text)

    def format_action(self, action: int) -> str:
        """The protocol string of an action value."""
        return format_action(action)
