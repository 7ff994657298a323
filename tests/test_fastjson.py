"""The reference's JSON loader is json's, and its shortcuts change no outcome.

``fastjson.exact_loads`` calls json's scanner directly; the decoder cuts
whole events of one read apart with one split. Both must give what
``json.loads`` and the line-by-line rules give.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamproof.reference import ResponseReader, chat, fastjson, read_response
from streamproof.reference.chat import ContentPiece, StreamAccumulator
from streamproof.reference.sse import SSEDecoder

SSE = {"content-type": "text/event-stream"}


def outcome(body: bytes, read_size: int = 7) -> dict[str, Any]:
    reads = [body[i : i + read_size] for i in range(0, len(body), read_size)]
    return read_response(200, SSE, {"stream": True}, reads)


def one_at_a_time(body: bytes, read_size: int) -> tuple[list[ContentPiece], dict[str, Any]]:
    """The text API: SSEDecoder.feed and StreamAccumulator.feed, one event at a time."""
    decoder, accumulator, pieces = SSEDecoder(), StreamAccumulator(), []
    for i in range(0, len(body), read_size):
        for event in decoder.feed(body[i : i + read_size]):
            pieces += accumulator.feed(event)
    decoder.close()
    return pieces, accumulator.outcome()


def reader(body: bytes, read_size: int) -> tuple[list[ContentPiece], dict[str, Any]]:
    """ResponseReader, which takes a read's events in bulk."""
    response = ResponseReader(200, SSE, {"stream": True})
    pieces = []
    for i in range(0, len(body), read_size):
        pieces += response.feed(body[i : i + read_size])
    return pieces, response.close()


def test_a_large_event_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"' + b"ab\\u00e9" * 50 + b'"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    )
    small = outcome(body)
    monkeypatch.setattr(chat, "LARGE_EVENT", 16)
    assert outcome(body) == small
    assert small["choices"][0]["content"] == "ab\u00e9" * 50


def test_an_integer_past_64_bits_stays_an_integer() -> None:
    body = (
        b'data: {"choices":[{"index":18446744073709551616,"delta":{"content":"x",'
        b'"tool_calls":[{"index":9300000000000000000,"function":{"arguments":"{}"}}]}}],'
        b'"usage":{"total_tokens":123456789012345678901234567890}}\n\n'
        b'data: {"error":{"message":"m","code":99999999999999999999}}\n\n'
    )
    out = outcome(body)
    assert out["usage"]["total_tokens"] == 123456789012345678901234567890
    assert out["choices"][0]["index"] == 18446744073709551616
    assert out["choices"][0]["tool_calls"][0]["index"] == 9300000000000000000
    assert out["error"]["code"] == 99999999999999999999


# Numbers as JSON writes them, and as no encoder would: past 64 bits, NaN,
# Infinity, exponents, negative zero.
_plain_numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.integers(min_value=2**63 - 2, max_value=2**66).map(lambda n: str(n * (-1) ** n)),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["-0", "-0.0", "1E-400", "1.5e3", "1e308"]),
)
_strings = st.one_of(
    st.text(max_size=6).map(lambda s: json.dumps(s, ensure_ascii=False)),
    st.sampled_from(['"\\u00e9"', '"a\\nb"', '"\\ud83d\\ude00"', '""']),
)
# What json accepts and strict parsers do not.
_only_json = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"', '"\\udc00x"'])
_scalars = st.one_of(_plain_numbers, _strings, st.sampled_from(["null", "true", "false"]))


def _with_key(obj: str, key: str, value: str) -> str:
    return obj[:-1] + ("," if obj != "{}" else "") + f'"{key}":{value}' + "}"


def _obj(entries: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f'"{k}":{v}' for k, v in entries) + "}"


