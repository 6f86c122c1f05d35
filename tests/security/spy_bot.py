"""A spy bot: a real protocol-v1 bot that, at its first ``act``, tries one leak and says on
stderr what it got (``SPY LEAK <leak> <evidence>`` or ``SPY BLOCKED <leak> <reason>``), then
plays the first legal action like any bot.

``python spy_bot.py LEAK [ARG]``; the leaks (issue 15, docs/security.md):

* ``proc_scan``: the opponent's process (its command line names ``random_bot.py``) is visible;
* ``environ MARKER``: another process's environment holds ``CARDARENA_SPY_MARKER=MARKER``;
* ``read PATH``: a file of the results folder is readable and holds ``SPY-SECRET``;
* ``mem_arena PID`` / ``mem_opponent``: a page of ``/proc/<pid>/mem`` of the arena / the opponent;
* ``cmdline HEX``: some visible process's command line (e.g. a parent's) contains the text
  HEX encodes (so that it is not in the command line of the spy's own sandbox);
* ``listdir PATH``: a folder (``/tmp/ray``) can be listed and is not empty;
* ``tcp HOST:PORT``: a TCP connection to HOST:PORT succeeds (the spy sends ``spy``);
* ``write PATH``: a file can be created at PATH (outside the working folder); ``chmod_write
  PATH``: the same after a ``chmod 777`` of its folder;
* ``caps``: the spy holds capabilities (as root it could undo the sandbox's mounts);
* ``nested_userns``: it can make a user namespace of its own (and hold every capability there);
* ``daemon MARKER``: double fork, ``setsid``, cleared environment, ``exec`` a sleeper whose
  command line holds MARKER (the test looks for it after the match);
* ``memory MB``: an escaped (double-forked, ``setsid``) child holds MB MiB; the spy waits 3 s
  and reports the child's resident size;
* ``disk MB``: write MB MiB into the working folder;
* ``files N``: make N empty files in ``/tmp`` (inodes: kernel memory outside both size caps).

The arguments give the spy what a real spy would find out by itself (paths, pids, ports),
so each test checks one barrier at a time.
"""

import json
import os
import socket
import sys
import time

LEAK = sys.argv[1]
ARG = sys.argv[2] if len(sys.argv) > 2 else ""
out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def report(ok, evidence):
    print(f"SPY {'LEAK' if ok else 'BLOCKED'} {LEAK} {evidence}".replace("\n", " ")[:500],
          file=sys.stderr, flush=True)


def pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]


def read(path, n=-1):
    with open(path, "rb") as f:
        return f.read(n)


def cmdline(pid):
    try:
        return read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def opponent():
    for pid in pids():
        if "random_bot.py" in cmdline(pid):
            return pid
    return None


def read_mem(pid):
    """The first 64 bytes of the first readable mapping of ``pid``."""
    for line in read(f"/proc/{pid}/maps").decode().splitlines():
        addr, perms = line.split()[:2]
        if perms.startswith("r"):
            start = int(addr.split("-")[0], 16)
            with open(f"/proc/{pid}/mem", "rb") as f:
                f.seek(start)
                return f.read(64)
    raise OSError("no readable mapping")


def try_mem(pid):
    if pid is None:
        return report(False, "no target process visible")
    try:
        data = read_mem(int(pid))
        report(bool(data), f"read {len(data)} bytes of /proc/{pid}/mem")
    except (OSError, ValueError) as e:
        report(False, f"/proc/{pid}/mem: {e}")


def escaped(child_main):
    """Run ``child_main(write_fd)`` in a double-forked, setsid grandchild; return the read end."""
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(r)
            try:
                child_main(w)
            finally:
                os._exit(0)
        os._exit(0)
    os.wait()
    os.close(w)
    return r


