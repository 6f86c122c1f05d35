"""The Whiskey Poker ``Game``: options, documentation, factories (rules whiskey_poker.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core import Game, Option, int_at_least, seat_option
from engine.games.whiskey_poker import actions as A
from engine.games.whiskey_poker.infoset import WhiskeyInfoSet
from engine.games.whiskey_poker.rollout import playout, rollout_action
from engine.games.whiskey_poker.state import Rules, WhiskeyState


def _hands_ok(v: Any) -> bool:
    return v == "6n" or (isinstance(v, int) and not isinstance(v, bool) and v >= 1)


def _int_at_least(lo: int, what: str = "") -> dict[str, Any]:
    return {"check": int_at_least(lo), "expected": f"an int >= {lo}{what}"}


class WhiskeyPoker(Game):
    """Whiskey Poker for 2–9 players: five-card poker with a widow to exchange with (whiskey_poker.md)."""

    name = "whiskey_poker"
    version = 1
    min_players = 2
    max_players = 9
    options: Mapping[str, Option] = {
        "mode": Option("mode", "BETTING",
                       "BETTING: fixed-limit betting, net chips over hands_per_match hands; "
                       "LOWEST_PAYS: no betting, the lowest hand pays 1 chip (§2.2)",
                       choices=("BETTING", "LOWEST_PAYS")),
        "first_dealer": seat_option("first_dealer",
                                    "seat of the first dealer, or 'random' (drawn from the deal seed) (§2.3)",
                                    expected="a seat number 0..8 or 'random'", below=9),
        "ante": Option("ante", 1, "BETTING: chips each player antes per hand (§2.4)", **_int_at_least(0)),
        "small_bet": Option("small_bet", 2, "BETTING: bet unit in betting rounds 1 and 2 (§2.4)",
                            **_int_at_least(1)),
        "big_bet": Option("big_bet", 4, "BETTING: bet unit in betting round 3 (§2.4)", **_int_at_least(1)),
        "max_bets_per_round": Option("max_bets_per_round", 4,
                                     "BETTING: cap of one bet plus raises per round (§2.4)", **_int_at_least(1)),
        "hands_per_match": Option("hands_per_match", "6n",
                                  "BETTING: hands in a match; '6n' = 6 x players (§2.4)",
                                  check=_hands_ok, expected="'6n' or an int >= 1"),
        "max_circuits_per_phase": Option("max_circuits_per_phase", 3,
                                         "safety cap: an exchange phase ends after this many circuits "
                                         "without a knock (§2.5, §2.6)", **_int_at_least(1)),
        "no_consecutive_pass": Option("no_consecutive_pass", False,
                                      "phase 1: a player who passed on their previous turn must exchange "
                                      "or knock (§2.5)", check=lambda v: isinstance(v, bool),
                                      expected="true or false"),
        "start_chips": Option("start_chips", 5, "LOWEST_PAYS: chips each player starts with (§2.8)",
                              **_int_at_least(1)),
        "lowest_pays_end": Option("lowest_pays_end", "first_out",
                                  "LOWEST_PAYS: first_out ends when someone reaches 0; last_standing "
                                  "eliminates players at 0 until one is left (§2.8)",
                                  choices=("first_out", "last_standing")),
    }
    summary = (
        "Whiskey Poker, 2-9 players, 52 cards, standard five-card poker ranking (ace low only in\n"
        "A-2-3-4-5). Each player and a face-down widow get 5 cards. Exchange phase 1 (blind): swap\n"
        "your whole hand with the unseen widow ('exchange'), 'pass' or 'knock'; after a knock everyone\n"
        "else gets one last turn ('exchange' or 'stand'). The widow is then turned face up. Exchange\n"
        "phase 2 (open): take one widow card giving one of yours, take all five, or knock / stand.\n"
        "Mode BETTING (default): ante, fixed-limit betting rounds before phase 1, between the phases\n"
        "and before the showdown (cap of 4 bets); best hand takes the pot, ties split it; a match is\n"
        "hands_per_match hands scored by net chips. Mode LOWEST_PAYS: no betting; everyone tied for\n"
        "the lowest hand pays 1 chip; first_out ends when someone is broke, last_standing eliminates."
    )
    actions_doc = (
        "check              betting, no bet yet this round                     e.g. check\n"
        "bet                betting, no bet yet: put in one unit               e.g. bet\n"
        "call               betting, facing a bet: match the highest bet       e.g. call\n"
        "raise              betting, facing a bet, under the cap: one unit more  e.g. raise\n"
        "fold               betting, facing a bet: leave the hand (cards never shown)  e.g. fold\n"
        "exchange           phase 1: swap your whole hand with the face-down widow  e.g. exchange\n"
        "pass               phase 1, before a knock: keep your hand           e.g. pass\n"
        "knock              either phase, before a knock: keep your hand, everyone else gets one\n"
        "                   last turn                                          e.g. knock\n"
        "stand              either phase, after a knock: keep your hand       e.g. stand\n"
        "take W give H      phase 2: take widow card W, put your card H face up in the widow\n"
        "                                                                      e.g. take 9d give 5s\n"
        "take all           phase 2: swap your whole hand with the face-up widow  e.g. take all"
    )
    observation_doc = (
        "game, players, seat, options, hand_index (hands completed so far)\n"
        "actions        this hand's actions [[seat, 'bet'], [seat, 'take 9d give 5s'], ...] (all public)\n"
        "mode           'BETTING' | 'LOWEST_PAYS'\n"
        "phase          'bet1' | 'exchange1' | 'bet2' | 'exchange2' | 'bet3' | 'over'\n"
        "dealer, to_act the dealer of this hand; the seat to act (-1 when over)\n"
        "dealt_in       seats dealt into this hand; folded: seats that folded this hand\n"
        "hand           your cards now, e.g. ['9c', 'Jc', '9h', '5s', '7d'] (ordered by card id)\n"
        "dealt          your 5 cards as dealt\n"
        "received       the hands you received by your own phase-1 'exchange's, in order\n"
        "widow          the face-up widow now, null while it is face down\n"
        "widow_exposed  the widow as it was turned up, null before\n"
        "shown          [[seat, cards], ...] hands laid face up by 'take all' this hand\n"
        "knocker        the current exchange phase's first knocker, or null\n"
        "passed         seats whose previous turn in this exchange phase was 'pass'\n"
        "turns          turns taken in the current exchange phase (the cap is\n"
        "               max_circuits_per_phase x active players)\n"
        "pot            chips in the pot; put: per seat, chips put in this hand (ante included)\n"
        "round_bets     per seat, chips put in this betting round; bets: bets made this round;\n"
        "               unit: this round's bet size (0 outside betting)\n"
        "scores         per seat: net chips so far (BETTING) or chips left (LOWEST_PAYS)\n"
        "out            per seat, the hand index it was eliminated in (last_standing), else null\n"
        "hands          earlier hands: {hand, dealer, result (chips per seat), folded, winners |\n"
        "               payers, showdown: [[seat, cards], ...] (every hand not folded; [] when all\n"
        "               but one folded), widow_exposed, shown}"
    )
    configs = (
        (2, {}),
        (3, {"no_consecutive_pass": True, "max_circuits_per_phase": 1, "first_dealer": "random",
             "hands_per_match": 4, "max_bets_per_round": 2}),
        (9, {"hands_per_match": 2}),
        (4, {"mode": "LOWEST_PAYS"}),
        (5, {"mode": "LOWEST_PAYS", "lowest_pays_end": "last_standing", "start_chips": 2,
             "no_consecutive_pass": True}),
    )

    #: hand-strength-aware rollouts (:mod:`engine.games.whiskey_poker.rollout`) instead of uniform ones
    rollout_action = staticmethod(rollout_action)  # type: ignore[assignment]  # takes the game's own states
    #: the rollout kernel: the same moves and draws as a ``rollout_action`` loop (issue 19)
    playout = staticmethod(playout)

    def new_match(self, n: int, deal_seed: int, **options: Any) -> WhiskeyState:
        """The first hand of a match of ``n`` players, dealt from ``deal_seed``.

        :raises PlayerCountError: unless ``2 <= n <= 9``.
        :raises OptionError: for an unknown option, a bad value, or a ``first_dealer`` seat >= ``n``.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        return WhiskeyState.new(self, Rules(n, opts), deal_seed, dealer)

    def infoset(self, observation: Mapping[str, Any]) -> WhiskeyInfoSet:
        """The deals consistent with ``observation`` (rules §2.9; see :mod:`engine.games.whiskey_poker.infoset`).

        :raises InconsistentObservationError: if its cards contradict each other.
        """
        return WhiskeyInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """See :func:`.actions.parse_action`."""
        return A.parse_action(text)

    def format_action(self, action: int) -> str:
        """See :func:`.actions.format_action`."""
        return A.format_action(action)
