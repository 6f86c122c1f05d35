"""A class's submissions: ``bots: {from: DIR}``, ``arena doctor --config``, the per-bot pages."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap

import pytest

from arena import config
from arena.errors import ConfigError
from arena.scaffold import new_bot
from tests.classes.test_frictions import arena
from tests.conftest import ROOT, require

ZOO = f"{ROOT}/tests/arena/zoo"


def _doctor_text(cfg, bot):
    """``arena doctor --config cfg`` for one bot, in-process: ``(ok, the table as text)``."""
    from rich.console import Console

    from arena.doctor import doctor_config

    table, ok = doctor_config(cfg, matches=1, only=[bot])
    console = Console(record=True, width=1000)
    console.print(table)
    return ok, console.export_text()


def _class(tmp_path):
    """Three submissions (a bot.py, a bot.yaml, a broken bot) and a folder that holds no bot."""
    subs = tmp_path / "submissions"
    new_bot("alice", "python", subs)
    (subs / "alice" / "bot.yaml").unlink()  # a bare bot.py counts too
    new_bot("bob", "sh", subs)
    (subs / "carol").mkdir()
    shutil.copy(f"{ZOO}/misbehave.py", subs / "carol")  # a submission names files of its own folder only
    (subs / "carol" / "bot.yaml").write_text(f"cmd: [{sys.executable}, misbehave.py, crash_mid]\n")
    (subs / "notes").mkdir()
    (subs / "notes" / "README.txt").write_text("not a bot")
    cfg = tmp_path / "class.yaml"
    cfg.write_text(textwrap.dedent(f"""
        bots:
          from: submissions
          random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
        tournaments:
          - {{name: week1, default: true, game: agram, players: 2, bots: all, deals: 2, salt: week1}}
        """))
    return cfg


def test_every_submission_folder_becomes_a_bot(tmp_path):
    cfg = _class(tmp_path)
    (t,) = config.load(cfg)
    assert sorted(t.bots) == ["alice", "bob", "carol", "random"]
    assert t.skipped == (tmp_path / "submissions" / "notes",)  # said by `arena run` and `arena doctor`
    assert t.bots["alice"].cmd == ("python", "bot.py") and t.bots["alice"].cwd == str(tmp_path / "submissions" / "alice")
    assert t.bots["bob"].cmd == ("sh", "bot.sh")
    (tmp_path / "submissions" / "random").mkdir()
    (tmp_path / "submissions" / "random" / "bot.py").write_text("")
    with pytest.raises(ConfigError, match=r"bot 'random' .* is declared twice"):
        config.load(cfg)


def test_a_bad_submission_folder_is_named(tmp_path):
    cfg = _class(tmp_path)
    (tmp_path / "submissions" / "dave smith").mkdir()
    (tmp_path / "submissions" / "dave smith" / "bot.py").write_text("")
    with pytest.raises(ConfigError, match=r"folder 'dave smith': a bot name uses letters.*rename the folder"):
        config.load(cfg)
    (tmp_path / "submissions" / "dave smith" / "bot.py").unlink()
    (tmp_path / "submissions" / "eve").mkdir()
    (tmp_path / "submissions" / "eve" / "bot.yaml").write_text("command: [python, x.py]\n")
    with pytest.raises(ConfigError, match=r"eve/bot.yaml: expected a mapping with the bot's 'cmd'"):
        config.load(cfg)
    # the typo named (new-user trial, session 13: "comand:" got the message without the key)
    (tmp_path / "submissions" / "eve" / "bot.yaml").write_text("comand: [python, x.py]\n")
    with pytest.raises(ConfigError, match=r"key 'comand' is not one \(did you mean 'cmd'\?\)"):
        config.load(cfg)


@pytest.mark.slow
def test_doctor_checks_every_bot_of_a_file_in_one_table(tmp_path):
    cfg = _class(tmp_path)
    out = arena("doctor", "--config", str(cfg), "--matches", "2")
    assert out.returncode == 1, out.stdout + out.stderr  # carol crashes
    rows = {m.group(1): m.group(2) for m in re.finditer(r"│ (\w+)\s+│ week1 \(agram, 2 players\)\s+│ (PASS|FAIL)", out.stdout)}
    assert rows == {"alice": "PASS", "bob": "PASS", "carol": "FAIL", "random": "PASS"}
    # a line per bot on stderr as each check ends (a class of 150 takes minutes)
    progress = re.findall(r"^\[(\d)/4\] (\w+): (pass|FAIL) \(\d+\.\d s\)$", out.stderr, re.M)
    assert [k for k, _, _ in progress] == ["1", "2", "3", "4"]
    assert {b: ok for _, b, ok in progress} == {"alice": "pass", "bob": "pass", "carol": "FAIL", "random": "pass"}
    flat = re.sub(r"[│\s]+", " ", out.stdout)  # the row's cells, however the table wrapped them
    assert re.search(r" notes – NO BOT \S+ holds no bot.yaml and no bot.py", flat), out.stdout
    from rich.console import Console

    from arena.doctor import doctor_config

    table, ok = doctor_config(cfg, matches=2, only=["carol"])
    console = Console(record=True, width=1000)
    console.print(table)
    text = console.export_text()
    assert not ok and "bot 'carol' exited with code 1" in text and "crash at its move 2" in text
    one = arena("doctor", "--config", str(cfg), "--", "bob")
    assert one.returncode == 0 and "bob" in one.stdout and "alice" not in one.stdout


@pytest.mark.slow
def test_a_page_per_bot_next_to_the_report(tmp_path):
    cfg = _class(tmp_path)
    out = arena("run", str(cfg), "--inline", "-q", "--results", str(tmp_path / "res"))
    assert out.returncode == 0, out.stderr
    folder = tmp_path / "res" / "week1"
    report = (folder / "report.html").read_text()
    for b in ("alice", "bob", "carol", "random"):
        assert f'href="bots/{b}.html"' in report and (folder / "bots" / f"{b}.html").exists()
    carol = (folder / "bots" / "carol.html").read_text()
    assert "<b>crash</b>" in carol and "about to crash" in carol  # the fault with its stderr excerpt
    assert "Crosstable row" in carol and "Replays of matches it did not win" in carol
    # the row has the columns that order the table, and no placeholder in the commands
    assert "<th>strength</th>" in carol and "<th>rank</th>" in carol and "arena replay DIR" not in carol
    losses = re.findall(r'<li><a href="\.\./replays/([^"#]+)#view=(\d)">', carol)
    assert losses, "carol forfeits every match: each is a loss with a replay"
    for page, seat in losses:  # each opens at carol's own seat
        text = (folder / "replays" / page).read_text()
        data = json.loads(text.split('<script id="data" type="application/json">', 1)[1].split("</script>", 1)[0])
        assert data["seats"][int(seat)] == "carol"
    alice = (folder / "bots" / "alice.html").read_text()
    assert "none: every reply was legal and on time" in alice


def test_the_report_publishes_the_first_replays_and_each_bots_first_losses():
    from arena import bot_pages

    def rec(i, loser, moves=10, deal=None):
        seats = ["a", "b"] if i % 2 else ["b", "a"]
        ranks = [0, 1] if seats[1] == loser else [1, 0]
        return {"match_id": f"t/a+b/d{i:05d}/r00", "deal_index": i if deal is None else deal, "seats": seats,
                "outcome": {"ranks": ranks}, "actions": ["x"] * moves}

    records = [rec(i, "a") for i in range(100)] + [rec(100 + i, "b") for i in range(15)]
    records.append(rec(200, "b", moves=bot_pages.MAX_REPLAY_MOVES + 1))
    records.append(rec(201, "b", deal=999))  # a deal not complete
    done = set(range(300))
    picked = [r["match_id"] for r in bot_pages.chosen(records, done)]
    first = [r["match_id"] for r in records[:bot_pages.FIRST_REPLAYS]]
    b_losses = [r["match_id"] for r in records[100:100 + bot_pages.LOSSES_PER_BOT]]
    assert picked == first + b_losses
    assert "t/a+b/d00200/r00" not in picked and "t/a+b/d00201/r00" not in picked


def test_a_bad_key_in_a_bot_yaml_names_that_file(tmp_path):
    cfg = _class(tmp_path)
    (tmp_path / "submissions" / "bob" / "bot.yaml").write_text("cmd: [sh, bot.sh]\nfresh_proces: true\n")
    with pytest.raises(ConfigError) as e:
        config.load(cfg)
    assert "key 'bots.bob.fresh_proces': unknown key (did you mean 'fresh_process'?)" in str(e.value)
    assert str(e.value).endswith(f"(bot 'bob' comes from {tmp_path / 'submissions' / 'bob' / 'bot.yaml'})")


@pytest.mark.parametrize("how", ["path", "symlink"])
def test_a_command_naming_another_submissions_file_is_refused(tmp_path, how):
    """Adversarial finding (session 12): ``cmd: [python, bot.py, ../alice/bot.py]`` made alice's
    folder one of mallory's program folders, bound back into her sandbox over its cover: she read
    alice's source. The pre-flight (before any match) and ``arena doctor --config`` refuse a
    command naming a file in another bot's folder (also through a symbolic link in her own)."""
    from arena.process import BotSetupError, preflight

    cfg = _class(tmp_path)
    mallory = tmp_path / "submissions" / "mallory"
    mallory.mkdir()
    (mallory / "bot.py").write_text("")
    target = "../alice/bot.py"
    if how == "symlink":
        (mallory / "peek.py").symlink_to(tmp_path / "submissions" / "alice" / "bot.py")
        target = "peek.py"
    (mallory / "bot.yaml").write_text(f"cmd: [python, bot.py, {target}]\n")
    (t,) = config.load(cfg)
    words = r"bot 'mallory': its command names a file in .*submissions/alice, the folder of bot 'alice'"
    with pytest.raises(BotSetupError, match=words):
        preflight(t.bots.values(), t.limits())
    ok, text = _doctor_text(cfg, "mallory")
    assert not ok and re.search(words, text)
    (mallory / "bot.yaml").write_text("cmd: [python, bot.py]\n")  # its own files only: accepted
    (t,) = config.load(cfg)
    preflight([t.bots["mallory"], t.bots["alice"]], t.limits())


