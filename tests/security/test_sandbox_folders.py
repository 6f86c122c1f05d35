"""Issue 15 / docs/security.md: a sandboxed bot cannot read the other bots' program folders or
the arena user's home, while its own folder and the interpreter (here under ``~/.pyenv``) stay
reachable. Found by an adversarial trial (arena as root, no ``bot_user``): the bot's uid owned
those files, so only hiding them closes it.

Each test plays one real match spy vs victim through :func:`arena.batch.play_batch` in ``auto``,
forced ``unshare`` and ``none``; under ``none`` the same spy reads the file, which shows that
the test can see the leak.
"""

from __future__ import annotations

import os
import pwd
import shutil
import sys
import tempfile
import uuid
from dataclasses import replace

import pytest

from arena.batch import play_batch
from arena.specs import BotSpec
from tests.arena.conftest import RANDOM, ROOT, leftovers, spec
from tests.conftest import require
from tests.security.test_leaks import CLOCK, MODES, SPY, expect, limits_for, verdict

#: a protocol bot whose source holds the marker the spy looks for (it plays like the random bot).
VICTIM = """# SPY-SECRET: the victim's private strategy notes
import runpy
runpy.run_path({random!r}, run_name="__main__")
"""


@pytest.fixture
def outside():
    """A folder outside /tmp (the sandbox's /tmp is private anyway), removed afterwards."""
    d = tempfile.mkdtemp(prefix="cardarena-test-", dir="/var/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def victim_bot(folder: str) -> BotSpec:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "victim_bot.py")
    with open(path, "w") as f:
        f.write(VICTIM.format(random=os.path.join(ROOT, "bots", "random_bot.py")))
    return BotSpec("victim", (sys.executable, "victim_bot.py"), cwd=folder)


def spy_bot(folder: str, leak: str, arg: str) -> BotSpec:
    """The spy, copied into ``folder`` (its own program folder), run from there."""
    os.makedirs(folder, exist_ok=True)
    shutil.copy(SPY, os.path.join(folder, "spy_bot.py"))
    return BotSpec("spy", (sys.executable, "spy_bot.py", leak, arg), cwd=folder)


def play(tmp_path, mode: str, bots: dict[str, BotSpec]) -> tuple[list[str], object]:
    """One match spy vs victim; the spy's ``SPY ...`` stderr lines and the result. The shipped
    random bot is a bot of the tournament too (not seated): its folder ``bots/`` holds the SDK
    the victim runs through, which must stay reachable."""
    bots = {**bots, "random": RANDOM}
    results = tmp_path / "results" / "t"
    results.mkdir(parents=True, exist_ok=True)
    s = replace(spec(["spy", "victim"], deal=0, clock=CLOCK), limits=limits_for(mode))
    (r,) = play_batch([s], bots, str(results))
    log = results / "logs" / "spy"
    text = "".join(p.read_text() for p in log.iterdir()) if log.is_dir() else ""
    assert not leftovers()
    return [x for x in text.splitlines() if x.startswith("SPY ")], r


@pytest.mark.parametrize("layout", ["side_by_side", "nested"])
@pytest.mark.parametrize("mode", MODES)
def test_another_bots_source_is_unreadable(tmp_path, outside, mode, layout):
    # side by side: submissions/spy and submissions/victim; nested: the spy's folder lies inside
    # the victim's (the victim's folder is covered, the spy's own bound back inside the cover)
    victim_dir = os.path.join(outside, "victim")
    spy_dir = os.path.join(outside, "spy") if layout == "side_by_side" else os.path.join(victim_dir, "spy")
    target = os.path.join(victim_dir, "victim_bot.py")
    bots = {"victim": victim_bot(victim_dir), "spy": spy_bot(spy_dir, "readhex", target.encode().hex())}
    lines, r = play(tmp_path, mode, bots)
    assert r.status == "ok", r.faults  # both bots ran: the victim from its folder, the spy from its own
    assert verdict(lines, "readhex") == expect(mode), lines


@pytest.mark.parametrize("which", ["HOME", "passwd"])
@pytest.mark.parametrize("mode", MODES)
def test_a_file_in_the_arena_users_home_is_unreadable(tmp_path, outside, mode, which, monkeypatch):
    if which == "HOME":  # $HOME of the arena names a home outside /tmp
        home = os.path.join(outside, "home")
        os.makedirs(home)
        monkeypatch.setenv("HOME", home)
    else:  # the password file's home of the arena's user (here /root, holding ~/.pyenv)
        home = pwd.getpwuid(os.geteuid()).pw_dir
        require(os.path.isdir(home) and os.access(home, os.W_OK) and not home.startswith("/tmp/")
                and home != "/", "the arena user's home is not a writable folder outside /tmp")
    secret = os.path.join(home, f".cardarena-spy-{uuid.uuid4().hex}")
    with open(secret, "w") as f:
        f.write("SPY-SECRET credentials\n")
    try:
        bots = {"victim": victim_bot(os.path.join(outside, "victim")),
                "spy": spy_bot(os.path.join(outside, "spy"), "readhex", secret.encode().hex())}
        lines, r = play(tmp_path, mode, bots)
    finally:
        os.unlink(secret)
    assert r.status == "ok", r.faults
    assert verdict(lines, "readhex") == expect(mode), lines


@pytest.mark.parametrize("mode", MODES)
def test_the_bots_own_folder_and_the_interpreter_stay_readable(tmp_path, outside, mode):
    # the spy reads its own source (which holds the marker); that it runs at all shows that the
    # interpreter is reachable (under the covered home on this machine: ~/.pyenv)
    spy_dir = os.path.join(outside, "spy")
    bots = {"victim": victim_bot(os.path.join(outside, "victim")),
            "spy": spy_bot(spy_dir, "readhex", os.path.join(spy_dir, "spy_bot.py").encode().hex())}
    lines, r = play(tmp_path, mode, bots)
    assert r.status == "ok", r.faults
    assert verdict(lines, "readhex") == "LEAK", lines  # "LEAK" = it read its own file


@pytest.mark.parametrize("target", ["other_submission", "dot_git", "loose_file"])
@pytest.mark.parametrize("mode", MODES)
def test_nothing_else_of_the_submissions_folder_is_readable(tmp_path, outside, mode, target):
    # adversarial trial 6: only the tournament's own bots' folders were hidden, so a submission
    # read the submissions of other tournaments, the folder's .git and a grades.csv beside them
    subs = os.path.join(outside, "submissions")
    files = {"other_submission": os.path.join(subs, "carol", "bot.py"),
             "dot_git": os.path.join(subs, ".git", "config"),
             "loose_file": os.path.join(subs, "grades.csv")}
    for path in files.values():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("SPY-SECRET carol 71/100\n")
    bots = {"victim": replace(victim_bot(os.path.join(subs, "victim")), submitted=True),
            "spy": replace(spy_bot(os.path.join(subs, "spy"), "readhex", files[target].encode().hex()),
                           submitted=True)}
    lines, r = play(tmp_path, mode, bots)
    assert r.status == "ok", r.faults  # both submissions still run from their own folders
    assert verdict(lines, "readhex") == expect(mode), lines
