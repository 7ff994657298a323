from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from streamproof.corpus import Case, load_corpus
from streamproof.reference import (
    ResponseReader,
    SSEDecoder,
    SSEProtocolError,
    StreamAccumulator,
    body_kind,
    read_response,
)
from streamproof.resources import data_path

CASES = load_corpus().cases
OUTCOME_SCHEMA = Draft202012Validator(
    json.loads(data_path("schemas/outcome.schema.json").read_text(encoding="utf-8"))
)
SSE = {"content-type": "text/event-stream"}


def read(case: Case, pieces: list[bytes]) -> dict[str, Any]:
    return read_response(case.status, case.headers, case.request, pieces)


@pytest.mark.parametrize(
    ("status", "content_type", "stream", "kind"),
    [
        (200, "text/event-stream; charset=utf-8", False, "stream"),
        (200, "application/json", True, "json"),
        (200, "application/problem+json", True, "json"),
        (200, "text/plain", True, "stream"),
        (200, "", False, "json"),
        (502, "text/event-stream", True, "error"),
    ],
)
def test_body_kind(status: int, content_type: str, stream: bool, kind: str) -> None:
    assert body_kind(status, {"content-type": content_type}, {"stream": stream}) == kind


def test_reads_of_every_shape_give_one_outcome(split: Callable[[bytes], Iterator[bytes]]) -> None:
    for case in CASES:
        assert read(case, list(split(case.body))) == read(case, [case.body]), case.id


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0, max_value=len(CASES) - 1),
    cuts=st.lists(st.integers(min_value=1, max_value=5000), max_size=40),
)
def test_outcome_does_not_depend_on_the_chunking(index: int, cuts: list[int]) -> None:
    case = CASES[index]
    points = sorted({c for c in cuts if c < len(case.body)})
    pieces = [case.body[a:b] for a, b in zip([0, *points], [*points, len(case.body)], strict=True)]
    assert read(case, pieces) == read(case, [case.body])


def test_content_surfaces_with_the_read_that_completes_its_event() -> None:
    reader = ResponseReader(200, SSE, {})
    assert reader.feed(b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n') == []
    (piece,) = reader.feed(b"\n")
    assert piece == (0, "Hi")


def test_a_line_past_the_bound_fails_the_stream_and_keeps_the_text() -> None:
    reader = ResponseReader(200, SSE, {})
    reader.feed(b'data: {"choices":[{"index":0,"delta":{"content":"kept"}}]}\n\n')
    reader._decoder._max_line = 64  # a small bound instead of 16 MiB of input
    reader.feed(b"data: " + b"x" * 100)
    out = reader.close()
    assert out["status"] == "error"
    assert "line longer than" in out["error"]["message"]
    assert out["choices"][0]["content"] == "kept"


def test_non_streamed_body_is_read_at_close() -> None:
    reader = ResponseReader(200, {"content-type": "application/json"}, {})
    assert reader.feed(b'{"choices":[{"index":0,"message":{"content":"x"},') == []
    reader.feed(b'"finish_reason":"stop"}]}')
    assert reader.close()["choices"][0]["content"] == "x"


def test_the_reader_gives_what_the_decoder_and_the_accumulator_give_one_event_at_a_time(
    split: Callable[[bytes], Iterator[bytes]],
) -> None:
    # ResponseReader takes undecoded events in bulk, and whole events in a
    # read are cut apart by one split; SSEDecoder.feed and
    # StreamAccumulator.feed take them one at a time.
    for case in CASES:
        if body_kind(case.status, case.headers, case.request) != "stream":
            continue
        reader = ResponseReader(case.status, case.headers, case.request)
        got = [piece for data in split(case.body) for piece in reader.feed(data)]
        decoder, accumulator, want = SSEDecoder(), StreamAccumulator(), []
        try:
            for data in split(case.body):
                for event in decoder.feed(data):
                    want.extend(accumulator.feed(event))
            decoder.close()
        except SSEProtocolError as exc:
            accumulator.fail(str(exc))
        assert (got, reader.close()) == (want, accumulator.outcome()), case.id


@pytest.mark.parametrize("where", ["stream", "json"])
def test_json_nested_past_what_json_reads_is_a_corrupt_body_not_a_crash(where: str) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    if where == "stream":
        body = b'data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}\n\ndata: '
        body += deep + b"\n\n"
        headers = {"content-type": "text/event-stream"}
    else:
        body = b'{"choices": ' + deep + b"}"
        headers = {"content-type": "application/json"}
    outcome = read_response(200, headers, {"stream": where == "stream"}, [body])
    assert outcome["status"] == "error"


# Semantics §6.1 and §6.7: whatever a server writes as an index, the outcome's
# indexes are whole numbers from 0 up (schemas/outcome.schema.json).
_INDEX_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)


def _stream(chunks: list[dict[str, Any]]) -> bytes:
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    )


