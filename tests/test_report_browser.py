"""The HTML report as a reader sees it: rendered by headless chromium through chromedriver.

pytest-html 4 builds its result rows in the browser from a JSON blob, so these
tests look at the rendered page, never at the file's text.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import CHROMEDRIVER, CHROMIUM, Browser

if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    pytest.skip(
        "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

ADAPTER = Path(__file__).parent / "adapters" / "naive_lines.py"
CASE = "sse-spec/cr-line-endings"  # lone CRs frame its events; the naive parser splits on LF
CAPTIONS = ["by severity", "by capability", "by provider", "by transport"]
ROW = "const body = document.getElementById(arguments[0]); "


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    # "whole" is one read, so it shows no ¦; "lines" ends a read after every CR and LF.
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "streamproof", "run", "--adapter", str(ADAPTER)),
            *("--transport", "whole,lines", "--case", "sse-spec/*", "--html", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 1: the naive parser fails cases
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium = Browser(tmp_path_factory.mktemp("browser"))
    try:
        yield chromium
    finally:
        chromium.close()


def until(page: Browser, script: str, *args: Any, seconds: float = 10.0) -> Any:
    """Poll ``script`` until it returns something truthy."""
    deadline = time.monotonic() + seconds
    while not (value := page.run(script, *args)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return value


@pytest.fixture
def page(browser: Browser, report: Path) -> Browser:
    browser.open(report.as_uri())  # a fresh load: pytest-html resets its collapsed rows
    assert until(browser, "return document.querySelectorAll('tbody.results-table-row').length")
    return browser


def test_summary_block_shows_its_four_tables(page: Browser) -> None:
    summary = page.run(
        "const s = document.querySelector('.streamproof-summary');"
        "return s && {visible: s.checkVisibility(), text: s.innerText,"
        " tables: [...s.querySelectorAll('table')].map(t => ({visible: t.checkVisibility(),"
        "  caption: t.caption && t.caption.innerText.trim(), rows: t.tBodies[0].rows.length}))}"
    )
    assert summary is not None, "no streamproof summary in the rendered page"
    assert summary["visible"]
    assert [t["caption"] for t in summary["tables"]] == CAPTIONS
    assert all(t["visible"] and t["rows"] > 0 for t in summary["tables"]), summary["tables"]
    assert "naive_lines.py" in summary["text"]


def test_failing_case_has_a_failed_row(page: Browser) -> None:
    row = page.run(
        ROW + "return body && {classes: [...body.classList], visible: body.checkVisibility(),"
        " result: body.querySelector('.col-result').innerText,"
        " test: body.querySelector('.col-testId').innerText}",
        f"streamproof::{CASE}[whole]",
    )
    assert row is not None, f"{CASE} has no row"
    assert row["visible"] and "failed" in row["classes"]
    assert (row["result"], row["test"]) == ("Failed", f"streamproof::{CASE}[whole]")


def expand(page: Browser, test_id: str) -> None:
    """Open a row's details the way a reader does: click its result cell."""
    if not page.run(ROW + "return body.querySelector('.extras-row').checkVisibility()", test_id):
        page.click(page.run(ROW + "return body.querySelector('.col-result')", test_id))
    assert until(page, ROW + "return body.querySelector('.extras-row').checkVisibility()", test_id)


def test_expanded_row_shows_the_wire_view_with_crs_and_read_marks(page: Browser) -> None:
    test_id = f"streamproof::{CASE}[lines]"
    page.click(page.run("return document.getElementById('hide_all_details')"))
    assert not page.run(ROW + "return body.querySelector('.extras-row').checkVisibility()", test_id)
    expand(page, test_id)
    failure = page.run(
        ROW + "const f = body.querySelector('.streamproof-failure');"
        "const w = f && f.querySelector('pre.wire-view');"
        "return f && {text: f.innerText, wire: w && w.checkVisibility() && w.innerText}",
        test_id,
    )
    assert failure is not None, f"the {test_id} row has no streamproof failure block"
    assert CASE in failure["text"]
    wire = failure["wire"]
    assert wire, "the wire view is not rendered"
    # Each CR is escaped and ends its line; a read ends after every CR.
    assert "\\r\n¦\\r\n¦data: {" in wire
    assert "\r" not in wire


def test_screenshot_is_a_png(page: Browser, report: Path) -> None:
    test_id = f"streamproof::{CASE}[lines]"
    expand(page, test_id)
    page.run(ROW + "body.scrollIntoView()", test_id)
    shot = page.screenshot(report.with_name("report.png"))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 800 and height >= 600
