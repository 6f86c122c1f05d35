"""The per-game encodings: one layout function per game of the registry.

Each ``<game>(game, n, options)`` returns the :class:`~bots.rl.encoding.Field` list of that
game for ``n`` players (options already resolved). Every field reads only the observation
dict (the fields listed by ``arena rules GAME``); card vocabularies come from the game's own
action strings or the 52-card French deck. :func:`layout` is the entry point;
``python -m bots.rl.layouts`` prints every layout as markdown (docs/rl.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bots.rl.actions import ActionSpace
from bots.rl.encoding import (
    Field,
    Layout,
    key,
    number,
    onehot,
    per_seat,
    per_side,
    seat_flags,
    seat_onehot,
    seat_tokens,
    side_tokens,
    tokens,
)
from engine import registry
from engine.cards import FRENCH_RANKS, french_str
from engine.core import Game

FRENCH = [french_str(c) for c in range(52)]
SUITS = "cdhs"


def verb_vocab(game: Game, verb: str) -> list[str]:
    """The arguments of the game's ``<verb> X`` action strings, in action order (a card vocabulary)."""
    out: list[str] = []
    for a in ActionSpace.of(game).actions:
        w = game.format_action(a).split()
        if len(w) == 2 and w[0] == verb and w[1] not in out:
            out.append(w[1])
    return out


def common(n: int) -> list[Field]:
    """``to_act`` and ``dealer`` (every game but Gargon has a dealer)."""
    return [seat_onehot("to_act", key("to_act"), n, "seat to act"),
            seat_onehot("dealer", key("dealer"), n, "this hand's dealer")]


def agram(game: Game, n: int, opts: dict) -> list[Field]:
    """Agram (docs/rules/agram.md): 35 cards, six tricks, the last trick's winner takes the deal."""
    deck = verb_vocab(game, "play")
    return common(n) + [
        tokens("hand", key("hand"), deck, "own cards"),
        seat_tokens("trick", key("trick"), deck, n, "cards of the trick in progress, by seat"),
        tokens("played", lambda o: [c for t in o["tricks"] for _, c in t["cards"]], deck,
               "cards of this deal's completed tricks"),
        per_seat("tricks_won", lambda o: [sum(t["winner"] == s for t in o["tricks"]) for s in range(n)],
                 n, "tricks won this deal", 6),
        seat_tokens("voids", lambda o: [(s, x) for s, v in enumerate(o["voids"]) for x in v], SUITS, n,
                    "suits each seat failed to follow (c d h s)"),
        per_seat("hand_sizes", key("hand_sizes"), n, "cards left", 6),
        seat_onehot("leader", key("leader"), n, "leader of the trick in progress"),
        number("trick_number", key("trick_number"), "trick number 1..6", 6),
        number("undealt", key("undealt"), "cards set aside", 35),
        per_seat("deals_won", key("deals_won"), n, "deals won", opts["match_wins"]),
    ]


def argute(game: Game, n: int, opts: dict) -> list[Field]:
    """Argute (docs/rules/argute.md): values 0..5, secret bids, three tricks of several plays."""
    values = verb_vocab(game, "play")
    return common(n) + [
        onehot("phase", key("phase"), ("bid", "play", "over"), "phase"),
        tokens("hand", key("hand"), values, "own cards by value (counts)"),
        onehot("bid", key("bid"), (None, 0, 1, 2, 3), "own bid (None: not yet)"),
        per_seat("has_bid", key("has_bid"), n, "seat has bid"),
        seat_tokens("trick", key("trick"), values, n, "values played to the trick in progress, by seat"),
        per_seat("totals", key("totals"), n, "total played to this trick", 15),
        tokens("played", lambda o: [v for t in o["tricks"] for _, v in t["plays"]], values,
               "values of this hand's completed tricks (counts)"),
        per_seat("tricks_won", key("tricks_won"), n, "tricks won this hand", 3),
        per_seat("hand_sizes", key("hand_sizes"), n, "cards left", 6),
        per_seat("scores", key("scores"), n, "match scores", opts["target_score"]),
        seat_onehot("leader", key("leader"), n, "leader of the trick"),
        number("trick_number", key("trick_number"), "trick number 1..3", 3),
        number("cards_per_player", key("cards_per_player"), "cards each plays to this trick", 3),
        number("hand_index", key("hand_index"), "hands completed", opts["max_hands"]),
    ]