def try_memory(mb):
    def hog(w):
        block = bytearray(mb * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        time.sleep(60)

    r = escaped(hog)
    pid = int(os.read(r, 32) or b"0")
    time.sleep(3.0)  # the arena polls memory every 100 ms and rescans processes every second
    try:
        status = read(f"/proc/{pid}/status").decode()
        rss = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS:")) // 1024
        report(rss >= mb, f"escaped child {pid} holds {rss} MiB")
    except (OSError, StopIteration, ValueError) as e:
        report(False, f"escaped child: {e}")


def try_daemon(marker):
    def daemon(w):
        os.close(w)
        for fd in range(3):
            os.close(fd)
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", marker], {})

    escaped(daemon)
    report(True, "daemon started")


def try_disk(mb):
    chunk = b"x" * 2**20
    written = 0
    try:
        with open(os.path.join(os.getcwd(), "fill.bin"), "wb") as f:
            for _ in range(mb):
                f.write(chunk)
                f.flush()
                written += 1
            os.fsync(f.fileno())
        report(True, f"wrote {written} MiB into {os.getcwd()}")
    except OSError as e:
        report(False, f"stopped after {written} MiB: {e}")
    finally:
        try:
            os.unlink(os.path.join(os.getcwd(), "fill.bin"))
        except OSError:
            pass


def try_leak():
    if LEAK == "proc_scan":
        pid = opponent()
        report(pid is not None, f"opponent pid {pid}; {len(pids()) + 1} processes visible")
    elif LEAK == "environ":
        hits = []
        for pid in pids():
            try:
                if f"CARDARENA_SPY_MARKER={ARG}".encode() in read(f"/proc/{pid}/environ"):
                    hits.append(pid)
            except OSError:
                pass
        report(bool(hits), f"marker in the environment of {hits}")
    elif LEAK == "readhex":
        path = bytes.fromhex(ARG).decode()
        try:
            data = read(path)
            report(b"SPY-SECRET" in data, f"read {len(data)} bytes of {path}")
        except OSError as e:
            report(False, f"{path}: {e}")
    elif LEAK == "read":
        try:
            data = read(ARG)
            report(b"SPY-SECRET" in data, f"read {len(data)} bytes of {ARG}")
        except OSError as e:
            report(False, f"{ARG}: {e}")
    elif LEAK == "mem_arena":
        try_mem(ARG)
    elif LEAK == "mem_opponent":
        try_mem(opponent())
    elif LEAK == "cmdline":
        text = bytes.fromhex(ARG).decode()  # hex: the text itself must not be in the spy's own argv
        hits = [pid for pid in pids() + [os.getppid()] if text in cmdline(pid)]
        report(bool(hits), f"{text!r} in the command line of {hits}")
    elif LEAK == "fds":  # descriptors beyond stdin/stdout/stderr (the listing's own excluded)
        fd_dir = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
        extra = {}
        for name in os.listdir(fd_dir):
            if int(name) > 2 and int(name) != fd_dir:
                try:
                    extra[name] = os.readlink(f"/proc/self/fd/{name}")
                except OSError:
                    pass
        os.close(fd_dir)
        report(bool(extra), f"open descriptors {extra}")
    elif LEAK == "listdir":
        try:
            names = os.listdir(ARG)
            report(bool(names), f"{ARG}: {names[:5]}")
        except OSError as e:
            report(False, f"{ARG}: {e}")
    elif LEAK == "tcp":
        host, port = ARG.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=2) as s:
                s.sendall(b"spy")
            report(True, f"connected to {ARG}")
        except OSError as e:
            report(False, f"{ARG}: {e}")
    elif LEAK == "unixsock":  # connect to a pathname unix socket (ARG: its path, hex)
        path = bytes.fromhex(ARG).decode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(2)
                s.connect(path)
                s.sendall(b"spy")
            report(True, f"connected to {path}")
        except OSError as e:
            report(False, f"{path}: {e}")
    elif LEAK == "chmod_write":  # make the folder of ARG writable first (a root bot owns an empty tmpfs)
        try:
            os.chmod(os.path.dirname(ARG), 0o777)
            with open(ARG, "w") as f:
                f.write("spy was here")
            report(True, f"wrote {ARG}")
        except OSError as e:
            report(False, f"{ARG}: {e}")
    elif LEAK == "write":
        try:
            with open(ARG, "w") as f:
                f.write("spy was here")
            report(True, f"wrote {ARG}")
        except OSError as e:
            report(False, f"{ARG}: {e}")
    elif LEAK == "caps":
        eff = next(x for x in read("/proc/self/status").decode().splitlines() if x.startswith("CapEff:"))
        report(int(eff.split()[1], 16) != 0, eff)
    elif LEAK == "files":  # ARG empty files in /tmp (each an inode: kernel memory), then 3 s to be seen
        made = 0
        try:
            for i in range(int(ARG)):
                open(f"/tmp/spy-file-{i}", "w").close()
                made += 1
        except OSError as e:
            report(False, f"{made} files, then {e}")
        else:
            time.sleep(3)
            report(True, f"{made} files in /tmp and still running")
    elif LEAK == "nested_userns":  # a user namespace of its own: every capability inside it
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
            eff = next(x for x in read("/proc/self/status").decode().splitlines() if x.startswith("CapEff:"))
            report(int(eff.split()[1], 16) != 0, f"unshare(CLONE_NEWUSER) worked; {eff}")
        else:
            report(False, f"unshare(CLONE_NEWUSER): {os.strerror(ctypes.get_errno())}")
    elif LEAK == "daemon":
        try_daemon(ARG)
    elif LEAK == "memory":
        try_memory(int(ARG))
    elif LEAK == "disk":
        try_disk(int(ARG))
    elif LEAK == "keyring":  # ARG "put": store a key in the user keyring; "get": look it up
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        name = b"cardarena-spy-key"
        if ARG == "put":
            r = libc.syscall(248, b"user", name, b"hands", 5, -4)  # add_key(..., KEY_SPEC_USER_KEYRING)
            report(r > 0, f"add_key -> {r} errno {ctypes.get_errno()}")
        else:
            r = libc.syscall(250, 10, -4, b"user", name, 0)  # keyctl(KEYCTL_SEARCH, user keyring)
            report(r > 0, f"search -> {r} errno {ctypes.get_errno()}")
    elif LEAK == "swaplink":  # the working folder swapped for a link to a host folder
        home = os.environ["HOME"]
        try:
            os.chdir("/")
            os.rename(home, home + ".old")
            os.symlink(ARG, home)
            report(True, f"{home} -> {ARG}")
        except OSError as e:
            report(False, f"{home}: {e}")
    else:
        report(False, f"unknown leak {LEAK}")


tried = False
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if msg["type"] == "start":
        send({"type": "ready", "protocol": 1, "name": f"spy-{LEAK}", "version": "0"})
    elif msg["type"] == "act":
        if not tried:
            tried = True
            try_leak()
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
