"""The misbehaving-bot zoo: one tiny real bot per mode (``python misbehave.py MODE``).

Each mode speaks protocol v1 with raw stdin/stdout (no SDK) and misbehaves in one way;
``tests/arena/test_zoo.py`` runs each as a real subprocess and checks the arena's reaction.
"""

import json
import os
import signal
import sys
import time

MODE = sys.argv[1]
PROCESS_TOKEN = os.urandom(8).hex()
ARG = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
out = sys.stdout.buffer


def send(obj, raw=b""):
    out.write(raw + json.dumps(obj).encode() + b"\n")
    out.flush()


def ready():
    send({"type": "ready", "protocol": 1, "name": f"zoo-{MODE}", "version": "0"})


def grandchild():
    # a grandchild in its own session that ignores SIGTERM and outlives its parent
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open(os.path.join(os.environ["HOME"], "grandchild.pid"), "w") as f:
                f.write(str(os.getpid()))
            os.closerange(0, 3)
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()


if MODE == "children":  # children that die on SIGTERM and are never reaped (zombies after it)
    import subprocess
    KIDS = [subprocess.Popen(["sleep", "300"]) for _ in range(int(ARG or 3))]
if MODE == "crash_start":
    sys.exit(3)
if MODE == "usage_error":  # what argparse does with a bad flag: usage, then the error, exit 2
    print("usage: misbehave.py [-h] [--opponent-model {tree,rollout}] MODE", file=sys.stderr)
    print("misbehave.py: error: argument --opponent-model: invalid choice: 'rollouts' "
          "(choose from 'tree', 'rollout')", file=sys.stderr, flush=True)
    sys.exit(2)
if MODE == "ignore_term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if MODE == "term_message":
    def _goodbye(signum, frame):
        sys.stderr.write("terminated: goodbye from the bot\n")
        sys.stderr.flush()
        os._exit(0)
    signal.signal(signal.SIGTERM, _goodbye)

acts = 0
for line in sys.stdin.buffer:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "start":
        started = time.monotonic()
        token = msg["match"]
        if MODE == "no_ready":
            continue
        if MODE == "fork_grandchild":
            grandchild()
        if MODE == "end_log":
            print(f"START {token}", file=sys.stderr, flush=True)  # before ready: this match's
        if MODE == "file_memory":
            path = os.path.join(os.environ["HOME"], "seen.txt")
            print("FOUND" if os.path.exists(path) else "NOFILE", file=sys.stderr, flush=True)
        ready()
        continue
    if kind == "end":
        if MODE in ("end_log", "end_log_unmarked"):  # an on_end log line, ARG s after the end
            time.sleep(ARG)
            print(f"END {token}", file=sys.stderr, flush=True)
            if MODE == "end_log":  # then the end-of-match mark, as the SDK writes it
                sys.stderr.buffer.write(b"\x1ecardarena: end of match\x1e\n")
                sys.stderr.flush()
        if MODE == "crash_after_end":  # dies between two matches of a batch, slowly
            print("crashing after end: cannot write my log", file=sys.stderr, flush=True)
            time.sleep(ARG or 0.5)
            sys.exit(5)
        continue
    acts += 1
    legal = msg["legal"]
    rid = msg["id"]
    reply = {"type": "action", "id": rid, "action": legal[0]}
    if MODE == "crash_mid" and acts == 2:
        print("about to crash", file=sys.stderr, flush=True)
        sys.exit(int(ARG) or 1)
    elif MODE == "segv_mid" and acts == 2:
        print("about to segfault", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(30)
    elif MODE == "slow":
        time.sleep(ARG or 30)
    elif MODE == "waller":  # spends the match's wall budget (ARG s) to leave 0.25 s for the opponent
        left = ARG - (time.monotonic() - started)
        if left > 0.5:
            time.sleep(left - 0.25)
    elif MODE == "late_then_ok" and acts == 1:
        time.sleep(ARG)
    elif MODE == "late_at_second" and acts == 2:  # one answered decision, then a timeout
        time.sleep(ARG)
    elif MODE == "partial":
        data = json.dumps(reply).encode() + b"\n"
        out.write(data[:10])
        out.flush()
        time.sleep(0.05)
        out.write(data[10:])
        out.flush()
        continue
    elif MODE == "garbage":
        out.write(b"hello world\n")
        out.flush()
    elif MODE == "prefix":
        send(reply, raw=b"DEBUG ")
        continue
    elif MODE == "huge_line":
        chunk = b"x" * 65536
        for _ in range(160):  # 10 MiB without a newline
            out.write(chunk)
        out.flush()
        time.sleep(30)
    elif MODE == "flood":
        for _ in range(100000):
            out.write(b'{"type":"noise"}\n')
        out.flush()
        time.sleep(30)
    elif MODE == "stderr_mb":
        sys.stderr.buffer.write(b"e" * (4 * 2**20))
        sys.stderr.buffer.flush()
    elif MODE == "memory":
        hog = []
        while True:
            hog.append(bytearray(16 * 2**20))
            time.sleep(0.01)
    elif MODE == "illegal":
        reply["action"] = "play 999"
    elif MODE == "stale":
        send({"type": "action", "id": rid - 1000, "action": legal[-1]})
    elif MODE == "wrong_id":
        reply["id"] = rid + 1000
    elif MODE == "file_memory":
        with open(os.path.join(os.environ["HOME"], "seen.txt"), "w") as f:
            f.write(json.dumps(msg["observation"]))
    elif MODE == "info":
        # a process identity: in a sandbox (own pid namespace) every process may be pid 2
        reply["info"] = {"acts": acts, "pid": f"{os.getpid()}:{PROCESS_TOKEN}"}
    elif MODE == "big_info":
        reply["info"] = {"pad": "x" * 5000}
    elif MODE == "deep_info":  # an info nested ARG levels deep (orjson writes at most 254)
        reply["info"] = deep = {}
        for _ in range(int(ARG) - 1):
            deep["a"] = deep = {}
    elif MODE == "env":
        reply["info"] = {"env": dict(os.environ), "cwd": os.getcwd()}
    elif MODE in ("end_log", "end_log_unmarked"):
        print(f"ACT {token}", file=sys.stderr, flush=True)
    send(reply)

if MODE == "exit_code_on_eof":
    sys.exit(7)
