"""The HTML report as a reader's browser shows it: opened in headless Chromium
(Debian `chromium`), with no console error or failed load, every image drawn,
and every section its contents name present. Spoken to over the DevTools
protocol on a pipe (stdlib only); skipped where Chromium is not installed."""
import json
import os
import select
import shutil
import subprocess
import time

import pytest

from loggp.analysis import report
from test_analysis_study import synthetic_runs, write_store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")

# What the page says of itself once loaded: its images and the sections its contents link to.
INSPECT = """JSON.stringify({
  images: Array.from(document.images).map(i => ({alt: i.alt, drawn: i.complete && i.naturalWidth > 0})),
  contents: Array.from(document.querySelectorAll("nav.contents a")).map(a => ({
    title: a.textContent, found: !!document.getElementById(decodeURIComponent(a.hash.slice(1)))})),
  headings: Array.from(document.querySelectorAll("h2")).map(h => h.textContent)
})"""


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-ended JSON)."""

    def __init__(self, profile_dir):
        to_browser, self.commands = os.pipe()
        self.replies, from_browser = os.pipe()

        def wire():
            high_in, high_out = os.dup(to_browser), os.dup(from_browser)
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile_dir}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4))
        os.close(to_browser)
        os.close(from_browser)
        self.buffer, self.next_id, self.events = b"", 0, []

    def send(self, method, params=None, tab=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if tab:
            message["sessionId"] = tab
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive(timeout)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def receive(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                raise AssertionError("Chromium did not answer in time")
            data = os.read(self.replies, 1 << 20)
            if not data:
                raise AssertionError("Chromium closed its pipe")
            self.buffer += data
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def wait_for(self, method, tab, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == tab:
                    return event
            self.events.append(self.receive(max(0.1, deadline - time.monotonic())))

    def open(self, url):
        """Loads url in a new tab; returns (what INSPECT says, the errors the page met)."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        tab = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", tab=tab)
        self.send("Page.navigate", {"url": url}, tab=tab)
        self.wait_for("Page.loadEventFired", tab)
        found = self.send("Runtime.evaluate", {"expression": INSPECT, "returnByValue": True}, tab=tab)
        return json.loads(found["result"]["value"]), self.errors(tab)

    def errors(self, tab):
        said = []
        for event in self.events:
            if event.get("sessionId") != tab:
                continue
            params = event.get("params", {})
            if event.get("method") == "Runtime.exceptionThrown":
                said.append(params["exceptionDetails"].get("text", "exception"))
            elif event.get("method") == "Runtime.consoleAPICalled" and params.get("type") == "error":
                said.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif event.get("method") == "Log.entryAdded" and params["entry"].get("level") == "error":
                said.append(params["entry"].get("text", "error"))
        return said

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except AssertionError:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.commands)
        os.close(self.replies)


@pytest.fixture
def browser(tmp_path):
    b = Browser(tmp_path / "chromium-profile")
    yield b
    b.close()


def problems(page, errors):
    """Everything a reader would find wrong, as lines."""
    lines = [f"console: {e}" for e in errors]
    lines += [f"image not drawn: {i['alt']!r}" for i in page["images"] if not i["drawn"]]
    lines += [f"contents entry without its section: {c['title']!r}" for c in page["contents"] if not c["found"]]
    return lines


def test_the_report_loads_cleanly_with_every_image_and_section(tmp_path, browser):
    results = str(tmp_path / "res")
    write_store(results, synthetic_runs())
    with open(os.path.join(results, "calibration.json"), "w") as f:
        json.dump({"regimes": [{"m_min": 0, "m_max": 8192, "T0_us": 1.2, "B_bytes_per_us": 3000}]}, f)
    page, errors = browser.open("file://" + report.write(results))
    assert problems(page, errors) == []
    assert len(page["images"]) >= 4
    titles = [c["title"] for c in page["contents"]]
    assert {"At a glance", "Sensitivity table", "Martin's figure set", "Method"} <= set(titles), titles
    # every section heading is in the contents, and nothing else
    assert titles == [h for h in page["headings"] if h != "Contents"]


def test_the_check_sees_a_broken_image_a_console_error_and_a_missing_section(tmp_path, browser):
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title></head><body>"
                   "<nav class='contents'><ul><li><a href='#here'>Here</a></li><li><a href='#gone'>Gone</a></li>"
                   "</ul></nav><h2 id='here'>Here</h2><img alt='lost' src='missing.png'>"
                   "<script>console.error('broken on purpose')</script></body></html>")
    page, errors = browser.open(bad.as_uri())
    found = problems(page, errors)
    assert "console: broken on purpose" in found
    assert "image not drawn: 'lost'" in found
    assert "contents entry without its section: 'Gone'" in found
    assert any("missing.png" in line or "ERR_FILE_NOT_FOUND" in line for line in found), found