_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ",".join(xs) + "]"),
        st.lists(
            st.tuples(st.sampled_from(["a", "b", "total_tokens", "message", "code"]), inner),
            max_size=3,
        ).map(_obj),
    ),
    max_leaves=6,
)
_calls = st.lists(
    st.tuples(
        _plain_numbers,
        st.lists(st.tuples(st.sampled_from(["id", "type"]), _scalars), max_size=2).map(_obj),
    ).map(lambda c: _with_key(c[1], "index", c[0])),
    max_size=2,
).map(lambda calls: "[" + ",".join(calls) + "]")
_deltas = st.lists(
    st.tuples(
        st.sampled_from(["content", "role", "reasoning_content", "refusal", "tool_calls"]),
        st.one_of(_strings, _values, _calls),
    ),
    max_size=3,
).map(_obj)
_choices = st.lists(
    st.tuples(
        _plain_numbers | _scalars,
        st.lists(
            st.tuples(st.sampled_from(["delta", "finish_reason"]), _scalars | _deltas),
            max_size=2,
        ).map(_obj),
    ).map(lambda c: _with_key(c[1], "index", c[0])),
    max_size=2,
).map(lambda choices: "[" + ",".join(choices) + "]")
_usages = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), _plain_numbers | _values), max_size=3
).map(_obj)
_chunks = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["id", "model", "error"]), _values),
        st.tuples(st.just("usage"), _usages),
        st.tuples(st.just("error"), _usages),
        st.tuples(st.just("choices"), _choices),
    ),
    max_size=4,
).map(_obj)


_events = st.one_of(
    _chunks.map(str.encode),
    _chunks.map(str.encode),
    _chunks.map(str.encode),
    _chunks.map(str.encode),
    st.tuples(_chunks, _only_json).map(lambda c: _with_key(c[0], "x", c[1]).encode()),
    _values.map(str.encode),
    st.binary(max_size=12).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.sampled_from([b"[DONE]", b'{"a":"\xff"}', b'{"a":"\xed\xa0\x80"}', b"\xef\xbb\xbf{}"]),
)


# What may stand before an event's data line, and what ends the event: the
# whole-events split of a read must give way to the line-by-line rules for
# every one of them.
_HEADS = [b""] * 6 + [b"event: error\n", b": ping\n", b"id: 7\n", b"\n", b"retry: 5\n"]
_ENDS = [b"\n\n"] * 6 + [b"\r\n\r\n", b"\n\n\n", b"\r\r", b"\n"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(
        st.tuples(st.sampled_from(_HEADS), _events, st.sampled_from(_ENDS)), max_size=6
    ),
    read_size=st.integers(min_value=1, max_value=64),
)
def test_whole_reads_small_reads_and_one_event_at_a_time_agree(
    events: list[tuple[bytes, bytes, bytes]], read_size: int
) -> None:
    body = b"".join(head + b"data: " + data + end for head, data, end in events)
    want = one_at_a_time(body, read_size)
    # repr, not ==: it tells 1 from 1.0 and True, and NaN equals itself
    assert repr(reader(body, read_size)) == repr(want)
    assert repr(reader(body, max(len(body), 1))) == repr(one_at_a_time(body, max(len(body), 1)))
    assert repr(reader(body, max(len(body), 1))[1]) == repr(want[1])


def _json_result(text: str) -> str:
    try:
        return "value " + repr(json.loads(text))
    except (ValueError, RecursionError) as exc:
        return f"error {type(exc).__name__} {exc}"


def _exact_result(text: str) -> str:
    try:
        return "value " + repr(fastjson.exact_loads(text))
    except (ValueError, RecursionError) as exc:
        return f"error {type(exc).__name__} {exc}"


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        _chunks,
        _values,
        _only_json,
        st.tuples(
            st.sampled_from(["", " ", "\n", "\t", "\ufeff", "x"]), _values, st.text(max_size=3)
        ).map("".join),
        st.text(max_size=12),
    )
)
def test_the_stdlib_path_reads_as_json_loads(text: str) -> None:
    assert _exact_result(text) == _json_result(text)
