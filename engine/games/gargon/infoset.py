"""Gargon information sets: values sampled within public colours (docs/rules/gargon.md §4.7).

The observation's public record is replayed over *tokens*: every card slot of the deal
(each seat's 10 cards, each pile position) is a token whose colour is public. A token's
value becomes known when the observer holds or draws it, or when the battles reveal it;
an opponent's ``select r ?`` takes one of its red tokens (which one does not matter: every
choice gives the same current state, §4.7). The tokens still unknown at the end form the
hidden locations of the :class:`~engine.sampling.SamplingProblem`:

* per opponent and colour, its hand cards of that colour;
* per opponent and colour, its face-down cards of the current round (before step 2);
* per run of equal colour in each draw pile (an ordered location: the sampler returns
  its cards in uniformly random order, i.e. a uniform order of the run).

Every unseen card may go only to the locations of its own colour, so each sample keeps
every hand's, table's and pile's colours exactly and draws values only within colours.

One inference ties two locations: a follower in the middle of a selection (§4.3) whose
last selected card ``L`` of colour ``c`` can only be completed with a later card of
``c`` must hold such a card, i.e. ``L`` is not the strict maximum of its ``c`` cards
(hand plus ``L``). Then those cards form one merged location ``U``; :meth:`world` gives
``L``'s token a uniformly chosen card of ``U`` that keeps a later card in hand. Every
``U`` has the same number of valid splits (its size minus one) apart from sets holding
both zeros, so the draw is uniform over physical deals up to that zero case.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.core import InfoSet
from engine.errors import IllegalActionError, InconsistentObservationError
from engine.games.gargon import rules as R
from engine.sampling import SamplingProblem

_LETTER = {ch: i for i, ch in enumerate(R.COLOURS)}


def _card_id(colour: int, value: int) -> int:
    return colour * R.PER_COLOUR + (value + 1 if value else 0)


class GargonInfoSet(InfoSet):
    """Constraints of one Gargon observation and the builder of consistent worlds.

    :raises InconsistentObservationError: (at construction) if the observation's public
        record does not fit together (colours, counts, duplicate values).
    """

    __slots__ = ("game", "n", "opts", "first_start", "tok_colour", "tok_id", "init_hands", "init_piles",
                 "steps", "locs", "merged", "_problem")

    def __init__(self, game: Any, observation: Mapping[str, Any]) -> None:
        super().__init__(observation)
        self.game = game
        obs = observation
        n = int(obs["players"])
        me = self.seat
        self.n = n
        self.opts = game.resolve_options(obs["options"])
        self.first_start = int(obs["first_start"])
        tok_colour: list[int] = []
        tok_face: list[int] = []  # -1 unknown

        def new_token(colour: int, face: int = -1) -> int:
            tok_colour.append(colour)
            tok_face.append(face)
            return len(tok_colour) - 1

        bad = InconsistentObservationError
        hands: list[list[int]] = []
        for s in range(n):
            if s == me:
                hand = [new_token(f // 16, f) for f in map(R.parse_face, obs["dealt"])]
                counts = [0] * R.NCOL
                for t in hand:
                    counts[tok_colour[t]] += 1
                if counts != list(obs["dealt_colours"][s]):
                    raise bad("gargon: own dealt cards do not match the dealt colours")
            else:
                hand = [new_token(c) for c in range(R.NCOL) for _ in range(int(obs["dealt_colours"][s][c]))]
            hands.append(hand)
        self.init_hands = [h[:] for h in hands]
        piles = [[new_token(_LETTER[ch]) for ch in obs["dealt_piles"][k]] for k in ("a", "b")]
        self.init_piles = piles
        top = [0, 0]
        drawn = [R.parse_face(x) for x in obs["drawn"]]
        k_drawn = 0
        rounds_sel: list[list[list[int]]] = []
        cur = [[] for _ in range(n)]
        turns = 0
        steps: list[tuple[int, int, int]] = []  # (seat, action, token or -1)
        for p, text in obs["actions"]:
            p = int(p)
            if text.startswith("select"):
                if turns == n:
                    rounds_sel.append(cur)
                    cur = [[] for _ in range(n)]
                    turns = 0
                hand = hands[p]
                if p == me:
                    f = R.parse_face(text[7:])
                    pick = next((t for t in hand if tok_face[t] == f), None)
                else:
                    c = _LETTER.get(text[7:8], -1)
                    pick = next((t for t in hand if tok_colour[t] == c), None)
                if pick is None:
                    raise bad(f"gargon: seat {p} selects {text!r} without such a card")
                hand.remove(pick)
                cur[p].append(pick)
                steps.append((p, -1, pick))
                continue
            a = R.parse_action(text)
            if a in (R.DONE, R.PASS):
                turns += 1
            elif a in (R.DRAW_A, R.DRAW_B):
                k = a - R.DRAW_A
                if top[k] >= len(piles[k]):
                    raise bad("gargon: a draw from an empty pile")
                t = piles[k][top[k]]
                top[k] += 1
                hands[p].append(t)
                if p == me:
                    if k_drawn >= len(drawn) or drawn[k_drawn] // 16 != tok_colour[t]:
                        raise bad("gargon: own drawn cards do not match the piles' colours")
                    tok_face[t] = drawn[k_drawn]
                    k_drawn += 1
            steps.append((p, a, -1))
        if turns == n and obs["phase"] != "pass_draw":
            # the round's battles are over (a last player still drawing after a pass is not)
            rounds_sel.append(cur)
            cur = [[] for _ in range(n)]
        revealed = obs["rounds"]
        if len(revealed) != len(rounds_sel):
            raise bad("gargon: the rounds record does not match the actions")
        for sel, rec in zip(rounds_sel, revealed, strict=True):
            for s in range(n):
                faces = [] if rec["plays"][s] is None else [R.parse_face(x) for x in rec["plays"][s]]
                if len(faces) != len(sel[s]):
                    raise bad("gargon: a revealed play does not match its selections")
                for t, f in zip(sel[s], faces, strict=True):
                    if tok_colour[t] != f // 16 or (tok_face[t] >= 0 and tok_face[t] != f):
                        raise bad("gargon: a revealed card does not match its selection")
                    tok_face[t] = f
        # physical ids of the known tokens; zeros pinned to the lowest ids of their colour
        tok_id = [-1] * len(tok_colour)
        known_zero = [0] * R.NCOL
        seen = 0
        for t, f in enumerate(tok_face):
            if f < 0:
                continue
            c, v = divmod(f, 16)
            if v == 0:
                if known_zero[c] >= 2:
                    raise bad(f"gargon: three known zeros of colour {R.COLOURS[c]}")
                cid = c * R.PER_COLOUR + known_zero[c]
                known_zero[c] += 1
            else:
                cid = _card_id(c, v)
            if seen >> cid & 1:
                raise bad(f"gargon: card {R.FACE_STR[f]} is known twice")
            seen |= 1 << cid
            tok_id[t] = cid
        unseen = [c for c in range(R.NCARDS) if not seen >> c & 1]
        # hidden locations: (name, colour, tokens, kind) kind 0 = set, 1 = ordered, 2 = table, 3 = merged
        locs: list[tuple[str, int, list[int], int]] = []
        merged = (-1, -1)
        actor = int(obs["to_act"])
        if obs["phase"] == "play" and actor != me and actor != int(obs["start_player"]) and cur[actor]:
            merged = self._merge_colour(obs, actor, cur[actor], hands[actor], tok_colour)
        for s in range(n):
            if s == me:
                continue
            for c in range(R.NCOL):
                hand_c = [t for t in hands[s] if tok_colour[t] == c]
                tab_c = [t for t in cur[s] if tok_colour[t] == c]
                if (s, c) == merged:
                    locs.append((f"hand+table {s} {R.COLOURS[c]}", c, tab_c + hand_c, 3))
                    continue
                if hand_c:
                    locs.append((f"hand {s} {R.COLOURS[c]}", c, hand_c, 0))
                if tab_c:
                    locs.append((f"table {s} {R.COLOURS[c]}", c, tab_c, 2))
        for k in (0, 1):
            rest = piles[k][top[k]:]
            i = 0
            while i < len(rest):
                j = i
                while j < len(rest) and tok_colour[rest[j]] == tok_colour[rest[i]]:
                    j += 1
                locs.append((f"pile {'ab'[k]} {i}", tok_colour[rest[i]], rest[i:j], 1))
                i = j
        if sum(len(x[2]) for x in locs) != len(unseen):
            raise bad("gargon: the hidden card slots do not match the unseen cards")
        self.tok_colour = tok_colour
        self.tok_id = tok_id
        self.steps = steps
        self.locs = locs
        self.merged = merged
        self._problem = SamplingProblem(
            cards=unseen,
            capacities=[len(x[2]) for x in locs],
            allowed=[sum(1 << j for j, x in enumerate(locs) if x[1] == R.COLOUR_OF[c]) for c in unseen],
            names=[x[0] for x in locs])

    @staticmethod
    def _merge_colour(obs: Mapping[str, Any], actor: int, sel: list[int], hand: list[int],
                      tok_colour: list[int]) -> tuple[int, int]:
        """The (seat, colour) whose hand and table must be merged (the §4.3 prefix inference), or (-1, -1)."""
        pattern = tuple(obs["pattern"])
        allowed = 0b111111
        n = int(obs["players"])
        if actor == (int(obs["start_player"]) - 1) % n:
            allowed = 0
            for ch in obs["colours_played"]:
                allowed |= 1 << _LETTER[ch]
        sc = [0] * R.NCOL
        for t in sel:
            sc[tok_colour[t]] += 1
        hc = [0] * R.NCOL
        for t in hand:
            hc[tok_colour[t]] += 1
        last = tok_colour[sel[-1]]
        if R.completable(sc, last, 0, hc, allowed, pattern, len(sel)):
            return (-1, -1)
        return (actor, last)

    def problem(self) -> SamplingProblem:
        return self._problem

    def world(self, assignment: list[list[int]], choices: list[Any], rng: random.Random):
        """The world of one assignment: deal rebuilt from the tokens, then the hand replayed.

        :raises InconsistentObservationError: if a card lies in a location of another
            colour, or the replay is illegal.
        """
        from engine.games.gargon.state import GargonState

        tok_id = self.tok_id[:]
        value_of = R.VALUE_OF
        for (name, colour, tokens, kind), cards in zip(self.locs, assignment, strict=True):
            if len(cards) != len(tokens):
                raise InconsistentObservationError(f"gargon: location {name} needs {len(tokens)} cards")
            for c in cards:
                if R.COLOUR_OF[c] != colour:
                    raise InconsistentObservationError(f"gargon: card {R.FACE_STR[R.FACE_OF[c]]} cannot be in {name}")
            if kind == 1 or kind == 0:
                for t, c in zip(tokens, cards, strict=True):
                    tok_id[t] = c
            elif kind == 2:
                for t, c in zip(tokens, sorted(cards), strict=True):
                    tok_id[t] = c
            else:
                cs = sorted(cards)
                valid = [c for c in cs if any(d != c and (value_of[d] > value_of[c] or value_of[d] == value_of[c] == 0)
                                              for d in cs)]
                if not valid:
                    raise InconsistentObservationError(f"gargon: no valid selection in {name}")
                f = valid[rng.randrange(len(valid))] if len(valid) > 1 else valid[0]
                rest = [c for c in cs if c != f]
                # tokens: the one selected token first, then the hand tokens
                tok_id[tokens[0]] = f
                for t, c in zip(tokens[1:], rest, strict=True):
                    tok_id[t] = c
        hands = []
        for h in self.init_hands:
            m = 0
            for t in h:
                m |= 1 << tok_id[t]
            hands.append(m)
        piles = [[tok_id[t] for t in p] for p in self.init_piles]
        state = GargonState.from_deal(self.game, self.n, self.opts, hands, piles, self.first_start,
                                      rng.getrandbits(63), self.opts["first_start"])
        face_of = R.FACE_OF
        try:
            for _, a, t in self.steps:
                state.apply(face_of[tok_id[t]] if a < 0 else a)
        except IllegalActionError as e:
            raise InconsistentObservationError(f"gargon: the sampled world does not replay: {e}") from e
        return state
