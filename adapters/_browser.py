"""Running a parser inside headless Chromium, for the ``browser-*`` adapters.

The browser adapters are scored over real HTTP only (``run --http``): their
``call(base_url, request)`` opens a page on the replay server's origin (its
``/v1/models``, so the page's ``fetch`` needs no CORS) and runs a JavaScript
function there through WebDriver's ``/execute/async``. The function gets the
base URL and the request and returns an outcome; an exception in the page is
a crash. One chromedriver and one Chromium per worker process, started on the
first call, with a fresh profile, closed at exit (a killed worker's process
group takes them along).

Needs Debian's ``chromium`` and ``chromium-driver`` (``/usr/bin/chromium``,
``/usr/bin/chromedriver``); without them the adapter fails to load with one line.
"""

from __future__ import annotations

import atexit
import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from streamproof.adapter import AdapterError

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
MISSING = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference
TIMEOUT = 30.0  # seconds: chromedriver coming up, and every WebDriver call but scripts
SCRIPT_TIMEOUT = 300.0  # the harness's own per-case timeout kills the worker long before
HTTP_ONLY = "the browser adapter runs over HTTP only: use run --http"
# Talk to chromedriver on 127.0.0.1 directly even when the environment names a proxy.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# Wraps a function body that uses `baseUrl` and `request` and returns an outcome.
_WRAPPER = """
const done = arguments[arguments.length - 1];
const oneLine = (error) => {
  const text = String(error?.message ?? error).split(/\\s+/).filter(Boolean).join(' ');
  const name = error instanceof Error ? error.name : typeof error;
  return text ? `${name}: ${text}` : name;
};
(async (baseUrl, request) => {
%s
})(arguments[0], arguments[1]).then(
  (outcome) => done({ outcome: outcome ?? null }),
  (error) => done({ crash: oneLine(error) }),
);
"""


def require_chromium(name: str) -> None:
    """Fail to load (one line) when Chromium or chromedriver is not installed."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        raise AdapterError(f"{name}: {MISSING}")


def chromium_version() -> str:
    """``chromium 156.0.8078.114``, from ``chromedriver --version`` (they ship together)."""
    try:
        out = subprocess.run(
            [str(CHROMEDRIVER), "--version"], capture_output=True, text=True, timeout=10
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return "chromium"
    return f"chromium {out[1]}" if len(out) > 1 else "chromium"


class PageError(Exception):
    """The parser in the page threw (the message is its one-line name: text)."""


class WebDriverError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    """Headless Chromium driven by a chromedriver process this object owns.

    With ``workdir`` the profile and chromedriver's log go there (and stay);
    without it the profile is a temporary folder removed at ``close()``. The
    project's own browser tests drive their pages through this class too.
    """

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        script_timeout: float = SCRIPT_TIMEOUT,
        window: tuple[int, int] | None = None,
    ) -> None:
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.session: str | None = None
        self.origin: str | None = None
        self.script_timeout = script_timeout
        self._own_profile = workdir is None
        if workdir is None:
            self.profile = Path(tempfile.mkdtemp(prefix="streamproof-chromium-"))
            log = []
        else:
            self.profile = workdir / "profile"
            self.profile.mkdir()
            log = [f"--log-path={workdir / 'chromedriver.log'}"]
        self.driver = subprocess.Popen(
            [str(CHROMEDRIVER), f"--port={port}", *log],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            self._wait_ready()
            args = [*ARGS, f"--user-data-dir={self.profile}"]
            caps = {
                "browserName": "chrome",
                "goog:chromeOptions": {"binary": str(CHROMIUM), "args": args},
                "timeouts": {"pageLoad": 20_000, "script": int(script_timeout * 1000)},
            }
            reply = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
            self.session = reply["sessionId"]
            if window is not None:
                self.command("POST", "/window/rect", {"width": window[0], "height": window[1]})
        except BaseException:
            self.close()
            raise

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(request, timeout=timeout) as response:
                return json.load(response).get("value")
        except urllib.error.HTTPError as e:
            detail = " ".join(e.read()[:300].decode("utf-8", "replace").split())
            raise WebDriverError(f"{method} {path}: {e.code} {detail}") from None

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.driver.poll() is not None:
                raise WebDriverError(f"chromedriver exited with {self.driver.returncode}")
            try:
                if self._call("GET", "/status").get("ready"):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise WebDriverError(f"chromedriver not ready after {TIMEOUT}s")

    def command(
        self, method: str, path: str, body: dict[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body, timeout)

    def open(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    def run(self, script: str, *args: Any) -> Any:
        """Run a function body in the page; ``return`` sends a JSON value back."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def click(self, element: dict[str, str]) -> None:
        self.command("POST", f"/element/{element[ELEMENT]}/click", {})

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.command("GET", "/screenshot")))
        return path

    def run_in_origin(self, base_url: str, body: str, request: dict[str, Any]) -> Any:
        """Run an async function body on ``base_url``'s origin (see ``run_in_page``)."""
        parts = urllib.parse.urlsplit(base_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin != self.origin:  # a page on the server's origin: fetch without CORS
            self.open(f"{origin}/v1/models")
            self.origin = origin
        script = _WRAPPER % body
        args = {"script": script, "args": [base_url, request]}
        return self.command("POST", "/execute/async", args, timeout=self.script_timeout + 10)

    def close(self) -> None:
        try:
            if self.session is not None:
                self.command("DELETE", "")
        except (OSError, WebDriverError):
            pass  # chromedriver stopping below takes the browser with it
        finally:
            self.session = None
            self.driver.terminate()
            try:
                self.driver.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait(timeout=10)
            if self._own_profile:
                shutil.rmtree(self.profile, ignore_errors=True)


_browser: Browser | None = None


def _close() -> None:
    global _browser
    if _browser is not None:
        browser, _browser = _browser, None
        browser.close()


atexit.register(_close)


def run_in_page(base_url: str, body: str, request: dict[str, Any]) -> Any:
    """Run the JavaScript function ``body`` (it sees ``baseUrl`` and ``request``)
    in the page and return the outcome it returned; raise PageError if it threw."""
    global _browser
    if _browser is None:
        _browser = Browser()
    try:
        reply = _browser.run_in_origin(base_url, body, request)
    except (OSError, WebDriverError):
        _close()  # the next case starts a fresh browser
        raise
    if not isinstance(reply, dict) or not ("outcome" in reply or "crash" in reply):
        raise WebDriverError(f"unexpected reply from the page: {reply!r:.200}")
    if "crash" in reply:
        raise PageError(reply["crash"])
    return reply["outcome"]
