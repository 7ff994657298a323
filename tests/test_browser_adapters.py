"""The browser adapters: parsers run inside headless Chromium over real HTTP (run --http)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import MISSING

from streamproof.adapter import AdapterError
from streamproof.harness import nodejs
from streamproof.harness.loader import load_adapter

ROOT = Path(__file__).resolve().parents[1]


def test_without_selenium_the_adapter_fails_to_load_with_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "selenium", None)  # as if the extra were not installed
    with pytest.raises(AdapterError) as caught:
        load_adapter("browser-reader")
    message = str(caught.value)
    assert "\n" not in message
    assert re.fullmatch(
        r"browser-reader: needs selenium "
        r"\(import of selenium\.?\w* halted; None in sys\.modules\); "
        r"install it with: pip install 'streamproof\[browser\]' "
        r"\(from a clone: pip install -e '\.\[browser\]'\)",
        message,
    ), message


needs_browser = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def run(
    tmp_path: Path, adapter: str, cases: list[str], *extra: str, env: dict[str, str] | None = None
) -> dict[tuple[str, str], str]:
    """``streamproof run`` on ``cases`` under whole and lines: the verdict of each run."""
    out = tmp_path / "results.json"
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", adapter, "--json", str(out)]
    argv += ["--transport", "whole,lines", *extra]
    for case in cases:
        argv += ["--case", case]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode in (0, 1), done.stderr
    results = json.loads(out.read_text())["results"]
    return {(r["case"], r["transport"]): r["verdict"] for r in results}


@needs_browser
def test_browser_reader_over_http(tmp_path: Path) -> None:
    cases = {
        "generic/text-split-per-token": "pass",
        "generic/crlf-framing-with-ping-comments": "crash",  # "[DONE]\r" reaches JSON.parse
        "generic/usage-in-finish-chunk": "pass",
        "generic/http-429-json": "pass",  # the res.ok check
        # It claims neither truncation nor stream_error, so it is judged on the content of
        # the cut stream: JSON.parse gets the cut last event and throws.
        "generic/cut-off-inside-event": "crash",
    }
    verdicts = run(tmp_path, "browser-reader", list(cases), "--http")
    expected = {(c, t): v for c, v in cases.items() for t in ("whole", "lines")}
    assert verdicts == expected


@needs_browser
@pytest.mark.skipif(
    not (nodejs.cache_dir() / "node_modules" / "eventsource-parser").is_dir(),
    reason="eventsource-parser is not installed: streamproof setup-node",
)
def test_browser_eventsource_parser_over_http(tmp_path: Path) -> None:
    cases = {
        "generic/text-split-per-token": "pass",
        "generic/crlf-framing-with-ping-comments": "pass",
        "generic/two-choices-interleaved": "pass",
    }
    verdicts = run(tmp_path, "browser-eventsource-parser", list(cases), "--http")
    assert verdicts == {(c, t): v for c, v in cases.items() for t in ("whole", "lines")}


def holding(needle: str) -> list[str]:
    """The command lines of the running processes that mention ``needle``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:  # the process ended meanwhile
            continue
        if needle in text:
            found.append(text)
    return found


def gone(temp: Path) -> list[str]:
    """Wait for the processes that name ``temp`` to end; those still running after 30 s."""
    deadline = time.monotonic() + 30
    while holding(str(temp)) and time.monotonic() < deadline:
        time.sleep(0.2)  # chromedriver's shutdown ends the browser's processes one by one
    return holding(str(temp))


# A browser adapter whose page never answers: its worker is killed at its timeout.
HANGING = """
from streamproof.harness.loader import load_sibling

_browser = load_sibling(%r, "_browser.py")
NAME = "hanging-page"
VERSION = "1"
CAPABILITIES = {"content"}


def parse(response):
    raise RuntimeError(_browser.HTTP_ONLY)


def call(base_url, request):
    return _browser.run_in_page(base_url, "await new Promise(() => {});", request)
"""


@pytest.fixture
def temp() -> Iterator[Path]:
    """A TMPDIR of a run: each browser's profile is a temporary folder, and its processes
    name it. Short, as Chromium's sockets under it must fit a socket path (108 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="sp-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_browser
def test_a_finished_worker_leaves_no_browser_and_no_profile(tmp_path: Path, temp: Path) -> None:
    # A proxy that answers nothing: chromedriver on 127.0.0.1 is called directly.
    proxy = {"HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"}
    env = {**os.environ, "TMPDIR": str(temp), **proxy}
    case = "generic/text-split-per-token"
    verdicts = run(tmp_path, "browser-reader", [case], "--http", "--jobs", "2", env=env)
    assert set(verdicts.values()) == {"pass"}
    assert gone(temp) == []
    assert list(temp.iterdir()) == []


@needs_browser
def test_a_killed_worker_takes_its_browser_along(tmp_path: Path, temp: Path) -> None:
    adapter = tmp_path / "hanging_page.py"
    adapter.write_text(HANGING % str(ROOT / "adapters" / "adapter.py"), encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(temp)}
    case = "generic/text-split-per-token"
    verdicts = run(tmp_path, str(adapter), [case], "--http", "--timeout", "5", env=env)
    assert set(verdicts.values()) == {"timeout"}
    # The browser was up when its worker was killed (it had written its profile) ...
    profiles = list(temp.glob("streamproof-chromium-*"))
    assert profiles and all(any(profile.iterdir()) for profile in profiles)
    # ... and chromedriver and Chromium ended with it.
    assert gone(temp) == []


@needs_browser
def test_the_browser_is_the_chromium_on_the_path_and_its_failure_one_line(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "chromium"
    fake.write_text("#!/bin/sh\necho 'not a browser' >&2\nexit 3\n", encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    case = "generic/text-split-per-token"
    assert set(run(tmp_path, "browser-reader", [case], "--http", env=env).values()) == {"crash"}
    results = json.loads((tmp_path / "results.json").read_text())["results"]
    # chromedriver started the fake, which exited: Selenium's error, without its stack
    for result in results:
        message = result["message"]
        assert message.startswith("BrowserError: SessionNotCreatedException: session not created")
        assert "\n" not in message and "Stacktrace" not in message


@needs_browser
def test_in_process_use_is_a_one_line_crash(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", "browser-reader"]
    argv += ["--case", "generic/text-split-per-token", "--transport", "whole", "--json", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [result] = json.loads(out.read_text())["results"]
    assert result["verdict"] == "crash"
    assert "runs over HTTP only: use run --http" in done.stdout
