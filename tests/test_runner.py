from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import load_corpus
from streamproof.harness.engine import Engine, Result, Verdict, judge, plan, select
from streamproof.harness.loader import AdapterError, ReplayResponse, load_adapter
from streamproof.reporting.results import exit_status, summarize

HERE = Path(__file__).parent / "adapters"
CORPUS = load_corpus()
BY_ID = {c.id: c for c in CORPUS.cases}


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[str, Engine]]:
    started: dict[str, Engine] = {}
    yield started
    for engine in started.values():
        engine.close()


@pytest.fixture
def run(engines: dict[str, Engine]):  # type: ignore[no-untyped-def]
    """Run a case through a test adapter's engine (one process per adapter, reused)."""

    def run_one(name: str, case_id: str, transport: str = "whole", **options: Any) -> Result:
        key = f"{name}{sorted(options.items())}"
        if key not in engines:
            spec = name if name.startswith("cmd:") else str(HERE / f"{name}.py")
            engines[key] = Engine(spec, **options)
        return engines[key].run(BY_ID[case_id], transport)

    return run_one


def test_reference_adapter_is_loaded_by_name_from_a_file() -> None:
    loaded = load_adapter("reference")
    assert loaded.name == "reference"
    assert "incremental" in loaded.capabilities


def test_an_exception_is_a_crash_with_a_one_line_message(run) -> None:  # type: ignore[no-untyped-def]
    result = run("raises", "generic/finish-without-done")
    assert result.verdict is Verdict.CRASH
    assert result.message == "ValueError: parser exploded on two lines"


def test_a_non_dict_outcome_fails(run) -> None:  # type: ignore[no-untyped-def]
    result = run("returns_list", "generic/finish-without-done")
    assert result.verdict is Verdict.FAIL
    assert "returned list" in result.message


def test_an_outcome_that_is_not_json_fails(run) -> None:  # type: ignore[no-untyped-def]
    result = run("not_json", "generic/finish-without-done")
    assert result.verdict is Verdict.FAIL
    assert "not JSON" in result.message


def test_an_outcome_breaking_the_schema_fails() -> None:
    result = judge(BY_ID["generic/finish-without-done"], "whole", {"status": "finished"}, 0.0)
    assert result.verdict is Verdict.FAIL
    assert "outcome schema" in result.message


def test_a_hang_is_a_timeout_and_the_next_case_runs(run) -> None:  # type: ignore[no-untyped-def]
    first = run("hangs", "generic/finish-without-done", timeout=0.5)
    assert first.verdict is Verdict.TIMEOUT
    assert "0.5 s" in first.message
    again = run("hangs", "generic/no-finish-no-done", timeout=0.5)
    assert again.verdict is Verdict.TIMEOUT


def test_a_process_that_exits_is_a_crash_and_is_restarted(
    run,
    engines: dict[str, Engine],  # type: ignore[no-untyped-def]
) -> None:
    first = run("exits", "generic/finish-without-done")
    assert first.verdict is Verdict.CRASH
    assert "died (exit code 3): parser giving up" in first.message
    second = run("exits", "generic/no-finish-no-done")
    assert second.verdict is Verdict.CRASH
    (engine,) = [e for k, e in engines.items() if k.startswith("exits")]
    assert engine.process.restarts == 2


def test_prints_to_stdout_do_not_break_the_protocol(run) -> None:  # type: ignore[no-untyped-def]
    assert run("prints", "generic/text-split-per-token", "bytes").verdict is Verdict.PASS


def test_a_subprocess_writing_garbage_is_a_crash(run) -> None:  # type: ignore[no-untyped-def]
    spec = f"cmd:{sys.executable} {HERE / 'garbage_protocol.py'}"
    result = run(spec, "generic/text-split-per-token")
    assert result.verdict is Verdict.CRASH
    assert "not a JSON line" in result.message


