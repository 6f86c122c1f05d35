"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe`` for the report tests:
one headless Chromium page that keeps the script errors it reports (``Runtime.exceptionThrown``,
``console.error``, failed loads), evaluates expressions, clicks, types and takes screenshots."""

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
    return str(exe)


class Page:
    """A headless Chromium showing one page; ``errors`` collects what the page reported as errors."""

    def __init__(self, profile: str, width: int = 1200, height: int = 900) -> None:
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        # the child reads commands on fd 3 and answers on fd 4
        for fd in (to_r, from_w):
            os.set_inheritable(fd, True)

        def fds() -> None:  # move them above 10 first, so dup2 cannot overwrite one with the other
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

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
        self.errors: list[str] = []
        self.requests: list[str] = []
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _event(self, msg: dict[str, Any]) -> None:
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append(f"{d.get('text')} {d.get('exception', {}).get('description', '')}")
        elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append("log: " + p["entry"]["text"])
        elif m == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])

    def call(self, method: str, session: bool = False, timeout: float = 120.0, **params: Any) -> dict:
        """Send one command and return its result (events meanwhile go to :meth:`_event`)."""
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
                self._event(reply)
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buf += chunk
        raise TimeoutError(method)

    def open(self, url: str, ready: str = "document.body && document.body.dataset.ready === '1'",
             timeout: float = 60.0) -> None:
        """Navigate and wait until ``ready`` (a JS expression) is true."""
        self.call("Page.navigate", session=True, url=url)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.js(f"document.readyState === 'complete' && !!({ready})"):
                return
            time.sleep(0.1)
        raise TimeoutError(f"{url}: not ready; errors: {self.errors}")

    def js(self, expr: str) -> Any:
        """The value of a JS expression (JSON-able)."""
        res = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expr[:80]}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def type(self, selector: str, text: str) -> None:
        """Focus ``selector`` and type ``text`` as key events (each fires ``input``)."""
        self.js(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", session=True, text=text)

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching ``selector``."""
        box = self.js(f"(() => {{const e=document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
                      "const r=e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left",
                      clickCount=1)

    def screenshot(self, full: bool = True) -> bytes:
        """PNG of the page (the whole height when ``full``)."""
        params: dict[str, Any] = {"format": "png"}
        if full:
            h = self.js("document.documentElement.scrollHeight")
            w = self.js("document.documentElement.scrollWidth")
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": w, "height": h, "scale": 1})
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"])

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
