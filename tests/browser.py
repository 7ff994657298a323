"""Headless Chromium for the project's own browser tests.

The browser is the browser adapters' own (``adapters/_browser.py``, Selenium
over Debian's chromedriver), loaded by path as adapters load their helpers,
so the tests and the adapters start Chromium the same way.
"""

from __future__ import annotations

from pathlib import Path

from streamproof.harness.loader import load_sibling

_HELPER = Path(__file__).resolve().parents[1] / "adapters" / "_browser.py"
_browser = load_sibling(str(_HELPER), _HELPER.name)

# Why the browser tests are skipped here (one line), or None when they run.
MISSING: str | None = _browser.missing()


class Browser(_browser.Browser):  # type: ignore[misc, name-defined]
    """A browser whose profile and chromedriver log stay in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir, script_timeout=10.0, window=(1280, 1024))
