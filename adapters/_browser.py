"""Running a parser inside headless Chromium, for the ``browser-*`` adapters.

The browser adapters are scored over real HTTP only (``run --http``): their
``call(base_url, request)`` opens a page on the replay server's origin (its
``/v1/models``, so the page's ``fetch`` needs no CORS) and runs a JavaScript
function there through Selenium's ``execute_async_script``. The function gets
the base URL and the request and returns an outcome; an exception in the page
is a crash. One chromedriver and one Chromium per worker process, started on
the first call, with a fresh profile, closed at exit (Selenium starts
chromedriver in the worker's process group, so a killed worker's group takes
both along).

Needs Selenium (the ``browser`` extra), Debian's ``chromium-driver`` at
``/usr/bin/chromedriver`` and a ``chromium`` on the PATH (Debian's
``chromium``). The driver's path is given to Selenium, so Selenium Manager
never runs and nothing is downloaded. Without one of them the adapter fails to
load with one line.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

from streamproof.adapter import AdapterError

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.chromium.remote_connection import ChromiumRemoteConnection
    from selenium.webdriver.common.proxy import Proxy, ProxyType
    from selenium.webdriver.remote.client_config import ClientConfig
except ImportError as exc:
    _NO_SELENIUM: str | None = (
        f"needs selenium ({exc}); install it with: pip install 'streamproof[browser]' "
        "(from a clone: pip install -e '.[browser]')"
    )
else:
    _NO_SELENIUM = None

_FOUND = shutil.which("chromium")
CHROMIUM: Path | None = Path(_FOUND) if _FOUND else None
CHROMEDRIVER = Path("/usr/bin/chromedriver")
NO_CHROMIUM = (
    "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
)
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
TIMEOUT = 30.0  # seconds: every call to chromedriver but scripts
PAGE_LOAD_TIMEOUT = 20.0
SCRIPT_TIMEOUT = 300.0  # the harness's own per-case timeout kills the worker long before
HTTP_ONLY = "the browser adapter runs over HTTP only: use run --http"

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


def missing() -> str | None:
    """Why no browser can be started here (one line), or None when one can."""
    if _NO_SELENIUM is not None:
        return _NO_SELENIUM
    if CHROMIUM is None or not CHROMEDRIVER.is_file():
        return NO_CHROMIUM
    return None


def require_chromium(name: str) -> None:
    """Fail to load (one line) when Selenium, Chromium or chromedriver is missing."""
    reason = missing()
    if reason is not None:
        raise AdapterError(f"{name}: {reason}")


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


class BrowserError(RuntimeError):
    """The browser failed, or the page answered neither an outcome nor a crash."""


def _options(profile: Path, script_timeout: float) -> Options:
    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in (*ARGS, f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.timeouts = {
        "pageLoad": int(PAGE_LOAD_TIMEOUT * 1000),
        "script": int(script_timeout * 1000),
    }
    return options


def _connection(service: Service) -> ChromiumRemoteConnection:
    """Selenium's connection to the chromedriver of ``service``, never through a proxy.

    ``webdriver.Chrome`` would send its calls to 127.0.0.1 through ``$HTTP_PROXY``
    unless ``$NO_PROXY`` names localhost, and refusing that there is deprecated:
    a direct proxy in the client's configuration is Selenium's way.
    """
    direct = Proxy()
    direct.proxy_type = ProxyType.DIRECT
    config = ClientConfig(service.service_url, proxy=direct, timeout=TIMEOUT)
    return ChromiumRemoteConnection(
        service.service_url, vendor_prefix="goog", browser_name="chrome", client_config=config
    )


class Browser:
    """Headless Chromium driven through Selenium, with the chromedriver it starts.

    With ``workdir`` the profile and chromedriver's log go there (and stay);
    without it the profile is a temporary folder removed at ``close()``. The
    project's own browser tests drive their pages through this class too, and
    through its Selenium ``driver``.
    """

    def __init__(
        self,
        workdir: Path | None = None,
        *,
        script_timeout: float = SCRIPT_TIMEOUT,
        window: tuple[int, int] | None = None,
    ) -> None:
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
        # A driver path of our own, so Selenium Manager never runs (and never downloads);
        # set after construction, where $SE_CHROMEDRIVER cannot replace it.
        # Chromium's own temporary folders (its scoped_dir) go inside a
        # temporary profile, so removing the profile removes them even when
        # Chromium was killed before it could (a worker's end kills what it
        # started). Not inside a given workdir: a long path there would pass
        # the length limit of Chromium's socket path.
        env = None
        if self._own_profile:
            scratch = self.profile / "t"
            scratch.mkdir()
            env = {**os.environ, "TMPDIR": str(scratch)}
        self.service = Service(service_args=log, env=env)
        self.service.path = str(CHROMEDRIVER)
        try:
            self.service.start()  # stops chromedriver itself when it fails
        except BaseException:
            self._remove_profile()
            raise
        try:
            options = _options(self.profile, script_timeout)
            self.driver = webdriver.Remote(_connection(self.service), options=options)
        except BaseException:
            self.service.stop()
            self._remove_profile()
            raise
        if window is not None:
            try:
                self.driver.set_window_size(*window)
            except BaseException:
                self.close()
                raise

    def open(self, url: str) -> None:
        self.driver.get(url)

    def run(self, script: str, *args: Any) -> Any:
        """Run a function body in the page; ``return`` sends a value back."""
        return self.driver.execute_script(script, *args)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(self.driver.get_screenshot_as_png())
        return path

    def run_in_origin(self, base_url: str, body: str, request: dict[str, Any]) -> Any:
        """Run an async function body on ``base_url``'s origin (see ``run_in_page``)."""
        parts = urllib.parse.urlsplit(base_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin != self.origin:  # a page on the server's origin: fetch without CORS
            self.open(f"{origin}/v1/models")
            self.origin = origin
        config = self.driver.command_executor.client_config
        config.timeout = self.script_timeout + 10  # the page's own script timeout comes first
        try:
            return self.driver.execute_async_script(_WRAPPER % body, base_url, request)
        finally:
            config.timeout = TIMEOUT

    def close(self) -> None:
        """End the session, then chromedriver (which takes the browser along)."""
        try:
            self.driver.quit()
        except Exception:
            pass  # the session or chromedriver is gone already: stopping it ends the rest
        finally:
            try:
                self.service.stop()
            finally:
                self._remove_profile()

    def _remove_profile(self) -> None:
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
    try:
        if _browser is None:
            _browser = Browser()
        reply = _browser.run_in_origin(base_url, body, request)
    except Exception as exc:
        _close()  # whatever went wrong with the browser, the next case starts a fresh one
        if isinstance(exc, WebDriverException):  # its text has chromedriver's stack: one line
            message = " ".join(str(exc.msg).split("; For documentation", 1)[0].split())
            raise BrowserError(f"{type(exc).__name__}: {message}") from None
        raise
    if not isinstance(reply, dict) or not ("outcome" in reply or "crash" in reply):
        raise BrowserError(f"unexpected reply from the page: {reply!r:.200}")
    if "crash" in reply:
        raise PageError(reply["crash"])
    return reply["outcome"]
