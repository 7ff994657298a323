"""Headless Chromium for the project's own browser tests.

The client is the browser adapters' own (``adapters/_browser.py``), loaded by
path as adapters load their helpers, so there is one WebDriver client.
"""

from __future__ import annotations

from pathlib import Path

from streamproof.harness.loader import load_sibling

_HELPER = Path(__file__).resolve().parents[1] / "adapters" / "_browser.py"
_browser = load_sibling(str(_HELPER), _HELPER.name)

CHROMIUM: Path = _browser.CHROMIUM
CHROMEDRIVER: Path = _browser.CHROMEDRIVER
ELEMENT: str = _browser.ELEMENT
WebDriverError = _browser.WebDriverError


class Browser(_browser.Browser):  # type: ignore[misc, name-defined]
    """A browser whose profile and chromedriver log stay in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir, script_timeout=10.0, window=(1280, 1024))
