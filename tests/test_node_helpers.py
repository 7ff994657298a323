"""The Node adapters that drive a library's own helper: node-openai-helper, vercel-ai-result.

``node-openai-helper`` lets openai-node's ``chat.completions.stream()`` accumulate and
reads ``finalChatCompletion()``; ``vercel-ai-result`` reads ``streamText``'s result
promises. Each verdict below was checked by hand against the library's code in the
cache (``lib/ChatCompletionStream.js``, ``lib/AbstractChatCompletionRunner.js``,
``ai/dist/index.js``), beside what the raw adapters (``node-openai``, ``vercel-ai``)
report for the same case. Skipped, in one line, without ``streamproof setup-node``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import load_corpus
from streamproof.harness import nodejs
from streamproof.harness.engine import Engine, Result, Verdict
from streamproof.resources import data_path

try:
    nodejs.command_for("node-openai-helper")
except nodejs.NodeSetupError:
    pytest.skip(
        f"Node adapters not installed: run '{nodejs.INSTALL_COMMAND}'", allow_module_level=True
    )

BY_ID = {c.id: c for c in load_corpus().cases}
LOCK = json.loads((data_path("adapters") / "node" / "package-lock.json").read_text("utf-8"))
HELPER, RESULT = "node-openai-helper", "vercel-ai-result"


def locked(package: str) -> str:
    return str(LOCK["packages"][f"node_modules/{package}"]["version"])


Run = Callable[[str, str, str], Result]


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[str, Engine]]:
    started: dict[str, Engine] = {}
    yield started
    for engine in started.values():
        engine.close()


@pytest.fixture
def run(engines: dict[str, Engine]) -> Run:
    def run_one(name: str, case_id: str, transport: str = "bytes") -> Result:
        if name not in engines:
            argv = nodejs.command_for(name)
            assert argv is not None
            engines[name] = Engine("cmd:" + shlex.join(argv))
        return engines[name].run(BY_ID[case_id], transport)

    return run_one


def outcome_of(run: Run, name: str, case_id: str) -> dict[str, Any]:
    result = run(name, case_id, "bytes")
    assert result.outcome is not None, result.first_divergence
    return result.outcome


def test_handshake_names_the_library_and_its_places(engines: dict[str, Engine]) -> None:
    common = {"content", "finish_reason", "usage", "tool_calls", "stream_error", "http_error"}
    expected = {
        HELPER: (
            locked("openai"),
            common
            | {"role", "refusal", "multiple_choices", "metadata", "incremental"}
            | {"function_call", "custom_tool_calls", "logprobs", "audio", "annotations"},
            True,
        ),
        RESULT: (
            f"{locked('ai')} (@ai-sdk/openai-compatible {locked('@ai-sdk/openai-compatible')})",
            common | {"reasoning", "non_streaming", "metadata", "incremental"},
            False,
        ),
    }
    for name, (version, capabilities, has_call) in expected.items():
        argv = nodejs.command_for(name)
        assert argv is not None
        engine = Engine("cmd:" + shlex.join(argv))
        try:
            assert (engine.process.name, engine.process.version) == (name, version)
            assert engine.capabilities == capabilities
            assert engine.process.supports_call is has_call
        finally:
            engine.close()


PLAIN = "generic/finish-without-done"
HTTP_429 = "generic/http-429-json"
CORRUPT = "generic/corrupt-data-after-text"
TOOL_CALL = "generic/finish-reason-tool-calls"
PER_EVENT = "generic/content-surfaces-per-event"
NO_FINISH = "generic/done-without-finish-reason"

CASES: list[tuple[str, str, Verdict, str]] = [
    (HELPER, PLAIN, Verdict.PASS, ""),
    (HELPER, HTTP_429, Verdict.PASS, ""),
    (HELPER, TOOL_CALL, Verdict.PASS, ""),
    (HELPER, PER_EVENT, Verdict.PASS, ""),
    (HELPER, "generic/two-choices-interleaved", Verdict.PASS, ""),
    (HELPER, "openai/refusal-stream-2024", Verdict.PASS, ""),
    # The SDK's stream throws a SyntaxError; the helper wraps it, the adapter rethrows it.
    (HELPER, CORRUPT, Verdict.CRASH, "SyntaxError: Error reading response: malformed"),
    # finalizeChatCompletion: "missing finish_reason for choice 0", though [DONE] came.
    (HELPER, NO_FINISH, Verdict.FAIL, "status: want 'complete', got 'error'"),
    # A cut stream: the helper rejects it, and the text that arrived is lost with it
    # (judged on the content; the truncated status is not exposed).
    (
        HELPER,
        "generic/no-finish-no-done",
        Verdict.FAIL,
        "choices[0].content: want 'Step one: preheat the oven to 180 degrees.', got ''",
    ),
    (RESULT, PLAIN, Verdict.PASS, ""),
    (RESULT, HTTP_429, Verdict.PASS, ""),
    (RESULT, CORRUPT, Verdict.PASS, ""),
    (RESULT, PER_EVENT, Verdict.PASS, ""),
    # toolCalls carry the parsed input only: its JSON.stringify loses the sent spacing.
    (RESULT, TOOL_CALL, Verdict.FAIL, """want '{"city": "Paris"}', got '{"city":"Paris"}'"""),
    (RESULT, NO_FINISH, Verdict.FAIL, "status: want 'complete'"),
    # The SDK merges a refusal into the text: judged on the content, it is there.
    (
        RESULT,
        "openai/refusal-stream-2024",
        Verdict.FAIL,
        "choices[0].content: want '', got \"I'm sorry, but I can't help with that.\"",
    ),
    # A request without stream: true goes through generateText.
    (RESULT, "cerebras/non-streamed-reasoning-field", Verdict.PASS, ""),
    (RESULT, "generic/non-streamed-tool-calls", Verdict.PASS, ""),
    (RESULT, "openrouter/http-404-no-endpoints-found", Verdict.PASS, ""),
]


@pytest.mark.parametrize("transport", ["whole", "bytes"])
@pytest.mark.parametrize(
    ("name", "case_id", "verdict", "detail"), CASES, ids=[f"{n}:{c}" for n, c, _, _ in CASES]
)
def test_verdicts_checked_by_hand(
    run: Run, name: str, case_id: str, verdict: Verdict, detail: str, transport: str
) -> None:
    result = run(name, case_id, transport)
    assert result.verdict is verdict, result.first_divergence
    assert detail in result.first_divergence


def test_the_raw_adapter_passes_where_the_helper_rejects_an_unfinished_turn(run: Run) -> None:
    # node-openai accumulates the chunks itself and reports what came; the helper refuses.
    assert run("node-openai", NO_FINISH, "bytes").verdict is Verdict.PASS
    outcome = outcome_of(run, HELPER, NO_FINISH)
    assert outcome["error"]["message"] == "missing finish_reason for choice 0"
    assert outcome["error"]["http_status"] is None


def test_http_errors_keep_the_status_and_report_no_choice(run: Run) -> None:
    for name in (HELPER, RESULT):
        outcome = outcome_of(run, name, HTTP_429)
        assert outcome["status"] == "error" and outcome["choices"] == []
        assert outcome["error"]["http_status"] == 429
        assert outcome["error"]["code"] == "rate_limit_exceeded"


def test_a_stream_error_keeps_the_text_that_arrived(run: Run) -> None:
    for name in (HELPER, RESULT):
        outcome = outcome_of(run, name, "openai/error-object-mid-stream")
        assert outcome["status"] == "error"
        assert outcome["error"]["type"] == "server_error"
        assert outcome["choices"][0]["content"] == "Photosynthesis converts light"


def test_the_helper_keeps_each_choice_and_its_deltas(run: Run) -> None:
    outcome = outcome_of(run, HELPER, "generic/two-choices-interleaved")
    contents = [(c["index"], c["content"]) for c in outcome["choices"]]
    assert contents == [(0, "Mochi or Luna."), (1, "Pepper.")]
    assert {d["choice"] for d in outcome["deltas"]} == {0, 1}


def test_the_result_reports_the_raw_finish_reason_usage_and_the_typed_tool_call(
    run: Run,
) -> None:
    outcome = outcome_of(run, RESULT, "generic/finish-reason-eos")
    assert outcome["choices"][0]["finish_reason"] == "eos"  # rawFinishReason, not "other"
    assert outcome["usage"] == {"prompt_tokens": 37, "completion_tokens": 8, "total_tokens": 45}
    (call,) = outcome_of(run, RESULT, TOOL_CALL)["choices"][0]["tool_calls"]
    assert call == {
        "index": 0,
        "id": "call_Ejp34o21D0WkQioy5Lnd9BSD",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }


def test_generate_text_reads_the_same_fields_without_deltas(run: Run) -> None:
    outcome = outcome_of(run, RESULT, "cerebras/non-streamed-reasoning-field")
    assert "deltas" not in outcome and outcome["status"] == "complete"
    (choice,) = outcome["choices"]
    assert choice["reasoning"] and choice["content"] and choice["finish_reason"] == "stop"


def test_deltas_surface_per_read_under_the_bytes_transport(run: Run) -> None:
    body = BY_ID[PER_EVENT].body
    for name in (HELPER, RESULT):
        deltas = outcome_of(run, name, PER_EVENT)["deltas"]
        assert deltas and all(0 < d["at_byte"] < len(body) for d in deltas[:-1])
        assert [d["at_byte"] for d in deltas] == sorted(d["at_byte"] for d in deltas)


def test_the_helper_over_http_gives_the_in_process_verdicts(tmp_path: Path) -> None:
    verdicts = []
    cases = [PLAIN, HTTP_429, NO_FINISH, "openai/error-object-mid-stream", CORRUPT]
    for extra in ([], ["--http"]):
        out = tmp_path / f"out{len(extra)}.json"
        command = [sys.executable, "-m", "streamproof", "run", "--adapter", HELPER]
        command += ["--transport", "whole", *[a for c in cases for a in ("--case", c)]]
        command += [*extra, "--json", str(out)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 1, proc.stderr
        results = json.loads(out.read_text(encoding="utf-8"))["results"]
        verdicts.append({r["case"]: r["verdict"] for r in results})
    assert verdicts[0] == verdicts[1]
    assert (verdicts[1][NO_FINISH], verdicts[1][CORRUPT]) == ("fail", "crash")
