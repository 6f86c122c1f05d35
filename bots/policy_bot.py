"""The policy bot: a trained policy (any Python callable) entered as an ordinary protocol bot.

Run: ``python bots/policy_bot.py --policy MODULE:FUNCTION [--weights FILE] [--name NAME]``
(speaks protocol v1 on stdin/stdout, so it plays in tournaments, ``arena sprt``, ``arena play``
and passes ``arena doctor`` like any other bot).

* ``MODULE`` is a dotted module path (importable from the current directory, the repository
  root or ``PYTHONPATH``) or a ``.py`` file path; ``FUNCTION`` names the callable in it.
* The policy is called ``policy(observation, mask) -> index`` with ``observation`` the
  ``float32`` encoding of the seat's observation (:func:`bots.rl.layouts.layout` for the
  match's game, players and options — what the RL envs give) and ``mask`` the ``int8``
  legal-action mask over the game's action list (:class:`bots.rl.actions.ActionSpace`); it
  returns an action index whose mask entry is 1.
* With ``--weights FILE``, ``FUNCTION`` is a factory called once as ``FUNCTION(FILE)`` that
  returns the policy (e.g. loading a ``.npz``).

A policy that returns an index that is not legal, or fails to load, stops the bot with one
message on stderr naming the policy, the index and the legal actions (the arena records the
fault and the last stderr line).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bots import sdk  # noqa: E402

Policy = Callable[[Any, Any], int]


class PolicyError(Exception):
    """A policy that cannot be loaded or returned an unusable action (one-paragraph message)."""


def load_callable(spec: str) -> Callable[..., Any]:
    """The callable named ``MODULE:FUNCTION`` (``MODULE`` dotted or a ``.py`` path).

    :raises PolicyError: naming the spec and what is wrong.
    """
    module_name, sep, fn_name = spec.rpartition(":")
    if not sep or not module_name or not fn_name:
        raise PolicyError(f"--policy {spec!r}: expected MODULE:FUNCTION, e.g. bots.rl.examples.reinforce:load")
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        if module_name.endswith(".py"):
            loader_spec = importlib.util.spec_from_file_location("policy_module", module_name)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot load {module_name}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except (ImportError, OSError) as e:
        raise PolicyError(f"--policy {spec!r}: cannot import {module_name!r} ({e}); give a dotted module "
                          "importable from the bot's folder or the repository root (bots get a minimal environment: your "
                          "shell's PYTHONPATH does not reach them; set it in the bot's env: key), or a .py file path") from None
    fn = getattr(module, fn_name, None)
    if not callable(fn):
        raise PolicyError(f"--policy {spec!r}: {module_name!r} has no callable {fn_name!r}")
    return fn


def warm_up(ctx: sdk.Context) -> None:
    """At ``start``: build the game's action list and layout (cached) before answering ``ready``,
    so the first decision is as fast as the others."""
    from bots.rl.actions import ActionSpace
    from bots.rl.layouts import layout
    from engine import registry

    game = registry.get_game(ctx.game)
    ActionSpace.of(game)
    layout(game, ctx.players, ctx.options)


def make_act(policy: Policy, label: str) -> sdk.ActFn:
    """An ``act(observation, legal, ctx)`` for :func:`bots.sdk.run` around ``policy``."""
    from bots.rl.actions import ActionSpace
    from bots.rl.layouts import layout
    from engine import registry

    def act(observation: dict, legal: list[str], ctx: sdk.Context) -> str:
        """The policy's action for the seat's encoded observation and legal mask."""
        game = registry.get_game(ctx.game or observation["game"])
        players = ctx.players or int(observation["players"])
        space = ActionSpace.of(game)
        vec = layout(game, players, ctx.options or observation.get("options")).encode(observation)
        mask = space.mask_from_strings(legal)
        index = policy(vec, mask)
        try:
            i = int(index)
        except (TypeError, ValueError):
            raise PolicyError(f"policy {label}: returned {index!r}, not an action index") from None
        if not 0 <= i < space.size or not mask[i]:
            shown = space.string_at(i) if 0 <= i < space.size else "outside the action list"
            raise PolicyError(f"policy {label}: returned index {i} ({shown}), which is not legal; legal: "
                              f"{legal} — a policy must pick an index whose mask entry is 1")
        return space.string_at(i)
    return act


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, load the policy and serve the protocol until stdin closes."""
    ap = argparse.ArgumentParser(description="a trained policy as a protocol bot (protocol v1 on stdin/stdout)")
    ap.add_argument("--policy", required=True, help="MODULE:FUNCTION, the policy (or its factory with --weights)")
    ap.add_argument("--weights", default=None, help="file passed to the factory FUNCTION(FILE)")
    ap.add_argument("--name", default="policy", help="name announced in ready")
    args = ap.parse_args(argv)
    try:
        fn = load_callable(args.policy)
        if args.weights is not None:
            if not os.path.isfile(args.weights):
                raise PolicyError(f"--weights {args.weights!r}: no such file")
            try:
                fn = fn(args.weights)
            except Exception as e:  # noqa: BLE001 - any failure to load is reported in one line
                raise PolicyError(f"--policy {args.policy!r} could not load --weights {args.weights!r}: "
                                  f"{type(e).__name__}: {e}") from None
            if not callable(fn):
                raise PolicyError(f"--policy {args.policy!r} with --weights: the factory returned "
                                  f"{type(fn).__name__}, not a callable policy")
        return sdk.run(make_act(fn, args.policy), name=args.name, version="1", on_start=warm_up)
    except PolicyError as e:
        sdk.log(f"policy_bot: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
