"""The Cuttle game object: options, documentation, match factory, notation glue (cuttle.md §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core import Game, Option, int_at_least
from engine.deal import shuffled
from engine.games.cuttle.actions import format_action, parse_action
from engine.games.cuttle.infoset import CuttleInfoSet
from engine.games.cuttle.rollout import playout
from engine.games.cuttle.state import CuttleState


class Cuttle(Game):
    """Cuttle per ``docs/rules/cuttle.md`` §3 (2 players, one game per match)."""

    name = "cuttle"
    version = 1
    min_players = 2
    max_players = 2
    #: the rollout kernel (uniform policy, same draws as ``rollout_action``; issue 19)
    playout = staticmethod(playout)
    options = {
        "first_dealer": Option(
            "first_dealer", 0, "seat that deals (6 cards; the other seat moves first), or 'random' from the deal seed",
            choices=(0, 1, "random"), expected="0, 1 or 'random'"),
        "hand_limit": Option(
            "hand_limit", None, "none (seed rules) or 8: no Draw at 8+ cards, a 5 draws only up to 8 (C-10)",
            choices=(None, 8), expected="null (no limit) or 8"),
        "nine_freezes": Option(
            "nine_freezes", False, "a card returned by a 9 cannot be played on its holder's next turn (C-7)",
            choices=(False, True), expected="true or false"),
        "max_turns": Option(
            "max_turns", 500, "engine safeguard: after this many turns without a win the match is drawn (3.8)",
            check=int_at_least(1), expected="an int >= 1"),
    }
    summary = (
        "Cuttle (classic rules): 2 players, 52 cards; the dealer gets 6 cards, the other player 5 and "
        "moves first. On a turn draw, or play one card: a number card for points or to scuttle a weaker "
        "point card of the opponent, a one-off (A 2 3 4 5 6 7 9, each with its effect; the opponent may "
        "counter with a 2, counters can be countered), or a permanent (glasses 8, jack stealing a point "
        "card, queen, king). Reach 21 points (14/10/7/5 with 1-4 kings) at the end of your own turn to "
        "win; with an empty deck three passes in a row draw the game.")
    actions_doc = "\n".join([
        "draw                 take the top card of the deck (e.g. 'draw')",
        "pass                 only with an empty deck (e.g. 'pass')",
        "points C             a number card for points (e.g. 'points 9d')",
        "scuttle T with C     scrap the opponent's point card T with a higher number card C (e.g. 'scuttle 9d with Tc')",
        "glasses C            an 8 as glasses: see the opponent's hand (e.g. 'glasses 8h')",
        "queen C              (e.g. 'queen Qs')",
        "king C               (e.g. 'king Kd')",
        "jack C on T          steal the point stack whose base card is T (e.g. 'jack Jc on 9d')",
        "oneoff C             A, 3, 4, 5, 6, 7 one-off (e.g. 'oneoff Ac')",
        "oneoff C on T        2 (destroy) or 9 (return) on a permanent or top jack T (e.g. 'oneoff 2c on Qh')",
        "counter C            counter the pending one-off with a 2 (e.g. 'counter 2h')",
        "decline              do not counter (always legal in a counter window) (e.g. 'decline')",
        "take C               the 3's pick from the scrap (e.g. 'take 3c')",
        "discard C1 C2        the victim of a 4 scraps two cards, lower first in scuttle order (e.g. 'discard 4d 7s')",
        "A 7's card is played with the string of its play (e.g. 'points 9d', 'jack Jh on 5d').",
    ])
    observation_doc = "\n".join([
        "game, players, seat, options, hand_index (0; 1 when over), dealer",
        "turn (turns completed), turn_player, to_act (-1 when over), passes (consecutive passed turns)",
        "phase: main | counter | take (3's pick) | discard (4's victim) | seven (play the 7's card) | over",
        "hand, initial_hand (own dealt cards), hand_sizes [n0, n1], deck_size",
        "opponent_hand: the opponent's hand while you control a glasses 8, else null",
        "opponent_known: cards of the opponent's hand you know (glasses, 3-takes, 9-returns)",
        "known_to_opponent: cards of your hand the opponent knows",
        "scrap; stacks [{base, controller, owner, jacks (oldest first)}]; permanents [[seat 0], [seat 1]]",
        "points [p0, p1], thresholds [t0, t1] (points needed, from kings)",
        "oneoff: null or {card, player, target, counters (2s of the chain), suspended (one-offs in play)}",
        "seven_card: the card your 7 drew, while you must play it; else null",
        "frozen [[seat 0], [seat 1]]: cards returned by a 9 that cannot be played yet (nine_freezes)",
        "draws [[seat, stamp, draw|five|seven, [cards or '?']]]: every draw; cards you saw are named",
        "shown [[seat, stamp, card]]: first public showing of each card leaving a hand",
        "glimpses [[stamp, [cards]]]: the opponent's hand when your first glasses 8 came into play",
        "actions [[seat, action]]: every action (a stamp is an index in this list)",
        "result: null, or {winner (null on a draw), reason: win|passes|max_turns, ranks}",
    ])
    configs = (
        (2, {}),
        (2, {"hand_limit": 8, "nine_freezes": True}),
        (2, {"first_dealer": "random", "max_turns": 60}),
    )

    def new_match(self, n: int, deal_seed: int, **options: Any) -> CuttleState:
        """A new match: shuffle from ``(deal_seed, 0)``, deal 6 to the dealer and 5 to the other (§3.3).

        :raises PlayerCountError: unless ``n == 2``.
        :raises OptionError: for an unknown option or a bad value.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed, purpose="dealer")
        deck = shuffled(range(52), deal_seed, 0)
        hands = [0, 0]
        for c in deck[:5]:
            hands[1 - dealer] |= 1 << c
        for c in deck[5:11]:
            hands[dealer] |= 1 << c
        return CuttleState.from_deal(self, opts, dealer, hands, deck[11:], deal_seed)

    def infoset(self, observation: Mapping[str, Any]) -> CuttleInfoSet:
        """The information set of ``observation`` (§3.9).

        :raises InconsistentObservationError: if its counts do not add up.
        """
        return CuttleInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """The action value of ``text`` (notation in ``actions_doc``).

        :raises ActionParseError: naming the text and the notation.
        """
        return parse_action(text)

    def format_action(self, action: Any) -> str:
        """The protocol string of ``action``."""
        return format_action(action)
