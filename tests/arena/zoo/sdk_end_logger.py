"""An SDK bot that logs at start, on every act and in ``on_end`` (the new-user trial's bot):
``tests/arena/test_batch.py`` checks each line reaches its own match's log."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

from bots import sdk  # noqa: E402


def act(observation, legal, ctx):
    sdk.log("ACT", ctx.match)
    return legal[0]


def on_start(ctx):
    sdk.log("START", ctx.match)


def on_end(ctx, outcome, observation):
    sdk.log("END", ctx.match)


if __name__ == "__main__":
    sys.exit(sdk.run(act, name="sdk-end-logger", version="1", on_start=on_start, on_end=on_end))
