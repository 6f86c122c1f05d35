"""The Gymnasium env against reference bots, the policy bot, and the numpy example's training."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize("game,opponents", [("agram", "random"), ("sedma", "greedy"), ("guinote", "ismcts:8")])
def test_gymnasium_env_checker(game, opponents):
    from gymnasium.utils.env_checker import check_env

    from bots.rl.gym_env import CardArenaGymEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_env(CardArenaGymEnv(game, opponents=opponents, illegal="lose"), skip_render_check=True)


def episode(env, seed, pick=lambda mask: int(np.flatnonzero(mask)[0])):
    obs, info = env.reset(seed=seed)
    steps = []
    done = False
    while not done:
        assert info["observation"]["seat"] == env.seat and obs["action_mask"].sum() == len(info["legal"])
        a = pick(obs["action_mask"])
        steps.append(a)
        obs, reward, done, trunc, info = env.step(a)
    return steps, reward, info


def test_gym_episode_is_reproducible_and_ends_with_the_rank_reward():
    from bots.rl.gym_env import CardArenaGymEnv

    env = CardArenaGymEnv("sedma", 4, opponents=["greedy", "random", "greedy", "random"])
    s1, r1, info = episode(env, 3)
    s2, r2, _ = episode(env, 3)
    assert s1 == s2 and r1 == r2
    ranks = info["outcome"]["ranks"]
    from engine.core import rank_rewards
    from engine.registry import get_game
    assert r1 == rank_rewards(ranks, get_game("sedma").teams(4))[env.seat]


def test_gym_seat_is_drawn_or_fixed():
    from bots.rl.gym_env import CardArenaGymEnv

    env = CardArenaGymEnv("agram", 3)
    seats = {env.reset(seed=s)[1]["observation"]["seat"] for s in range(12)}
    assert seats == {0, 1, 2}
    fixed = CardArenaGymEnv("agram", 3, seat=2)
    assert {fixed.reset(seed=s)[1]["observation"]["seat"] for s in range(5)} == {2}


def test_bad_opponent_and_seat_are_clear_errors():
    from bots.rl.gym_env import CardArenaGymEnv

    with pytest.raises(ValueError, match="unknown opponent 'ismcts:x'"):
        CardArenaGymEnv("agram", opponents="ismcts:x")
    with pytest.raises(ValueError, match="3 specs for 2 seats"):
        CardArenaGymEnv("agram", opponents=["random"] * 3)
    with pytest.raises(ValueError, match="seat must be 0..1 or 'random'"):
        CardArenaGymEnv("agram", seat=2)


@pytest.mark.slow
def test_ismcts_opponent_beats_random():
    """The ISMCTS opponent really searches: as the env's opponent (40 iterations) it beats a
    random learner in most of 30 two-player Sedma matches (binomial test, alpha = 0.001)."""
    from scipy.stats import binomtest

    from bots.rl.gym_env import CardArenaGymEnv

    env = CardArenaGymEnv("sedma", 2, opponents="ismcts:40")
    rng = np.random.default_rng(0)
    losses = sum(episode(env, s, lambda m: int(rng.choice(np.flatnonzero(m))))[1] < 0.5 for s in range(30))
    assert binomtest(losses, 30, 0.5, alternative="greater").pvalue < 0.001, losses


def test_policy_bot_refuses_an_illegal_index():
    sys.path.insert(0, str(ROOT))
    from bots import sdk
    from bots.policy_bot import PolicyError, make_act
    from engine.registry import get_game

    state = get_game("agram").new_match(2, 4)
    obs = state.observation(state.current_player())
    ctx = sdk.Context(game="agram", players=2, options=obs["options"])
    act = make_act(lambda x, m: int(np.flatnonzero(m)[0]), "first")
    assert act(obs, state.legal_strings(), ctx) in state.legal_strings()
    bad = make_act(lambda x, m: int(np.flatnonzero(m == 0)[0]), "tests:bad")
    with pytest.raises(PolicyError, match="policy tests:bad: returned index .* not legal; legal: \\['play"):
        bad(obs, state.legal_strings(), ctx)


def run_arena(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"})


def policy_bot(*args, stdin=""):
    return subprocess.run([sys.executable, str(ROOT / "bots" / "policy_bot.py"), *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_policy_bot_load_errors_are_one_line(tmp_path):
    missing = policy_bot("--policy", "bots.rl.examples.reinforce:load", "--weights", str(tmp_path / "none.npz"))
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    bad = policy_bot("--policy", "bots.rl.examples.reinforce:load", "--weights", str(junk))
    assert bad.returncode == 2 and "could not load --weights" in bad.stderr and "Traceback" not in bad.stderr
    nomod = policy_bot("--policy", "no_such_module_x:policy")
    assert nomod.returncode == 2 and "cannot import 'no_such_module_x'" in nomod.stderr


def test_policy_bot_from_a_py_file_plays_a_legal_action(tmp_path):
    """A policy named by a .py file path answers start and act over the real protocol."""
    import json

    from engine.registry import get_game

    (tmp_path / "mine.py").write_text("import numpy as np\n"
                                      "def policy(x, mask):\n    return int(np.flatnonzero(mask)[-1])\n")
    state = get_game("sedma").new_match(2, 3)
    seat = state.current_player()
    msgs = [{"type": "start", "protocol": 1, "game": "sedma", "players": 2, "seat": seat, "seed": 1,
             "options": state.observation(seat)["options"]},
            {"type": "act", "id": 7, "observation": state.observation(seat), "legal": state.legal_strings()}]
    out = policy_bot("--policy", f"{tmp_path / 'mine.py'}:policy", stdin="".join(json.dumps(m) + "\n" for m in msgs))
    assert out.returncode == 0, out.stderr
    ready, action = (json.loads(line) for line in out.stdout.splitlines())
    assert ready["type"] == "ready" and action["id"] == 7
    legal = state.legal_strings()
    space_last = max(legal, key=lambda t: get_game("sedma").parse_action(t))
    assert action["action"] == space_last    # the highest index of the sorted action list


@pytest.mark.slow
def test_training_beats_random_and_the_policy_passes_arena_doctor(tmp_path):
    """The docs/rl.md example at reduced size (1,500 episodes, seed 0) beats random on 1,000
    new Agram matches (binomial test, alpha = 0.001); saved to .npz and entered with
    policy_bot.py, it passes the real `arena doctor` (a bad policy path fails it) and plays
    a tournament without a fault."""
    from scipy.stats import binomtest

    from bots.rl.examples.reinforce import evaluate, greedy_policy, train

    params = train("agram", 2, episodes=1500, seed=0)
    rewards = evaluate(greedy_policy(params["W"], params["b"]), "agram", 2, matches=1000, seed=1)
    assert set(np.unique(rewards)) <= {0.0, 1.0}
    wins = int(rewards.sum())
    assert binomtest(wins, 1000, 0.5, alternative="greater").pvalue < 0.001, wins
    path = tmp_path / "agram.npz"
    np.savez(path, **params)
    cmd = [sys.executable, "bots/policy_bot.py", "--policy", "bots.rl.examples.reinforce:load", "--weights", str(path)]
    ok = run_arena("doctor", "agram", "--matches", "3", "--", *cmd)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS: the bot is ready" in ok.stdout
    bad = run_arena("doctor", "agram", "--matches", "1", "--", sys.executable, "bots/policy_bot.py",
                    "--policy", "bots.rl.examples.reinforce:nope")
    assert bad.returncode == 1 and "has no callable 'nope'" in bad.stdout
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"""
bots:
  random: {{cmd: [python, {ROOT}/bots/random_bot.py]}}
  reinforce: {{cmd: [python, {ROOT}/bots/policy_bot.py, --policy, "bots.rl.examples.reinforce:load", --weights, {path}]}}
tournaments:
  - {{name: rl, game: agram, players: 2, bots: [random, reinforce], deals: 10}}
""")
    run = run_arena("run", str(cfg), "-t", "rl", "--inline", "--quiet", "--results", str(tmp_path / "res"))
    assert run.returncode == 0, run.stdout + run.stderr
    import json
    records = [json.loads(line) for line in open(tmp_path / "res" / "rl" / "matches.jsonl")]
    assert len(records) == 20
    assert all(r["status"] == "ok" and r["faults"] == [] for r in records)
