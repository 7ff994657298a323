"""The reference reading of repeated tool-call fragments, chunk objects and what follows
[DONE] (docs/semantics.md §4.1, §4.2, §6.7), each fed whole, byte by byte and line by line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamproof.reference import ResponseReader

Chunk = dict[str, Any]


def body(*events: Chunk | str) -> bytes:
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    return "".join(f"data: {line}\n\n" for line in lines).encode()


def reads(data: bytes) -> list[list[bytes]]:
    return [[data], [data[i : i + 1] for i in range(len(data))], data.splitlines(keepends=True)]


def parse(chunks: list[bytes]) -> dict[str, Any]:
    reader = ResponseReader(200, {"content-type": "text/event-stream"}, {"stream": True})
    for data in chunks:
        reader.feed(data)
    return reader.close()


def outcomes(*events: Chunk | str) -> list[dict[str, Any]]:
    return [parse(chunks) for chunks in reads(body(*events))]


def call(index: int | None, id_: str | None, name: str | None, arguments: str) -> Chunk:
    fragment: Chunk = {"function": {"arguments": arguments}}
    if index is not None:
        fragment["index"] = index
    if id_ is not None:
        fragment["id"] = id_
        fragment["type"] = "function"
    if name is not None:
        fragment["function"]["name"] = name
    return fragment


def calls(*fragments: Chunk, finish: str | None = None) -> Chunk:
    return {
        "choices": [{"index": 0, "delta": {"tool_calls": list(fragments)}, "finish_reason": finish}]
    }


def as_calls(outcome: dict[str, Any]) -> list[tuple[int, str | None, str | None, str]]:
    return [
        (c["index"], c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in outcome["choices"][0]["tool_calls"]
    ]


def test_id_type_and_name_resent_on_every_fragment_are_kept_not_joined() -> None:
    for out in outcomes(
        calls(call(0, "call_r1", "read_file", '{"path":')),
        calls(call(0, "call_r1", "read_file", '"a.txt"}'), finish="tool_calls"),
    ):
        assert as_calls(out) == [(0, "call_r1", "read_file", '{"path":"a.txt"}')]
        assert out["choices"][0]["tool_calls"][0]["type"] == "function"


def test_a_fragment_repeating_the_previous_one_is_concatenated_as_sent() -> None:
    for out in outcomes(
        calls(call(0, "call_d1", "lookup", '{"q":"x"}')),
        calls(call(0, None, None, '{"q":"x"}'), finish="tool_calls"),
    ):
        assert as_calls(out) == [(0, "call_d1", "lookup", '{"q":"x"}{"q":"x"}')]


def test_a_nameless_fragment_with_a_fresh_id_continues_the_open_call() -> None:
    for out in outcomes(
        calls(call(0, "call_a", "search", "")),
        calls(call(0, "call_b", "", '{"q"')),
        calls(call(0, "call_c", None, ':"y"}'), finish="tool_calls"),
    ):
        assert as_calls(out) == [(0, "call_a", "search", '{"q":"y"}')]


def test_a_named_fragment_with_another_id_at_index_0_starts_a_call() -> None:
    for out in outcomes(
        calls(call(0, "call_a", "search", '{"q":"y"}')),
        calls(call(0, "call_b", "fetch", '{"u":1}')),
        calls(call(0, None, None, ""), finish="tool_calls"),
    ):
        assert as_calls(out) == [
            (0, "call_a", "search", '{"q":"y"}'),
            (1, "call_b", "fetch", '{"u":1}'),
        ]


def test_several_calls_in_one_delta_and_a_repeated_index_in_it() -> None:
    for out in outcomes(
        calls(
            call(0, "call_a", "f", '{"a"'), call(0, None, None, ":1}"), call(1, "call_b", "g", "{}")
        ),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ):
        assert as_calls(out) == [(0, "call_a", "f", '{"a":1}'), (1, "call_b", "g", "{}")]


def test_calls_without_an_index_each_take_the_next_one() -> None:
    for out in outcomes(
        calls(
            call(None, "call_a", "f", "{}"), call(None, "call_b", "g", "{}"), finish="tool_calls"
        ),
    ):
        assert as_calls(out) == [(0, "call_a", "f", "{}"), (1, "call_b", "g", "{}")]


def text(piece: str, object_: str | None, finish: str | None = None, **extra: Any) -> Chunk:
    chunk: Chunk = {"id": "x1", "model": "m"}
    if object_ is not None:
        chunk["object"] = object_
    chunk["choices"] = [{"index": 0, "delta": {"content": piece}, "finish_reason": finish, **extra}]
    return chunk


@pytest.mark.parametrize("object_", [None, "chat.completion", "chat.completion.done", "other"])
def test_a_chunk_is_read_whatever_its_object(object_: str | None) -> None:
    for out in outcomes(text("Hi", "chat.completion.chunk"), text(" there", object_, "stop")):
        assert out["choices"][0]["content"] == "Hi there"
        assert out["choices"][0]["finish_reason"] == "stop"


def test_a_message_beside_a_delta_adds_nothing() -> None:
    snapshot = {"message": {"role": "assistant", "content": "Hi there"}}
    for out in outcomes(
        text("Hi", "chat.completion"), text(" there", "chat.completion", "stop", **snapshot)
    ):
        assert out["choices"][0]["content"] == "Hi there"


def test_a_whole_completion_after_the_deltas_repeats_no_text_but_gives_usage() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    whole = {
        "id": "x1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi there"},
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }
    for out in outcomes(
        text("Hi", "chat.completion.chunk"),
        text(" there", "chat.completion.chunk"),
        whole,
        "[DONE]",
    ):
        assert out["choices"][0]["content"] == "Hi there"
        assert out["choices"][0]["finish_reason"] == "stop"
        assert out["usage"] == usage


def test_nothing_after_done_is_read_usage_error_or_a_second_done() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    for out in outcomes(
        text("Hi", "chat.completion.chunk", "stop"),
        "[DONE]",
        {"choices": [], "usage": usage},
        {"error": {"message": "late"}},
        "[DONE]",
    ):
        assert out["status"] == "complete"
        assert out["usage"] is None
        assert out["error"] is None
        assert out["choices"][0]["content"] == "Hi"
