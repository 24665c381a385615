#!/usr/bin/env python3
"""Opens a report page from disk in headless Chromium, as a person would, and says what the
browser saw.

usage: open_page.py PAGE.html SHOT_PREFIX
Prints {"errors": [...], "requests": [...], "views": {"1280": {...}, "400": {...}}}:
  errors    console errors and warnings, uncaught exceptions, log entries of level error or
            warning (a Content-Security-Policy violation is one);
  requests  every request the page made besides loading itself (data: URLs are no request);
  views     per window width: the document's scroll width (wider than the window means the
            page scrolls sideways), its title, headings, tables and charts counted, and
            whether pressing a sortable table's header sorted it; a screenshot of each width
            is written to SHOT_PREFIX-WIDTH.png.
Exit 0 when the page could be opened (the caller judges what was seen).
"""
import base64, json, os, pathlib, shutil, subprocess, sys, tempfile, time, urllib.request

import websocket  # websocket-client


class Cdp:
    """A DevTools protocol client on one page target that keeps the events it reads."""

    def __init__(self, port):
        tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        tab = next(t for t in tabs if t["type"] == "page")
        self.ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.n, self.events = 0, []

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.n:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]
            if "method" in m:
                self.events.append(m)

    def drain(self, seconds):
        """Reads events for `seconds`."""
        end = time.time() + seconds
        self.ws.settimeout(0.2)
        while time.time() < end:
            try:
                m = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                continue
            if "method" in m:
                self.events.append(m)
        self.ws.settimeout(30)


PROBE = r"""(() => {
  const t = document.querySelector("table.sortable");
  let sorted = null;
  if (t) {
    const b = t.querySelector("thead th button");
    if (b) { b.click(); sorted = t.querySelector("thead th").getAttribute("aria-sort") === "ascending"; }
  }
  return JSON.stringify({
    scrollWidth: document.documentElement.scrollWidth,
    title: document.title,
    h1: document.querySelectorAll("h1").length,
    h2: Array.from(document.querySelectorAll("h2")).map(h => h.textContent),
    tables: document.querySelectorAll("table").length,
    captions: document.querySelectorAll("table > caption").length,
    charts: document.querySelectorAll("svg[role=img]").length,
    chartsTitled: document.querySelectorAll("svg[role=img] > title").length,
    sorted: sorted,
  });
})()"""


def problems(events, page_url):
    errors, requests = [], []
    for m in events:
        p = m.get("params", {})
        if m["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
            errors.append("console %s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))))
        elif m["method"] == "Runtime.exceptionThrown":
            errors.append("exception: %s" % p["exceptionDetails"].get("exception", {}).get("description", p["exceptionDetails"].get("text")))
        elif m["method"] == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            errors.append("log %s: %s" % (p["entry"]["level"], p["entry"]["text"]))
        elif m["method"] == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if url != page_url and not url.startswith("data:"):
                requests.append(url)
    return errors, requests


def main():
    page, prefix = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    page_url = pathlib.Path(page).as_uri()
    work = tempfile.mkdtemp(prefix="webaip-report-page-")
    proc = None
    try:
        profile = os.path.join(work, "profile")
        proc = subprocess.Popen(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                                 f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                 "--window-size=1280,900", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            time.sleep(0.2)
        cdp = Cdp(open(port_file).readline().strip())
        for domain in ("Runtime", "Log", "Network", "Page"):
            cdp.call(domain + ".enable")
        views = {}
        for width in (1280, 400):
            cdp.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                     mobile=width < 500)
            cdp.call("Page.navigate", url=page_url)
            cdp.drain(2.0)
            shot = cdp.call("Page.captureScreenshot", format="png")["data"]
            with open(f"{prefix}-{width}.png", "wb") as f:
                f.write(base64.b64decode(shot))
            probe = cdp.call("Runtime.evaluate", expression=PROBE, returnByValue=True)["result"]["value"]
            views[str(width)] = json.loads(probe)
        cdp.drain(0.5)
        errors, requests = problems(cdp.events, page_url)
        print(json.dumps({"errors": errors, "requests": requests, "views": views}, ensure_ascii=False))
        return 0
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
