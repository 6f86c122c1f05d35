"""Adversarial finding (session 12): a bot's ``env:`` keys reached the wrappers that run outside
the sandbox as the arena's user (``prlimit``, ``setpriv``, the sandbox tool, the ``unshare``
script's ``bash``): ``LD_PRELOAD`` or ``BASH_ENV`` ran the bot author's code unconfined, which
read ``secret.json``. Now the wrappers get DESIGN's fixed environment and the bot's keys are set
by the innermost ``env`` wrapper, inside the sandbox (:func:`arena.process.launch.env_assignments`).

A real match of the random bot given ``LD_PRELOAD`` (a constructor compiled here) and
``BASH_ENV`` (a script), both appending the process's name to a file under ``/var/tmp``: in a
sandbox nothing may write it (the bot itself sees a read-only ``/var/tmp``); under ``none`` the
bot itself writes it, which shows the test sees the payload run and the keys reach the bot.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.config import BotModel
from tests.arena.conftest import RANDOM, leftovers, spec
from tests.security.test_leaks import CLOCK, MODES, limits_for

EVIL_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void evil(void) {
    const char *mark = getenv("EVIL_MARK");
    char comm[64] = "?";
    FILE *c = fopen("/proc/self/comm", "r");
    if (c) { if (!fgets(comm, sizeof comm, c)) comm[0] = 0; fclose(c); }
    FILE *f = mark ? fopen(mark, "a") : NULL;
    if (f) { fprintf(f, "preload %s", comm); fclose(f); }
}
"""


@pytest.fixture
def payload():
    """A folder under /var/tmp (outside every sandbox's private folders) with the payloads."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler (CI installs gcc)")
    d = tempfile.mkdtemp(prefix="cardarena-env-", dir="/var/tmp")
    os.chmod(d, 0o777)
    with open(os.path.join(d, "evil.c"), "w") as f:
        f.write(EVIL_C)
    subprocess.run([gcc, "-shared", "-fPIC", "-o", os.path.join(d, "evil.so"), os.path.join(d, "evil.c")], check=True)
    with open(os.path.join(d, "evil.sh"), "w") as f:
        f.write('echo "bash_env $(cat /proc/$$/comm)" >> "$EVIL_MARK"\n')
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("mode", MODES)
def test_a_bots_env_keys_reach_the_bot_only(tmp_path, payload, mode):
    mark = os.path.join(payload, "mark")
    env = (("BASH_ENV", os.path.join(payload, "evil.sh")), ("EVIL_MARK", mark),
           ("LD_PRELOAD", os.path.join(payload, "evil.so")))
    bots = {"random": replace(RANDOM, env=env), "other": replace(RANDOM, name="other")}
    s = replace(spec(["random", "other"], deal=0, clock=CLOCK), limits=limits_for(mode))
    results = tmp_path / "results"
    results.mkdir()
    (r,) = play_batch([s], bots, str(results))
    assert r.status == "ok", r.faults
    ran = open(mark).read().split("\n") if os.path.exists(mark) else []
    if mode == "none":  # no sandbox: the bot's own process (python) runs the preload
        assert any(x.startswith("preload python") for x in ran), ran
    else:  # nothing outside the sandbox saw the keys; inside, /var/tmp is read-only
        assert ran == [], ran
    assert not leftovers()


@pytest.mark.parametrize("env, words", [({"A=B": "1"}, "'A=B' is not an environment variable name"),
                                        ({"X": "a\0b"}, "the value of 'X' holds a NUL character")])
def test_an_env_no_process_can_get_is_refused_by_the_config(env, words):
    with pytest.raises(ValueError, match=words):
        BotModel.model_validate({"cmd": ["python", "bot.py"], "env": env})
