#!/usr/bin/env python3
"""Replays pages of a WACZ in ReplayWeb.page inside headless Chromium, offline, and reads each
replayed page's <title> from the DOM.

usage: replay.py WACZ PAGES_JSON OUT.png
  PAGES_JSON: a JSON list of [url, expected_title] pairs (as pages/pages.jsonl gives them).
  env: WEBAIP_BROWSER_DIR (default: .browser/ at the repository root, made by
       scripts/setup-browser.sh), WEBAIP_REPLAY_TIMEOUT (seconds per page, default 60).
Prints {"pages": [{"url", "title", "ok"}], "screenshot"}: ok when the replayed title contains
the expected one. Exit 0 when every page is ok. Starts a static HTTP server and Chromium on free
loopback ports and stops only those two processes.
"""
import base64, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.parse, urllib.request

import websocket  # websocket-client

# Walks shadow roots and same-origin iframes: ReplayWeb.page shows the replay in nested frames.
FIND = r"""(() => { const out = [];
  (function walk(root, d) { if (!root || d > 12) return;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot, d + 1);
      if (el.tagName === 'IFRAME') { let doc = null; try { doc = el.contentDocument; } catch (e) {}
        if (doc) { out.push({href: doc.location.href, title: doc.title}); walk(doc, d + 1); } } } })(document, 0);
  return JSON.stringify(out); })()"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cdp:
    """A minimal DevTools protocol client on one page target."""

    def __init__(self, port):
        tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
        tab = next(t for t in tabs if t["type"] == "page")
        self.ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.n:
                if "error" in m:
                    raise RuntimeError(m["error"])
                return m["result"]


def replay(cdp, base, url, want, timeout):
    """Opens `url` in the app; the title of the frame that shows it (or the last one seen)."""
    app = f"{base}/index.html?source=archive.wacz#view=replay&url={urllib.parse.quote(url, safe='')}"
    cdp.call("Page.navigate", url=app)
    t0, title = time.time(), None
    while time.time() - t0 < timeout:
        time.sleep(1)
        frames = json.loads(cdp.call("Runtime.evaluate", expression=FIND, returnByValue=True)["result"]["value"])
        titled = [f for f in frames if f.get("title")]
        if titled:
            title = titled[-1]["title"]
            if want in title:
                return title, True
    return title, False


def main():
    wacz, pages_json, png = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    pairs = json.loads(open(pages_json).read()) if os.path.exists(pages_json) else json.loads(pages_json)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tools = os.environ.get("WEBAIP_BROWSER_DIR", os.path.join(root, ".browser"))
    timeout = float(os.environ.get("WEBAIP_REPLAY_TIMEOUT", "60"))
    work = tempfile.mkdtemp(prefix="webaip-replay-")
    procs = []
    try:
        # The app and the WACZ served from one folder: the service worker's scope is its root.
        site = os.path.join(work, "site")
        shutil.copytree(os.path.join(tools, "replaywebpage"), site)
        shutil.copyfile(wacz, os.path.join(site, "archive.wacz"))
        http_port = free_port()
        server = os.path.join(tools, "node_modules", ".bin", "http-server")
        procs.append(subprocess.Popen([server, site, "-a", "127.0.0.1", "-p", str(http_port), "-s", "-c-1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        profile = os.path.join(work, "profile")
        procs.append(subprocess.Popen(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                                       f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                       "--window-size=1280,900", "about:blank"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(150):
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            time.sleep(0.2)
        devtools = open(port_file).readline().strip()
        base = f"http://127.0.0.1:{http_port}"
        for _ in range(50):  # the server is up when it answers
            try:
                urllib.request.urlopen(f"{base}/index.html", timeout=2)
                break
            except OSError:
                time.sleep(0.2)
        cdp = Cdp(devtools)
        cdp.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        results = []
        for i, (url, want) in enumerate(pairs):
            title, ok = replay(cdp, base, url, want, timeout)
            results.append({"url": url, "title": title, "ok": ok})
            if i == 0:
                time.sleep(2)  # let styles and images settle
                data = cdp.call("Page.captureScreenshot", format="png")["data"]
                with open(png, "wb") as f:
                    f.write(base64.b64decode(data))
        print(json.dumps({"pages": results, "screenshot": png}, ensure_ascii=False))
        return 0 if results and all(r["ok"] for r in results) else 1
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
