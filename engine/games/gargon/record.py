"""The public record of one Gargon observation, replayed over card slots (docs/rules/gargon.md §4.7).

Every card the observer could track is a *token*: each seat's dealt cards and each pile
position. A token's colour is public (card backs show colours); its face is known for
the observer's own cards and draws. Replaying the actions gives per seat and colour the
cards held now, the pile draws (with their times), the hidden ``select`` entries and the
rounds whose plays were revealed; known faces are then pinned to physical ids (zeros to
the lowest ids of their colour). :class:`engine.games.gargon.infoset.GargonInfoSet`
builds its hidden locations on top of this record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.errors import InconsistentObservationError
from engine.games.gargon import actions as A

#: colour letter -> colour index
LETTER = {ch: i for i, ch in enumerate(A.COLOURS)}
_bad = InconsistentObservationError


class PublicRecord:
    """One observation's public record (see the module docstring).

    :ivar tok_colour: per token its colour; ``tok_face``: its face or -1; ``tok_id``: the
        physical id of a pinned token or -1.
    :ivar hands: per seat its dealt tokens; ``piles``: the two piles' tokens, top first;
        ``top``: per pile, the tokens drawn so far.
    :ivar count: per seat and colour, the cards held now.
    :ivar draws: ``(seat, colour) -> [(time, token), ...]`` of the opponents' pile draws.
    :ivar sel_info: the opponents' hidden selects ``(seat, colour, time)``; ``steps``:
        ``(seat, action or -1, select index)`` per action; ``cur``: per seat this round's
        selections (own faces, others' select indices); ``rounds_sel``: the same per
        battled round.
    :ivar sel_face: per hidden select its revealed face or -1; ``rev``: ``(seat, colour) ->
        [(id, time played), ...]`` revealed cards; ``rev_zero``: per colour the revealed
        zeros ``(seat, id, time)``; ``obs_zero``: per colour the zeros the observer holds
        or drew; ``seen``: mask of every pinned id.
    :raises InconsistentObservationError: if the record does not fit together (colours,
        counts, duplicate values, rounds).
    """

    __slots__ = ("n", "me", "tok_colour", "tok_face", "tok_id", "hands", "piles", "top", "count", "draws",
                 "sel_info", "steps", "rounds_sel", "cur", "known_zero", "obs_zero", "seen", "sel_face",
                 "rev", "rev_zero")

    def __init__(self, obs: Mapping[str, Any], n: int, me: int) -> None:
        self.n = n
        self.me = me
        self.tok_colour: list[int] = []
        self.tok_face: list[int] = []
        self._deal(obs)
        self._replay(obs)
        self._pin_known()
        self._reveal(obs)

    def _token(self, colour: int, face: int = -1) -> int:
        """Add a card token of ``colour`` (face ``-1`` if unknown); returns its index."""
        self.tok_colour.append(colour)
        self.tok_face.append(face)
        return len(self.tok_colour) - 1

    def _deal(self, obs: Mapping[str, Any]) -> None:
        """Tokens of the dealt hands and piles; the observer's dealt faces checked against the colours."""
        n, me, tok_colour = self.n, self.me, self.tok_colour
        hands: list[list[int]] = []
        for s in range(n):
            if s == me:
                hand = [self._token(f // 16, f) for f in map(A.parse_face, obs["dealt"])]
                counts = [0] * A.NCOL
                for t in hand:
                    counts[tok_colour[t]] += 1
                if counts != list(obs["dealt_colours"][s]):
                    raise _bad("gargon: own dealt cards do not match the dealt colours")
            else:
                hand = [self._token(c) for c in range(A.NCOL) for _ in range(int(obs["dealt_colours"][s][c]))]
            hands.append(hand)
        self.hands = hands
        self.piles = [[self._token(LETTER[ch]) for ch in obs["dealt_piles"][k]] for k in ("a", "b")]
        count = [[0] * A.NCOL for _ in range(n)]
        for s in range(n):
            for t in hands[s]:
                count[s][tok_colour[t]] += 1
        self.count = count

    def _replay(self, obs: Mapping[str, Any]) -> None:
        """Replay the actions: holdings, draws, hidden selects, rounds (§4.3, §4.7)."""
        n, me, count, piles, tok_colour, tok_face = self.n, self.me, self.count, self.piles, self.tok_colour, self.tok_face
        my_faces = [tok_face[t] for t in self.hands[me]]
        top = [0, 0]
        drawn = [A.parse_face(x) for x in obs["drawn"]]
        k_drawn = 0
        draws: dict[tuple[int, int], list[tuple[int, int]]] = {}
        sel_info: list[tuple[int, int, int]] = []  # opponents' selects: (seat, colour, time)
        steps: list[tuple[int, int, int]] = []  # (seat, action or -1, select index)
        rounds_sel: list[list[list]] = []
        cur: list[list] = [[] for _ in range(n)]
        turns = 0
        for i, (p, text) in enumerate(obs["actions"]):
            p = int(p)
            if not 0 <= p < n:
                raise _bad(f"gargon: action by seat {p}")
            if text.startswith("select"):
                if turns == n:
                    rounds_sel.append(cur)
                    cur = [[] for _ in range(n)]
                    turns = 0
                if p == me:
                    f = A.parse_face(text[7:])
                    if f not in my_faces:
                        raise _bad(f"gargon: seat {p} selects {text!r} without such a card")
                    my_faces.remove(f)
                    count[p][f // 16] -= 1
                    cur[p].append(f)
                    steps.append((p, f, -1))
                else:
                    c = LETTER.get(text[7:8], -1)
                    if c < 0 or count[p][c] <= 0:
                        raise _bad(f"gargon: seat {p} selects {text!r} without such a card")
                    count[p][c] -= 1
                    cur[p].append(len(sel_info))
                    steps.append((p, -1, len(sel_info)))
                    sel_info.append((p, c, i))
                continue
            a = A.parse_action(text)
            if a in (A.DONE, A.PASS):
                turns += 1
            elif a in (A.DRAW_A, A.DRAW_B):
                k = a - A.DRAW_A
                if top[k] >= len(piles[k]):
                    raise _bad("gargon: a draw from an empty pile")
                t = piles[k][top[k]]
                top[k] += 1
                c = tok_colour[t]
                count[p][c] += 1
                if p == me:
                    if k_drawn >= len(drawn) or drawn[k_drawn] // 16 != c:
                        raise _bad("gargon: own drawn cards do not match the piles' colours")
                    tok_face[t] = drawn[k_drawn]
                    my_faces.append(drawn[k_drawn])
                    k_drawn += 1
                else:
                    draws.setdefault((p, c), []).append((i, t))
            steps.append((p, a, -1))
        if k_drawn != len(drawn):
            raise _bad("gargon: own drawn cards do not match the draws")
        if turns == n and obs["phase"] != "pass_draw":
            # the round's battles are over (a last player still drawing after a pass is not)
            rounds_sel.append(cur)
            cur = [[] for _ in range(n)]
        if [list(x) for x in obs["hand_colours"]] != count:
            raise _bad("gargon: the hands' colours do not match the public record")
        self.top, self.draws, self.sel_info, self.steps, self.rounds_sel, self.cur = (
            top, draws, sel_info, steps, rounds_sel, cur)

    def _pin(self, f: int) -> int:
        """Physical id of known face ``f`` (zeros in turn); InconsistentObservationError on a clash."""
        c, v = divmod(f, 16)
        if v == 0:
            if self.known_zero[c] >= 2:
                raise _bad(f"gargon: three known zeros of colour {A.COLOURS[c]}")
            cid = c * A.PER_COLOUR + self.known_zero[c]
            self.known_zero[c] += 1
        else:
            cid = c * A.PER_COLOUR + v + 1
        if self.seen >> cid & 1:
            raise _bad(f"gargon: card {A.FACE_STR[f]} is known twice")
        self.seen |= 1 << cid
        return cid

    def _pin_known(self) -> None:
        """Physical ids of the observer's dealt and drawn cards."""
        tok_face = self.tok_face
        tok_id = self.tok_id = [-1] * len(self.tok_colour)
        self.known_zero = [0] * A.NCOL
        self.seen = 0
        for t in self.hands[self.me]:
            tok_id[t] = self._pin(tok_face[t])
        for k in (0, 1):
            for t in self.piles[k][:self.top[k]]:
                if tok_face[t] >= 0:
                    tok_id[t] = self._pin(tok_face[t])
        self.obs_zero = self.known_zero[:]

    def _reveal(self, obs: Mapping[str, Any]) -> None:
        """The revealed plays of the battled rounds: faces of hidden selects, pinned ids."""
        n, me, sel_info = self.n, self.me, self.sel_info
        revealed = obs["rounds"]
        if len(revealed) != len(self.rounds_sel):
            raise _bad("gargon: the rounds record does not match the actions")
        sel_face = [-1] * len(sel_info)
        rev: dict[tuple[int, int], list[tuple[int, int]]] = {}
        rev_zero: list[list[tuple[int, int, int]]] = [[] for _ in range(A.NCOL)]  # (seat, id, time)
        for sel, rec in zip(self.rounds_sel, revealed, strict=True):
            for s in range(n):
                faces = [] if rec["plays"][s] is None else sorted(A.parse_face(x) for x in rec["plays"][s])
                if len(faces) != len(sel[s]):
                    raise _bad("gargon: a revealed play does not match its selections")
                for e, f in zip(sel[s], faces, strict=True):
                    if s == me:
                        if e != f:
                            raise _bad("gargon: a revealed card does not match its selection")
                        continue
                    _, c, when = sel_info[e]
                    if c != f // 16:
                        raise _bad("gargon: a revealed card does not match its selection")
                    sel_face[e] = f
                    cid = self._pin(f)
                    rev.setdefault((s, c), []).append((cid, when))
                    if f % 16 == 0:
                        rev_zero[c].append((s, cid, when))
        self.sel_face, self.rev, self.rev_zero = sel_face, rev, rev_zero

    def unseen(self) -> list[int]:
        """The physical ids not pinned, ascending."""
        return [c for c in range(A.NCARDS) if not self.seen >> c & 1]
