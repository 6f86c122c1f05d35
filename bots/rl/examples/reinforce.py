"""REINFORCE with a linear softmax policy, numpy only: the example of docs/rl.md.

The policy scores every action ``i`` as ``logits[i] = W[i] @ x + b[i]`` over the encoded
observation ``x`` and plays the masked softmax (training) or its argmax (:func:`load`).
Training plays :class:`bots.rl.gym_env.CardArenaGymEnv` episodes (the learner's seat drawn at
every reset) and follows the return's gradient with a running-mean baseline.

Train and save::

    python -m bots.rl.examples.reinforce --game agram --episodes 20000 --out agram-reinforce.npz

Enter it as a bot::

    python bots/policy_bot.py --policy bots.rl.examples.reinforce:load --weights agram-reinforce.npz
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np

# the envs (gymnasium, pettingzoo) are imported by train/evaluate only: load() needs numpy alone,
# so the policy bot starts fast


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Probabilities over the actions whose ``mask`` is 1 (0 elsewhere)."""
    z = np.where(mask > 0, logits, -np.inf)
    z = np.exp(z - z.max())
    return z / z.sum()


def train(game: str = "agram", players: int = 2, episodes: int = 20000, lr: float = 0.05,
          seed: int = 0, opponents: str = "random", log_every: int = 0) -> dict[str, np.ndarray]:
    """Train a linear softmax policy by REINFORCE against ``opponents``.

    :param episodes: matches played (one gradient step each).
    :param lr: step size on the episode's ``(reward - baseline) * grad log pi``.
    :param seed: seeds the deals, the seats and the action sampling (reproducible).
    :param log_every: print the running mean reward every that many episodes (0: silent).
    :returns: ``{"W": float32[N, D], "b": float32[N], "meta": json string}``.
    """
    from bots.rl.gym_env import CardArenaGymEnv

    env = CardArenaGymEnv(game, players, opponents=opponents)
    rng = np.random.default_rng(seed)
    d, n = env.layout.size, env.space.size
    w = np.zeros((n, d))
    b = np.zeros(n)
    baseline = 0.5
    obs, _ = env.reset(seed=seed)
    for ep in range(episodes):
        if ep:
            obs, _ = env.reset()
        xs, gs = [], []
        done = False
        reward = 0.0
        while not done:
            x, mask = obs["observation"], obs["action_mask"]
            p = masked_softmax(w @ x + b, mask)
            a = int(rng.choice(n, p=p))
            g = -p
            g[a] += 1.0
            xs.append(x)
            gs.append(g)
            obs, reward, done, _, _ = env.step(a)
        adv = reward - baseline
        baseline += 0.01 * (reward - baseline)
        gm = np.asarray(gs)
        w += lr * adv * gm.T @ np.asarray(xs)
        b += lr * adv * gm.sum(axis=0)
        if log_every and (ep + 1) % log_every == 0:
            print(f"episode {ep + 1}: running mean reward {baseline:.3f}", flush=True)
    meta = {"game": game, "players": players, "options": env.aec.options, "episodes": episodes,
            "lr": lr, "seed": seed, "opponents": opponents}
    return {"W": w.astype(np.float32), "b": b.astype(np.float32), "meta": np.array(json.dumps(meta))}


def greedy_policy(w: np.ndarray, b: np.ndarray) -> Callable[[np.ndarray, np.ndarray], int]:
    """The argmax policy ``(observation, mask) -> index`` of a linear softmax policy.

    :raises ValueError: (when called) if the observation's size differs from ``w``'s columns.
    """
    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        """The legal action of highest logit."""
        if observation.shape[0] != w.shape[1] or mask.shape[0] != w.shape[0]:
            raise ValueError(f"the policy was trained on observations of size {w.shape[1]} and "
                             f"{w.shape[0]} actions, got {observation.shape[0]} and {mask.shape[0]}: "
                             "another game or player count")
        logits = np.where(mask > 0, w @ observation + b, -np.inf)
        return int(np.argmax(logits))
    return policy


def load(path: str) -> Callable[[np.ndarray, np.ndarray], int]:
    """The argmax policy saved in ``path`` (a ``.npz`` written by :func:`train` and ``np.savez``)."""
    with np.load(path) as data:
        return greedy_policy(data["W"], data["b"])


def evaluate(policy: Callable[[np.ndarray, np.ndarray], int], game: str = "agram", players: int = 2,
             matches: int = 1000, seed: int = 1, opponents: str = "random") -> np.ndarray:
    """The policy's reward in each of ``matches`` matches (seats drawn per match), as an array."""
    from bots.rl.gym_env import CardArenaGymEnv

    env = CardArenaGymEnv(game, players, opponents=opponents)
    out = np.zeros(matches)
    obs, _ = env.reset(seed=seed)
    for m in range(matches):
        if m:
            obs, _ = env.reset()
        done = False
        reward = 0.0
        while not done:
            obs, reward, done, _, _ = env.step(policy(obs["observation"], obs["action_mask"]))
        out[m] = reward
    return out


def main(argv: list[str] | None = None) -> int:
    """Train, save, and report the mean reward against the opponents on fresh deals."""
    ap = argparse.ArgumentParser(description="REINFORCE, linear softmax policy (numpy only)")
    ap.add_argument("--game", default="agram")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--episodes", type=int, default=20000)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opponents", default="random", help="random | greedy | ismcts:N")
    ap.add_argument("--eval", type=int, default=2000, help="evaluation matches after training")
    ap.add_argument("--out", default="policy.npz")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    params = train(args.game, args.players, args.episodes, args.lr, args.seed, args.opponents,
                   log_every=max(1, args.episodes // 10))
    np.savez(args.out, W=params["W"], b=params["b"], meta=params["meta"])
    t1 = time.perf_counter()
    r = evaluate(greedy_policy(params["W"], params["b"]), args.game, args.players, args.eval,
                 seed=args.seed + 1, opponents=args.opponents)
    print(f"trained {args.episodes} episodes in {t1 - t0:.0f} s; saved {args.out}; mean reward against "
          f"{args.opponents} over {args.eval} new matches: {r.mean():.3f} ± {1.96 * r.std() / len(r) ** 0.5:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
