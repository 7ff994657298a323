from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from streamproof.adapter import CAPABILITIES, Adapter, AdapterError, ReplayResponse, load_adapter
from streamproof.corpus import load_corpus
from streamproof.results import exit_status, summarize
from streamproof.runner import Verdict, plan, run_case, select

HERE = Path(__file__).parent / "adapters"
CORPUS = load_corpus()
BY_ID = {c.id: c for c in CORPUS.cases}


def adapter(name: str):  # type: ignore[no-untyped-def]
    return load_adapter(str(HERE / f"{name}.py"))


def test_reference_adapter_is_loaded_by_name_from_a_file() -> None:
    loaded = load_adapter("reference")
    assert loaded.name == "reference"
    assert "incremental" in loaded.capabilities


def test_an_exception_is_a_crash_with_a_one_line_message() -> None:
    result = run_case(adapter("raises"), BY_ID["generic/finish-without-done"], "whole")
    assert result.verdict is Verdict.CRASH
    assert result.message == "ValueError: parser exploded on two lines"


def test_a_non_dict_outcome_fails() -> None:
    result = run_case(adapter("returns_list"), BY_ID["generic/finish-without-done"], "whole")
    assert result.verdict is Verdict.FAIL
    assert "returned list" in result.message


def test_an_outcome_breaking_the_schema_fails() -> None:
    bad = Adapter(
        spec="x",
        name="x",
        version="1",
        capabilities=CAPABILITIES,
        parse=lambda response: {"status": "finished"},
    )
    result = run_case(bad, BY_ID["generic/finish-without-done"], "whole")
    assert result.verdict is Verdict.FAIL
    assert "outcome schema" in result.message


def test_async_parse_is_awaited() -> None:
    result = run_case(adapter("async_reference"), BY_ID["generic/text-split-per-token"], "bytes")
    assert result.verdict is Verdict.PASS


def test_missing_capability_is_a_skip_never_a_fail() -> None:
    result = run_case(adapter("content_only"), BY_ID["generic/usage-in-finish-chunk"], "whole")
    assert result.verdict is Verdict.SKIP
    assert "usage" in result.message


@pytest.mark.parametrize(
    "case_id",
    [
        "sse-spec/cr-line-endings",
        "sse-spec/no-space-after-colon",
        "sse-spec/multi-line-data-joined-with-newline",
        "generic/no-finish-no-done",
    ],
)
def test_a_naive_parser_fails_the_cases_made_for_it(case_id: str) -> None:
    result = run_case(adapter("naive_lines"), BY_ID[case_id], "whole")
    assert result.verdict in (Verdict.FAIL, Verdict.CRASH), result
    assert result.first_divergence


def test_a_naive_parser_still_passes_a_plain_stream() -> None:
    result = run_case(adapter("naive_lines"), BY_ID["generic/text-split-per-token"], "bytes")
    assert result.verdict is Verdict.PASS, result.first_divergence


def test_plan_selects_by_glob_and_leaves_recorded_out_without_chunks() -> None:
    cases = select(CORPUS.cases, ["sse-spec/cr*"])
    assert [c.id for c in cases] == [
        "sse-spec/cr-line-endings",
        "sse-spec/crlf-between-events-split-marker",
        "sse-spec/crlf-line-endings",
    ]
    assert {t for _, t in plan(cases, ["whole", "recorded"])} == {"whole"}


def test_summary_and_exit_status_follow_severity() -> None:
    naive = adapter("naive_lines")
    results = [
        run_case(naive, BY_ID["sse-spec/last-chunk-without-blank-line-no-done"], "whole"),
        run_case(naive, BY_ID["generic/text-split-per-token"], "whole"),
    ]
    assert [r.case.severity for r in results] == ["may", "must"]
    assert results[1].verdict is Verdict.PASS
    failing_may = results[0].verdict is not Verdict.PASS
    assert exit_status(results, "may") == int(failing_may)
    assert exit_status(results, "should") == 0
    summary = summarize(results)
    assert summary["total"] == 2
    assert summary["errors"] == summary["crashed"] + summary["timed_out"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-adapter", "is not a built-in adapter"),
        ("tests/adapters/missing.py", "no such adapter file"),
        (str(HERE / "no_parse.py"), "defines no parse"),
        (str(HERE / "bad_capability.py"), "unknown capabilities ['telepathy']"),
        ("cmd:node x.mjs", "not supported"),
    ],
)
def test_bad_adapter_specs_are_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(AdapterError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_adapter(spec)


def test_bytes_delivered_counts_what_was_handed_out() -> None:
    response = ReplayResponse(
        status=200,
        headers={"Content-Type": "x"},
        request={},
        case_id="c",
        transport="t",
        body=b"abcdef",
        ends=[1, 4, 6],
    )
    assert response.headers == {"content-type": "x"}
    seen = [(chunk, response.bytes_delivered) for chunk in response.iter_bytes()]
    assert seen == [(b"a", 1), (b"bcd", 4), (b"ef", 6)]
    with pytest.raises(RuntimeError, match="only once"):
        list(response.iter_bytes())


def test_async_reads_count_the_same() -> None:
    response = ReplayResponse(
        status=200, headers={}, request={}, case_id="c", transport="t", body=b"abc", ends=[2, 3]
    )

    async def collect() -> list[tuple[bytes, int]]:
        return [(chunk, response.bytes_delivered) async for chunk in response.aiter_bytes()]

    assert asyncio.run(collect()) == [(b"ab", 2), (b"c", 3)]
