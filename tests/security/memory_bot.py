"""A bot (protocol v1) that holds memory where no process's RSS shows it (issue 15, finding 4).

``python memory_bot.py MODE MB [KEY]``; at its first ``act``:

* ``devfill``: writes MB MiB to ``/dev/cardarena-fill`` (bwrap's ``/dev`` was an unsized
  tmpfs) and logs ``MEM LEAK devfill <MiB written>`` or ``MEM BLOCKED devfill <errno name>``;
  it sleeps 5 s holding the file, then removes it;
* ``sysv``: fills System V shared memory segments of 100 MiB (keys KEY, KEY+1, …) up to MB MiB,
  detaches each (not resident in any process), logs ``MEM HELD sysv <MiB>`` and sleeps 5 s;
* ``fork``: forks a child that fills MB MiB of its own memory, logs ``MEM HELD fork <MiB>`` and
  holds it for 30 s, while this process replies at once (the checks must not wait for a slow reply);
* ``slow``: holds nothing and replies after MB milliseconds, every time.

Then it replies with the first legal action, match after match, until its stdin ends.
"""

import ctypes
import errno
import json
import os
import sys
import time

mode, mb = sys.argv[1], int(sys.argv[2])
key = int(sys.argv[3]) if len(sys.argv) > 3 else 0
FILL = "/dev/cardarena-fill"
SEG = 100 * 2**20


def log(text):
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def devfill():
    block, done = b"x" * 2**20, 0
    try:
        with open(FILL, "wb") as f:
            for _ in range(mb):
                f.write(block)
                f.flush()
                done += 1
    except OSError as e:
        log(f"MEM BLOCKED devfill {errno.errorcode.get(e.errno, e.errno)} after {done}")
        return
    log(f"MEM LEAK devfill {done}")
    time.sleep(5)
    os.unlink(FILL)


def sysv():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmdt.argtypes = [ctypes.c_void_p]
    held = 0
    for i in range(mb * 2**20 // SEG):
        sid = libc.shmget(key + i, SEG, 0o1600)  # IPC_CREAT | 0600
        if sid < 0:
            log(f"MEM BLOCKED sysv shmget {errno.errorcode.get(ctypes.get_errno())}")
            return
        addr = libc.shmat(sid, None, 0)
        ctypes.memset(addr, 1, SEG)
        libc.shmdt(addr)
        held += SEG // 2**20
    log(f"MEM HELD sysv {held}")
    time.sleep(5)


def fork():
    if os.fork() == 0:
        hold = [b"\x01" * 2**20 for _ in range(mb)]
        log(f"MEM HELD fork {len(hold)}")
        time.sleep(30)
        os._exit(0)


acts = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "start":
        sys.stdout.write(json.dumps({"type": "ready", "protocol": 1, "name": mode, "version": "1"}) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "act":
        acts += 1
        if mode == "slow":
            time.sleep(mb / 1000)
        elif acts == 1:
            {"devfill": devfill, "sysv": sysv, "fork": fork}[mode]()
        sys.stdout.write(json.dumps({"type": "action", "id": msg["id"], "action": msg["legal"][0]}) + "\n")
        sys.stdout.flush()
