from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import load_corpus
from streamproof.harness.capture import OUTPUT_LIMIT, last_meaningful_line
from streamproof.harness.engine import (
    Engine,
    Result,
    Verdict,
    judge,
    plan,
    select,
)
from streamproof.harness.loader import AdapterError, ReplayResponse, load_adapter
from streamproof.harness.messages import run_message
from streamproof.harness.protocol import AdapterProcess, Reply
from streamproof.harness.verdicts import JSON_VALUE_LIMIT
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
    result = run("content_only", "generic/http-429-json")  # an HTTP error, no http_error
    assert result.verdict is Verdict.SKIP
    assert result.message == "adapter lacks http_error"
    assert result.groups is None and "status" in result.not_exposed


def test_a_case_is_judged_on_the_groups_the_adapter_exposes(run) -> None:  # type: ignore[no-untyped-def]
    """docs/semantics.md §12.6: content_only is judged on the content and the status of a
    case that also states a finish reason; that one is listed as not judged."""
    result = run("content_only", "generic/text-split-per-token")
    assert result.verdict is Verdict.PASS
    assert result.groups == {"status": "pass", "content": "pass"}
    assert result.not_exposed == ("finish_reason",)
    # A case that states nothing it exposes but the status of a complete answer is
    # judged on that status: a false alarm or a crash would be wrong.
    result = run("content_only", "generic/usage-in-finish-chunk")
    assert result.groups == {"status": "pass"}
    assert set(result.not_exposed) == {"finish_reason", "usage"}


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


# -- what the adapter printed, and how replies are read -----------------------

SCRIPTED = HERE / "scripted_protocol.py"
HELLO = {"name": "scripted", "version": "1"}


def scripted(mode: str, hello: object = HELLO, *extra: object) -> str:
    argv = [sys.executable, str(SCRIPTED), json.dumps(hello), mode, *map(str, extra)]
    return "cmd:" + shlex.join(argv)


def test_what_an_adapter_prints_is_attached_to_its_case(run) -> None:  # type: ignore[no-untyped-def]
    first = run("chatty", "generic/no-finish-no-done")
    second = run("chatty", "generic/text-split-per-token")
    assert "parsing generic/no-finish-no-done" in first.output
    assert "warning from generic/no-finish-no-done" in first.output
    assert "generic/text-split-per-token" not in first.output
    assert "parsing generic/text-split-per-token" in second.output
    assert "no-finish-no-done" not in second.output
    assert second.as_dict()["output"] == second.output


def test_the_output_kept_per_case_is_bounded(run) -> None:  # type: ignore[no-untyped-def]
    result = run("chatty", "generic/finish-without-done")  # prints 1 MB
    assert len(result.output.encode()) <= OUTPUT_LIMIT + 100
    assert result.output.startswith("…(")
    assert "earlier bytes dropped" in result.output.splitlines()[0]
    assert result.output.endswith("warning from generic/finish-without-done\n")


def test_a_silent_adapter_adds_no_output_to_its_row(run) -> None:  # type: ignore[no-untyped-def]
    result = run("naive_lines", "generic/text-split-per-token")
    assert result.output == ""
    assert "output" not in result.as_dict()


def test_a_node_crash_names_the_error_not_the_runtime_banner() -> None:
    engine = Engine(scripted("node-death"))
    try:
        result = engine.run(BY_ID["generic/text-split-per-token"], "whole")
    finally:
        engine.close()
    assert result.verdict is Verdict.CRASH
    assert result.message == "adapter process died (exit code 1): Error: parser exploded"
    assert "Node.js v20.11.1" in result.output


def test_last_meaningful_line_skips_banners_and_stack_frames() -> None:
    assert last_meaningful_line("ValueError: x\n\n") == "ValueError: x"
    assert last_meaningful_line("Error: y\n    at f (a.mjs:1:2)\n\nNode.js v22.3.0\n") == "Error: y"
    assert last_meaningful_line("") == ""


def _one_run(spec: str, timeout: float = 60.0, **options: Any) -> Reply:
    process = AdapterProcess(spec, **options)
    process.start()
    try:
        case = BY_ID["generic/text-split-per-token"]
        message = run_message(
            case.id, "whole", case.status, case.headers, case.request, case.body, [len(case.body)]
        )
        return process.run(message, timeout)
    finally:
        process.close()


def test_a_reply_over_the_maximum_size_is_a_crash_at_once() -> None:
    reply = _one_run(scripted("huge"), max_reply=1 << 20)
    assert reply.kind == "crash"
    assert reply.message == "protocol: reply longer than the maximum reply size (1048576 bytes)"
    assert _one_run(scripted("huge"), max_reply=4 << 20).kind == "outcome"


