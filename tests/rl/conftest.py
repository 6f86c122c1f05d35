"""The RL tests need the ``rl`` extra (pettingzoo, gymnasium): skipped without it outside CI,
failed under CI (``.ci/run`` installs it)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import require


@pytest.fixture(autouse=True)
def rl_extra():
    """Require pettingzoo and gymnasium (``pip install -e ".[rl]"``)."""
    have = all(importlib.util.find_spec(m) is not None for m in ("pettingzoo", "gymnasium"))
    require(have, 'pettingzoo/gymnasium missing: pip install -e ".[rl]"')
