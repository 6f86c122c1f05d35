"""Issue 15, the cluster closed to bots: a spy bot played inside a real Ray task (as ``arena
run`` plays every batch) cannot find the GCS address in its parents' command lines, list
Ray's session folders, or connect to the GCS; under ``sandbox: none`` the same spy can."""

from __future__ import annotations

import os
import sys

import pytest

from tests.arena.conftest import ROOT
from tests.security.test_leaks import MODES, expect

HERE = os.path.dirname(os.path.abspath(__file__))


def _spy_in_ray(root: str, results: str, mode: str, leak: str, arg: str) -> list[str]:
    """Inside a Ray worker: one spy-vs-random match; the spy's ``SPY`` lines."""
    import pathlib
    from dataclasses import replace

    if root not in sys.path:
        sys.path.insert(0, root)
    from arena.batch import play_batch
    from arena.specs import BotSpec
    from engine import registry
    from tests.arena.conftest import RANDOM, spec
    from tests.security.test_leaks import CLOCK, limits_for

    registry.GAMES["toy"] = "tests.arena.toy_game:Toy"
    bots = {"spy": BotSpec("spy", (sys.executable, os.path.join(root, "tests", "security", "spy_bot.py"),
                                   leak, arg), cwd=root), "random": RANDOM}
    s = replace(spec(["spy", "random"], deal=0, clock=CLOCK), limits=limits_for(mode))
    list(play_batch([s], bots, results))
    log = pathlib.Path(results) / "logs" / "spy"
    text = "".join(p.read_text() for p in log.iterdir()) if log.is_dir() else ""
    return [x for x in text.splitlines() if x.startswith("SPY ")]


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_ray_address_session_and_gcs_are_out_of_reach(ray_session, tmp_path, mode):
    ray = ray_session
    gcs = ray.get_runtime_context().gcs_address  # host:port, in every Ray process's command line
    session = ray._private.worker.global_worker.node.get_session_dir_path()
    remote = ray.remote(num_cpus=1, max_retries=0)(_spy_in_ray)
    cases = {"cmdline": gcs.encode().hex(), "tcp": gcs, "listdir": os.path.dirname(session)}
    got = {}
    for i, (leak, arg) in enumerate(cases.items()):
        lines = ray.get(remote.remote(ROOT, str(tmp_path / f"r{i}"), mode, leak, arg), timeout=120)
        (line,) = [x for x in lines if x.split()[2] == leak]
        got[leak] = line
    for leak, line in got.items():
        assert line.split()[1] == expect(mode), (leak, line)
