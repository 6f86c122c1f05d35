"""A tiny trick game for the arena's tests (no suits; the highest card wins the trick).

``n`` players (2-4) get ``hand_size`` cards each from cards ``0 .. 4n-1``; the winner of a
trick leads the next; a player's score is the tricks won. The last trick is forced (one
card left), so matches exercise forced moves. Not registered in the engine: tests add
``engine.registry.GAMES["toy"] = "tests.arena.toy_game:Toy"``.
"""

from __future__ import annotations

from engine.core import Game, InfoSet, Option, Outcome, State, int_at_least, ranks_from_results
from engine.deal import deal_hands, shuffled
from engine.errors import ActionParseError


class Toy(Game):
    name = "toy"
    version = 1
    min_players = 2
    max_players = 4
    options = {"hand_size": Option("hand_size", 3, "cards per player", check=int_at_least(1),
                                   expected="an int >= 1")}
    configs = ((2, {}), (3, {}))

    def new_match(self, n, deal_seed, **options):
        self.check_players(n)
        opts = self.resolve_options(options)
        deck = shuffled(range(4 * n), deal_seed, 0)
        hands, _ = deal_hands(deck, n, opts["hand_size"])
        return ToyState(self, n, opts, hands)

    def infoset(self, observation):
        raise NotImplementedError("toy has no information sets")

    def parse_action(self, text):
        parts = text.split()
        if len(parts) != 2 or parts[0] != "play" or not parts[1].isdigit():
            raise ActionParseError(f"toy: {text!r} is not 'play N'")
        return int(parts[1])

    def format_action(self, action):
        return f"play {action}"


class ToyState(State):
    __slots__ = ("game", "n", "opts", "hands", "trick", "leader", "turn", "tricks", "history", "start")

    def __init__(self, game, n, opts, hands):
        self.game, self.n, self.opts = game, n, opts
        self.hands = [sorted(h) for h in hands]
        self.trick: list[int] = []
        self.leader = 0
        self.turn = 0
        self.tricks = [0] * n
        self.history: list[int] = []
        self.start = [list(h) for h in self.hands]

    @property
    def num_players(self):
        return self.n

    def current_player(self):
        return -1 if self.is_terminal() else self.turn

    def legal_actions(self):
        return [] if self.is_terminal() else list(self.hands[self.turn])

    def apply(self, action):
        self._require_live()
        if action not in self.hands[self.turn]:
            raise self._illegal(action)
        self.hands[self.turn].remove(action)
        self.trick.append(action)
        self.history.append(action)
        if len(self.trick) == self.n:
            best = max(range(self.n), key=lambda i: self.trick[i])
            winner = (self.leader + best) % self.n
            self.tricks[winner] += 1
            self.trick = []
            self.leader = self.turn = winner
        else:
            self.turn = (self.turn + 1) % self.n

    def is_terminal(self):
        return not self.trick and all(not h for h in self.hands)

    def outcome(self):
        return Outcome(tuple(ranks_from_results(self.tricks)), tuple(float(t) for t in self.tricks))

    def observation(self, seat):
        acts, p = [], 0
        leader, trick = 0, []
        for a in self.history:
            acts.append([p, f"play {a}"])
            trick.append(a)
            if len(trick) == self.n:
                best = max(range(self.n), key=lambda i: trick[i])
                leader = (leader + best) % self.n
                trick, p = [], leader
            else:
                p = (p + 1) % self.n
        return {"game": "toy", "players": self.n, "seat": seat, "options": dict(self.opts),
                "hand_index": 0, "actions": acts, "hand": list(self.hands[seat]),
                "tricks": list(self.tricks)}

    def clone(self):
        c = ToyState(self.game, self.n, self.opts, self.hands)
        c.trick, c.leader, c.turn = list(self.trick), self.leader, self.turn
        c.tricks, c.history, c.start = list(self.tricks), list(self.history), self.start
        return c

    def hand_index(self):
        return 1 if self.is_terminal() else 0

    def hand_rewards(self):
        return self.outcome().rewards() if self.is_terminal() else [0.5] * self.n

    def public_action(self, action, seat):
        return f"play {action}"

    def hand_start(self):
        return ToyState(self.game, self.n, self.opts, self.start)

    def hand_history(self):
        return list(self.history)

    def world_key(self):
        return tuple(tuple(h) for h in self.hands), tuple(self.history)


class _NoInfoSet(InfoSet):  # pragma: no cover - unused
    def problem(self):
        raise NotImplementedError

    def world(self, assignment, choices, rng):
        raise NotImplementedError