@settings(max_examples=150, deadline=None)
@given(
    choice_indexes=st.lists(_INDEX_VALUES, min_size=1, max_size=4),
    call_indexes=st.lists(_INDEX_VALUES, min_size=1, max_size=4),
    ids=st.lists(st.sampled_from([None, "", "call_a", "call_b"]), min_size=4, max_size=4),
)
def test_no_index_value_breaks_the_outcome_schema(
    choice_indexes: list[Any], call_indexes: list[Any], ids: list[str | None]
) -> None:
    chunks = []
    for n, choice_index in enumerate(choice_indexes):
        calls = [
            {"index": i, "id": ids[(n + k) % 4], "function": {"name": "f", "arguments": "{}"}}
            for k, i in enumerate(call_indexes)
        ]
        delta = {"content": "x", "tool_calls": calls}
        chunks.append({"choices": [{"index": choice_index, "delta": delta}]})
    body = _stream(chunks)
    for outcome in (
        read_response(200, SSE, {"stream": True}, [body]),
        read_response(200, {"content-type": "application/json"}, {}, [_as_completion(chunks)]),
    ):
        errors = list(OUTCOME_SCHEMA.iter_errors(outcome))
        assert not errors, (outcome, errors[0].message)
        indexes = [c["index"] for c in outcome["choices"]]
        assert indexes == sorted(set(indexes))
        for choice in outcome["choices"]:
            calls = [c["index"] for c in choice["tool_calls"]]
            assert calls == sorted(set(calls))


def _as_completion(chunks: list[dict[str, Any]]) -> bytes:
    choices = [
        {"index": c["choices"][0]["index"], "message": c["choices"][0]["delta"]} for c in chunks
    ]
    return json.dumps({"choices": choices}).encode()


@pytest.mark.parametrize(
    ("index", "choice"),
    [(True, 0), (False, 0), (-1, 0), (1.5, 0), (1.0, 0), ("1", 0), (None, 0), (2, 2)],
)
def test_only_a_whole_number_from_0_up_is_a_choice_index(index: Any, choice: int) -> None:
    body = _stream([{"choices": [{"index": index, "delta": {"content": "hi"}}]}])
    outcome = read_response(200, SSE, {"stream": True}, [body])
    assert [(c["index"], c["content"]) for c in outcome["choices"]] == [(choice, "hi")]


def _calls(*fragments: dict[str, Any]) -> list[tuple[int, str | None, str | None, str]]:
    chunks = [{"choices": [{"index": 0, "delta": {"tool_calls": [f]}}]} for f in fragments]
    outcome = read_response(200, SSE, {"stream": True}, [_stream(chunks)])
    return [
        (c["index"], c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in outcome["choices"][0]["tool_calls"]
    ]


def test_a_new_id_at_an_index_in_use_starts_a_new_call() -> None:
    assert _calls(
        {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{1"}},
        {"index": 0, "function": {"arguments": "}"}},
        {"index": 0, "id": "b", "function": {"name": "g", "arguments": "{2"}},
        {"index": 0, "id": "b", "function": {"name": "g", "arguments": "}"}},
        {"index": 0, "function": {"arguments": " "}},
    ) == [(0, "a", "f", "{1}"), (1, "b", "g", "{2} ")]


def test_the_same_id_empty_id_or_first_id_later_continue_the_call() -> None:
    assert _calls(
        {"index": 0, "function": {"name": "f", "arguments": ""}},
        {"index": 0, "id": "a", "function": {"arguments": "{"}},
        {"index": 0, "id": "", "function": {"name": "", "arguments": "}"}},
        {"index": 0, "id": "a", "function": {"name": "f"}},
    ) == [(0, "a", "f", "{}")]


def test_a_call_without_an_index_never_joins_a_call_in_use() -> None:
    assert _calls(
        {"index": 1, "id": "a", "function": {"name": "f", "arguments": "{}"}},
        {"id": "b", "function": {"name": "g", "arguments": "{}"}},
        {"index": -1, "id": "c", "function": {"name": "h", "arguments": "{}"}},
    ) == [(1, "a", "f", "{}"), (2, "b", "g", "{}"), (3, "c", "h", "{}")]


def test_a_call_that_never_gets_a_name_is_reported_with_none() -> None:
    assert _calls({"index": 0, "function": {"arguments": "{}"}}) == [(0, None, None, "{}")]


@pytest.mark.parametrize("event", ["error", "done", "message"])
def test_done_ends_the_stream_whatever_the_event_type(event: str) -> None:
    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    body = b"data: " + json.dumps(chunk).encode() + b"\n\nevent: " + event.encode()
    body += b"\ndata: [DONE]\n\ndata: {not json\n\n"
    outcome = read_response(200, SSE, {"stream": True}, [body])
    assert (outcome["status"], outcome["error"], outcome["choices"][0]["content"]) == (
        "complete",
        None,
        "hi",
    )


def test_an_empty_reasoning_content_gives_way_to_reasoning() -> None:
    deltas = [
        {"reasoning_content": "", "reasoning": "a"},
        {"reasoning_content": "b", "reasoning": "b"},
        {"reasoning_content": None, "reasoning": "c"},
    ]
    chunks = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
    outcome = read_response(200, SSE, {"stream": True}, [_stream(chunks)])
    assert outcome["choices"][0]["reasoning"] == "abc"
