"""A minimal W3C WebDriver client for Debian's chromium, over urllib (no selenium)."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C key of an element reference
TIMEOUT = 30.0  # seconds, for every HTTP call and for chromedriver to come up
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
# Talk to 127.0.0.1 directly even when the environment names an HTTP proxy.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class WebDriverError(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Browser:
    """Headless chromium driven by a chromedriver process this object owns."""

    def __init__(self, workdir: Path) -> None:
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.session: str | None = None
        self.driver = subprocess.Popen(
            [str(CHROMEDRIVER), f"--port={port}", f"--log-path={workdir / 'chromedriver.log'}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            self._wait_ready()
            profile = workdir / "profile"
            profile.mkdir()
            options = {"binary": str(CHROMIUM), "args": [*ARGS, f"--user-data-dir={profile}"]}
            caps = {
                "browserName": "chrome",
                "goog:chromeOptions": options,
                "timeouts": {"pageLoad": 20_000, "script": 10_000},
            }
            reply = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
            self.session = reply["sessionId"]
            self.command("POST", "/window/rect", {"width": 1280, "height": 1024})
        except BaseException:
            self.close()
            raise

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(request, timeout=TIMEOUT) as response:
                return json.load(response).get("value")
        except urllib.error.HTTPError as e:
            raise WebDriverError(f"{method} {path}: {e.code} {e.read()[:500]!r}") from None

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
            time.sleep(0.1)
        raise WebDriverError(f"chromedriver not ready after {TIMEOUT}s")

    def command(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, url: str) -> None:
        self.command("POST", "/url", {"url": url})

    def run(self, script: str, *args: Any) -> Any:
        """Run a function body in the page; `return` sends a JSON value back."""
        return self.command("POST", "/execute/sync", {"script": script, "args": list(args)})

    def click(self, element: dict[str, str]) -> None:
        self.command("POST", f"/element/{element[ELEMENT]}/click", {})

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.command("GET", "/screenshot")))
        return path

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
