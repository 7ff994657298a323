from __future__ import annotations

import json
from typing import Any

from streamproof.reference.chat import StreamAccumulator, error_from_body, read_completion
from streamproof.reference.sse import Event


def run(*chunks: Any) -> dict[str, Any]:
    acc = StreamAccumulator()
    for chunk in chunks:
        if isinstance(chunk, Event):
            acc.feed(chunk)
        else:
            acc.feed(Event(data=chunk if isinstance(chunk, str) else json.dumps(chunk)))
    return acc.outcome()


def delta(index: int = 0, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": index, "delta": fields, "finish_reason": finish}]}


def test_content_accumulates_and_null_or_missing_adds_nothing() -> None:
    out = run(
        delta(role="assistant", content=""),
        delta(content="a"),
        delta(content=None),
        delta(),
        delta(content="b", finish="stop"),
        "[DONE]",
    )
    assert out["status"] == "complete"
    assert out["choices"] == [
        {
            "index": 0,
            "role": "assistant",
            "content": "ab",
            "reasoning": "",
            "refusal": "",
            "finish_reason": "stop",
            "tool_calls": [],
        }
    ]


def test_empty_finish_reason_is_not_a_finish_reason() -> None:
    out = run(delta(content="a", finish=""), delta(content="b", finish=""))
    assert out["status"] == "truncated"
    assert out["choices"][0]["finish_reason"] is None


def test_finish_reason_without_done_is_complete() -> None:
    assert run(delta(content="a", finish="length"))["status"] == "complete"


def test_done_without_finish_reason_is_complete() -> None:
    out = run(delta(content="a"), "[DONE]")
    assert out["status"] == "complete"
    assert out["choices"][0]["finish_reason"] is None


def test_empty_stream_is_truncated() -> None:
    assert run()["status"] == "truncated"


def test_nothing_after_done_counts() -> None:
    out = run(delta(content="a", finish="stop"), "[DONE]", delta(content="zzz"))
    assert out["choices"][0]["content"] == "a"


def test_usage_is_last_non_null_and_as_sent() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 99}
    out = run(
        {**delta(content="a", finish="stop"), "usage": None},
        {"choices": [], "usage": usage},
        {"choices": [], "usage": None},
        "[DONE]",
    )
    assert out["usage"] == usage


def test_choices_by_index_not_position() -> None:
    out = run(
        delta(1, content="B"),
        delta(0, content="A"),
        delta(1, finish="stop"),
        delta(0, finish="length"),
    )
    assert [(c["index"], c["content"], c["finish_reason"]) for c in out["choices"]] == [
        (0, "A", "length"),
        (1, "B", "stop"),
    ]
    assert out["status"] == "complete"


def test_one_unfinished_choice_leaves_the_stream_truncated() -> None:
    assert run(delta(0, content="A", finish="stop"), delta(1, content="B"))["status"] == (
        "truncated"
    )


def test_tool_calls_by_index_with_first_non_empty_id_and_name() -> None:
    out = run(
        delta(
            tool_calls=[
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "g", "arguments": ""},
                }
            ]
        ),
        delta(
            tool_calls=[
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"x"'},
                }
            ]
        ),
        delta(tool_calls=[{"index": 0, "id": "", "function": {"arguments": ":1}"}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": "{}"}}], finish="tool_calls"),
    )
    calls = out["choices"][0]["tool_calls"]
    assert calls == [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "f", "arguments": '{"x":1}'},
        },
        {
            "index": 1,
            "id": "call_b",
            "type": "function",
            "function": {"name": "g", "arguments": "{}"},
        },
    ]


def test_reasoning_content_wins_over_reasoning_in_the_same_delta() -> None:
    out = run(
        delta(reasoning_content="think", reasoning="think"),
        delta(reasoning=" more"),
        delta(content="answer", finish="stop"),
    )
    assert out["choices"][0]["reasoning"] == "think more"
    assert out["choices"][0]["content"] == "answer"


