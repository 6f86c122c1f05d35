"""Reinforcement-learning bridge (``pip install -e ".[rl]"``): the games as PettingZoo and Gymnasium envs.

* :mod:`bots.rl.actions`: the stable ``Discrete(N)`` action list of every game and its masks;
* :mod:`bots.rl.encoding`, :mod:`bots.rl.layouts`: fixed-size encodings of a seat's observation;
* :mod:`bots.rl.env`: the PettingZoo AEC env (``env("agram", players=2)``);
* :mod:`bots.rl.gym_env`: a Gymnasium single-agent env, other seats played by reference bots;
* :mod:`bots.rl.opponents`: those reference bots in-process (random, greedy, ISMCTS);
* ``bots/policy_bot.py``: a trained policy entered as an ordinary protocol bot.

``actions``, ``encoding`` and ``layouts`` need only numpy (the policy bot uses them); the envs
need pettingzoo / gymnasium. See docs/rl.md.
"""