@pytest.mark.parametrize(
    ("mode", "said"),
    [("wrong-seq", "reply with seq 101, expected seq 1"), ("no-seq", "reply with no seq")],
)
def test_a_reply_with_a_wrong_seq_is_a_protocol_crash_at_once(mode: str, said: str) -> None:
    reply = _one_run(scripted(mode))  # the old reader waited out these 60 s
    assert reply.kind == "crash"
    assert reply.message.startswith(f"protocol: {said}")


def test_a_silent_handshake_fails_after_its_time_limit() -> None:
    with pytest.raises(AdapterError, match=r"no reply within 0\.5 s"):
        AdapterProcess(scripted("silent-start"), start_timeout=0.5).start()


def test_the_handshake_time_limit_follows_the_timeout_with_a_floor() -> None:
    assert AdapterProcess("reference").start_timeout == 60.0  # no --timeout
    assert AdapterProcess("reference", timeout=600).start_timeout == 600.0
    assert AdapterProcess("reference", timeout=0.5).start_timeout == 10.0
    engine = Engine(str(HERE / "raises.py"), timeout=300)
    engine.close()
    assert engine.process.start_timeout == 300.0


@pytest.mark.parametrize("capabilities", [5, "content", [1, 2], {"content": True}])
def test_capabilities_that_are_not_a_list_of_names_are_an_adapter_error(
    capabilities: object,
) -> None:
    spec = scripted("ok", {**HELLO, "capabilities": capabilities})
    with pytest.raises(AdapterError, match="capabilities must be a list of names, got "):
        AdapterProcess(spec).start()


def test_a_restart_that_fails_makes_the_remaining_runs_crashes(tmp_path: Path) -> None:
    engine = Engine(scripted("restart-fails", HELLO, tmp_path / "starts", 1))
    try:
        verdicts = [
            engine.run(BY_ID[case_id], "whole")
            for case_id in ("generic/text-split-per-token", "generic/finish-without-done")
        ]
    finally:
        engine.close()
    assert [r.verdict for r in verdicts] == [Verdict.CRASH, Verdict.CRASH]
    assert verdicts[0].message.startswith("adapter process died (exit code 3)")
    assert verdicts[1].message == "the adapter could not be restarted: cannot load the parser"


def test_a_divergence_is_shown_short_and_kept_bounded_in_json() -> None:
    case = BY_ID["generic/text-split-per-token"]
    content = "x" * 3_000_000
    outcome = {"status": "complete", "choices": [{"index": 0, "content": content}]}
    result = judge(case, "whole", outcome, 0.0)
    assert result.verdict is Verdict.FAIL
    shown = result.first_divergence
    assert len(shown) < 520
    assert shown.endswith(" more)")
    assert "…(" in shown
    actual = result.as_dict()["mismatches"][0]["actual"]
    assert actual.startswith("x" * JSON_VALUE_LIMIT)
    assert actual.endswith(f"…({len(content) - JSON_VALUE_LIMIT} more)")


def _streamproof(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_run_whose_restart_fails_completes_and_writes_its_results(tmp_path: Path) -> None:
    # One start succeeds (the run's probe, which the engine takes over); the restart does not.
    spec = scripted("restart-fails", HELLO, tmp_path / "starts", 1)
    out = tmp_path / "results.json"
    proc = _streamproof(
        "run", "--adapter", spec, "--case", "generic/*", "--transport", "whole", "--json", out
    )
    assert proc.returncode == 1, proc.stderr
    rows = json.loads(out.read_text())["results"]
    assert len(rows) > 2
    assert {r["verdict"] for r in rows} == {"crash"}
    assert all("could not be restarted" in r["message"] for r in rows[1:])


@pytest.mark.parametrize("capabilities", [5, "content"])
def test_a_handshake_with_bad_capabilities_is_one_line_and_exit_2(capabilities: object) -> None:
    spec = scripted("ok", {**HELLO, "capabilities": capabilities})
    proc = _streamproof("run", "--adapter", spec, "--case", "generic/*")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "capabilities must be a list of names, got " in proc.stderr


def test_the_cli_handshake_follows_timeout() -> None:
    proc = _streamproof("run", "--adapter", scripted("silent-start"), "--timeout", "10.5")
    assert proc.returncode == 2
    assert "no reply within 10.5 s" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_results_json_carries_what_the_adapter_printed(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    proc = _streamproof(
        "run", "--adapter", HERE / "chatty.py", "--case", "generic/no-finish-no-done",
        "--transport", "whole,lines", "--json", out,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    rows = json.loads(out.read_text())["results"]
    assert [r["transport"] for r in rows] == ["whole", "lines"]
    for row in rows:
        assert row["output"] == (
            "parsing generic/no-finish-no-done\nwarning from generic/no-finish-no-done\n"
        )
