from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from streamproof.corpus import load_corpus

ADAPTERS = Path(__file__).parent / "adapters"
NAIVE = f"--streamproof={ADAPTERS / 'naive_lines.py'}"


def test_nothing_is_added_without_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_own(): pass")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)


def test_one_option_adds_the_corpus_to_a_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_own(): pass")
    result = pytester.runpytest(
        "--streamproof=reference",
        "--streamproof-case=generic/http-*",
        "--streamproof-transport=whole,bytes",
    )
    http = sum(1 for c in load_corpus().cases if c.id.startswith("generic/http-") and c.runnable)
    result.assert_outcomes(passed=1 + http * 2)
    result.stdout.fnmatch_lines([f"streamproof reference on corpus *: {http * 2} pass *"])


def test_options_have_their_own_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["streamproof conformance suite:", "*--streamproof=SPEC*"])


def test_failures_show_the_first_divergence(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        NAIVE, "--streamproof-case=sse-spec/no-space-after-colon", "--streamproof-transport=whole"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*fail [[]must] sse-spec/no-space-after-colon under whole:*",
            "*choices[[]0].content: want 'No space needed.', got ''*",
        ]
    )


def test_k_selects_by_case_transport_and_severity(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--streamproof=reference", "-k", "usage and bytes and must", "--co", "-q"
    )
    lines = [x for x in result.outlines if x.startswith("streamproof::")]
    assert lines and all("usage" in x and x.endswith("[bytes]") for x in lines)


def test_lf_reruns_only_the_failures(pytester: pytest.Pytester) -> None:
    args = (NAIVE, "--streamproof-case=sse-spec/*", "--streamproof-transport=whole")
    first = pytester.runpytest(*args).parseoutcomes()
    assert first["failed"] > 0 and first["passed"] > 0
    again = pytester.runpytest(*args, "--lf").parseoutcomes()
    assert again["failed"] == first["failed"]
    assert "passed" not in again


def test_skips_xfail_and_fail_on(pytester: pytest.Pytester, tmp_path: Path) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(
        json.dumps({"expectations": [{"case": "sse-spec/cr-line-endings", "reason": "LF only"}]})
    )
    result = pytester.runpytest(
        f"--streamproof={ADAPTERS / 'content_only.py'}",
        "--streamproof-transport=whole",
        "--streamproof-case=generic/http-429-json",  # content_only lacks http_error
    )
    result.assert_outcomes(skipped=1)
    result = pytester.runpytest(
        NAIVE,
        "--streamproof-transport=whole",
        f"--streamproof-expect={expect}",
        "--streamproof-case=sse-spec/cr-line-endings",
    )
    result.assert_outcomes(xfailed=1)
    result = pytester.runpytest(
        NAIVE,
        "--streamproof-transport=whole",
        "--streamproof-fail-on=must",
        "--streamproof-case=sse-spec/last-chunk-without-blank-line-no-done",
    )
    outcomes = result.parseoutcomes()
    assert "failed" not in outcomes


def test_a_broken_corpus_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    result = pytester.runpytest("--streamproof=reference", f"--streamproof-corpus={tmp_path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*streamproof: * not a corpus (no cases/ folder)*"])


def _verdicts(junit: Path) -> dict[str, str]:
    verdicts = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            if case.find(tag) is not None:
                outcome = tag
        verdicts[case.get("name", "")] = outcome
    return verdicts


def _naive_verdicts(run: Any, junit: Path, *extra: str) -> dict[str, str]:
    """The naive adapter's verdicts under whole and random (seed 3), read from JUnit."""
    args = ("--streamproof-transport=whole,random", "--streamproof-seed=3", *extra)
    run(NAIVE, *args, f"--junitxml={junit}")
    return _verdicts(junit)


def test_xdist_gives_the_same_verdicts(pytester: pytest.Pytester, tmp_path: Path) -> None:
    runs = [
        _naive_verdicts(pytester.runpytest_subprocess, tmp_path / f"junit{n}.xml", "-n", n)
        for n in ("0", "2")
    ]
    assert runs[0] == runs[1]
    assert len(runs[0]) >= 2 * 40
    assert set(runs[0].values()) == {"passed", "failure", "skipped"}
    # Only the faults on a real connection skip: they need --streamproof-http.
    assert {n.split("/")[0] for n, v in runs[0].items() if v == "skipped"} == {"wire"}


def test_streamproof_jobs_gives_the_same_verdicts_in_one_session(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    # -k deselects after the plugin collected: the pool follows the items that run.
    runs = [
        _naive_verdicts(
            pytester.runpytest,
            tmp_path / f"jobs{n}.xml",
            f"--streamproof-jobs={n}",
            "-k",
            "not sse",
        )
        for n in ("1", "3")
    ]
    assert runs[0] == runs[1]
    assert set(runs[0].values()) == {"passed", "failure", "skipped"}
    refused = pytester.runpytest(NAIVE, "--streamproof-jobs=0")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "--streamproof-jobs must be at least 1" in refused.stderr.str()


def test_html_report_has_the_summary_and_failure_details(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    pytester.runpytest(
        NAIVE,
        "--streamproof-transport=whole",
        "--streamproof-case=sse-spec/*",
        f"--html={report}",
        "--self-contained-html",
    )
    html = report.read_text()
    assert "streamproof-summary" in html
    for title in ("by severity", "by capability", "by provider", "by transport"):
        assert title in html
    assert "wire-view" in html


def test_junit_keeps_one_test_per_run_with_its_groups_as_properties(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    junit = tmp_path / "junit.xml"
    pytester.runpytest(
        f"--streamproof={ADAPTERS / 'content_only.py'}",
        "--streamproof-transport=whole,bytes",
        "--streamproof-case=generic/text-split-per-token",
        f"--junitxml={junit}",
    )
    cases = list(ElementTree.parse(junit).getroot().iter("testcase"))
    assert len(cases) == 2  # one per case × transport, names as before
    for case in cases:
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["group.content"] == "pass" and properties["group.status"] == "pass"
        assert properties["not_exposed"] == "finish_reason"
