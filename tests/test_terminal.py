"""What ``streamproof run`` prints: a failing case once when every transport
diverges alike, and a summary line that names its unit (case runs)."""

from __future__ import annotations

import io

from streamproof.corpus import load_corpus
from streamproof.harness.engine import Result, Verdict
from streamproof.reporting.terminal import print_summary

CASES = load_corpus().cases[:3]


def _printed(results: list[Result]) -> list[str]:
    stream = io.StringIO()
    print_summary(results, "a 1", "9.9.9", stream)
    return stream.getvalue().splitlines()


def test_a_case_diverging_alike_under_every_transport_is_one_line() -> None:
    alike, apart, once = CASES
    results = [
        *(Result(alike, t, Verdict.FAIL, message="status: x") for t in ("whole", "lines", "bytes")),
        Result(apart, "whole", Verdict.FAIL, message="status: x"),
        Result(apart, "lines", Verdict.FAIL, message="status: y"),
        Result(once, "whole", Verdict.CRASH, message="ValueError: z"),
        Result(once, "lines", Verdict.PASS),
    ]
    shown = [line for line in _printed(results) if line.startswith(("FAIL", "CRASH"))]
    assert shown == [
        f"FAIL    {alike.id} [whole] ({alike.severity}): status: x (the same under lines, bytes)",
        f"FAIL    {apart.id} [whole] ({apart.severity}): status: x",
        f"FAIL    {apart.id} [lines] ({apart.severity}): status: y",
        f"CRASH   {once.id} [whole] ({once.severity}): ValueError: z",
    ]


def test_a_crash_is_one_line_only_when_its_details_are_alike_too() -> None:
    case = CASES[0]
    results = [
        Result(case, "whole", Verdict.CRASH, message="E: boom", traceback="File a.py, line 1"),
        Result(case, "bytes", Verdict.CRASH, message="E: boom", traceback="File a.py, line 2"),
    ]
    shown = [line for line in _printed(results) if line.startswith("CRASH")]
    assert [line.split(" (")[0] for line in shown] == [
        f"CRASH   {case.id} [whole]",
        f"CRASH   {case.id} [bytes]",
    ]


def test_the_summary_counts_case_runs_and_says_so() -> None:
    one, two, _ = CASES
    results = [
        Result(one, "whole", Verdict.PASS),
        Result(one, "lines", Verdict.PASS),
        Result(two, "whole", Verdict.FAIL, message="status: x"),
    ]
    summary = next(line for line in _printed(results) if line.startswith("streamproof "))
    assert summary == "streamproof a 1 on corpus 9.9.9: 2 passed, 1 failed of 3 case runs (2 cases)"
    alone = next(line for line in _printed(results[:1]) if line.startswith("streamproof "))
    assert alone.endswith(": 1 passed, 0 failed of 1 case run (1 case)")
