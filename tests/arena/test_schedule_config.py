"""Config validation, schedule (lineups, rotations, ids, seeds), journal recovery."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from arena import config as cfg
from arena.errors import ConfigError, JournalError
from arena.journal import Journal
from arena.schedule import batches, build_schedule, lineups_for


def write(tmp_path, text):
    p = tmp_path / "t.yaml"
    p.write_text(textwrap.dedent(text))
    return p


BASE = """
bots:
  random: {cmd: [python, bots/random_bot.py]}
  greedy: {cmd: [python, bots/greedy_bot.py]}
  other: {cmd: [python, bots/random_bot.py]}
tournaments:
  - name: demo
    default: true
    game: agram
    players: 3
    bots: [random, greedy, other]
    deals: 4
"""


def test_valid_config_and_defaults(tmp_path):
    (t,) = cfg.load(write(tmp_path, BASE))
    assert t.name == "demo" and t.model.options == {"first_dealer": 0, "match_wins": 1}
    assert t.clock().move_ms == 1000 and t.fault_policy().policy == "forfeit"
    assert cfg.select([t], None, False) == [t]


@pytest.mark.parametrize("patch,needle", [
    ("    deals: 4\n    colour: red\n", "colour"),
    ("    deals: 4\n    clock: {move_msec: 5}\n", "clock.move_msec"),
    ("    deals: 0\n", "deals"),
    ("    deals: 4\n    options: {match_winz: 2}\n", "match_winz"),
    ("    deals: 4\n    options: {match_wins: 0}\n", "match_wins"),
])
def test_errors_name_file_tournament_and_key(tmp_path, patch, needle):
    text = BASE.replace("    deals: 4\n", patch)
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, text))
    msg = str(e.value)
    assert "t.yaml" in msg and "'demo'" in msg and needle in msg


def test_unknown_bot_and_game_and_player_count(tmp_path):
    with pytest.raises(ConfigError, match="unknown bot 'nobody'"):
        cfg.load(write(tmp_path, BASE.replace("[random, greedy, other]", "[random, greedy, nobody]")))
    with pytest.raises(ConfigError, match="unknown game 'poker9'"):
        cfg.load(write(tmp_path, BASE.replace("game: agram", "game: poker9")))
    with pytest.raises(ConfigError, match="2 bots for a 3-player game"):
        cfg.load(write(tmp_path, BASE.replace("[random, greedy, other]", "[random, greedy]")))
    with pytest.raises(ConfigError, match="players"):
        cfg.load(write(tmp_path, BASE.replace("players: 3", "players: 9")))


def test_yaml_syntax_error_names_line(tmp_path):
    with pytest.raises(ConfigError, match="line"):
        cfg.load(write(tmp_path, BASE + "  - name: [unclosed\n"))


def test_unknown_tournament_name(tmp_path):
    path = write(tmp_path, BASE)
    ts = cfg.load(path)
    with pytest.raises(ConfigError) as e:
        cfg.select(ts, ["nope"], False, path)
    assert str(e.value) == f"{path}: unknown tournament 'nope'; known: demo"
    with pytest.raises(ConfigError) as e:  # the file is known from the tournaments too
        cfg.select(ts, ["nope"], False)
    assert str(e.value) == f"{path}: unknown tournament 'nope'; known: demo"
    (t,) = cfg.load(write(tmp_path, BASE.replace("default: true", "default: false")))
    with pytest.raises(ConfigError) as e:
        cfg.select([t], None, False, path)
    assert str(e.value) == (f"{path}: no tournament is marked 'default: true'; name one with -t NAME or use "
                            "--all (tournaments: demo)")


@pytest.mark.parametrize("names,all_", [(None, False), (None, True), (["x"], False)])
def test_a_file_without_tournaments_says_so_for_every_selection(tmp_path, names, all_):
    path = write(tmp_path, "bots: {}\ntournaments: []\n")
    assert cfg.load(path) == []
    with pytest.raises(ConfigError) as e:
        cfg.select(cfg.load(path), names, all_, path)
    assert str(e.value) == f"{path}: defines no tournaments; add one under 'tournaments:' (docs/config.md)"


def test_schedule_ids_rotations_and_shared_deals(tmp_path):
    (t,) = cfg.load(write(tmp_path, BASE))
    specs = build_schedule(t, "salt")
    assert len(specs) == 4 * 3  # one lineup, 3 cyclic rotations, 4 deals
    ids = [s.match_id for s in specs]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "demo/greedy+other+random/d00000/r00"
    d0 = [s for s in specs if s.deal_index == 0]
    assert len({s.deal_seed for s in d0}) == 1  # every rotation meets the same deal
    assert [s.seats for s in d0] == [("greedy", "other", "random"), ("other", "random", "greedy"),
                                     ("random", "greedy", "other")]
    assert len({s.bot_seeds for s in specs}) == len(specs)
    assert build_schedule(t, "other-salt")[0].deal_seed != specs[0].deal_seed
    assert all(s.match_id.split("/")[2] not in s.token for s in specs)


def test_permutation_rotations():
    lus = lineups_for(["a", "b", "c", "d"], 3, [[0], [1], [2]], "permutations")
    assert len(lus) == 4 and all(len(lu.seatings) == 6 for lu in lus)


def test_partnership_lineups():
    teams = [[0, 2], [1, 3]]
    self_lus = lineups_for(["a", "b", "c"], 4, teams, partners="self")
    assert [lu.key for lu in self_lus] == ["a+b", "a+c", "b+c"]
    assert self_lus[0].seatings == (("a", "b", "a", "b"), ("b", "a", "b", "a"))
    mixed = lineups_for(["a", "b", "c", "d"], 4, teams, partners="mixed")
    assert len(mixed) == 3 and all(len(lu.seatings) == 4 for lu in mixed)
    for lu in mixed:
        for seats in lu.seatings:
            assert len(set(seats)) == 4


def test_batch_grouping(tmp_path):
    (t,) = cfg.load(write(tmp_path, BASE))
    specs = build_schedule(t, "salt")
    bs = batches(specs, 3)
    for b in bs:
        assert len({(s.match_id.split("/")[1], s.rotation) for s in b}) == 1
        assert len({s.deal_index for s in b}) == len(b)
    assert sorted(s.match_id for b in bs for s in b) == sorted(s.match_id for s in specs)


def test_journal_cuts_partial_line_and_refuses_duplicates(tmp_path):
    j = Journal(tmp_path)
    assert j.append({"match_id": "a", "x": 1})
    assert not j.append({"match_id": "a", "x": 2})
    j.close()
    with open(tmp_path / "matches.jsonl", "ab") as f:
        f.write(b'{"match_id": "b", "x"')  # a killed driver's half line
    j2 = Journal(tmp_path)
    assert set(j2.records) == {"a"}
    assert (tmp_path / "matches.jsonl.partial").read_bytes().startswith(b'{"match_id": "b"')
    assert (tmp_path / "matches.jsonl").read_bytes().endswith(b"\n")
    j2.append({"match_id": "b", "x": 3})
    j2.close()
    lines = (tmp_path / "matches.jsonl").read_text().splitlines()
    assert [json.loads(x)["match_id"] for x in lines] == ["a", "b"]


def test_journal_salt_is_secret_and_stable(tmp_path):
    j = Journal(tmp_path)
    s = j.salt()
    assert j.salt() == s and len(s) == 32
    assert oct(os.stat(tmp_path / "secret.json").st_mode & 0o777) == "0o600"
    with pytest.raises(JournalError, match="another salt"):
        j.salt("configured")


def test_changed_fingerprint_is_refused_with_keys(tmp_path):
    from arena.driver import prepare

    (t,) = cfg.load(write(tmp_path, BASE))
    journal, specs = prepare(t, tmp_path / "results")
    from dataclasses import asdict

    journal.append({"match_id": specs[0].match_id, "fingerprint": specs[0].fingerprint, "game": "agram",
                    "game_version": 1, "options": specs[0].options, "deal_seed": specs[0].deal_seed,
                    "seats": list(specs[0].seats), "bot_commands": list(specs[0].bot_commands),
                    "clock": asdict(specs[0].clock)})
    journal.close()
    (t2,) = cfg.load(write(tmp_path, BASE.replace("deals: 4", "deals: 4\n    options: {match_wins: 2}")))
    with pytest.raises(JournalError, match="changed: options"):
        prepare(t2, tmp_path / "results")
    # adding deals keeps every existing id and fingerprint
    # a student resubmits a bot: the recorded matches no longer describe it
    (t4,) = cfg.load(write(tmp_path, BASE.replace("greedy: {cmd: [python, bots/greedy_bot.py]}",
                                                  "greedy: {cmd: [python, bots/greedy_bot.py, --v2]}")))
    with pytest.raises(JournalError) as e:
        prepare(t4, tmp_path / "results")
    assert ("changed: bot 'greedy': cmd [python, bots/greedy_bot.py] → [python, bots/greedy_bot.py, --v2])"
            in str(e.value))
    assert "bot_commands" not in str(e.value) and "'random'" not in str(e.value)
    # a new version of two bots: each named, old → new
    (t6,) = cfg.load(write(tmp_path, BASE.replace("greedy: {cmd: [python, bots/greedy_bot.py]}",
                                                  'greedy: {cmd: [python, bots/greedy_bot.py], version: "2"}')
                           .replace("other: {cmd: [python, bots/random_bot.py]}",
                                    "other: {cmd: [python, bots/random_bot.py, -q], version: x}")))
    with pytest.raises(JournalError) as e:
        prepare(t6, tmp_path / "results")
    assert ("changed: bot 'greedy': version unset → 2; bot 'other': cmd [python, bots/random_bot.py] → "
            "[python, bots/random_bot.py, -q], version unset → x)") in str(e.value)
    (t5,) = cfg.load(write(tmp_path, BASE.replace("deals: 4", "deals: 4\n    clock: {move_ms: 500}")))
    with pytest.raises(JournalError, match="changed: clock"):
        prepare(t5, tmp_path / "results")
    (t3,) = cfg.load(write(tmp_path, BASE.replace("deals: 4", "deals: 6")))
    j3, specs3 = prepare(t3, tmp_path / "results")
    j3.close()
    assert {s.match_id: s.fingerprint for s in specs}.items() <= {s.match_id: s.fingerprint for s in specs3}.items()


def test_option_checked_against_player_count(tmp_path):
    with pytest.raises(ConfigError, match="first_dealer") as e:
        cfg.load(write(tmp_path, BASE.replace("    deals: 4\n", "    deals: 4\n    options: {first_dealer: 5}\n")))
    assert "'demo'" in str(e.value) and "options" in str(e.value)


def test_duplicate_yaml_key_is_refused_with_lines(tmp_path):
    text = BASE.replace("  other: {cmd: [python, bots/random_bot.py]}\n",
                        "  other: {cmd: [python, bots/random_bot.py]}\n  greedy: {cmd: [python, x.py]}\n")
    with pytest.raises(ConfigError, match=r"key 'greedy' is defined twice \(lines 4 and 6\)"):
        cfg.load(write(tmp_path, text))


def test_unknown_key_reported_before_its_knock_on_errors(tmp_path):
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, BASE.replace("    deals: 4\n", "    deal: 4\n")))
    msg = str(e.value)
    assert msg.index("'deal'") < msg.index("'deals'")


def test_read_records_names_a_corrupt_line_and_drops_repeats(tmp_path):
    from arena.journal import read_records

    def rec(mid):
        return json.dumps({"match_id": mid, "game": "agram", "seats": ["x", "y"], "deal_index": 0,
                           "rotation": 0, "status": "ok", "outcome": {"ranks": [0, 1], "scores": [1, 0]}})

    (tmp_path / "matches.jsonl").write_text(f"{rec('a')}\n{rec('a')}\n{rec('b')}\n")
    assert [r.match_id for r in read_records(tmp_path)] == ["a", "b"]
    (tmp_path / "matches.jsonl").write_text(f"{rec('a')}\ngarbage line\n{rec('b')}\n")
    with pytest.raises(JournalError, match="line 2 is not valid JSON"):
        read_records(tmp_path)


def test_results_folder_is_locked_against_a_second_run(tmp_path):
    j = Journal(tmp_path)
    with pytest.raises(JournalError, match=f"in use by another arena run \\(pid {os.getpid()}\\)"):
        Journal(tmp_path)
    j.close()
    Journal(tmp_path).close()  # free again once the first run closed it


@pytest.mark.parametrize("line,needle", [
    ("[1, 2, 3]", "expected a JSON object"),
    ("null", "expected a JSON object"),
    ('{"match_id": "a", "game": "agram", "seats": 5, "deal_index": 0, "rotation": 0}', "'seats'"),
    ('{"match_id": "a", "game": "agram", "seats": ["x", "y"], "deal_index": 0, "rotation": 0, '
     '"status": "ok", "outcomeX": {}}', "'outcome'"),
])
def test_read_records_names_malformed_records(tmp_path, line, needle):
    from arena.journal import read_records

    (tmp_path / "matches.jsonl").write_text(line + "\n")
    with pytest.raises(JournalError, match=f"line 1: .*{needle}"):
        read_records(tmp_path)


def test_results_path_that_is_a_file_is_a_clear_error(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(JournalError, match="cannot use .*afile/t as a results folder"):
        Journal(tmp_path / "afile" / "t")


TWO = BASE + """
  - name: duel2
    game: cuttle
    players: 2
    bots: [random, greedy]
    deals: 2
