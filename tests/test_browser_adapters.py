"""The browser adapters: parsers run inside headless Chromium over real HTTP (run --http)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof.harness import nodejs

if not (Path("/usr/bin/chromium").is_file() and Path("/usr/bin/chromedriver").is_file()):
    pytest.skip("needs Debian's chromium and chromium-driver", allow_module_level=True)


def run(tmp_path: Path, adapter: str, cases: list[str], *extra: str) -> dict[tuple[str, str], str]:
    """``streamproof run`` on ``cases`` under whole and lines: the verdict of each run."""
    out = tmp_path / "results.json"
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", adapter, "--json", str(out)]
    argv += ["--transport", "whole,lines", *extra]
    for case in cases:
        argv += ["--case", case]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    results = json.loads(out.read_text())["results"]
    return {(r["case"], r["transport"]): r["verdict"] for r in results}


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


def test_in_process_use_is_a_one_line_crash(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", "browser-reader"]
    argv += ["--case", "generic/text-split-per-token", "--transport", "whole", "--json", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [result] = json.loads(out.read_text())["results"]
    assert result["verdict"] == "crash"
    assert "runs over HTTP only: use run --http" in done.stdout
