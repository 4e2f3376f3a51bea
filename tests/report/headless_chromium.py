"""Render a page in headless Chromium through the DevTools protocol over --remote-debugging-pipe
(JSON messages ending in a NUL byte on file descriptors 3 and 4; no websocket, no extra package).
Returns a full-page PNG screenshot and every console message, uncaught exception, error log entry
and failed resource load the page produced."""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class _Pipe:
    def __init__(self, exe, profile):
        to_r, to_w = os.pipe()       # we write commands -> Chromium reads fd 3
        from_r, from_w = os.pipe()   # Chromium writes fd 4 -> we read

        def child_fds():  # the protocol's fixed descriptors: 3 = commands in, 4 = answers out
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}"], close_fds=False,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_fds)
        os.close(to_r)
        os.close(from_w)
        self.w, self.r, self.buf, self.next_id, self.events = to_w, from_r, b"", 0, []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, params=None, session=None, timeout=60):
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for k, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(k)
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method:
                return msg
            self.events.append(msg)

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)


def problems(events):
    """Human-readable list of what a clean page must not produce."""
    out = []
    for m in events:
        p, kind = m.get("params", {}), m.get("method")
        if kind == "Runtime.consoleAPICalled":
            out.append(f"console.{p.get('type')}: " + " ".join(str(a.get('value', a.get('description'))) for a in p.get("args", [])))
        elif kind == "Runtime.exceptionThrown":
            out.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
        elif kind == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            e = p["entry"]
            out.append(f"log {e.get('level')} ({e.get('source')}): {e.get('text')}")
        elif kind == "Network.loadingFailed":
            out.append(f"failed load: {p.get('errorText')}")
    return out


def render(exe, url, png_path, width=1000):
    """Load url, return the list of problems; write a full-page screenshot to png_path."""
    profile = tempfile.mkdtemp(prefix="nep_report_chromium_")
    pipe = _Pipe(exe, profile)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            pipe.call(f"{domain}.enable", session=s)
        pipe.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": False}, session=s)
        pipe.call("Page.navigate", {"url": url}, session=s)
        pipe.wait_event("Page.loadEventFired")
        height = pipe.call("Runtime.evaluate", {"expression": "document.documentElement.scrollHeight",
                                                "returnByValue": True}, session=s)["result"]["value"]
        shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                    "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
                         session=s)
        with open(png_path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        pipe.call("Runtime.evaluate", {"expression": "1"}, session=s)  # drain events queued before this point
        return problems(pipe.events)
    finally:
        pipe.close()
        shutil.rmtree(profile, ignore_errors=True)
