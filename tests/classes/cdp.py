"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websocket
library): drives a real headless Chromium — navigate, press keys, click, read the DOM,
take screenshots."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import time
from typing import Any

from tests.conftest import require


def chromium() -> str:
    """The Chromium executable (skipped via ``require`` when absent; a failure under CI)."""
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    require(exe is not None, "chromium is not installed (Debian: apt-get install chromium)")
    return exe


class Browser:
    """One headless Chromium with one page, spoken to over fds 3 (to it) and 4 (from it)."""

    def __init__(self, profile: str, width: int = 1200, height: int = 900) -> None:
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        os.set_inheritable(to_r, True)
        os.set_inheritable(from_w, True)

        def fds() -> None:  # the child's fd 3 reads our commands, fd 4 carries its answers
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--hide-scrollbars", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method: str, session: bool = False, timeout: float = 60.0, **params: Any) -> dict:
        """Send one command and return its result (events in between are dropped)."""
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buf += chunk
        raise TimeoutError(method)

    def open(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)
        for _ in range(100):
            if self.js("document.readyState") == "complete" and self.js("!!document.getElementById('stepinfo')"):
                return
            time.sleep(0.1)
        raise TimeoutError(url)

    def js(self, expr: str) -> Any:
        res = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True)
        return res["result"].get("value")

    def key(self, key: str, code: int) -> None:
        """Press and release a key (``ArrowRight`` = 39, ``ArrowLeft`` = 37)."""
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", session=True, type=kind, key=key, code=key,
                      windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)

    def click(self, element_id: str) -> None:
        """A real mouse click at the centre of the element."""
        box = self.js(f"(() => {{const r=document.getElementById('{element_id}').getBoundingClientRect();"
                      "return [r.x + r.width / 2, r.y + r.height / 2];})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1],
                      button="left", clickCount=1)

    def screenshot(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, format="png")["data"])

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_w)
        os.close(self._from_r)
