"""The Gargon state: rounds of playing out, battles and replacement draws (docs/rules/gargon.md §4.2–§4.6).

A match is one hand: the deal of §4.2, then rounds until a draw pile runs out (§4.5).
Card sets are int masks of the physical ids of :mod:`engine.games.gargon.rules`; the draw
piles are lists with the top card **last**. ``SELECT(c0)`` moves the player's lowest-id
zero of colour ``c`` (the two zeros are one identity, §0.1).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from engine.cards import cards_of
from engine.core import Outcome, State, rank_rewards, ranks_from_results
from engine.errors import GameOverError
from engine.games.gargon import actions as A
from engine.games.gargon import rules as R

PLAY, PASS_DRAW, REPLACE, OVER = 0, 1, 2, 3
PHASE_NAMES = ("play", "pass_draw", "replacement", "over")

_CM0, _CM1, _CM2, _CM3, _CM4, _CM5 = A.COLOUR_MASK
#: per colour bitmask, the mask of those colours' card ids.
_ALLOWED_MASK = tuple(sum(A.COLOUR_MASK[c] for c in range(A.NCOL) if a >> c & 1) for a in range(64))
_SEL_STEP = R.SEL_STEP
_FACE_MASK = A.FACE_MASK
_DONE = A.DONE
_PASS = A.PASS
_DRAW_A = A.DRAW_A
_STOP = A.STOP
#: per player count and start seat, the seats in turn order from the start seat.
_ROTATION = tuple(tuple(tuple((s + i) % n for i in range(n)) for s in range(n)) if n else () for n in range(6))
_DRAWS = [A.DRAW_A, A.DRAW_B]
_DRAW_OR_STOP = [A.DRAW_A, A.DRAW_B, A.STOP]

# The legal SELECTs come from rules.select_plan, compiled for the hot path as
# ``(((colour shift, need, SEG_LO[colour], SEG_HI[colour]), ...), done)``: for the start
# player by selection code, for a follower by an int key (pattern, selection code, caps).
_Plan = tuple[tuple[tuple[int, int, tuple, tuple], ...], bool]
_NCODES = _SEL_STEP ** 3  # selection codes are below 7^3
_NCAPS = 3 ** A.NCOL
#: every pattern a start player's selection can have, and its follower key offset.
_PATTERNS = tuple(sorted({info[2] for info in R.SEL_INFO.values() if info[2]}))
_PATTERN_KEY = {pat: i * _NCODES * _NCAPS for i, pat in enumerate(_PATTERNS)}
#: per colour, the follower key term of a hand count: ``min(2, count) * 3^colour``, or
#: ``min(1, count) * 3^colour`` for the patterns whose completions only need one more card
#: of another colour (``(1)``, ``(2)``, ``(1, 1)``: fewer keys, the same plans).
_CAPS2 = tuple(tuple(min(k, 2) * 3 ** c for k in range(A.NCARDS + 1)) for c in range(A.NCOL))
_CAPS1 = tuple(tuple(min(k, 1) * 3 ** c for k in range(A.NCARDS + 1)) for c in range(A.NCOL))
#: per selection code (at ``DONE``): ``(colour bitmask, pattern, follower key offset, key terms)``.
_DONE_INFO = {code: (info[3], info[2], _PATTERN_KEY.get(info[2], 0),
                     _CAPS1 if info[2] in ((1,), (2,), (1, 1)) else _CAPS2) for code, info in R.SEL_INFO.items()}


def _compile(entries: tuple[tuple[int, int], ...], done: bool) -> _Plan:
    return tuple((c * A.PER_COLOUR, need, R.SEG_LO[c], R.SEG_HI[c]) for c, need in entries), done


#: per selection code the start player's plan (None for codes no start player's selection has)
_START_PLANS: list[Any] = [_compile(*R.select_plan(None, code, ())) if code in R.SEL_INFO else None for code in range(_NCODES)]
_FOLLOWER_PLANS: dict[int, _Plan] = {}


def _follower_plan(key: int) -> _Plan:
    """The compiled plan of a follower key (a cache miss: decode the key, ask the rules)."""
    rest, capkey = divmod(key, _NCAPS)
    pat, code = divmod(rest, _NCODES)
    caps = tuple(capkey // 3 ** c % 3 for c in range(A.NCOL))
    plan = _FOLLOWER_PLANS[key] = _compile(*R.select_plan(_PATTERNS[pat], code, caps))
    return plan


class GargonState(State):
    """One Gargon match (a single hand).

    :ivar hands: per seat, the hand mask (selected cards are removed at once).
    :ivar piles: ``[A, B]``, card id lists with the top card last.
    :ivar stash: per seat, the mask of won cards; ``discard``: mask of discarded cards.
    :ivar start: the round's start player S; ``turn``: how many of the round's n turns
        have begun (the actor in step 1 is ``(start + turn) % n``).
    :ivar sel: the current actor's selection (card ids in canonical order); ``sel_code``
        codes its colour sequence (:data:`rules.SEL_INFO`).
    :ivar played: per seat, the mask played face down this round (complete plays only).
    """

    __slots__ = (
        "game", "n", "first_opt", "amulets", "pass_choice", "replacement", "first_start", "deal_seed",
        "hands", "piles", "stash", "discard", "start", "turn", "phase", "sel", "sel_mask", "sel_code",
        "played", "passed", "pattern", "pkey", "capw", "col_played", "drawn_now", "draw_target",
        "repl", "repl_i", "repl_left", "ended", "round_no", "rounds", "dealt", "dealt_piles",
        "draws", "hist", "hist_len", "snapshot", "hand_no", "_legal",
    )

    n: int
    first_opt: Any
    amulets: tuple[int, ...]
    pass_choice: bool
    replacement: bool
    first_start: int
    deal_seed: int
    hands: list[int]
    piles: list[list[int]]
    stash: list[int]
    discard: int
    start: int
    turn: int
    phase: int
    sel: list[int]
    sel_mask: int
    sel_code: int
    played: list[int]
    passed: int
    pattern: tuple[int, ...] | None
    pkey: int
    capw: tuple[tuple[int, ...], ...]
    col_played: int
    drawn_now: int
    draw_target: int
    repl: tuple[int, ...]
    repl_i: int
    repl_left: int
    ended: bool
    round_no: int
    rounds: tuple[tuple[int, tuple[int, ...]], ...]
    dealt: tuple[int, ...]
    dealt_piles: tuple[tuple[int, ...], ...]
    draws: list[tuple[int, ...]]
    #: the actions as a linked list ``(previous, seat, action)``, newest first
    hist: tuple[Any, int, int] | None
    hist_len: int
    snapshot: GargonState | None
    hand_no: int
    _legal: list[int] | None

    # ------------------------------------------------------------ construction

    @classmethod
    def from_deal(cls, game: Any, n: int, opts: dict, hands: Sequence[int], piles_top_first: Sequence[Sequence[int]],
                  first_start: int, deal_seed: int, first_opt: Any = 0) -> GargonState:
        """The state right after an explicit deal (§4.2).

        :param hands: per seat, the mask of its 10 cards.
        :param piles_top_first: ``(A, B)`` card ids, top card first.
        :param first_start: the first round's start player.
        :param deal_seed: kept in the state (never in observations).
        :param first_opt: the ``first_start`` option as given (for observations).
        """
        s = cls.__new__(cls)
        s.game = game
        s.n = n
        s.first_opt = first_opt
        s.amulets = tuple(opts["amulets"])
        s.pass_choice = opts["pass_draw"] == "choice_1_to_3"
        s.replacement = opts["replacement"] == "played_count"
        s.first_start = first_start
        s.deal_seed = deal_seed
        s.hands = list(hands)
        s.piles = [list(reversed(p)) for p in piles_top_first]
        s.stash = [0] * n
        s.discard = 0
        s.start = first_start
        s.turn = 0
        s.phase = PLAY
        s.sel = []
        s.sel_mask = 0
        s.sel_code = 0
        s.played = [0] * n
        s.passed = 0
        s.pattern = None
        s.pkey = 0
        s.capw = _CAPS2
        s.col_played = 0
        s.drawn_now = 0
        s.draw_target = 0
        s.repl = ()
        s.repl_i = 0
        s.repl_left = 0
        s.ended = False
        s.round_no = 0
        s.rounds = ()
        s.dealt = tuple(hands)
        s.dealt_piles = tuple(tuple(p) for p in piles_top_first)
        s.draws = [()] * n
        s.hist = None
        s.hist_len = 0
        s.hand_no = 0
        s._legal = None
        s.snapshot = None   # taken by :meth:`hand_start` on first use (worlds rarely ask)
        return s

    def clone(self) -> GargonState:
        """An independent copy (lists copied shallowly; history and round records are shared immutables)."""
        s = GargonState.__new__(GargonState)
        s.game = self.game
        s.n = self.n
        s.first_opt = self.first_opt
        s.amulets = self.amulets
        s.pass_choice = self.pass_choice
        s.replacement = self.replacement
        s.first_start = self.first_start
        s.deal_seed = self.deal_seed
        s.hands = self.hands[:]
        s.piles = [self.piles[0][:], self.piles[1][:]]
        s.stash = self.stash[:]
        s.discard = self.discard
        s.start = self.start
        s.turn = self.turn
        s.phase = self.phase
        s.sel = self.sel[:]
        s.sel_mask = self.sel_mask
        s.sel_code = self.sel_code
        s.played = self.played[:]
        s.passed = self.passed
        s.pattern = self.pattern
        s.pkey = self.pkey
        s.capw = self.capw
        s.col_played = self.col_played
        s.drawn_now = self.drawn_now
        s.draw_target = self.draw_target
        s.repl = self.repl
        s.repl_i = self.repl_i
        s.repl_left = self.repl_left
        s.ended = self.ended
        s.round_no = self.round_no
        s.rounds = self.rounds
        s.dealt = self.dealt
        s.dealt_piles = self.dealt_piles
        s.draws = self.draws[:]
        s.hist = self.hist
        s.hist_len = self.hist_len
        s.snapshot = self.snapshot
        s.hand_no = self.hand_no
        s._legal = self._legal
        return s

    # ------------------------------------------------------------ queries

    @property
    def num_players(self) -> int:
        """Number of seats, 3..5 (§4.1)."""
        return self.n

    def current_player(self) -> int:
        """The seat playing out or pass-drawing, or drawing replacements (§4.3); -1 once over."""
        ph = self.phase
        if ph == PLAY or ph == PASS_DRAW:
            return (self.start + self.turn) % self.n
        if ph == REPLACE:
            return self.repl[self.repl_i]
        return -1

    def is_terminal(self) -> bool:
        """True once the match (a single hand) is over (§4.5)."""
        return self.phase == OVER

    def hand_index(self) -> int:
        """0 during the match, 1 once it is over (a match is one hand, §4.5)."""
        return self.hand_no

    def allowed_colours(self, seat: int) -> int:
        """Colour bitmask ``seat`` may play in this round (the last player's limit, §4.3)."""
        if seat != self.start and seat == (self.start - 1) % self.n:
            return self.col_played
        return 0b111111

    def legal_actions(self) -> list[int]:
        """Legal actions in canonical order (ascending ints: selects by face, done, pass, draws, stop)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._play_actions() if self.phase == PLAY else self._compute_legal()
        return legal[:]

    def _compute_legal(self) -> list[int]:
        """The legal set (``_legal`` holds it; lists from here are never mutated)."""
        ph = self.phase
        if ph == PLAY:
            return self._play_actions()
        if ph == PASS_DRAW:
            return _DRAW_OR_STOP if self.pass_choice and self.drawn_now else _DRAWS
        if ph == REPLACE:
            return _DRAWS
        return []

    def _play_actions(self) -> list[int]:
        """The legal ``SELECT``s (per colour from :func:`rules.select_plan`), ``DONE``, ``PASS``."""
        start = self.start
        n = self.n
        p = (start + self.turn) % n
        hand = self.hands[p]
        sel = self.sel
        if sel:
            cut = sel[-1] + 1
            hand = hand >> cut << cut  # the cards after the last selected one
        if p == start:
            entries, done = _START_PLANS[self.sel_code]
        else:
            # caps of the cards after the selection (the plan ignores earlier colours, and of
            # the last selected colour only whether the player may still use it)
            h = hand & _ALLOWED_MASK[self.col_played] if p == (start - 1) % n else hand
            w0, w1, w2, w3, w4, w5 = self.capw
            key = (self.pkey + self.sel_code * _NCAPS + w0[(h & _CM0).bit_count()] + w1[(h & _CM1).bit_count()]
                   + w2[(h & _CM2).bit_count()] + w3[(h & _CM3).bit_count()] + w4[(h & _CM4).bit_count()]
                   + w5[(h & _CM5).bit_count()])
            plan = _FOLLOWER_PLANS.get(key)
            entries, done = plan if plan is not None else _follower_plan(key)
        out: list[int] = []
        for shift, need, lo, hi in entries:
            m = hand >> shift & 0x1FFFF
            if m:
                if need:
                    # the colour's last ``need`` cards lack enough later cards of it
                    m ^= 1 << (m.bit_length() - 1)
                    if need == 2 and m:
                        m ^= 1 << (m.bit_length() - 1)
                out += lo[m & 511]
                out += hi[m >> 9]
        if done:
            out.append(_DONE)
        if not sel and p != start:
            out.append(_PASS)
        return out

    # ------------------------------------------------------------ apply

    def apply(self, action: int) -> None:
        """Play ``action`` for the current player (§4.3).

        :raises IllegalActionError: naming the action and the legal set.
        :raises GameOverError: if the match is over.
        """
        ph = self.phase
        if ph == OVER:
            raise GameOverError("gargon: the match is over; no action can be applied")
        legal = self._legal
        if legal is None:
            legal = self._legal = self._play_actions() if ph == PLAY else self._compute_legal()
        if action not in legal:
            raise self._illegal(action)
        p = self.repl[self.repl_i] if ph == REPLACE else (self.start + self.turn) % self.n
        self.hist = (self.hist, p, action)
        self.hist_len += 1
        if action < _DONE:
            self._legal = None
            hands = self.hands
            hand = hands[p]
            m = _FACE_MASK[action] & hand
            low = m & -m
            hands[p] = hand ^ low
            self.sel.append(low.bit_length() - 1)
            self.sel_mask |= low
            self.sel_code = self.sel_code * _SEL_STEP + (action >> 4) + 1
        elif action > _PASS:
            if action == _STOP:
                self._legal = None
                self.phase = PLAY
                self._next_turn()
            else:
                # draw the top card of pile A or B; an emptied pile triggers the end (§4.5)
                pl = self.piles[action - _DRAW_A]
                card = pl.pop()
                self.hands[p] |= 1 << card
                self.draws[p] += (card,)
                if not pl:
                    self.ended = True
                if ph == PASS_DRAW:
                    self.drawn_now += 1
                    if self.ended or self.drawn_now >= self.draw_target:
                        self._legal = None
                        self.phase = PLAY
                        self._next_turn()
                    else:
                        self._legal = _DRAW_OR_STOP if self.pass_choice else _DRAWS
                else:
                    self.repl_left -= 1
                    if self.ended:
                        self._legal = None
                        self._end_round()
                    elif self.repl_left == 0:
                        self.repl_i += 1
                        if self.repl_i >= len(self.repl):
                            self._legal = None
                            self._end_round()
                        else:
                            self.repl_left = self.played[self.repl[self.repl_i]].bit_count()
                            # the next seat's replacement draws: _legal stays _DRAWS
        elif action == _DONE:
            self._legal = None
            self.played[p] = self.sel_mask
            cols, pattern, pkey, capw = _DONE_INFO[self.sel_code]
            self.col_played |= cols
            if p == self.start:
                self.pattern = pattern
                self.pkey = pkey
                self.capw = capw
            self.sel = []
            self.sel_mask = 0
            self.sel_code = 0
            if self.turn + 1 < self.n:
                self.turn += 1
            else:
                self._next_turn()
        else:
            self._pass(p)

    def _pass(self, p: int) -> None:
        """Seat ``p`` passes: it draws next (§4.3 "Passing"), unless a pile has run out."""
        self.passed |= 1 << p
        if self.ended:
            self._legal = None
            self._next_turn()
        else:
            assert self.pattern is not None, "a follower passes after the start player's play"
            self.phase = PASS_DRAW
            self.drawn_now = 0
            self.draw_target = 3 if self.pass_choice else sum(self.pattern)
            self._legal = _DRAWS

    def _next_turn(self) -> None:
        turn = self.turn = self.turn + 1
        n = self.n
        if turn < n:
            return
        # step 2: battles
        played = self.played
        won, disc = R.resolve_battles(played)
        stash = self.stash
        for s in range(n):
            if won[s]:
                stash[s] |= won[s]
        self.discard |= disc
        passed = self.passed
        start = self.start
        self.rounds = self.rounds + ((start, tuple([-1 if passed >> s & 1 else played[s] for s in range(n)])),)
        # step 3: replacement draws
        if self.ended or not self.replacement:
            self._end_round()
            return
        order = tuple([s for s in _ROTATION[n][start] if played[s]])
        self.repl = order
        self.repl_i = 0
        self.repl_left = played[order[0]].bit_count()
        self.phase = REPLACE

    def _end_round(self) -> None:
        if self.ended:
            self._finish()
            return
        self.start = (self.start + 1) % self.n
        self.turn = 0
        self.phase = PLAY
        self.played = [0] * self.n
        self.passed = 0
        self.pattern = None
        self.pkey = 0
        self.col_played = 0
        self.repl = ()
        self.repl_i = 0
        self.repl_left = 0
        self.round_no += 1
        if not self.replacement and not self.hands[self.start]:
            self._finish()  # G-A20: S has no card

    def _finish(self) -> None:
        self.phase = OVER
        self.hand_no = 1

    # ------------------------------------------------------------ results

    def totals(self) -> list[int]:
        """Current totals of §4.6 from the stashes (final once the match is over)."""
        return R.scores(self.stash, self.amulets)

    def outcome(self) -> Outcome:
        """Ranks by total (ties share a place) and ``scores`` = totals (§4.6)."""
        if self.phase != OVER:
            raise GameOverError("gargon: the match is not over")
        t = self.totals()
        return Outcome(tuple(ranks_from_results(t)), tuple(float(x) for x in t))

    def hand_rewards(self) -> list[float]:
        """Rank rewards of the totals (final at the end; the current standing before)."""
        return rank_rewards(ranks_from_results(self.totals()))

    # ------------------------------------------------------------ history and worlds

    def hand_history(self) -> list[int]:
        """The actions since the deal, in order (the whole match; unrolled from the ``hist`` chain)."""
        out: list[int] = []
        node = self.hist
        while node is not None:
            out.append(node[2])
            node = node[0]
        out.reverse()
        return out

    def history_with_actors(self) -> list[tuple[int, int]]:
        """``[(seat, action), ...]`` of the hand so far, in order."""
        out: list[tuple[int, int]] = []
        node = self.hist
        while node is not None:
            out.append((node[1], node[2]))
            node = node[0]
        out.reverse()
        return out

    def hand_start(self) -> GargonState:
        """A copy of the state right after the deal (§4.2), rebuilt from the kept deal on first use."""
        snap = self.snapshot
        if snap is None:
            opts = {"amulets": self.amulets, "replacement": "played_count" if self.replacement else "none",
                    "pass_draw": "choice_1_to_3" if self.pass_choice else "match_start_count"}
            snap = GargonState.from_deal(self.game, self.n, opts, self.dealt, self.dealt_piles, self.first_start,
                                         self.deal_seed, self.first_opt)
            snap.snapshot = snap
            self.snapshot = snap
        return snap.clone()

    def world_key(self) -> Hashable:
        """Every card's location, the round and phase state, the deal and the actions so far."""
        return (self.n, self.first_start, tuple(self.hands), tuple(map(tuple, self.piles)), tuple(self.stash),
                self.discard, tuple(self.sel), tuple(self.played), self.passed, self.start, self.turn, self.phase,
                self.drawn_now, self.repl, self.repl_i, self.repl_left, self.ended, self.dealt,
                self.dealt_piles, tuple(self.hand_history()))

    def public_action(self, action: int, seat: int) -> str:
        """``select <colour> ?`` to all but the actor for a ``select`` (§4.7); other actions in full."""
        if action < A.DONE and seat != self.current_player():
            return "select " + A.COLOURS[action // 16] + " ?"
        return A.ACTION_STR[action]

    # ------------------------------------------------------------ observation

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` has seen (§4.7); fields are listed in ``Gargon.observation_doc``."""
        n = self.n
        cs = A.COLOURS
        actions = []
        for p, a in self.history_with_actors():
            if a < A.DONE and p != seat:
                actions.append([p, "select " + cs[a // 16] + " ?"])
            else:
                actions.append([p, A.ACTION_STR[a]])
        table = []
        actor = self.current_player()
        for s in range(n):
            m = self.played[s] if self.phase == PLAY or self.phase == PASS_DRAW else 0
            if s == actor and self.phase == PLAY:
                m = self.sel_mask
            if s == seat:
                table.append(A.faces_of(m))
            else:
                table.append([cs[A.COLOUR_OF[c]] for c in cards_of(m)])
        rounds = []
        for start, plays in self.rounds:
            rounds.append({"start": start, "plays": [None if m < 0 else A.faces_of(m) for m in plays]})
        opts = {"amulets": list(self.amulets),
                "pass_draw": "choice_1_to_3" if self.pass_choice else "match_start_count",
                "replacement": "played_count" if self.replacement else "none",
                "first_start": self.first_opt}
        return {
            "game": "gargon",
            "players": n,
            "seat": seat,
            "options": opts,
            "hand_index": self.hand_no,
            "actions": actions,
            "phase": PHASE_NAMES[self.phase],
            "to_act": actor,
            "first_start": self.first_start,
            "round": self.round_no,
            "start_player": self.start,
            "hand": A.faces_of(self.hands[seat]),
            "hand_colours": [A.colour_counts(h) for h in self.hands],
            "piles": {"a": "".join(cs[A.COLOUR_OF[c]] for c in reversed(self.piles[0])),
                      "b": "".join(cs[A.COLOUR_OF[c]] for c in reversed(self.piles[1]))},
            "dealt": A.faces_of(self.dealt[seat]),
            "dealt_colours": [A.colour_counts(h) for h in self.dealt],
            "dealt_piles": {"a": "".join(cs[A.COLOUR_OF[c]] for c in self.dealt_piles[0]),
                            "b": "".join(cs[A.COLOUR_OF[c]] for c in self.dealt_piles[1])},
            "drawn": [A.FACE_STR[A.FACE_OF[c]] for c in self.draws[seat]],
            "table": table,
            "passed": [s for s in range(n) if self.passed >> s & 1] if self.phase != OVER else [],
            "pattern": list(self.pattern) if self.pattern is not None and self.phase != OVER else None,
            "colours_played": "".join(cs[c] for c in range(A.NCOL) if self.col_played >> c & 1)
            if self.phase != OVER else "",
            "draws_taken": self.drawn_now if self.phase == PASS_DRAW else 0,
            "draws_left": self.repl_left if self.phase == REPLACE else 0,
            "rounds": rounds,
            "stash": [A.faces_of(m) for m in self.stash],
            "discard": A.faces_of(self.discard),
            "scores": self.totals(),
            "ended": self.ended,
        }