def cuckoo(game: Game, n: int, opts: dict) -> list[Field]:
    """Cuckoo (docs/rules/cuckoo.md): one card each, keep or swap; the lowest card loses a life."""
    ranks = list(FRENCH_RANKS)
    return common(n) + [
        onehot("phase", key("phase"), ("turn", "respond", "over"), "phase"),
        tokens("card", lambda o: [o["card"]], FRENCH, "own card now"),
        tokens("rank", lambda o: [o["card"][0]] if o["card"] else [], ranks, "own card's rank"),
        seat_tokens("known", lambda o: [(s, c[0]) for s, c in enumerate(o["known"]) if c], ranks, n,
                    "rank of each seat's card when known"),
        per_seat("lives", key("lives"), n, "lives left", opts["lives"]),
        seat_flags("out", lambda o: [s for s, e in enumerate(o["eliminated_in"]) if e is not None], n,
                   "eliminated"),
        seat_flags("in_hand", key("turn_order"), n, "dealt into this hand"),
        number("position", lambda o: (o["turn_order"].index(o["seat"]) + 1) / len(o["turn_order"])
               if o["seat"] in o["turn_order"] else 0.0, "own place in the turn order (1 = dealer)"),
        tokens("blocks", lambda o: [k for _, k in o["blocks"]], FRENCH, "kings shown by blocks"),
    ]


def cuttle(game: Game, n: int, opts: dict) -> list[Field]:
    """Cuttle (docs/rules/cuttle.md): two players, 52 cards, points, permanents and one-offs."""
    def pairs(name: str) -> Callable[[dict], Any]:
        return lambda o: [(s, c) for s, lst in enumerate(o[name]) for c in lst]
    oneoff = lambda o: o["oneoff"] or {}  # noqa: E731
    return common(n) + [
        onehot("phase", key("phase"), ("main", "counter", "take", "discard", "seven", "over"), "phase"),
        seat_onehot("turn_player", key("turn_player"), n, "whose turn it is"),
        tokens("hand", key("hand"), FRENCH, "own cards"),
        tokens("opponent_known", key("opponent_known"), FRENCH, "opponent's cards you know"),
        tokens("known_to_opponent", key("known_to_opponent"), FRENCH, "own cards the opponent knows"),
        tokens("scrap", key("scrap"), FRENCH, "the scrap pile"),
        seat_tokens("permanents", pairs("permanents"), FRENCH, n, "permanents by seat"),
        seat_tokens("stacks", lambda o: [(t["controller"], t["base"]) for t in o["stacks"]], FRENCH, n,
                    "point cards (stack bases) by controller"),
        seat_tokens("jacks", lambda o: [(t["controller"], j) for t in o["stacks"] for j in t["jacks"]],
                    FRENCH, n, "jacks on stacks by controller"),
        seat_tokens("frozen", pairs("frozen"), FRENCH, n, "cards frozen by a 9"),
        per_seat("points", key("points"), n, "points", 21),
        per_seat("thresholds", key("thresholds"), n, "points needed", 21),
        per_seat("hand_sizes", key("hand_sizes"), n, "cards in hand", 8),
        number("deck_size", key("deck_size"), "cards in the deck", 52),
        tokens("oneoff", lambda o: [oneoff(o).get("card")], FRENCH, "the pending one-off"),
        seat_onehot("oneoff_player", lambda o: oneoff(o).get("player"), n, "who played the pending one-off"),
        number("counters", lambda o: len(oneoff(o).get("counters") or ()), "2s in the counter chain", 4),
        tokens("seven_card", lambda o: [o["seven_card"]], FRENCH, "the card your 7 drew"),
        number("turn", key("turn"), "turns completed", opts["max_turns"]),
        number("passes", key("passes"), "consecutive passes", 3),
    ]


COLOURS = "wbvryg"