def test_async_parse_is_awaited(run) -> None:  # type: ignore[no-untyped-def]
    result = run("async_reference", "generic/text-split-per-token", "bytes")
    assert result.verdict is Verdict.PASS


def test_missing_capability_is_a_skip_never_a_fail(run) -> None:  # type: ignore[no-untyped-def]
    result = run("content_only", "generic/usage-in-finish-chunk")
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
def test_a_naive_parser_fails_the_cases_made_for_it(run, case_id: str) -> None:  # type: ignore[no-untyped-def]
    result = run("naive_lines", case_id)
    assert result.verdict in (Verdict.FAIL, Verdict.CRASH), result
    assert result.first_divergence


def test_a_naive_parser_still_passes_a_plain_stream(run) -> None:  # type: ignore[no-untyped-def]
    result = run("naive_lines", "generic/text-split-per-token", "bytes")
    assert result.verdict is Verdict.PASS, result.first_divergence


def test_plan_selects_by_glob_and_leaves_recorded_out_without_chunks() -> None:
    cases = select(CORPUS.cases, ["sse-spec/cr-line-*", "sse-spec/crlf-b*"])
    assert [c.id for c in cases] == [
        "sse-spec/cr-line-endings",
        "sse-spec/crlf-between-events-split-marker",
    ]
    assert {t for _, t in plan(cases, ["whole", "recorded"])} == {"whole"}


def test_summary_and_exit_status_follow_severity(run) -> None:  # type: ignore[no-untyped-def]
    results = [
        run("naive_lines", "sse-spec/last-chunk-without-blank-line-no-done"),
        run("naive_lines", "generic/text-split-per-token"),
    ]
    assert [r.case.severity for r in results] == ["may", "must"]
    assert results[1].verdict is Verdict.PASS
    failing_may = results[0].verdict is not Verdict.PASS
    assert exit_status(results, "may") == int(failing_may)
    assert exit_status(results, "should") == 0
    summary = summarize(results)
    assert summary["total"] == 2
    assert summary["errors"] == summary["crashed"] + summary["timed_out"]


def test_results_survive_a_round_trip_through_json() -> None:
    case = BY_ID["generic/finish-without-done"]
    result = judge(case, "whole", {"status": "truncated", "choices": []}, 0.25)
    again = Result.from_dict(result.as_dict(), case)
    assert again.as_dict() == result.as_dict()
    assert str(again.mismatches[0]) == str(result.mismatches[0])


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
    assert list(response.iter_bytes()) == []  # read once, like a socket


def test_async_reads_count_the_same() -> None:
    response = ReplayResponse(
        status=200, headers={}, request={}, case_id="c", transport="t", body=b"abc", ends=[2, 3]
    )

    async def collect() -> list[tuple[bytes, int]]:
        return [(chunk, response.bytes_delivered) async for chunk in response.aiter_bytes()]

    assert asyncio.run(collect()) == [(b"ab", 2), (b"c", 3)]


def test_the_templates_speak_the_protocol() -> None:
    templates = Path(__file__).parent.parent / "adapters" / "templates"
    for spec in (
        f"cmd:{sys.executable} {templates / 'protocol_adapter.py'}",
        str(templates / "inprocess_adapter.py"),
    ):
        engine = Engine(spec)
        try:
            assert engine.process.name == "my-parser"
            result = engine.run(BY_ID["generic/http-429-json"], "whole")
            assert result.verdict is Verdict.SKIP  # the template claims only what it has
        finally:
            engine.close()


def test_adapters_share_helpers_loaded_by_path() -> None:
    from streamproof.harness.loader import load_sibling

    adapters = Path(__file__).parent.parent / "adapters"
    reader = load_sibling(str(adapters / "httpx_sse.py"), "_chunk_reader.py")
    assert "content" in reader.CAPABILITIES
    with pytest.raises(FileNotFoundError):
        load_sibling(str(adapters / "httpx_sse.py"), "_no_such_helper.py")
