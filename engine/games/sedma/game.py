"""The Sedma game object: options, documentation, match factory, notation glue (sedma.md §2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core import Game, Option, int_at_least, seat_option
from engine.games.sedma.actions import format_action, parse_action
from engine.games.sedma.infoset import SedmaInfoSet
from engine.games.sedma.rollout import playout
from engine.games.sedma.state import SedmaState, sides_for


class Sedma(Game):
    """Sedma for 2–4 players, partnerships {0,2} vs {1,3} with 4 (sedma.md §2)."""

    name = "sedma"
    version = 1
    min_players = 2
    max_players = 4
    options: Mapping[str, Option] = {
        "first_dealer": seat_option("first_dealer",
                                    "seat of the first dealer, or 'random' (drawn from the deal seed) (§2.2)",
                                    expected="a seat number or 'random'"),
        "match": Option("match", "single", "single: one hand is the match; vp: play hands for victory points (§2.5)",
                        choices=("single", "vp")),
        "vp_target": Option("vp_target", 10, "vp only: the match ends once a side reaches this many VP (§2.5)",
                            check=int_at_least(1), expected="an int >= 1"),
        "max_hands": Option("max_hands", 200, "vp only: safety cap on the number of hands (§2.5)",
                            check=int_at_least(1), expected="an int >= 1"),
    }
    summary = (
        "Sedma, 2-4 players (4: partners 0+2 vs 1+3), 32 cards (3 players: two 8s removed).\n"
        "Cards are ranks only: 7 8 9 T J Q K A; suits play no role. Four cards each, the rest\n"
        "is the stock. Any card may be played. The trick goes to whoever played the last card of\n"
        "the starter's rank or the last 7. After each round the leader may continue (with the\n"
        "starter's rank or a 7; the others each add a card) or end the trick. Drawing one at a\n"
        "time from the winner back to four; the winner leads. A and T are worth 10, the last\n"
        "trick 10 (90 per hand). Double win: all 90; triple win: every trick. match=single:\n"
        "the hand is the match (placings by points); match=vp: 1/2/3 VP per single/double/triple\n"
        "win until vp_target (loser deals, winner leads)."
    )
    actions_doc = (
        "play x       play a card of rank x (any held rank; the leader to start a trick,\n"
        "             everybody else in every round)                     e.g. play 8, play T\n"
        "continue x   leader after a round: start another round with x = the starter's rank\n"
        "             or 7                                               e.g. continue 7\n"
        "end          leader after a round: let the trick end (always legal) e.g. end"
    )
    observation_doc = (
        "game, players, seat, options, hand_index (hands completed so far)\n"
        "actions      this hand's actions [[seat, 'play 8'], [seat, 'end'], ...] (all public)\n"
        "teams        the sides ([[0, 2], [1, 3]] with 4 players, else one seat each)\n"
        "dealer       this hand's dealer (dealer+1 led the first trick)\n"
        "phase        'play' | 'decide' (leader: continue or end) | 'over'; to_act: seat (-1 when over)\n"
        "hand         your cards, e.g. ['7', '8', '8', 'A']\n"
        "dealt        the four cards you were dealt this hand; drawn: the ranks you drew, in order\n"
        "hand_sizes   per seat; stock: cards left in the stock\n"
        "trick        current trick {leader, starter (rank or null), cards [[seat, rank], ...],\n"
        "             winning (seat or null)}\n"
        "tricks       completed tricks of this hand [{leader, cards [[seat, rank], ...], winner}]\n"
        "won          per side, the ranks it has won this hand; card_points: per side, 10 per A/T won\n"
        "unseen       rank -> number of cards of that rank you have not seen this hand\n"
        "vp           per side, victory points so far (vp matches; zeros otherwise)\n"
        "past_hands   earlier hands [{dealer, points (per side, last trick included), winners\n"
        "             (sides), win: 'single'|'double'|'triple'|'tie', vp (per side awarded)}]"
    )
    #: the rollout kernel (uniform policy, same draws as ``rollout_action``; issue 19)
    playout = staticmethod(playout)
    configs = (
        (2, {}),
        (3, {}),
        (4, {}),
        (2, {"match": "vp", "vp_target": 3}),
        (3, {"match": "vp", "vp_target": 2, "first_dealer": "random"}),
        (4, {"match": "vp", "vp_target": 3, "first_dealer": 2}),
    )

    def teams(self, n: int) -> list[list[int]]:
        """``[[0, 2], [1, 3]]`` with 4 players, else one side per seat (§2.1)."""
        self.check_players(n)
        return sides_for(n)

    def new_match(self, n: int, deal_seed: int, **options: Any) -> SedmaState:
        """A match of ``n`` players, the first hand dealt from ``deal_seed`` (§2.2).

        :raises PlayerCountError: if ``n`` is outside 2..4.
        :raises OptionError: on an unknown option, a bad value or ``first_dealer >= n``.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        state = SedmaState(self, n, opts, deal_seed)
        state.dealer = dealer
        state._deal()
        return state

    def infoset(self, observation: Mapping[str, Any]) -> SedmaInfoSet:
        """The information set of one seat's observation (§2.4).

        :raises InconsistentObservationError: if no deal is consistent with it.
        """
        return SedmaInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """``play x`` / ``continue x`` / ``end`` to its action value (x in 7 8 9 T J Q K A).

        :raises ActionParseError: for any other text.
        """
        return parse_action(text)

    def format_action(self, action: int) -> str:
        """The protocol string of an action value (0..7 play, 8..15 continue, 16 end)."""
        return format_action(action)