def gargon(game: Game, n: int, opts: dict) -> list[Field]:
    """Gargon (docs/rules/gargon.md): coloured cards 0..15, rounds of face-down plays, two piles."""
    faces = verb_vocab(game, "select")

    def matrix(name: str) -> Callable[[dict], Any]:
        return lambda o: [(s, COLOURS[i]) for s, row in enumerate(o[name]) for i, k in enumerate(row)
                          for _ in range(k)]

    def pile_top(p: str, i: int) -> Field:
        return onehot(f"pile_{p}{i}", lambda o: o["piles"][p][i:i + 1] or None, tuple(COLOURS),
                      f"colour of pile {p.upper()}'s card {i + 1} from the top")
    return [
        seat_onehot("to_act", key("to_act"), n, "seat to act"),
        onehot("phase", key("phase"), ("play", "pass_draw", "replacement", "over"), "phase"),
        seat_onehot("start_player", key("start_player"), n, "this round's start player"),
        tokens("hand", key("hand"), faces, "own cards"),
        seat_tokens("hand_colours", matrix("hand_colours"), COLOURS, n, "cards in hand by colour"),
        seat_tokens("table", lambda o: [(s, f[0]) for s, lst in enumerate(o["table"]) for f in lst],
                    COLOURS, n, "this round's face-down cards by colour"),
        tokens("own_table", lambda o: o["table"][o["seat"]], faces, "own face-down cards this round"),
        seat_flags("passed", key("passed"), n, "passed this round"),
        tokens("pattern", lambda o: [str(k) for k in o["pattern"] or ()], [str(k) for k in range(1, 11)],
               "the start player's pattern: group sizes (counts)"),
        tokens("colours_played", lambda o: list(o["colours_played"]), COLOURS, "colours played this round"),
        *[pile_top(p, i) for p in "ab" for i in range(3)],
        number("pile_a", lambda o: len(o["piles"]["a"]), "cards in pile A", 36),
        number("pile_b", lambda o: len(o["piles"]["b"]), "cards in pile B", 36),
        number("draws_taken", key("draws_taken"), "current pass draw", 3),
        number("draws_left", key("draws_left"), "replacement draws left", 5),
        seat_tokens("stash", lambda o: [(s, f) for s, lst in enumerate(o["stash"]) for f in lst], faces, n,
                    "cards won by each seat"),
        tokens("discard", key("discard"), faces, "discarded cards"),
        per_seat("scores", key("scores"), n, "scores", 100),
        number("round", key("round"), "round number", 20),
    ]


def guinote(game: Game, n: int, opts: dict) -> list[Field]:
    """Guiñote (docs/rules/guinote.md): 40 Spanish cards, trumps, a stock, calls (20/40)."""
    deck = verb_vocab(game, "play")
    return common(n) + [
        onehot("phase", key("phase"), ("play", "window", "over"), "phase"),
        tokens("hand", key("hand"), deck, "own cards"),
        seat_tokens("trick", key("trick"), deck, n, "cards of the trick in progress, by seat"),
        tokens("played", lambda o: [c for t in o["tricks"] for c in t["cards"]], deck,
               "cards of this hand's completed tricks"),
        seat_tokens("shown", lambda o: [(s, c) for s, lst in enumerate(o["shown"]) for c in lst], deck, n,
                    "cards publicly known to be in each hand"),
        onehot("trump_suit", key("trump_suit"), tuple("oceb"), "trump suit"),
        tokens("face_up", lambda o: [o["face_up"]], deck, "the face-up card under the stock"),
        number("stock_size", key("stock_size"), "cards in the stock", 40),
        seat_onehot("leader", key("leader"), n, "leader of the current trick"),
        per_seat("hand_points", key("hand_points"), n, "side's points this hand", 130),
        per_seat("scores", key("scores"), n, "side's match score", opts["target"]),
        per_seat("hand_sizes", key("hand_sizes"), n, "cards in hand", 6),
        tokens("calls", lambda o: [c[1] for c in o["calls"]], list("oceb"), "suits called this hand"),
    ]


