"""orjson and the standard library's json give the reference the same outcomes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamproof.corpus import load_corpus
from streamproof.reference import chat, fastjson, read_response

pytest.importorskip("orjson")

SSE = {"content-type": "text/event-stream"}


@pytest.fixture(autouse=True)
def _restore_loader() -> Iterator[None]:
    yield
    fastjson.use_loader("auto")


def outcome(loader: str, body: bytes, read_size: int = 7) -> dict[str, Any]:
    fastjson.use_loader(loader)
    reads = [body[i : i + read_size] for i in range(0, len(body), read_size)]
    return read_response(200, SSE, {"stream": True}, reads)


def test_the_loader_is_chosen_and_named() -> None:
    fastjson.use_loader("json")
    assert fastjson.loader_name() == "json" and fastjson.fast_loads() is None
    fastjson.use_loader("orjson")
    assert fastjson.loader_name() == "orjson"
    with pytest.raises(ValueError, match="unknown JSON loader"):
        fastjson.use_loader("simdjson")


def test_has_float_looks_everywhere() -> None:
    assert fastjson.has_float({"a": [1, {"b": 2.0}]})
    assert not fastjson.has_float({"a": [1, {"b": "2.0"}], "c": None, "d": True})


def test_every_corpus_case_reads_the_same_with_either_loader() -> None:
    for case in load_corpus().cases:
        outcomes = []
        for loader in ("json", "orjson"):
            fastjson.use_loader(loader)
            outcomes.append(read_response(case.status, case.headers, case.request, [case.body]))
        assert outcomes[0] == outcomes[1], case.id


def test_a_large_event_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"' + b"ab\\u00e9" * 50 + b'"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    )
    small = outcome("orjson", body)
    monkeypatch.setattr(chat, "LARGE_EVENT", 16)
    assert outcome("orjson", body) == small == outcome("json", body)
    assert small["choices"][0]["content"] == "ab\u00e9" * 50


def test_an_integer_past_64_bits_stays_an_integer() -> None:
    body = (
        b'data: {"choices":[{"index":18446744073709551616,"delta":{"content":"x",'
        b'"tool_calls":[{"index":-9300000000000000000,"function":{"arguments":"{}"}}]}}],'
        b'"usage":{"total_tokens":123456789012345678901234567890}}\n\n'
        b'data: {"error":{"message":"m","code":99999999999999999999}}\n\n'
    )
    out = outcome("orjson", body)
    assert out == outcome("json", body)
    assert out["usage"]["total_tokens"] == 123456789012345678901234567890
    assert out["choices"][0]["index"] == 18446744073709551616
    assert out["choices"][0]["tool_calls"][0]["index"] == -9300000000000000000
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
# What json accepts and orjson does not: the chunks holding one are read by json.
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


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(
        st.tuples(st.sampled_from([b""] * 5 + [b"event: error\n"]), _events), max_size=6
    ),
    read_size=st.integers(min_value=1, max_value=64),
)
def test_both_loaders_give_the_same_outcome(
    events: list[tuple[bytes, bytes]], read_size: int
) -> None:
    body = b"".join(head + b"data: " + data + b"\n\n" for head, data in events)
    # repr, not ==: it tells 1 from 1.0 and True, and NaN equals itself
    assert repr(outcome("orjson", body, read_size)) == repr(outcome("json", body, read_size))


_PLACES = [
    b'{"choices":[{"index":N,"delta":{"content":"x"}}]}',
    b'{"choices":[{"delta":{"tool_calls":[{"index":N,"function":{"arguments":"a"}}]}}]}',
    b'{"usage":{"total_tokens":N,"details":[N]}}',
    b'{"error":{"message":"m","code":N}}',
    b'{"error":[N]}',
]


@settings(max_examples=200, deadline=None)
@given(place=st.sampled_from(_PLACES), number=_plain_numbers, read_size=st.integers(1, 64))
def test_numbers_where_the_outcome_shows_them_read_the_same(
    place: bytes, number: str, read_size: int
) -> None:
    body = b"data: " + place.replace(b"N", number.encode()) + b"\n\n"
    assert repr(outcome("orjson", body, read_size)) == repr(outcome("json", body, read_size))


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
