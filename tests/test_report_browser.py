"""The HTML report as a reader sees it: rendered by headless chromium through Selenium.

pytest-html 4 builds its result rows in the browser from a JSON blob, so these
tests look at the rendered page, never at the file's text. The summary, the
failures by case and the skips are plain HTML: the last tests read them with
the page's JavaScript switched off, and save the screenshots the README shows
(under docs/images/ when STREAMPROOF_SCREENSHOTS is set, else in a temporary
folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import MISSING, Browser

if MISSING is not None:
    pytest.skip(MISSING, allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = "tests/adapters/naive_lines.py"  # from ROOT: the commands on the page read as a user's
CASE = "sse-spec/cr-line-endings"  # lone CRs frame its events; the naive parser splits on LF
# The naive parser reads this one's named error event as an ordinary chunk: an outcome
# whose status differs and whose error key is absent.
ERROR_CASE = "sse-spec/event-error-with-json-error-object"
IMAGES = ROOT / "docs" / "images"
CAPTIONS = ["by severity", "by capability", "by provider", "by transport"]
ROW = "const body = document.getElementById(arguments[0]); "


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    # "whole" is one read, so it shows no ¦; "lines" ends a read after every CR and LF.
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "streamproof", "run", "--adapter", ADAPTER),
            *("--transport", "whole,lines", "--case", "sse-spec/*", "--html", str(out)),
            *("--seed", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
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
    assert "streamproof: naive-lines on corpus" in summary["text"]  # the adapter's NAME


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
        page.run(ROW + "return body.querySelector('.col-result')", test_id).click()
    assert until(page, ROW + "return body.querySelector('.extras-row').checkVisibility()", test_id)


def test_expanded_row_shows_how_to_rerun_it_and_links_its_case(page: Browser) -> None:
    test_id = f"streamproof::{CASE}[lines]"
    page.run("return document.getElementById('hide_all_details')").click()
    assert not page.run(ROW + "return body.querySelector('.extras-row').checkVisibility()", test_id)
    expand(page, test_id)
    failure = page.run(
        ROW + "const f = body.querySelector('.streamproof-failure');"
        "return f && {text: f.innerText, link: f.querySelector('a').getAttribute('href')}",
        test_id,
    )
    assert failure is not None, f"the {test_id} row has no streamproof failure block"
    assert f"streamproof debug '{CASE} [lines]' --adapter " in failure["text"]
    assert f"streamproof run --case '{CASE} [lines]' --adapter " in failure["text"]
    assert failure["link"] == "#case-sse-spec-cr-line-endings"


def test_screenshot_is_a_png(page: Browser, report: Path) -> None:
    test_id = f"streamproof::{CASE}[lines]"
    expand(page, test_id)
    page.run(ROW + "body.scrollIntoView()", test_id)
    shot = page.screenshot(report.with_name("report.png"))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 800 and height >= 600


# -- without JavaScript ----------------------------------------------------------------

SECTION = "const s = document.getElementById(arguments[0]); "


@pytest.fixture(scope="module")
def noscript(tmp_path_factory: pytest.TempPathFactory, report: Path) -> Iterator[Browser]:
    """The report in a browser whose pages run no script (DevTools' emulation)."""
    chromium = Browser(tmp_path_factory.mktemp("noscript"))
    try:
        # A DevTools command, through the one Selenium's Chromium connection adds for them.
        disable = {"cmd": "Emulation.setScriptExecutionDisabled", "params": {"value": True}}
        chromium.driver.execute("executeCdpCommand", disable)
        chromium.open(report.as_uri())
        yield chromium
    finally:
        chromium.close()


def test_without_javascript_the_summary_and_failures_are_readable(noscript: Browser) -> None:
    # pytest-html's own rows need its script: none is built, which shows scripts are off.
    assert noscript.run("return document.querySelectorAll('tbody.results-table-row').length") == 0
    shown = noscript.run(
        "return ['.streamproof-summary', '#failures', '#case-sse-spec-cr-line-endings']"
        ".map(q => document.querySelector(q).checkVisibility())"
    )
    assert shown == [True, True, True]


def test_a_case_is_one_group_with_a_verdict_per_transport(noscript: Browser) -> None:
    group = noscript.run(
        SECTION + "return {title: s.querySelector('h3').innerText,"
        " heads: [...s.querySelectorAll('table.verdicts th')].map(c => c.innerText),"
        " verdicts: [...s.querySelectorAll('tr.verdict-row td')].map(c => c.innerText),"
        " about: s.querySelector('dl.about').innerText,"
        " open: [...s.querySelectorAll('details.transport')].map(d => d.open)}",
        "case-sse-spec-cr-line-endings",
    )
    assert group["title"] == f"should {CASE}: lone CR line endings frame events like LF"
    assert (group["heads"], group["verdicts"]) == (["whole", "lines"], ["crash", "crash"])
    for label in ("explanation", "tags", "provenance", "spec", "semantics §3.1", "documented"):
        assert label in group["about"]
    assert group["open"] == [True, False]  # the first failing transport is open


def test_the_differing_paths_are_marked_and_an_absent_key_shown(noscript: Browser) -> None:
    marked = noscript.run(
        SECTION + "const t = s.querySelector('details.transport table.compare');"
        "return [...t.querySelectorAll('td')].map(td => [...td.querySelectorAll('span.diff')]"
        "  .filter(e => e.checkVisibility()).map(e => e.innerText.trim()))",
        "case-sse-spec-event-error-with-json-error-object",
    )
    expected, actual = marked
    assert expected[0] == '"status": "error",' and '"error": {' in expected
    assert actual == ['"status": "complete",', '"error": <absent>']


def test_the_wire_window_marks_reads_and_folds_the_rest(noscript: Browser) -> None:
    anchor = "case-sse-spec-cr-line-endings"
    lines = "details.transport[data-transport=lines]"
    if not noscript.run(SECTION + f"return s.querySelector('{lines}').open", anchor):
        noscript.run(SECTION + f"return s.querySelector('{lines} > summary')", anchor).click()
    wire = noscript.run(
        SECTION + f"const w = s.querySelector('{lines} .wire');"
        "return {window: w.querySelector('pre.window').innerText,"
        " focus: w.querySelector('mark').innerText,"
        " folded: [...w.querySelectorAll('details')].map(f => [f.open,"
        "   f.querySelector('pre').checkVisibility(), f.querySelector('pre').textContent])}",
        anchor,
    )
    assert wire["focus"] == "data: [DONE]\\r\n¦\\r\n"  # the end of the body: it crashed
    assert "\\r\n¦\\r\n¦data: {" in wire["window"] and "\r" not in wire["window"]
    ((opened, visible, before),) = wire["folded"]  # the window runs to the end of the body
    assert not opened and not visible and before.startswith("data: {") and "¦" not in before
    # A fold opens with a click on its summary, no script needed.
    summary = noscript.run(
        SECTION + f"return s.querySelector('{lines} .wire details summary')", anchor
    )
    summary.click()
    assert noscript.run(
        SECTION + f"return s.querySelector('{lines} .wire details pre').checkVisibility()", anchor
    )


def save(noscript: Browser, selector: str, name: str, tmp: Path) -> Path:
    """A screenshot of one element, under docs/images/ when STREAMPROOF_SCREENSHOTS is set."""
    folder = IMAGES if os.environ.get("STREAMPROOF_SCREENSHOTS") else tmp
    element = noscript.run(
        f"const e = document.querySelector('{selector}');e.scrollIntoView(); return e"
    )
    data = element.screenshot_as_png
    path = folder / name
    path.write_bytes(data)
    return path


def test_screenshots_of_the_summary_and_a_failing_case(noscript: Browser, tmp_path: Path) -> None:
    noscript.driver.set_window_size(1100, 1400)
    noscript.open(noscript.run("return location.href"))  # folds as the page ships them
    shots = [
        save(noscript, ".streamproof-summary", "report-summary.png", tmp_path),
        save(
            noscript,
            "#case-sse-spec-event-error-with-json-error-object",
            "report-failure.png",
            tmp_path,
        ),
    ]
    for shot in shots:
        data = shot.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert 600 <= width <= 1100 and 150 <= height <= 1400, (shot.name, width, height)
        assert len(data) < 250_000