def sedma(game: Game, n: int, opts: dict) -> list[Field]:
    """Sedma (docs/rules/sedma.md): 32 cards by rank, 7s are wild, A and T count 10."""
    ranks = verb_vocab(game, "play")
    teams = game.teams(n)
    trick = lambda o: o["trick"] or {}  # noqa: E731
    return common(n) + [
        onehot("phase", key("phase"), ("play", "decide", "over"), "phase"),
        tokens("hand", key("hand"), ranks, "own cards by rank (counts)"),
        seat_tokens("trick", lambda o: trick(o).get("cards"), ranks, n, "cards of the trick in progress"),
        onehot("starter", lambda o: trick(o).get("starter"), tuple(ranks), "the trick's starting rank"),
        seat_onehot("winning", lambda o: trick(o).get("winning"), n, "seat winning the trick now"),
        seat_onehot("leader", lambda o: trick(o).get("leader"), n, "leader of the trick"),
        side_tokens("won", key("won"), teams, ranks, "ranks won this hand by side"),
        per_side("card_points", key("card_points"), teams, "card points this hand", 80),
        tokens("unseen", lambda o: [r for r, k in o["unseen"].items() for _ in range(k)], ranks,
               "cards not seen this hand, by rank", 4),
        number("stock", key("stock"), "cards in the stock", 32),
        per_seat("hand_sizes", key("hand_sizes"), n, "cards in hand", 4),
        per_side("vp", key("vp"), teams, "victory points", opts["vp_target"]),
    ]


def whiskey_poker(game: Game, n: int, opts: dict) -> list[Field]:
    """Whiskey Poker (docs/rules/whiskey_poker.md): five-card hands, a widow, betting rounds."""
    chips = float(max(opts["start_chips"], 10))
    phases = ("bet1", "exchange1", "bet2", "exchange2", "bet3", "over")
    return common(n) + [
        onehot("phase", key("phase"), phases, "phase"),
        onehot("mode", key("mode"), ("BETTING", "LOWEST_PAYS"), "mode"),
        tokens("hand", key("hand"), FRENCH, "own cards"),
        tokens("widow", key("widow"), FRENCH, "the face-up widow (empty while face down)"),
        tokens("shown", lambda o: [c for _, cards in o["shown"] for c in cards], FRENCH,
               "hands laid face up by 'take all'"),
        seat_flags("dealt_in", key("dealt_in"), n, "dealt into this hand"),
        seat_flags("folded", key("folded"), n, "folded this hand"),
        seat_onehot("knocker", key("knocker"), n, "this phase's first knocker"),
        seat_flags("passed", key("passed"), n, "passed on its previous turn"),
        number("turns", key("turns"), "turns in this exchange phase",
               opts["max_circuits_per_phase"] * n),
        number("pot", key("pot"), "chips in the pot", 10 * chips),
        per_seat("put", key("put"), n, "chips put in this hand", 10 * chips),
        per_seat("round_bets", key("round_bets"), n, "chips put in this betting round", 10 * chips),
        number("bets", key("bets"), "bets made this round", opts["max_bets_per_round"]),
        number("unit", key("unit"), "this round's bet size", opts["big_bet"]),
        per_seat("scores", key("scores"), n, "net chips (BETTING) or chips left", 10 * chips),
        seat_flags("out", lambda o: [s for s, x in enumerate(o["out"]) if x is not None], n, "eliminated"),
    ]


LAYOUTS: dict[str, Callable[[Game, int, dict], list[Field]]] = {
    "agram": agram, "argute": argute, "cuckoo": cuckoo, "cuttle": cuttle, "gargon": gargon,
    "guinote": guinote, "sedma": sedma, "whiskey_poker": whiskey_poker,
}

_cache: dict[tuple[str, int, str], Layout] = {}


def layout(game: str | Game, players: int, options: dict | None = None) -> Layout:
    """The encoding of ``game`` for ``players`` seats and ``options`` (cached).

    :raises UnknownGameError, PlayerCountError, OptionError: from the engine, on bad arguments.
    :raises KeyError: naming the game if it has no layout in :data:`LAYOUTS`.
    """
    g = registry.get_game(game) if isinstance(game, str) else game
    g.check_players(players)
    opts = g.resolve_options(options, players)
    ck = (g.name, players, repr(sorted(opts.items())))
    lay = _cache.get(ck)
    if lay is None:
        fn = LAYOUTS.get(g.name)
        if fn is None:
            raise KeyError(f"{g.name}: no RL observation layout; add one to bots/rl/layouts.py")
        lay = _cache[ck] = Layout(g.name, players, fn(g, players, opts))
    return lay


if __name__ == "__main__":  # pragma: no cover - prints docs/rl.md's layout section
    for name in registry.names():
        g = registry.get_game(name)
        print(f"### {name} ({g.min_players} players)\n\n{layout(g, g.min_players).markdown()}\n")
