#!/usr/bin/env python3
"""browser.py - drive headless Chromium over the DevTools protocol (a pipe).

A person's session with a kp-flame SVG, scripted: load it from a file://
URL, take a screenshot, click a frame to zoom, press Search and type a
name into the prompt, read what the page shows.  Only the standard
library: Chromium's --remote-debugging-pipe reads commands on fd 3 and
writes replies and events on fd 4, each a JSON text ended by a NUL.

	browser.py SVG OUTDIR CLICK SEARCH

CLICK is the name of a frame to click; SEARCH the text typed into the
search prompt.  Writes OUTDIR/{loaded,zoomed,searched}.png and prints
one JSON object with what it observed.  Exit 77 when Chromium cannot
start, 1 on any other failure.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT = 30


class Browser:
    def __init__(self, exe, profile):
        cmd_r, cmd_w = os.pipe()  # we write commands, chromium reads fd 3
        ev_r, ev_w = os.pipe()  # chromium writes fd 4, we read

        def child_fds():
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync",
             "--disable-extensions", "--mute-audio",
             "--user-data-dir=" + profile,
             "--remote-debugging-pipe", "about:blank"],
            # fds 3 and 4 are made by dup2 in the child: keep them open
            pass_fds=(3, 4, cmd_r, ev_w), preexec_fn=child_fds,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(ev_w)
        self.w = os.fdopen(cmd_w, "wb", buffering=0)
        self.r = os.fdopen(ev_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read_msg(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = self.r.read(65536)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def post(self, method, params=None, session=True):
        """Send a command; return its id without waiting for the reply."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        if os.environ.get("KP_DEBUG"):
            print(">", method, file=sys.stderr)
        self.w.write(json.dumps(msg).encode() + b"\0")
        return self.next_id

    def reply(self, mid):
        deadline = time.time() + TIMEOUT
        for i, m in enumerate(self.events):
            if m.get("id") == mid:
                self.events.pop(i)
                break
        else:
            while True:
                m = self._read_msg(deadline)
                if m.get("id") == mid:
                    break
                self.events.append(m)
        if "error" in m:
            raise RuntimeError("command %d: %s" % (mid, m["error"]))
        return m.get("result", {})

    def send(self, method, params=None, session=True):
        return self.reply(self.post(method, params, session))

    def wait_event(self, method, timeout=TIMEOUT):
        deadline = time.time() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_msg(deadline))

    def eval(self, expr):
        r = self.send("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def screenshot(self, path):
        r = self.send("Page.captureScreenshot", {"format": "png"})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def click(self, x, y):
        for t in ("mouseMoved", "mousePressed", "mouseReleased"):
            p = {"type": t, "x": x, "y": y}
            if t != "mouseMoved":
                p.update(button="left", clickCount=1)
            self.send("Input.dispatchMouseEvent", p)

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# the centre of the first frame whose name (first line of its title) is n
CENTRE = """(function (n) {
  var fs = document.getElementById('frames').children;
  for (var i = 0; i < fs.length; i++) {
    if (fname(fs[i]) !== n) continue;
    var b = fs[i].getElementsByTagName('rect')[0].getBoundingClientRect();
    return [b.left + b.width / 2, b.top + b.height / 2, b.width];
  }
  return null;
})(%s)"""

STATE = """(function () {
  var fs = document.getElementById('frames').children, shown = 0, names = [];
  for (var i = 0; i < fs.length; i++) {
    if (fs[i].classList.contains('h')) continue;
    shown++;
    names.push(fname(fs[i]));
  }
  return {shown: shown, total: fs.length, names: names,
    zoom_visible: !document.getElementById('unzoom').classList.contains('h'),
    matched: document.getElementById('matched').textContent,
    search_label: document.getElementById('search').textContent,
    highlighted: document.querySelectorAll('#frames rect[data-fill]').length,
    details: document.getElementById('details').textContent};
})()"""


def main():
    svg, outdir, click_name, term = sys.argv[1:5]
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skipped: no chromium")
        return 77
    profile = tempfile.mkdtemp(prefix="kp-flame-chromium-")
    out = {}
    b = None
    try:
        try:
            b = Browser(exe, profile)
            targets = b.send("Target.getTargets", session=False)
        except (OSError, EOFError, TimeoutError) as e:
            print("skipped: chromium cannot start: %s" % e)
            return 77
        page = [t for t in targets["targetInfos"] if t["type"] == "page"][0]
        b.session = b.send("Target.attachToTarget",
                           {"targetId": page["targetId"], "flatten": True},
                           session=False)["sessionId"]
        b.send("Page.enable")
        b.send("Runtime.enable")
        w = 1200
        h = 800
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": w, "height": h, "deviceScaleFactor": 1,
                "mobile": False})
        b.send("Page.navigate", {"url": "file://" + os.path.abspath(svg)})
        b.wait_event("Page.loadEventFired")
        out["title"] = b.eval("document.getElementById('title').textContent")
        out["loaded"] = b.eval(STATE)
        b.screenshot(os.path.join(outdir, "loaded.png"))

        # hover, then click a frame: the details line, then the zoom
        c = b.eval(CENTRE % json.dumps(click_name))
        if c is None:
            raise RuntimeError("no frame named %r" % click_name)
        out["clicked_width_before"] = c[2]
        b.send("Input.dispatchMouseEvent",
               {"type": "mouseMoved", "x": c[0], "y": c[1]})
        out["hover_details"] = b.eval(
            "document.getElementById('details').textContent")
        b.click(c[0], c[1])
        c2 = b.eval(CENTRE % json.dumps(click_name))
        out["clicked_width_after"] = c2[2] if c2 else None
        out["zoomed"] = b.eval(STATE)
        b.screenshot(os.path.join(outdir, "zoomed.png"))

        # Search: the button opens a prompt; type the term into it
        s = b.eval("(function () { var r = document.getElementById('search')"
                   ".getBoundingClientRect();"
                   " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        # the release opens a prompt: it answers only once that is handled
        b.send("Input.dispatchMouseEvent",
               {"type": "mouseMoved", "x": s[0], "y": s[1]})
        b.send("Input.dispatchMouseEvent",
               {"type": "mousePressed", "x": s[0], "y": s[1],
                "button": "left", "clickCount": 1})
        mid = b.post("Input.dispatchMouseEvent",
                     {"type": "mouseReleased", "x": s[0], "y": s[1],
                      "button": "left", "clickCount": 1})
        d = b.wait_event("Page.javascriptDialogOpening", 10)
        out["dialog_type"] = d["params"]["type"]
        b.send("Page.handleJavaScriptDialog",
               {"accept": True, "promptText": term})
        b.reply(mid)
        out["searched"] = b.eval(STATE)
        b.screenshot(os.path.join(outdir, "searched.png"))

        # Reset Zoom and Reset Search, as buttons
        z = b.eval("(function () { var r = document.getElementById('unzoom')"
                   ".getBoundingClientRect();"
                   " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        b.click(z[0], z[1])
        b.click(s[0], s[1])
        out["reset"] = b.eval(STATE)
        # any other dialog (an alert from a name that ran) is a failure
        out["other_dialogs"] = [m["params"] for m in b.events
                                if m.get("method") ==
                                "Page.javascriptDialogOpening"]
        out["exceptions"] = [m["params"]["exceptionDetails"].get("text")
                             for m in b.events
                             if m.get("method") ==
                             "Runtime.exceptionThrown"]
    finally:
        if b:
            b.close()
        shutil.rmtree(profile, ignore_errors=True)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
