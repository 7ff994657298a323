"""The parts of a choice beyond text and function tool calls (docs/semantics.md
§6.8 to §6.12): the legacy function call, custom tool calls, logprobs, audio
and annotations, streamed and in a non-streamed body."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from streamproof.reference import ResponseReader
from streamproof.reference.chat import StreamAccumulator, read_completion
from streamproof.reference.sse import Event


def run(*choices: dict[str, Any]) -> dict[str, Any]:
    """The first choice of the outcome of one chunk per given choice, then [DONE]."""
    acc = StreamAccumulator()
    for choice in choices:
        acc.feed(Event(data=json.dumps({"choices": [{"index": 0, **choice}]})))
    acc.feed(Event(data="[DONE]"))
    choice0: dict[str, Any] = acc.outcome()["choices"][0]
    return choice0


def test_a_choice_without_the_parts_leaves_them_out() -> None:
    choice = run({"delta": {"content": "hi"}, "logprobs": None, "finish_reason": "stop"})
    assert not {"function_call", "logprobs", "audio", "annotations"} & set(choice)


def test_function_call_keeps_the_first_name_and_joins_the_arguments() -> None:
    choice = run(
        {
            "delta": {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": ""},
            }
        },
        {"delta": {"function_call": {"arguments": '{"a":'}}},
        {"delta": {"function_call": {"name": "", "arguments": "1}"}}},
        {"delta": {}, "finish_reason": "function_call"},
    )
    assert choice["function_call"] == {"name": "f", "arguments": '{"a":1}'}
    assert choice["finish_reason"] == "function_call" and choice["tool_calls"] == []


def test_function_call_without_a_name_reports_null() -> None:
    choice = run({"delta": {"function_call": {"arguments": "{}"}}})
    assert choice["function_call"] == {"name": None, "arguments": "{}"}


def test_custom_tool_call_joins_its_input_beside_a_function_call() -> None:
    choice = run(
        {
            "delta": {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "custom",
                        "custom": {"name": "sql", "input": ""},
                    }
                ]
            }
        },
        {"delta": {"tool_calls": [{"index": 0, "custom": {"input": "SELECT "}}]}},
        {"delta": {"tool_calls": [{"index": 0, "custom": {"input": "1;"}}]}},
        {
            "delta": {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "f1",
                        "type": "function",
                        "function": {"name": "g", "arguments": "{}"},
                    }
                ]
            }
        },
    )
    assert choice["tool_calls"] == [
        {"index": 0, "id": "c1", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1;"}},
        {"index": 1, "id": "f1", "type": "function", "function": {"name": "g", "arguments": "{}"}},
    ]


def test_custom_tool_call_with_a_new_id_at_a_used_index_is_another_call() -> None:
    choice = run(
        {
            "delta": {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "custom",
                        "custom": {"name": "a", "input": "x"},
                    }
                ]
            }
        },
        {
            "delta": {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c2",
                        "type": "custom",
                        "custom": {"name": "b", "input": "y"},
                    }
                ]
            }
        },
    )
    assert [c["custom"] for c in choice["tool_calls"]] == [
        {"name": "a", "input": "x"},
        {"name": "b", "input": "y"},
    ]


def test_logprobs_lists_concatenate_and_null_or_empty_add_nothing() -> None:
    a, b = {"token": "a", "logprob": -0.1}, {"token": "b", "logprob": -0.2}
    choice = run(
        {"delta": {"content": ""}, "logprobs": {"content": [], "refusal": None}},
        {"delta": {"content": "a"}, "logprobs": {"content": [a], "refusal": None}},
        {"delta": {}, "logprobs": None},
        {"delta": {"content": "b"}, "logprobs": {"content": [b]}},
    )
    assert choice["logprobs"] == {"content": [a, b], "refusal": None}


def test_logprobs_of_a_refusal_fill_the_refusal_list() -> None:
    t = {"token": "No", "logprob": -0.3}
    choice = run({"delta": {"refusal": "No"}, "logprobs": {"content": None, "refusal": [t]}})
    assert choice["logprobs"] == {"content": None, "refusal": [t]}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_audio_decodes_each_piece_and_reports_the_joined_bytes() -> None:
    choice = run(
        {"delta": {"audio": {"transcript": "Hi"}}},
        {"delta": {"role": "assistant", "audio": {"id": "au_1", "data": b64(b"\x01\x02")}}},
        {"delta": {"audio": {"id": "au_2", "data": b64(b"\x03"), "transcript": "!"}}},
        {"delta": {"audio": {"expires_at": 7}}},
        {"delta": {"audio": {"expires_at": 9}}},
    )
    assert choice["audio"] == {
        "id": "au_1",
        "data": b64(b"\x01\x02\x03"),
        "transcript": "Hi!",
        "expires_at": 9,
    }
    assert choice["content"] == "" and choice["finish_reason"] is None


def test_audio_pieces_that_are_not_base64_are_reported_as_sent() -> None:
    choice = run(
        {"delta": {"audio": {"data": "AAAA"}}}, {"delta": {"audio": {"data": "not base64!"}}}
    )
    assert choice["audio"]["data"] == "AAAAnot base64!"


def test_annotations_of_every_delta_are_kept_in_order() -> None:
    one, two = (
        {"type": "url_citation", "url_citation": {"url": "u1"}},
        {"type": "url_citation", "url_citation": {"url": "u2"}},
    )
    choice = run(
        {"delta": {"annotations": [one]}},
        {"delta": {"annotations": []}},
        {"delta": {"annotations": [two]}},
    )
    assert choice["annotations"] == [one, two]


def test_a_completion_reads_every_part_of_its_message() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "function_call": {"name": "f", "arguments": "{}"},
        "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "t", "input": "x"}}],
        "audio": {"id": "au", "data": b64(b"abc"), "expires_at": 3, "transcript": "t"},
        "annotations": [{"type": "url_citation", "url_citation": {"url": "u"}}],
    }
    logprobs = {"content": [{"token": "x", "logprob": 0}], "refusal": None}
    body = {
        "choices": [{"index": 0, "message": message, "logprobs": logprobs, "finish_reason": "stop"}]
    }
    choice = read_completion(json.dumps(body).encode())["choices"][0]
    assert choice["function_call"] == message["function_call"]
    assert choice["tool_calls"] == [
        {"index": 0, "id": "c", "type": "custom", "custom": {"name": "t", "input": "x"}}
    ]
    assert choice["audio"] == {"id": "au", "data": b64(b"abc"), "transcript": "t", "expires_at": 3}
    assert choice["annotations"] == message["annotations"] and choice["logprobs"] == logprobs


STREAM = (
    b'data: {"choices":[{"index":0,"delta":'
    b'{"audio":{"id":"a","data":"AAEC","transcript":"h\xc3\xa9"}},'
    b'"logprobs":{"content":[{"token":"h"}]}}]}\r\n\r\n'
    b'data: {"choices":[{"index":0,"delta":{"audio":{"data":"AwQF"},"annotations":[{"type":"x"}],'
    b'"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"stop"}]}\r\n\r\n'
    b"data: [DONE]\r\n\r\n"
)


@pytest.mark.parametrize("split", ["whole", "bytes", "lines"])
def test_the_parts_do_not_depend_on_the_reads(split: str) -> None:
    if split == "whole":
        reads = [STREAM]
    elif split == "bytes":
        reads = [STREAM[i : i + 1] for i in range(len(STREAM))]
    else:
        reads = STREAM.splitlines(keepends=True)
    reader = ResponseReader(200, {"content-type": "text/event-stream"}, {"stream": True})
    for data in reads:
        reader.feed(data)
    choice = reader.close()["choices"][0]
    assert choice["audio"] == {
        "id": "a",
        "data": "AAECAwQF",
        "transcript": "hé",
        "expires_at": None,
    }
    assert choice["logprobs"] == {"content": [{"token": "h"}], "refusal": None}
    assert choice["annotations"] == [{"type": "x"}]
    assert choice["function_call"] == {"name": "f", "arguments": "{}"}
