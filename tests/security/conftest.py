"""The security tests use the arena tests' fixtures (toy game, clean-up of bot processes)."""

from tests.arena.conftest import bot_cleanup, toy_game  # noqa: F401
