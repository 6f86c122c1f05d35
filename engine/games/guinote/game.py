"""The Guiñote game object: options, documentation, factory of states (rules §1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core import Game, Option, seat_option
from engine.games.guinote import actions
from engine.games.guinote.infoset import GuinoteInfoSet
from engine.games.guinote.rollout import playout
from engine.games.guinote.state import GuinoteState


class Guinote(Game):
    """Guiñote (rules/guinote.md): 2 players, or 4 in partnerships {0,2} vs {1,3}.

    Spanish 40-card deck, six cards each, face-up trump under the stock, a post-trick
    window (swap the 7 of trumps, one call, proceed) after every draw-phase trick, strict
    play once the stock is gone, first hand scored at its end, vueltas hands scored as
    points are earned, first side to the target wins.
    """

    name = "guinote"
    version = 1
    min_players = 2
    max_players = 4
    options = {
        "first_dealer": seat_option(
            "first_dealer", "dealer of the first hand: a seat, or 'random' (drawn from the deal)",
            expected="a seat number below the player count, or 'random'", below=4),
        "target": Option("target", 101, "points a side needs to win (rules §1.7)", choices=(101, 151, 201)),
        "must_undertrump": Option(
            "must_undertrump", False,
            "strict play: a void player who cannot over-trump must still play a trump (§1.5, G-5)",
            choices=(False, True)),
    }
    #: the rollout kernel (uniform policy, same draws as ``rollout_action``; issue 19)
    playout = staticmethod(playout)
    configs = (
        (2, {}),
        (4, {}),
        (2, {"target": 151, "first_dealer": "random"}),
        (4, {"must_undertrump": True, "target": 151, "first_dealer": 3}),
    )
    summary = (
        "Guiñote, the Aragonese tute: 2 players or 4 in pairs (0+2 vs 1+3), Spanish 40-card deck\n"
        "(order A 3 12 11 10 7 6 5 4 2; points A 11, 3 10, 12 4, 11 3, 10 2; last trick 10).\n"
        "Six cards each; the next card lies face up under the stock and sets trumps. While the\n"
        "stock lasts any card may be played; after each trick its winner may swap the 7 of trumps\n"
        "for a better face-up card and make one call (12 + 11 of a suit: 20, 40 in trumps; each\n"
        "suit once), then everybody draws, the winner first, the face-up card last. With the stock\n"
        "gone play is strict: follow suit and beat the winning card, else trump / over-trump\n"
        "(no obligation when the partner is winning). First hand: counted at its end (both over\n"
        "the target: the last trick wins). Otherwise vueltas: points count as earned and the\n"
        "first side to reach the target wins at once.")
    actions_doc = (
        "play <card>   play a card to the trick; card = rank (1-7, 10, 11, 12) + suit (o c e b): 'play 12o'\n"
        "swap7         trick winner, stock not empty: give the 7 of trumps for the better face-up card: 'swap7'\n"
        "call <suit>   trick winner, stock not empty: declare 12 + 11 of a suit (20, 40 in trumps): 'call o'\n"
        "proceed       trick winner: close the post-trick window (always legal); then everybody draws: 'proceed'")
    observation_doc = (
        "game, players, seat, options, hand_index (hands completed), target\n"
        "actions       this hand's actions in order: [[seat, 'play 3c'], [seat, 'proceed'], ...]\n"
        "dealer        dealer of this hand (dealer + 1 leads the first trick)\n"
        "trump_suit    'o' | 'c' | 'e' | 'b'; trump_card: the card turned face up at the deal\n"
        "face_up       the face-up card under the stock now (the 7 after a swap), null once drawn\n"
        "stock_size    cards in the stock, face-up card included\n"
        "phase         'play' | 'window' (the trick winner may swap7 / call / proceed) | 'over'\n"
        "to_act        seat to act (-1 when over); leader: seat that leads / led the current trick\n"
        "trick         current trick: [[seat, card], ...]\n"
        "tricks        completed tricks of this hand: [{leader, cards, winner, points}] (points include the last-trick 10)\n"
        "hand          own cards; dealt: own six cards of the deal; drawn: own face-down draws in order\n"
        "hand_sizes    per seat\n"
        "shown         per seat, cards publicly known to be in its hand (calls, swap, face-up card drawn)\n"
        "face_up_drawer  seat that drew the face-up card (-1 before); swap: seat that swapped the 7, or null\n"
        "calls         [[seat, suit, value]] this hand\n"
        "hand_points   per seat, its side's points this hand (cards, last trick, calls)\n"
        "scores        per seat, its side's match total as credited (first hand: added at its end)\n"
        "past          earlier hands: [{dealer, points (per seat, side's), last_trick (seat)}]\n"
        "winner        seats of the winning side once over, else null")

    def teams(self, n: int) -> list[list[int]]:
        """2 players: [[0], [1]]; 4 players: [[0, 2], [1, 3]] (rules §1.1).

        :raises PlayerCountError: for 3 players (G-1) or outside 2..4.
        """
        self.check_players(n)
        return [[0], [1]] if n == 2 else [[0, 2], [1, 3]]

    def check_players(self, n: int) -> None:
        """:raises PlayerCountError: unless ``n`` is 2 or 4 (3 players are not supported, G-1)."""
        super().check_players(n)
        if n == 3:
            from engine.errors import PlayerCountError
            raise PlayerCountError("guinote: 3 players not supported; expected 2 or 4 (rules G-1)")

    def new_match(self, n: int, deal_seed: int, **options: Any) -> GuinoteState:
        """A match of ``n`` (2 or 4) players; the first hand is dealt from ``deal_seed``.

        :raises PlayerCountError: unless ``n`` is 2 or 4.
        :raises OptionError: for unknown options or bad values (``first_dealer`` must be below ``n``).
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        state = GuinoteState(self, n, opts, deal_seed)
        state.dealer = dealer
        state.deal()
        return state

    def infoset(self, observation: Mapping[str, Any]) -> GuinoteInfoSet:
        """The information set of ``observation`` (:class:`GuinoteInfoSet`).

        :raises InconsistentObservationError: if the observation is malformed or contradictory.
        """
        return GuinoteInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """``'play 12o'`` -> 29, ``'swap7'`` -> 40, ``'call o'`` -> 41, ``'proceed'`` -> 45.

        :raises ActionParseError: naming the text and the notation.
        """
        return actions.parse_action(text)

    def format_action(self, action: int) -> str:
        """Inverse of :meth:`parse_action`."""
        return actions.format_action(action)
