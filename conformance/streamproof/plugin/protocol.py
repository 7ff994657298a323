"""A lean run of one streamproof item: the reports pytest makes, without its per-phase hooks.

pytest runs every item through setup, call and teardown, each a hook call
that the logging, capture, fixture and exception-tracking plugins wrap.
A streamproof item has no fixtures, captures nothing through pytest (the
adapter's output is collected by the harness) and logs nothing, so most of
that work is spent on nothing, and on a run of a few thousand case runs it
was most of the main process's time.

``run_lean`` keeps what the rest of pytest sees: ``pytest_runtest_logstart``
and ``logfinish``, a report for each phase through
``pytest_runtest_logreport`` (the terminal, JUnit, pytest-html, xdist and
``-x`` read those), the call's report made by ``pytest_runtest_makereport``
(so skips, xfails and failures are reported as pytest reports them) and
``pytest_exception_interact`` for a failure. It applies only when every
collected item is a streamproof item and no option asks for pytest's own
protocol (``--pdb``, ``--setup-show``, ``--setup-only``); in a session that
mixes in other tests, every item takes pytest's protocol.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal

import pytest

from .items import StreamproofItem

__all__ = ["lean_protocol_applies", "run_lean"]

# Options under which pytest's own protocol does something a lean run skips.
_NEEDS_FULL_PROTOCOL = ("usepdb", "setupshow", "setuponly", "setupplan")


def lean_protocol_applies(config: pytest.Config, items: Sequence[pytest.Item]) -> bool:
    """True when every item is a streamproof item and no option needs pytest's protocol."""
    if any(config.getoption(name, False) for name in _NEEDS_FULL_PROTOCOL):
        return False
    return all(isinstance(item, StreamproofItem) for item in items)


def run_lean(item: StreamproofItem) -> None:
    """Run ``item`` and report its three phases (see the module's docstring)."""
    ihook = item.ihook
    nodeid, location = item.nodeid, item.location
    keywords: Mapping[str, Literal[1]] = dict.fromkeys(item.keywords, 1)
    ihook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    ihook.pytest_runtest_logreport(report=_passed(nodeid, location, keywords, "setup"))
    call = pytest.CallInfo.from_call(item.runtest, when="call", reraise=_reraise(item))
    report = ihook.pytest_runtest_makereport(item=item, call=call)
    report.keywords = keywords  # one dict for the three reports the terminal keeps
    ihook.pytest_runtest_logreport(report=report)
    if call.excinfo is not None and report.failed:
        ihook.pytest_exception_interact(node=item, call=call, report=report)
    teardown = _passed(nodeid, location, keywords, "teardown")
    teardown.user_properties = list(item.user_properties)  # as pytest's runner: JUnit reads them
    ihook.pytest_runtest_logreport(report=teardown)
    ihook.pytest_runtest_logfinish(nodeid=nodeid, location=location)


def _passed(
    nodeid: str,
    location: tuple[str, int | None, str],
    keywords: Mapping[str, Literal[1]],
    when: Literal["setup", "teardown"],
) -> pytest.TestReport:
    now = time.time()
    return pytest.TestReport(nodeid, location, keywords, "passed", None, when, start=now, stop=now)


def _reraise(item: pytest.Item) -> tuple[type[BaseException], ...]:
    # As pytest's runner: an Exit always ends the session, and so does
    # Ctrl-C unless --pdb would take it.
    if item.config.getoption("usepdb", False):
        return (pytest.exit.Exception,)
    return (pytest.exit.Exception, KeyboardInterrupt)
