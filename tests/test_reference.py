from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamproof.corpus import Case, load_corpus
from streamproof.reference import (
    ResponseReader,
    SSEDecoder,
    SSEProtocolError,
    StreamAccumulator,
    body_kind,
    read_response,
)

CASES = load_corpus().cases
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