def test_content_parts_split_into_text_and_thinking() -> None:
    out = run(
        delta(
            content=[{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"}],
            finish="stop",
        )
    )
    assert (out["choices"][0]["content"], out["choices"][0]["reasoning"]) == ("ok", "hmm")


def test_thinking_parts_may_nest_text_parts() -> None:
    nested = {
        "type": "thinking",
        "thinking": [{"type": "text", "text": "step "}, {"type": "text", "text": "two"}],
    }
    out = run(delta(content=[nested]), delta(content="done", finish="stop"))
    assert (out["choices"][0]["reasoning"], out["choices"][0]["content"]) == ("step two", "done")


def test_refusal_fragments_concatenate() -> None:
    out = run(
        delta(role="assistant", content=None, refusal=""),
        delta(refusal="I can"),
        delta(refusal="not."),
        delta(finish="stop"),
    )
    assert (out["choices"][0]["content"], out["choices"][0]["refusal"]) == ("", "I cannot.")


def test_error_object_keeps_text_and_wins_over_done() -> None:
    out = run(
        delta(content="partial"),
        {"error": {"message": "overloaded", "type": "server_error", "code": 503}},
        "[DONE]",
    )
    assert out["status"] == "error"
    assert out["error"] == {"message": "overloaded", "type": "server_error", "code": 503}
    assert out["choices"][0]["content"] == "partial"


def test_event_error_is_an_error() -> None:
    out = run(delta(content="a"), Event(data='{"message":"boom"}', type="error"))
    assert (out["status"], out["error"]["message"]) == ("error", "boom")


def test_event_error_with_a_wrapped_error_object() -> None:
    data = '{"error":{"message":"tool_use_failed","type":"invalid_request_error","code":"x"}}'
    out = run(delta(content="a"), Event(data=data, type="error"))
    assert out["error"] == {
        "message": "tool_use_failed",
        "type": "invalid_request_error",
        "code": "x",
    }


def test_finish_reason_error_is_an_error() -> None:
    out = run(delta(content="a", finish="error"))
    assert out["status"] == "error"
    assert out["choices"][0]["finish_reason"] == "error"


def test_corrupt_event_is_an_error_and_stops_accumulation() -> None:
    out = run(delta(content="kept"), "{not json}", delta(content="dropped", finish="stop"))
    assert out["status"] == "error"
    assert "corrupt event" in out["error"]["message"]
    assert out["choices"][0]["content"] == "kept"


def test_named_events_are_not_chunks() -> None:
    out = run(Event(data='{"choices":[{"index":0,"delta":{"content":"x"}}]}', type="ping"))
    assert out["choices"] == []


def test_first_non_empty_id_and_model() -> None:
    out = run(
        {"id": "", "model": "", "choices": []},
        {"id": "c1", "model": "m", "choices": []},
        {"id": "c2", "model": "n", "choices": []},
    )
    assert (out["id"], out["model"]) == ("c1", "m")


def test_http_error_json_and_html_bodies() -> None:
    out = error_from_body(429, b'{"error":{"message":"slow down","type":"rate","code":"x"}}')
    assert out["error"] == {"message": "slow down", "type": "rate", "code": "x", "http_status": 429}
    out = error_from_body(502, b"<html><body>502 Bad Gateway</body></html>")
    assert out["status"] == "error"
    assert out["error"]["http_status"] == 502
    assert error_from_body(401, b'{"error":"bad key"}')["error"]["message"] == "bad key"


def test_completion_body() -> None:
    body = {
        "id": "c",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": "no",
                    "annotations": [],
                    "tool_calls": [
                        {
                            "id": "t",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"total_tokens": 3},
    }
    out = read_completion(json.dumps(body).encode())
    assert out["status"] == "complete"
    choice = out["choices"][0]
    assert (choice["content"], choice["refusal"], choice["finish_reason"]) == (
        "",
        "no",
        "tool_calls",
    )
    assert choice["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}
    assert out["usage"] == {"total_tokens": 3}


def test_completion_body_that_is_not_json_or_is_an_error() -> None:
    assert read_completion(b"{oops")["status"] == "error"
    assert read_completion(b"[1]")["status"] == "error"
    out = read_completion(b'{"error":{"message":"bad"}}')
    assert (out["status"], out["error"]["message"]) == ("error", "bad")