@pytest.mark.parametrize("how", ["home", "home-symlink", "run", "results"])
def test_a_command_naming_a_covered_file_outside_its_folder_is_refused(tmp_path, monkeypatch, how):
    """Adversarial finding (session 13): the sandbox binds back the folder of every file a command
    names, so a submission's ``cmd: [python, bot.py, ~/canary.txt]`` showed the whole home,
    ``/run/<file>`` the daemons' sockets, ``../../results/final/secret.json`` the results root with
    another tournament's salt. The pre-flight and ``arena doctor --config`` refuse a submission
    whose command would uncover a folder outside its own; its own files and the interpreter stay
    accepted."""
    from arena.process import BotSetupError, effective_mode, outside_files, preflight, sandbox_binds

    home = tmp_path / "home"
    home.mkdir()
    (home / "canary.txt").write_text("HOME-CANARY")
    monkeypatch.setenv("HOME", str(home))
    cfg = _class(tmp_path)
    mallory = tmp_path / "submissions" / "mallory"
    mallory.mkdir()
    (mallory / "bot.py").write_text("")
    (mallory / "data").mkdir()
    (mallory / "data" / "model.bin").write_text("weights")
    target = str(home / "canary.txt")
    if how == "home-symlink":
        (mallory / "notes.txt").symlink_to(home / "canary.txt")
        target = "notes.txt"
    elif how == "run":  # a file of its own in /run (root, as the arena runs here)
        made = f"/run/cardarena-test-{os.getpid()}"
        open(made, "w").close()
        target = made
    elif how == "results":
        secret = tmp_path / "results" / "final" / "secret.json"
        secret.parent.mkdir(parents=True)
        secret.write_text('{"salt": "s"}')
        target = "../../results/final/secret.json"
    try:
        (mallory / "bot.yaml").write_text(f"cmd: [python, bot.py, {target}]\n")
        (t,) = config.load(cfg)
        require(effective_mode(t.limits()) != "none", "no sandbox can start here: nothing is covered")
        spec = t.bots["mallory"]
        assert spec.submitted and not t.bots["random"].submitted
        from arena.process.launch import resolve_argv

        # the leak the check guards against: this command's sandbox would bind a folder back
        shown = set(sandbox_binds(spec, resolve_argv(spec))) - set(sandbox_binds(spec, [sys.executable]))
        assert any(not str(b).startswith(str(mallory)) for b in shown), shown
        # (the results folder under the tournaments file's folder is also the inline bot random's)
        words = (rf"bot 'mallory': its command names ('{re.escape(target)}', outside its folder .*mallory; the "
                 r"sandbox would show|a file in .*results/final, the folder of bot 'random')")
        assert [n for n, _p in outside_files(t.bots.values())] == ["mallory"]
        assert how != "home" or re.search(words, outside_files(t.bots.values())[0][1])
        with pytest.raises(BotSetupError, match=words):
            preflight(t.bots.values(), t.limits())
        ok, text = _doctor_text(cfg, "mallory")
        assert not ok and re.search(words, text)
        (mallory / "bot.yaml").write_text(f"cmd: [{sys.executable}, bot.py, data/model.bin]\n")  # its own: accepted
        (t,) = config.load(cfg)
        assert outside_files(t.bots.values()) == []
        preflight([t.bots["mallory"], t.bots["alice"]], t.limits())
    finally:
        if how == "run":
            os.unlink(target)
