"""Issue 15: which sandbox ``limits.sandbox`` gives (``auto`` falls back bwrap -> unshare ->
none, loudly; ``required`` refuses), and what the arena leaves under /tmp is private."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

import arena.process.sandbox as sandbox
from arena.batch import play_batch
from arena.process import (
    BotSetupError,
    effective_mode,
    new_workdir,
    preflight,
    remove_workdir,
    unsandboxed_warning,
    workdir_root,
)
from arena.specs import Limits
from tests.arena.conftest import GREEDY, RANDOM, spec
from tests.conftest import require


@pytest.fixture(autouse=True)
def plain_auto(monkeypatch):
    """``auto`` as shipped (CI also runs this package with ``$CARDARENA_SANDBOX_AUTO=unshare``)."""
    monkeypatch.delenv(sandbox.AUTO_ENV, raising=False)


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """A PATH on which neither bubblewrap nor unshare (nor anything else) is found."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(sandbox._STATE, "warned", False)
    return empty


def test_auto_without_any_sandbox_runs_unsandboxed_and_says_so(no_tools, capsys):
    assert effective_mode(Limits()) == "none"
    msg = unsandboxed_warning(Limits())
    assert msg and "WITHOUT A SANDBOX" in msg and "apt-get install bubblewrap" in msg
    assert "bwrap is not installed" in msg and "unshare is not installed" in msg  # why, per sandbox tried
    preflight([RANDOM], Limits())
    preflight([RANDOM], Limits())
    assert capsys.readouterr().err.count("WITHOUT A SANDBOX") == 1  # once per process
    (r,) = play_batch([spec(["random", "greedy"], deal=0)], {"random": RANDOM, "greedy": GREEDY}, None)
    assert r.status == "ok", r.faults  # network: deny cannot apply either: not a setup error


def test_required_refuses_to_start_without_a_sandbox(no_tools):
    with pytest.raises(BotSetupError) as e:
        preflight([RANDOM], Limits(sandbox="required"))
    msg = str(e.value)
    assert "'required'" in msg and "bwrap is not installed" in msg and "unshare is not installed" in msg
    assert "apt-get install bubblewrap" in msg and "user namespaces" in msg and "\n" not in msg
    with pytest.raises(BotSetupError, match="'required'"):
        list(play_batch([spec(["random", "greedy"], deal=0, limits=Limits(sandbox="required"))],
                        {"random": RANDOM, "greedy": GREEDY}, None))


def test_auto_prefers_bubblewrap_then_unshare(tmp_path, monkeypatch):
    require(bool(shutil.which("bwrap")) and bool(shutil.which("unshare")), "needs bwrap and unshare")
    require(sandbox._probe("bwrap") is None, "bubblewrap cannot start here")
    assert effective_mode(Limits()) == effective_mode(Limits(sandbox="required")) == "bwrap"
    # a bubblewrap that fails as it does without user namespaces: auto takes unshare
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    require(sandbox._probe("unshare") is None, "unshare cannot start here")
    assert effective_mode(Limits()) == "unshare"
    assert "No permissions to create new namespace" in (sandbox._probe("bwrap") or "")
    monkeypatch.setenv(sandbox.AUTO_ENV, "none")
    assert effective_mode(Limits()) == "none"
    assert effective_mode(Limits(sandbox="bwrap")) == "bwrap"  # explicit kinds are taken as given


def test_bot_folders_under_tmp_are_private():
    wd = new_workdir("private")
    try:
        root = workdir_root()
        assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(wd).st_mode) == 0o700
    finally:
        remove_workdir(wd)
