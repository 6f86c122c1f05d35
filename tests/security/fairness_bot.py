"""A protocol-v1 bot for the fairness tests (``test_fairness_*.py``), one behaviour per run.

``python fairness_bot.py MODE [ARG...]``; every mode answers ``start`` with ``ready``:

* ``prober``: replies at once with the highest legal card; logs ``T <monotonic> <type>`` on
  stderr for every message it receives and ``T <monotonic> reply`` for each reply (taken just before it).
* ``thinker LO HI``: sleeps a uniform LO..HI ms (RNG seeded by ``start``'s seed) per ``act``,
  plays a random legal action.
* ``busy MS``: spins the CPU for MS ms of wall time per ``act`` and logs
  ``THINK <t0> <t1> <cpu_s>`` (monotonic start, end, its own CPU seconds in the window).
* ``starve N``: at its first ``act`` forks N children that spin forever, then replies at once.
* ``slowstart MS``: spins the CPU for MS ms of wall time before each ``ready`` and logs
  ``START <t0> <t1>`` (monotonic), then plays the first legal action at once.
* ``memfd MB [map]``: at its first ``act`` fills a memfd with MB MiB through ``write`` (never
  mapped, so not resident in any process); with ``map`` it maps the file and closes the
  descriptor (the mapping keeps it). Then it sleeps 5 s and replies.
* ``close_stdout``: at its first ``act`` closes its stdout and sleeps 30 s.

It serves match after match until its stdin ends ("first act" is its process's first).
"""

import json
import mmap
import os
import random
import sys
import time

mode, args = sys.argv[1], sys.argv[2:]
rng = random.Random(0)
acts = 0
keep = []


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def reply(msg, action):
    sys.stdout.write(json.dumps({"type": "action", "id": msg["id"], "action": action}) + "\n")
    sys.stdout.flush()


def first_act():
    if mode == "starve":
        for _ in range(int(args[0])):
            if os.fork() == 0:
                while True:
                    pass
    elif mode == "memfd":
        fd = os.memfd_create("hoard")
        block = b"x" * 2**20
        for _ in range(int(args[0])):
            os.write(fd, block)
        if args[1:] == ["map"]:
            keep.append(mmap.mmap(fd, int(args[0]) * 2**20))
            os.close(fd)
        else:
            keep.append(fd)
        log("memfd filled")
        time.sleep(5)
    elif mode == "close_stdout":
        os.close(1)
        time.sleep(30)


for line in sys.stdin:
    msg = json.loads(line)
    if mode == "prober":
        log(f"T {time.monotonic():.6f} {msg['type']}")
    if msg["type"] == "start":
        rng = random.Random(msg["seed"])
        if mode == "slowstart":
            t0 = time.monotonic()
            while time.monotonic() < t0 + float(args[0]) / 1000.0:
                pass
            log(f"START {t0:.6f} {time.monotonic():.6f}")
        sys.stdout.write(json.dumps({"type": "ready", "protocol": 1, "name": mode, "version": "1"}) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "act":
        acts += 1
        if acts == 1:
            first_act()
        legal = msg["legal"]
        if mode == "thinker":
            time.sleep(rng.uniform(float(args[0]), float(args[1])) / 1000.0)
            reply(msg, rng.choice(legal))
        elif mode == "busy":
            t0, c0 = time.monotonic(), time.thread_time()
            while time.monotonic() < t0 + float(args[0]) / 1000.0:
                pass
            log(f"THINK {t0:.6f} {time.monotonic():.6f} {time.thread_time() - c0:.6f}")
            reply(msg, legal[0])
        elif mode == "prober":
            t = time.monotonic()  # before the reply: the arena may stop this process
            reply(msg, max(legal, key=lambda a: int(a.split()[1])))  # as soon as it is read
            log(f"T {t:.6f} reply")
        else:
            reply(msg, legal[0])
    # "end": nothing to do; the next match's "start" or the end of stdin follows
