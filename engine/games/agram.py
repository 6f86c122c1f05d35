"""Agram: six tricks, only the last one counts (``docs/rules/agram.md``).

Cards are French card ids (:mod:`engine.cards`: ``suit * 13 + rank``, rank 0 = 2 …
12 = A). The 35-card deck (§4.1) keeps A, T, 9 … 3 of clubs, diamonds and hearts and
T … 3 of spades, so within a suit a higher id is a stronger card (A > T > 9 … > 3,
T♠ the top spade) and the id itself is the card's power.

An action is the card id played (``int``), written ``play Ah`` (§4.3). The state is a
handful of ints and small lists so that ISMCTS can clone and play out thousands of
deals per second: hands are card masks, the current trick is tracked incrementally
(led-suit mask, best card, its seat) and nothing is built as a string until an
observation is asked for.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping
from typing import Any

from engine.cards import (
    FRENCH_SUIT_MASKS,
    FRENCH_SUITS,
    cards_of,
    french_str,
    mask_of,
    parse_french,
)
from engine.core import (
    Game,
    InfoSet,
    Option,
    Outcome,
    SnapshotState,
    int_at_least,
    rank_rewards,
    ranks_from_results,
    seat_option,
)
from engine.deal import deal_hands, shuffled
from engine.errors import ActionParseError, GameOverError, InconsistentObservationError
from engine.sampling import SamplingProblem

# ---------------------------------------------------------------- tables (§4.1)

#: the 35 card ids of the Agram deck, ascending.
DECK: tuple[int, ...] = tuple(
    s * 13 + r for s in range(4) for r in range(13)
    if (1 <= r <= 8) or (r == 12 and s != 3)
)
DECK_MASK: int = sum(1 << c for c in DECK)
#: per suit, the mask of the deck's cards of that suit.
SUIT_MASKS: tuple[int, ...] = tuple(m & DECK_MASK for m in FRENCH_SUIT_MASKS)
#: per card id (0..51), the mask of its suit within the deck.
SUIT_MASK_OF: tuple[int, ...] = tuple(SUIT_MASKS[c // 13] for c in range(52))
#: per card id in the deck, its protocol string ``play Ah``.
ACTION_STR: dict[int, str] = {c: "play " + french_str(c) for c in DECK}
CARD_STR: dict[int, str] = {c: french_str(c) for c in DECK}
_PARSE: dict[str, int] = {s: c for c, s in ACTION_STR.items()}
TRICKS_PER_DEAL = 6
HAND_SIZE = 6


def parse_play(text: str) -> int:
    """``'play Ah'`` -> the card id (also accepts ``play 10h``).

    :raises ActionParseError: if ``text`` is not ``play <card>`` with a card of the deck.
    """
    c = _PARSE.get(text)
    if c is not None:
        return c
    parts = text.split() if isinstance(text, str) else []
    if len(parts) == 2 and parts[0].lower() == "play":
        c = parse_french(parts[1])
        if (1 << c) & DECK_MASK:
            return c
        raise ActionParseError(f"agram: {text!r}: {parts[1]} is not in the 35-card Agram deck")
    raise ActionParseError(f"agram: {text!r} is not an action; expected 'play <card>', e.g. 'play Ah'")


# ---------------------------------------------------------------- match constants

class _Match:
    """Per-match constants shared (not copied) by every clone of a state.

    :ivar n: number of seats (2..5).
    :ivar match_wins: deals needed to win the match (§4.5 ``match_wins``).
    :ivar deal_seed: the chance key of the match (never shown in an observation).
    :ivar options: the resolved options (JSON-ready).
    """

    __slots__ = ("n", "match_wins", "deal_seed", "options", "game")

    def __init__(self, game: Agram, n: int, match_wins: int, deal_seed: int, options: dict) -> None:
        self.game = game
        self.n = n
        self.match_wins = match_wins
        self.deal_seed = deal_seed
        self.options = options


# ---------------------------------------------------------------- state

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
                 "hidx", "hist", "past", "undealt", "start")

    @property
    def game(self) -> Agram:  # type: ignore[override]
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
        deck = shuffled(DECK, self.m.deal_seed, self.hidx)
        hands, rest = deal_hands(deck, n, HAND_SIZE, first=(self.dealer + 1) % n)
        self._begin_deal([mask_of(h) for h in hands], mask_of(rest))

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
            return
        w = self.bseat
        self.k = 0
        self.lmask = 0
        t = self.tno + 1
        if t < TRICKS_PER_DEAL:
            self.tno = t
            self.cur = w
            return
        self.tno = t
        self._end_deal(w)

    def _end_deal(self, w: int) -> None:
        """Seat ``w`` won the sixth trick: it wins the deal (§4.3), deals the next (§4.5)."""
        self.wins[w] += 1
        self.past = self.past + ((self.dealer, w),)
        self.hidx += 1
        if self.wins[w] >= self.m.match_wins:
            self.cur = -1
            return
        self.dealer = w
        self._deal()

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
                led = SUIT_MASK_OF[cur[0][1]]
                w, best = cur[0]
                for seat, c in cur[1:]:
                    if (1 << c) & led and c > best:
                        w, best = seat, c
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
        actions = []
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


# ---------------------------------------------------------------- information set

class AgramInfoSet(InfoSet):
    """The worlds consistent with one seat's Agram observation (§4.4).

    Unseen cards = the deck minus the seat's hand minus every card played in this deal.
    Hidden locations: each opponent's hand (capacity: its current size) and the
    undealt cards (``35 - 6n``). A seat that did not follow suit is void in the led suit
    for the rest of the deal, so no card of that suit may go to its hand.
    """

    __slots__ = ("game", "n", "opps", "own_start", "played", "plays", "voids", "unseen", "caps")

    def __init__(self, observation: Mapping[str, Any], game: Agram) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        seat = self.seat
        self.n = n
        dealer = int(obs["dealer"])
        own = 0
        for text in obs["hand"]:
            own |= 1 << parse_french(text)
        played = [0] * n
        voids = [0] * n  # per seat, a mask of suit indices (bit s = void in suit s)
        plays: list[int] = []
        leader = (dealer + 1) % n
        trick: list[tuple[int, int]] = []
        seen = own
        for s, text in obs["actions"]:
            c = parse_play(text)
            s = int(s)
            if s != (leader + len(trick)) % n or (1 << c) & seen:
                raise InconsistentObservationError(f"agram: action {text!r} of seat {s} does not fit the deal")
            seen |= 1 << c
            played[s] |= 1 << c
            plays.append(c)
            trick.append((s, c))
            if len(trick) > 1 and not (1 << c) & SUIT_MASK_OF[trick[0][1]]:
                voids[s] |= 1 << (trick[0][1] // 13)
            if len(trick) == n:
                led = SUIT_MASK_OF[trick[0][1]]
                w, best = trick[0]
                for ts, tc in trick[1:]:
                    if (1 << tc) & led and tc > best:
                        w, best = ts, tc
                leader = w
                trick = []
        self.opps = [o for o in range(n) if o != seat]
        self.own_start = own | played[seat]
        self.played = played
        self.plays = plays
        self.voids = voids
        self.unseen = cards_of(DECK_MASK & ~seen)
        sizes = [int(x) for x in obs["hand_sizes"]]
        self.caps = [sizes[o] for o in self.opps] + [len(DECK) - HAND_SIZE * n]
        if own.bit_count() != sizes[seat]:
            raise InconsistentObservationError("agram: own hand does not match hand_sizes")

    def problem(self) -> SamplingProblem:
        """Locations ``hand <o>`` per opponent then ``undealt``; voids bar suits from hands."""
        nloc = len(self.opps) + 1
        und_bit = 1 << (nloc - 1)
        allowed = []
        for c in self.unseen:
            suit_bit = 1 << (c // 13)
            m = und_bit
            for j, o in enumerate(self.opps):
                if not self.voids[o] & suit_bit:
                    m |= 1 << j
            allowed.append(m)
        names = [f"hand {o}" for o in self.opps] + ["undealt"]
        return SamplingProblem(list(self.unseen), list(self.caps), allowed, names)

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random) -> AgramState:
        """The deal with the opponents' remaining cards (and the undealt ones) as assigned,
        replayed through this deal's actions; later deals use a fresh key from ``rng``."""
        obs = self.observation
        n = self.n
        game = self.game
        opts = dict(obs["options"])
        m = _Match(game, n, int(opts["match_wins"]), rng.getrandbits(63), opts)
        past = tuple((int(h["dealer"]), int(h["winner"])) for h in obs["history"])
        st = AgramState._blank(m, int(obs["dealer"]), [int(x) for x in obs["deals_won"]],
                               int(obs["hand_index"]), past)
        hands = [0] * n
        hands[self.seat] = self.own_start
        for j, o in enumerate(self.opps):
            h = self.played[o]
            for c in assignment[j]:
                h |= 1 << c
            hands[o] = h
        und = 0
        for c in assignment[-1]:
            und |= 1 << c
        if obs.get("match_over"):
            raise InconsistentObservationError("agram: the match is over; there is no world to sample")
        st._begin_deal(hands, und)
        for c in self.plays:
            st.apply(c)
        return st


# ---------------------------------------------------------------- game

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
        return AgramInfoSet(observation, self)

    def rollout_action(self, state: AgramState, rng: random.Random) -> int:  # type: ignore[override]
        """A uniformly random legal card, drawn from the legal mask without building a list."""
        m = state.legal_mask()
        r = rng.randrange(m.bit_count())
        while r:
            m &= m - 1
            r -= 1
        return (m & -m).bit_length() - 1

    def parse_action(self, text: str) -> int:
        """``'play Ah'`` -> the card id.

        :raises ActionParseError: if ``text`` is not ``play <card>`` with an Agram card.
        """
        return parse_play(text)

    def format_action(self, action: int) -> str:
        """The card id as ``play Ah``.

        :raises ActionParseError: if ``action`` is not a card of the deck.
        """
        s = ACTION_STR.get(action) if not isinstance(action, bool) else None
        if s is None:
            raise ActionParseError(f"agram: {action!r} is not a card of the Agram deck")
        return s


__all__ = ["ACTION_STR", "DECK", "Agram", "AgramInfoSet", "AgramState", "parse_play"]
