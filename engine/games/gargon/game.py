"""The Gargon game object: options, documentation, deal, notation glue (gargon.md §4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import compiled
from engine.cards import mask_of
from engine.core import Game, Option, seat_option
from engine.deal import deal_hands, shuffled
from engine.games.gargon import actions as A
from engine.games.gargon import rollout as _rollout
from engine.games.gargon.infoset import GargonInfoSet
from engine.games.gargon.rollout import rollout_action
from engine.games.gargon.state import GargonState


def _amulet_table(v: Any) -> bool:
    return (isinstance(v, (list, tuple)) and len(v) == 16
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v))


class Gargon(Game):
    """The Gargon rules (§4): deal, rounds of playing out / battles / replacement draws, scoring."""

    name = "gargon"
    version = 1
    min_players = 3
    max_players = 5
    options = {
        "amulets": Option("amulets", A.DEFAULT_AMULETS,
                          "amulets per value 0..15 (16 non-negative ints; §4.1 engine table)",
                          check=_amulet_table, expected="a list of 16 non-negative ints (amulets of values 0..15)"),
        "pass_draw": Option("pass_draw", "choice_1_to_3",
                            "a passer draws 1-3 cards by choice, or exactly as many as the start player played",
                            choices=("choice_1_to_3", "match_start_count")),
        "replacement": Option("replacement", "played_count",
                              "after the battles each player who played draws as many cards (or nobody draws)",
                              choices=("played_count", "none")),
        "first_start": seat_option("first_start", "the first start player: a seat, or 'random' (from the deal seed)",
                                   expected="a seat number 0..players-1 or 'random'", below=5),
    }
    configs = (
        (3, {}),
        (4, {}),
        (5, {}),
        (3, {"pass_draw": "match_start_count", "first_start": "random"}),
        (4, {"replacement": "none", "first_start": 2}),
    )
    summary = (
        "Gargon (3-5 players, one hand). 102 cards in six colours w b v r y g (values 0,0,1..15); "
        "card backs show colours, so every hand's and both draw piles' colours are public. Each round "
        "the start player plays 1-3 cards face down (patterns 1, 2, 1:1, 2:1, 1:1:1); the others match "
        "the pattern or pass and draw 1-3; the last player may only use colours already played. Battles "
        "per colour (second battle for pairs) send winners to stashes; players who played draw "
        "replacements. The game ends when a draw pile runs out (the round is finished). Score: amulets "
        "doubled per zero won in that colour, +10 (+5 shared) for most cards of a colour.")
    actions_doc = (
        "select r11  place one card face down (cards in canonical order w b v r y g, then value; "
        "'select w0' places a zero; others see 'select r ?')\n"
        "done        finish the play (legal once the selection is a complete legal play)\n"
        "pass        follower only, before selecting; then draw\n"
        "draw a      take the top card of pile A (draw b: pile B); after a pass or as a replacement\n"
        "stop        stop drawing after the 1st or 2nd pass draw")
    observation_doc = (
        "game, players, seat, options, hand_index (1 once over), actions ([[seat, action as seen], ...]); "
        "phase (play | pass_draw | replacement | over), to_act, first_start, round, start_player; "
        "hand (own faces); hand_colours (per seat counts of w b v r y g); piles {a, b} (colour letters, "
        "top first); dealt (own 10 dealt faces), dealt_colours (per seat), dealt_piles {a, b}; drawn (own "
        "drawn faces in order); table (per seat this round's face-down cards: own faces, others' colours); "
        "passed (seats that passed this round); pattern (start player's, e.g. [2, 1]); colours_played; "
        "draws_taken (current pass draw), draws_left (current replacement draw); rounds ([{start, plays: "
        "per seat faces or null for a pass}] of every battled round); stash (per seat faces); discard; "
        "scores (totals of §4.6 so far); ended (a pile has run out)")

    #: uniform among the legal actions like ``Game.rollout_action``, without the list copy
    rollout_action = staticmethod(rollout_action)  # type: ignore[assignment]  # takes the game's own states
    #: the rollout kernel (``engine/games/gargon/rollout.py``: the same moves and draws as the
    #: loop) when it is compiled; interpreted, the per-move loop on the state's masks is ~10% faster
    playout = staticmethod(_rollout.playout) if compiled.is_compiled(_rollout) else None

    def new_match(self, n: int, deal_seed: int, **options: Any) -> GargonState:
        """The deal of §4.2: 10 cards each, the rest split into piles A and B.

        :raises PlayerCountError, OptionError: on bad arguments (``first_start`` must be a seat).
        """
        self.check_players(n)
        opts = self.resolve_options(options)
        first = opts["first_start"]
        start = self.seat_from_option(opts, "first_start", n, deal_seed)
        deck = shuffled(range(A.NCARDS), deal_seed, 0)
        hands, rest = deal_hands(deck, n, 10)
        half = len(rest) // 2
        masks = [mask_of(h) for h in hands]
        return GargonState.from_deal(self, n, opts, masks, (rest[:half], rest[half:]), start, deal_seed, first)

    def infoset(self, observation: Mapping[str, Any]) -> GargonInfoSet:
        """Values sampled within the public colours (§4.7).

        :raises InconsistentObservationError: if the observation does not fit together.
        """
        return GargonInfoSet(self, observation)

    def parse_action(self, text: str) -> int:
        """The action int of ``text`` (§4.3 "Protocol strings").

        :raises ActionParseError: naming the text and the notation.
        """
        return A.parse_action(text)

    def format_action(self, action: int) -> str:
        """The protocol string of an action int (§4.3 "Protocol strings")."""
        return A.format_action(action)