"""


def test_a_bad_value_under_defaults_is_blamed_on_defaults(tmp_path):
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, "defaults: {faults: {disable_on_startup: 0}}\n" + TWO))
    assert str(e.value) == (f"{tmp_path / 't.yaml'}: defaults: key 'faults.disable_on_startup': Input should be "
                            "greater than or equal to 1 (null turns the rule off)")
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, "defaults: {clock: {move_msec: 5}}\n" + TWO))
    assert "t.yaml: defaults: key 'clock.move_msec': unknown key (did you mean 'move_ms'?)" in str(e.value)
    assert "demo" not in str(e.value) and "duel2" not in str(e.value)
    # the tournament's own bad value names the tournament, not the first one nor defaults
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, "defaults: {faults: {disable_on_startup: 2}}\n"
                       + TWO + "    faults: {disable_on_startup: 0}\n"))
    assert "t.yaml: tournament 'duel2': key 'faults.disable_on_startup': Input should be greater" in str(e.value)
    # an anchor bot from defaults that a tournament does not list
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, "defaults: {ratings: {fixed: [other]}}\n" + TWO))
    assert "tournament 'duel2': key 'ratings.fixed' (from defaults): 'other' is not one" in str(e.value)


@pytest.mark.parametrize("key", ["faults.disable_on_startup", "faults.disable_after", "limits.cpu_s",
                                 "limits.max_open_files", "clock.move_ms", "execution.max_retries"])
@pytest.mark.parametrize("where", ["defaults", "tournament"])
def test_true_is_not_taken_for_1(tmp_path, key, where):
    section, name = key.split(".")
    if where == "defaults":
        text = f"defaults: {{{section}: {{{name}: true}}}}\n" + BASE
        blame = "t.yaml: defaults:"
    else:
        text = BASE + f"    {section}: {{{name}: true}}\n"
        blame = "t.yaml: tournament 'demo':"
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, text))
    assert f"{blame} key '{key}': Input should be a valid integer, got true" in str(e.value)


def test_null_turns_the_startup_rule_off_and_numbers_still_load(tmp_path):
    (t,) = cfg.load(write(tmp_path, "defaults: {faults: {disable_on_startup: null, disable_after: 4}}\n" + BASE))
    assert t.fault_policy().disable_on_startup is None and t.fault_policy().disable_after == 4
    (t,) = cfg.load(write(tmp_path, BASE + "    execution: {workers: 2, batch_size: auto}\n"))
    assert t.model.execution.workers == 2


@pytest.mark.parametrize("setting, message", [
    ("ratings: {mu: true}", "key 'ratings.mu': Input should be a valid number, got true"),
    ("ratings: {sigma: -1}", "key 'ratings.sigma': Input should be greater than 0"),
    ("ratings: {draw_probability: 1.5}", "key 'ratings.draw_probability': Input should be less than 1"),
    ("ratings: {tau: -5}", "key 'ratings.tau': Input should be greater than or equal to 0"),
    ("ratings: {mu: .nan}", "key 'ratings.mu': Input should be a finite number"),
    ("execution: {match_wall_s: true}", "key 'execution.match_wall_s': Input should be a valid number, got true"),
    ("execution: {workers: 0}", "key 'execution.workers': Input should be greater than or equal to 1"),
    ("execution: {batch_size: 0}", "key 'execution.batch_size': Input should be greater than or equal to 1"),
])
def test_number_settings_check_their_values(tmp_path, setting, message):
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, "defaults: {" + setting + "}\n" + BASE))
    assert f"t.yaml: defaults: {message}" in str(e.value)


def test_number_settings_still_take_ints_floats_and_words(tmp_path):
    (t,) = cfg.load(write(tmp_path, "defaults: {ratings: {mu: 1000, sigma: 333.3, draw_probability: 0, tau: 0},"
                                    " execution: {match_wall_s: 30, workers: auto}}\n" + BASE))
    r = t.model.ratings
    assert (r.mu, r.sigma, r.draw_probability, r.tau) == (1000.0, 333.3, 0.0, 0.0)
    assert t.model.execution.match_wall_s == 30.0 and t.model.execution.workers == "auto"


def test_a_numeric_bot_version_is_taken_as_text(tmp_path):
    text = BASE.replace("random: {cmd: [python, bots/random_bot.py]}",
                        "random: {cmd: [python, bots/random_bot.py], version: 2}")
    (t,) = cfg.load(write(tmp_path, text))
    assert t.bots["random"].version == "2"
    with pytest.raises(ConfigError, match="key 'bots.random.version'"):
        cfg.load(write(tmp_path, text.replace("version: 2", "version: true")))


def test_a_validators_sentence_comes_without_pydantics_label(tmp_path):
    text = BASE.replace("bots: [random, greedy, other]", "bots: [random, greedy, random]")
    with pytest.raises(ConfigError) as e:
        cfg.load(write(tmp_path, text))
    msg = str(e.value)
    assert "key 'bots': bot 'random' is listed twice" in msg and "Value error" not in msg, msg


def test_design_mixing_line_counts_in_words():
    from arena.tables import mixing_line

    assert mixing_line({"min": 1, "median": 1, "max": 1, "possible": 1}) == (
        "Design mixing: each bot met 1 distinct opponent (median 1) of the 1 other")
    assert mixing_line({"min": 2, "median": 3, "max": 4, "possible": 9}) == (
        "Design mixing: each bot met 2–4 distinct opponents (median 3) of the 9 others")
