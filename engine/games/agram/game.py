"""The Agram game object: options, documentation, match factory, notation glue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.cards import parse_french
from engine.core import Game, Option, int_at_least, seat_option
from engine.games.agram.actions import DECK_MASK, HAND_SIZE, format_play, parse_play
from engine.games.agram.infoset import AgramInfoSet
from engine.games.agram.rollout import playout, rollout_action
from engine.games.agram.state import AgramState, _Match


class Agram(Game):
    """Agram for 2–5 players (``docs/rules/agram.md``)."""

    name = "agram"
    version = 1
    min_players = 2
    max_players = 5
    options = {
        "first_dealer": seat_option(below=5),
        "match_wins": Option(
            "match_wins", 1, "deals a player must win to win the match (1: one deal is one match)",
            check=int_at_least(1), expected="an integer >= 1"),
    }
    summary = (
        "Agram (West Africa), 2-5 players, 35 cards (A, T..3 of clubs, diamonds, hearts; T..3 of spades).\n"
        "Six cards each, the rest set aside unseen. Follow suit if able; the highest card of the suit led\n"
        "wins the trick and leads the next. Only the sixth trick counts: its winner wins the deal.\n"
        "The winner of a deal deals the next; with match_wins = k the first to win k deals wins."
    )
    actions_doc = "play <card>   play a card, rank A T 9..3 + suit c d h s (e.g. 'play Ah', 'play Ts', 'play 5h')"
    observation_doc = (
        "game, players, seat, options, hand_index: as every game\n"
        "actions: this deal's plays [[seat, 'play Ah'], ...] in order\n"
        "dealer: this deal's dealer; to_act: seat to play (-1 when the match is over)\n"
        "hand: own cards ['Ah', 'Tc', ...]; hand_sizes: cards left per seat; undealt: cards set aside\n"
        "trick_number: 1..6; leader: leader of the trick in progress; trick: [[seat, 'Ah'], ...] so far\n"
        "tricks: completed tricks of this deal [{leader, cards: [[seat, card], ...], winner}]\n"
        "voids: per seat, suits it failed to follow this deal (['h', 's'])\n"
        "deals_won: per seat; history: earlier deals [{dealer, winner}]; match_over: bool"
    )
    #: a uniformly random legal card drawn from the legal mask (:mod:`engine.games.agram.rollout`)
    rollout_action = staticmethod(rollout_action)  # type: ignore[assignment]  # takes the game's own states
    #: the rollout kernel: deal by deal through ``finish_hand`` (same draws as ``rollout_action``)
    playout = staticmethod(playout)
    #: ``rollout_action`` is the uniform policy (``engine.playouts.uniform_rollout``)
    uniform_rollout = True
    configs = (
        (2, {}),
        (3, {}),
        (5, {}),
        (4, {"first_dealer": "random", "match_wins": 3}),
        (3, {"first_dealer": 2, "match_wins": 2}),
    )

    def new_match(self, n: int, deal_seed: int, **options: Any) -> AgramState:
        """First deal of a match (§4.2): dealer from ``first_dealer``, 6 cards each.

        :raises PlayerCountError: unless 2 <= n <= 5.
        :raises OptionError: unknown option, bad value, or a first dealer seat >= n.
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        dealer = self.seat_from_option(opts, "first_dealer", n, deal_seed)
        m = _Match(self, n, opts["match_wins"], deal_seed, opts)
        st = AgramState._blank(m, dealer, [0] * n, 0, ())
        st._deal()
        return st

    def state_from_hands(self, hands: list[list[str]], dealer: int = 0, deal_seed: int = 0,
                         **options: Any) -> AgramState:
        """A match whose first deal has the given hands (for tests and worked examples).

        :param hands: per seat its 6 cards as strings (``['Ah', '5h', ...]``); the rest of
            the deck is set aside.
        :param dealer: the first dealer; seat ``dealer + 1`` leads.
        :param deal_seed: the chance key of later deals.
        :raises ValueError: if the hands are not disjoint 6-card sets of the deck.
        """
        n = len(hands)
        self.check_players(n)
        opts = self.resolve_options(options)
        masks = []
        used = 0
        for h in hands:
            m = 0
            for text in h:
                c = parse_french(text)
                if not (1 << c) & DECK_MASK or (1 << c) & (used | m):
                    raise ValueError(f"agram: card {text!r} is not in the deck or given twice")
                m |= 1 << c
            if m.bit_count() != HAND_SIZE:
                raise ValueError(f"agram: a hand must hold {HAND_SIZE} cards, got {h}")
            used |= m
            masks.append(m)
        st = AgramState._blank(_Match(self, n, opts["match_wins"], deal_seed, opts), dealer, [0] * n, 0, ())
        st._begin_deal(masks, DECK_MASK & ~used)
        return st

    def infoset(self, observation: Mapping[str, Any]) -> AgramInfoSet:
        """:raises InconsistentObservationError: if the observation admits no deal."""
        return AgramInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """``'play Ah'`` -> the card id.

        :raises ActionParseError: if ``text`` is not ``play <card>`` with an Agram card.
        """
        return parse_play(text)

    def format_action(self, action: int) -> str:
        """The card id as ``play Ah``.

        :raises ActionParseError: if ``action`` is not a card of the deck.
        """
        return format_play(action)
