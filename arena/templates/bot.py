"""{name}: a cardarena bot (protocol v1 through the Python SDK; guide: docs/sdk.md).

Check it:   arena doctor agram -- python {path}
Play it:    arena play agram --vs python {path}
"""

from bots import sdk


def act(observation, legal, ctx):
    """Choose this seat's move.

    observation -- a dict: everything this seat has seen (its hand, the public history of the
                   hand in observation["actions"] as [seat, action] pairs, ...);
                   `arena rules GAME` lists the fields of each game.
    legal       -- the legal actions as strings, e.g. ["play 5h", "play Th"]; return one of them.
    ctx         -- the match: ctx.seat (your seat), ctx.players, ctx.teams, ctx.game,
                   ctx.options, ctx.rng (a random.Random reseeded from the match's seed:
                   your bot is reproducible), ctx.memory (a dict cleared at every match),
                   ctx.clock (move_ms / bank_ms left).

    Return an action, or (action, info) with a small dict that goes to the match log.
    print() is fine for debugging: the SDK sends it to stderr (the bot's log), never to the
    arena.
    """
    ctx.memory["moves"] = ctx.memory.get("moves", 0) + 1
    choice = ctx.rng.choice(legal)          # replace this line with your strategy
    return choice, {{"move": ctx.memory["moves"], "options": len(legal)}}


def on_end(ctx, outcome, observation):
    """Called once at the end of every match: outcome["ranks"][ctx.seat] == 0 means you won."""
    sdk.log(f"{name}: match over, rank {{outcome['ranks'][ctx.seat]}} after {{ctx.memory.get('moves', 0)}} moves")


if __name__ == "__main__":
    sdk.run(act, name="{name}", version="1", on_end=on_end)
