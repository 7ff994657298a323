"""``streamproof lint`` and the provider report.

The key property: lint of every case of the corpus reports exactly the
quirks its ``tags`` name (plus, for a stream, its provider's baselines),
restricted to the quirks lint can see from one body (``DETECTABLE``). Where
a provider's baseline cannot show in one of its bodies, the gap is listed
below with the reason, and the test checks the gap is exactly that, so a
fixed case makes its entry fail as stale instead of leaving it silently
behind.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from streamproof.checks import rules as lint_checks
from streamproof.checks import scan as lint_scan
from streamproof.checks.report import (
    DETECTABLE,
    LintReport,
    body_kind,
    lint_body,
    lint_case,
)
from streamproof.checks.rules import check_completion, check_error_body
from streamproof.checks.stream import check_stream
from streamproof.cli.lint import add_arguments
from streamproof.cli.lint import run as main
from streamproof.corpus import Case, load_corpus
from streamproof.corpus.quirks import Catalogue, load_quirks
from streamproof.live import record
from streamproof.reporting.providers import provider_report, write_provider_report
from streamproof.resources import data_path

CORPUS = load_corpus()
CATALOGUE, _ = load_quirks(CORPUS.root)
CASES = {case.id: case for case in CORPUS.cases}


def _report(case: Case) -> LintReport:
    assert CATALOGUE is not None
    return lint_case(case, CATALOGUE)


def _chunk(id_: str, choices: str, extra: str = "") -> bytes:
    return (
        f'data: {{"id":"{id_}","object":"chat.completion.chunk","created":1767225600,'
        f'"model":"gpt-4o-mini","choices":[{choices}]{extra}}}'
    ).encode()


def _crlf_stream() -> bytes:
    lines = [
        _chunk(
            "chatcmpl-A",
            '{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}',
        ),
        b"",
        _chunk("chatcmpl-B", '{"index":0,"delta":{"content":"Hi"},"finish_reason":null}'),
        b"",
        _chunk("chatcmpl-A", '{"index":0,"delta":{},"finish_reason":"stop"}'),
        b"",
        _chunk(
            "chatcmpl-A",
            "",
            ',"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":6}',
        ),
        b"",
        b"data: [DONE]",
        b"",
        _chunk("chatcmpl-A", '{"index":0,"delta":{"content":" again"},"finish_reason":null}'),
        b"",
    ]
    return b"".join(line + b"\r\n" for line in lines)


def test_a_hand_made_stream_reports_each_deviation_at_its_exact_offset() -> None:
    assert CATALOGUE is not None
    body = _crlf_stream()
    report = lint_body(body, "stream", CATALOGUE)
    at = {d.quirk: d for d in report.deviations}
    assert set(at) == {"crlf", "per-chunk-id", "usage-total-mismatch", "data-after-done"}
    crlfs = tuple(m.start() for m in re.finditer(b"\r\n", body))
    assert at["crlf"].offset == body.index(b"\r\n") == crlfs[0]
    assert at["crlf"].offsets == crlfs
    assert at["per-chunk-id"].offset == body.index(b'"id":"chatcmpl-B"')
    assert body[at["per-chunk-id"].offset :].startswith(b'"id"')
    assert at["usage-total-mismatch"].offset == body.index(b'"total_tokens"')
    done = body.index(b"data: [DONE]")
    assert at["data-after-done"].offset == body.index(b"data: {", done)
    assert [d.offset for d in report.deviations] == sorted(d.offset for d in report.deviations)
    assert "total_tokens 6 is not prompt 3 + completion 2" in at["usage-total-mismatch"].message


def test_a_key_is_located_at_its_own_depth() -> None:
    body = (
        b'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"x_groq":{"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}},'
        b'"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":3}}\n\n'
        b"data: [DONE]\n\n"
    )
    found = {f.quirk: f.offset for f in check_stream(body)}
    assert found["usage-total-mismatch"] == body.rindex(b'"total_tokens"')
    assert found["usage-in-vendor-object"] == body.index(b'"usage"')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5),
    st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
    st.booleans(),
)
def test_the_locator_finds_every_top_level_key(
    value: dict[str, Any], separators: tuple[str, str], ascii_only: bool
) -> None:
    data = json.dumps(value, separators=separators, ensure_ascii=ascii_only).encode()
    for key in value:
        at = lint_scan._find(data, (key,))
        assert at is not None
        assert data[at:].startswith(json.dumps(key, ensure_ascii=ascii_only).encode())


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_lint_never_fails_on_any_bytes(body: bytes) -> None:
    for check in (check_stream, check_completion, check_error_body):
        for finding in check(body):
            assert finding.quirk in DETECTABLE
            assert 0 <= finding.offset <= len(body)


# -------------------------------------------------------------- SSE hygiene rules


def _quirks(body: bytes) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for finding in check_stream(body):
        found.setdefault(finding.quirk, []).append(finding.offset)
    return found


_OK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}'
)


@pytest.mark.parametrize(
    ("body", "quirks"),
    [
        (_OK + b"\n\ndata: [DONE]\n\n", set()),
        (b"\xef\xbb\xbf" + _OK + b"\n\ndata: [DONE]\n\n", {"bom"}),
        (_OK.replace(b"data: ", b"data:") + b"\n\ndata: [DONE]\n\n", {"no-space-after-colon"}),
        (_OK.replace(b"data: ", b"data:  ") + b"\n\ndata: [DONE]\n\n", {"space-after-colon"}),
        (b": keep-alive\n\n" + _OK + b"\n\ndata: [DONE]\n\n", {"keep-alive-comment"}),
        (b": note\n" + _OK + b"\n\ndata: [DONE]\n\n", {"comment"}),
        (b"event: message\n" + _OK + b"\n\ndata: [DONE]\n\n", {"event-type"}),
        (b"event: ping\n\n" + _OK + b"\n\ndata: [DONE]\n\n", {"event-type", "empty-event"}),
        (b"id: 7\nretry: 10\n" + _OK + b"\n\ndata: [DONE]\n\n", {"event-id", "retry"}),
        (b"\n" + _OK + b"\n\ndata: [DONE]\n\n", {"blank-lines"}),
        (_OK + b"\n\ndata: [DONE]\n", {"no-final-blank-line"}),
        (_OK + b"\n\ndata: [DONE]", {"no-final-blank-line"}),
        (_OK + b"\n\n", {"no-done"}),
        (_OK + b"\n\n[DONE]\n\n", {"no-done", "bare-done-line", "field-without-colon"}),
        (_OK[:40], {"unterminated-event", "no-done"}),
        (_OK + b"\n\ndata: {oops}\n\ndata: [DONE]\n\n", {"corrupt-json"}),
        (_OK + b"\n\ndata:\n\ndata: [DONE]\n\n", {"corrupt-json", "empty-data-event"}),
        (_OK + b"\r\n\r\ndata: [DONE]\r\n\r\n", {"crlf"}),
        (_OK + b"\r\rdata: [DONE]\r\r", {"cr"}),
        (_OK + b"\r\n\r\ndata: [DONE]\n\n", {"crlf", "mixed-line-endings"}),
        (
            b'error: {"message":"boom"}\n\n' + _OK + b"\n\ndata: [DONE]\n\n",
            {"unknown-field", "error-sse-field", "error-in-200"},
        ),
        (_OK + b"\n\ndata: [DONE]\n\n" + _OK + b"\n\n", {"data-after-done"}),
    ],
)
def test_sse_framing_rules(body: bytes, quirks: set[str]) -> None:
    assert set(_quirks(body)) == quirks


def test_json_rules() -> None:
    def stream(*chunks: str) -> bytes:
        return b"".join(b"data: " + c.encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"

    head = '"id":"c","object":"chat.completion.chunk","created":1,"model":"m"'
    role = (
        f'{{{head},"choices":[{{"index":0,"delta":{{"role":"assistant"}},"finish_reason":null}}]}}'
    )
    stop = f'{{{head},"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}'
    text = f'{{{head},"choices":[{{"index":0,"delta":{{"content":"a"}},"finish_reason":null}}]}}'
    assert _quirks(stream(role, text, stop)) == {}
    assert set(_quirks(stream(text, stop))) == {"content-before-role"}
    assert set(_quirks(stream(role, text, stop, stop))) == {"finish-reason-repeated"}
    eos = stop.replace('"stop"', '"eos"')
    assert set(_quirks(stream(role, text, eos))) == {"finish-reason-eos"}
    upper = stop.replace('"stop"', '"STOP"')
    assert set(_quirks(stream(role, text, upper))) == {"finish-reason-nonstandard"}
    no_key = text.replace(',"finish_reason":null', "")
    assert set(_quirks(stream(role, no_key, stop))) == {"finish-reason-key-missing"}
    tools = [
        '[{"index":1,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]',
        '[{"index":1,"function":{"arguments":"{}"}}]',
        '[{"index":3,"id":"call_2","type":"function","function":{"name":"g","arguments":""}}]',
    ]
    calls = [text.replace('"content":"a"', f'"tool_calls":{t}') for t in tools]
    finish = stop.replace('"stop"', '"tool_calls"')
    found = _quirks(stream(role, *calls, finish))
    assert set(found) == {"tool-call-index-not-zero", "tool-call-index-gap"}
    moved = text.replace('"created":1', '"created":2').replace('"model":"m"', '"model":"n"')
    assert set(_quirks(stream(role, moved, stop))) == {"created-varies", "model-varies"}
    placeholder = text[:-1] + ',"usage":{"total_tokens":0}}'
    real = stop[:-1] + ',"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
    assert set(_quirks(stream(role, placeholder, real))) == {
        "usage-zero-placeholder",
        "usage-in-finish-chunk",
    }
    broken = role.replace('"index":0', '"index":"0"')
    found = _quirks(stream(broken, text, stop))
    assert set(found) == {"chunk-shape"}
    error = '{"error":{"code":"overloaded"}}'
    assert set(_quirks(stream(role, text, error))) == {"error-in-200", "chunk-shape"}
    # an empty tool_calls list beside the text is no call: stop after it is no quirk
    empty = text.replace('"content":"a"', '"content":"a","tool_calls":[]')
    assert _quirks(stream(role, empty, stop)) == {}
    called = text.replace('"content":"a"', f'"tool_calls":{tools[0]}')
    assert "finish-reason-stop-after-tool-calls" in _quirks(stream(role, called, stop))


def test_offsets_map_through_an_event_of_several_data_lines() -> None:
    body = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",\n'
        b'data:  "choices":[],\n'
        b'data:  "usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":5}}\n\n'
        b"data: [DONE]\n\n"
    )
    found = _quirks(body)
    assert found["usage-total-mismatch"] == [body.index(b'"total_tokens"')]
    assert found["multi-line-data"] == [body.index(b"data:  ")]


# ----------------------------------------------------------- schemas of JSON bodies


@pytest.mark.parametrize("name", ["chunk", "completion"])
def test_the_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = json.loads((data_path("schemas") / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["additionalProperties"] is True


@pytest.mark.parametrize(
    "case_id",
    [c.id for c in CORPUS.cases if c.provider == "openai" and _report(c).kind != "stream"],
)
def test_openai_bodies_and_errors_fit_the_reference_schemas(case_id: str) -> None:
    assert "chunk-shape" not in _report(CASES[case_id]).quirks


_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1767225600,
    "model": "gpt-4o-mini",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi", "refusal": None},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


def _shape(findings: list[lint_checks.Finding]) -> list[str]:
    return [f.message for f in findings if f.quirk == "chunk-shape"]


def test_a_completion_body_is_checked_against_its_schema() -> None:
    assert check_completion(json.dumps(_COMPLETION).encode()) == [
        lint_checks.Finding(0, "json-python-separators", "JSON with ', ' and ': ' separators")
    ]
    assert check_completion(json.dumps(_COMPLETION, separators=(",", ":")).encode()) == []
    broken = {**_COMPLETION, "object": "completion", "created": "now"}
    del broken["model"]
    broken["choices"] = [{"index": 0, "finish_reason": "stop"}]
    messages = _shape(check_completion(json.dumps(broken, separators=(",", ":")).encode()))
    assert any(m.startswith("object:") for m in messages)
    assert any(m.startswith("created:") for m in messages)
    assert any("'model' is a required property" in m for m in messages)
    assert any("'message' is a required property" in m for m in messages)
    [not_json] = check_completion(b"{not json")
    assert not_json.quirk == "chunk-shape" and not_json.message.startswith("the body is not JSON")
    padded = b"\n\n" + json.dumps(_COMPLETION, separators=(",", ":")).encode()
    assert [(f.offset, f.quirk) for f in check_completion(padded)] == [
        (0, "leading-whitespace-json")
    ]


@pytest.mark.parametrize(
    ("body", "quirks"),
    [
        ({"error": {"message": "x", "type": "t", "param": None, "code": None}}, set()),
        (
            {"error": {"message": "x", "type": "t", "param": None, "code": 429}},
            {"error-code-numeric"},
        ),
        ({"error": {"message": "x", "code": "429"}}, {"error-code-digit-string"}),
        ({"error": {"message": {"detail": []}, "type": "t"}}, {"error-message-object"}),
        ({"error": "boom", "code": 400}, {"error-string", "error-code-numeric"}),
        ({"message": "boom", "type": "t"}, {"error-top-level-message"}),
        ([{"error": {"message": "x", "code": None}}], {"error-body-array"}),
        ({"detail": "Not Found"}, {"chunk-shape"}),
        ({"error": {"type": "t"}}, {"chunk-shape"}),
    ],
)
def test_an_error_body_is_checked_against_the_error_shape(body: Any, quirks: set[str]) -> None:
    data = json.dumps(body, separators=(",", ":")).encode()
    assert {f.quirk for f in check_error_body(data)} == quirks


def test_an_html_error_page_is_its_own_quirk() -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head></html>"
    assert [f.quirk for f in check_error_body(page)] == ["http-error-html"]


def test_the_kind_of_a_body_follows_semantics_2() -> None:
    assert body_kind(b"{}", status=500) == "error"
    assert body_kind(b"{}", content_type="text/event-stream; charset=utf-8") == "stream"
    assert body_kind(b"data: x", content_type="application/json") == "completion"
    assert body_kind(b"{}", stream_requested=True) == "stream"
    assert body_kind(b'{"choices":[]}') == "completion"
    assert body_kind(b'{"error":{"message":"x"}}') == "error"
    assert body_kind(b"data: [DONE]\n\n") == "stream"
    assert body_kind(b"<html><body>502</body></html>") == "error"


# ------------------------------------------------------------------- the command


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="streamproof lint")
    add_arguments(parser)
    code = main(parser.parse_args(list(argv)))
    out, err = capsys.readouterr()
    return code, out, err


_LINE = re.compile(r"^ *(\d+)  (must|should|may|note) *  (\S+) *  \S.*$")
_CITE = re.compile(
    r"^linted by streamproof \S+ with corpus \S+ \(sha256 [0-9a-f]{64}\), "
    r"quirk catalogue sha256 [0-9a-f]{64}$"
)


def test_the_command_prints_one_line_per_deviation_then_a_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "crlf.sse"
    path.write_bytes(_crlf_stream())
    code, out, err = _run(capsys, str(path))
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert _CITE.match(lines.pop()), out
    rows = [_LINE.match(line) for line in lines[:-1]]
    assert all(rows), lines
    offsets = [int(m.group(1)) for m in rows if m]
    assert offsets == sorted(offsets)
    assert {m.group(3) for m in rows if m} == {
        "crlf",
        "per-chunk-id",
        "usage-total-mismatch",
        "data-after-done",
    }
    assert lines[-1] == (
        f"4 deviations (0 must, 4 should, 0 may) in {path}: stream, {path.stat().st_size} bytes"
    )


def test_the_command_exits_1_on_a_must_deviation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "sse-spec/mixed-line-endings")
    assert code == 1
    assert "must" in out and "mixed-line-endings" in out


def test_a_clean_case_exits_0_with_only_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "openai/text-stream-obfuscation")
    assert code == 0
    summary, cite = out.splitlines()
    assert summary == (
        "0 deviations (0 must, 0 should, 0 may) in openai/text-stream-obfuscation: stream, "
        f"{len(CASES['openai/text-stream-obfuscation'].body)} bytes"
    )
    assert _CITE.match(cite) and CORPUS.sha256 in cite


def test_json_output_is_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--json", "tgi/v2-0-data-no-space-keep-alive-no-done")
    document = json.loads(out)
    assert code == 1 == document["exit"]
    assert document["kind"] == "stream"
    assert document["summary"]["must"] == 1
    spaces = next(d for d in document["deviations"] if d["quirk"] == "no-space-after-colon")
    case = CORPUS.root / "cases/tgi/v2-0-data-no-space-keep-alive-no-done"
    body = (case / "response.sse").read_bytes()
    first = body.index(b"data:")  # after the keep-alive comment that opens the stream
    assert spaces["offset"] == spaces["offsets"][0] == first and len(spaces["offsets"]) > 1
    assert [d["offset"] for d in document["deviations"]] == sorted(
        d["offset"] for d in document["deviations"]
    )


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["no/such-case"],
        ["not a case id"],
        ["openai/text-stream-obfuscation", "--base-url", "https://example.invalid/v1"],
        ["--base-url", "https://example.invalid/v1"],
        ["--base-url", "ftp://example.invalid", "--model", "m"],
        ["--base-url", "https://example.invalid/v1", "--model", "m", "--scenario", "nope"],
    ],
)
def test_usage_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("streamproof lint: ")


def test_a_live_endpoint_is_asked_one_scenario_and_linted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    body = CASES["openai/text-stream-include-usage"].body

    def fake_capture(url: str, request: dict[str, Any], **_: Any) -> record.Capture:
        sent.append((url, request))
        return record.Capture(200, [("Content-Type", "text/event-stream")], body)

    monkeypatch.setattr(record, "capture", fake_capture)
    code, out, _ = _run(
        capsys, "--base-url", "https://api.example.com/v1/", "--model", "m", "--scenario", "usage"
    )
    assert code == 0
    assert sent == [
        ("https://api.example.com/v1/chat/completions", {"model": "m", **record.SCENARIOS["usage"]})
    ]
    assert out.startswith("0 deviations") and "(usage, HTTP 200)" in out
    assert _CITE.match(out.splitlines()[-1])


# -------------------------------------------------------------- the provider report


def test_the_provider_report_sums_lint_per_provider(tmp_path: Path) -> None:
    html, js = tmp_path / "providers.html", tmp_path / "providers.json"
    data = write_provider_report(CORPUS, html, js)
    assert json.loads(js.read_text()) == json.loads(json.dumps(data))
    names = [p["provider"] for p in data["providers"]]
    not_providers = {"generic", "sse-spec", "wire"}
    assert names == sorted(names) == sorted({c.provider for c in CORPUS.cases} - not_providers)
    assert data["totals"]["cases"] == sum(c.provider in names for c in CORPUS.cases)
    for severity in ("must", "should", "may"):
        assert data["totals"]["cases_by_worst"][severity] == sum(
            p["cases_by_worst"][severity] for p in data["providers"]
        )
    for p in data["providers"]:
        assert p["clean"] + sum(p["cases_by_worst"].values()) == p["cases"]
    gemini = next(p for p in data["providers"] if p["provider"] == "gemini")
    keys = next(q for q in gemini["quirks"] if q["quirk"] == "alphabetical-keys")
    assert keys["baseline"] and keys["observed"] == "2026-01-22" and keys["severity"] == "may"
    assert all(q["quirk"] in DETECTABLE for p in data["providers"] for q in p["quirks"])
    text = html.read_text()
    assert "<script" not in text and "<link" not in text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "gemini" in text and data["corpus"]["sha256"] in text


def test_the_provider_report_is_the_same_bytes_twice(tmp_path: Path) -> None:
    first = write_provider_report(CORPUS, tmp_path / "a.html", tmp_path / "a.json")
    second = write_provider_report(CORPUS, tmp_path / "b.html", tmp_path / "b.json")
    assert first == second
    assert (tmp_path / "a.html").read_text().replace("a.json", "b.json") == (
        tmp_path / "b.html"
    ).read_text()


def test_the_provider_report_escapes_what_it_shows(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    shutil.copytree(CORPUS.root, root)
    quirks = json.loads((root / "quirks.json").read_text())
    quirks["quirks"]["crlf"]["description"] = "<script>alert(1)</script>"
    (root / "quirks.json").write_text(json.dumps(quirks))
    corpus = load_corpus(root)
    catalogue, _ = load_quirks(root)
    assert isinstance(catalogue, Catalogue)
    assert provider_report(corpus, catalogue)["quirks"]
    write_provider_report(corpus, tmp_path / "p.html", tmp_path / "p.json")
    text = (tmp_path / "p.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "<script>" not in text
