"""The lean run of streamproof items reports what pytest's own protocol reports.

plugin/protocol.py skips pytest's per-phase hooks for a session of
streamproof items alone; ``--setup-show`` (or a test of the user's in the
same session) brings pytest's protocol back, which gives the comparison.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ADAPTERS = Path(__file__).parent / "adapters"
# A parser that fails some of these cases, skips others for a capability it
# lacks, and, with --streamproof-fail-on must, xfails a "should" failure.
ARGS = (
    f"--streamproof={ADAPTERS / 'naive_lines.py'}",
    "--streamproof-case=sse-spec/no-space-after-colon,sse-spec/bom-at-start,generic/http-400-json",
    "--streamproof-case=sse-spec/cr-only-multi-line-data,generic/text-split-per-token",
    "--streamproof-transport=whole,bytes",
    "--streamproof-fail-on=must",
)
SEEN = """
import pathlib

def pytest_runtest_setup(item):
    with pathlib.Path("seen.txt").open("a") as seen:
        seen.write(item.nodeid + "\\n")
"""


def _junit(pytester: pytest.Pytester, *extra: str) -> tuple[str, list[str]]:
    result = pytester.runpytest(*ARGS, "--junitxml=out.xml", *extra)
    xml = (pytester.path / "out.xml").read_text(encoding="utf-8")
    xml = re.sub(r' (time|timestamp|hostname)="[^"]*"', "", xml)
    seen = pytester.path / "seen.txt"
    lines = seen.read_text(encoding="utf-8").splitlines() if seen.exists() else []
    seen.unlink(missing_ok=True)
    outcomes = result.parseoutcomes()
    return xml + repr(sorted(outcomes.items())), lines


def test_lean_and_full_protocols_report_alike(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SEEN)
    lean, lean_setups = _junit(pytester)
    full, full_setups = _junit(pytester, "--setup-show")
    assert lean == full
    assert "failures=" in lean and "skipped" in lean  # it saw each kind of verdict
    # The lean run called no per-phase hook; pytest's own protocol did, once an item.
    assert lean_setups == []
    assert full_setups and all(n.startswith("streamproof::") for n in full_setups)


def test_a_session_with_the_users_tests_keeps_pytests_protocol(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SEEN)
    pytester.makepyfile("def test_own(): pass")
    _, setups = _junit(pytester)
    assert any(n.startswith("streamproof::") for n in setups)
    assert any(n.endswith("::test_own") for n in setups)
