from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamproof.reference.sse import Event, SSEDecoder, SSEProtocolError

Split = Callable[[bytes], Iterator[bytes]]


def decode(data: bytes, split: Split, decoder: SSEDecoder | None = None) -> list[Event]:
    decoder = decoder or SSEDecoder()
    events: list[Event] = []
    for piece in split(data):
        events.extend(decoder.feed(piece))
    events.extend(decoder.close())
    return events


def datas(data: bytes, split: Split) -> list[str]:
    return [e.data for e in decode(data, split)]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_each_line_ending_dispatches(split: Split, end: bytes) -> None:
    body = b"data: a" + end + end + b"data: b" + end + end
    assert datas(body, split) == ["a", "b"]


def test_mixed_line_endings(split: Split) -> None:
    body = b"data: a\r\n\ndata: b\n\rdata: c\r\r\ndata: d\r\n\r\n"
    assert datas(body, split) == ["a", "b", "c", "d"]


def test_cr_ending_one_read_and_lf_starting_the_next_are_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    # Were the LF a second line end, this read would dispatch "a" early.
    assert decoder.feed(b"\ndata: b\r") == []
    assert [e.data for e in decoder.feed(b"\n\r\n")] == ["a\nb"]


def test_lone_cr_then_lf_in_separate_reads_is_not_a_blank_line() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: x\r")
    assert decoder.feed(b"\n") == []
    assert [e.data for e in decoder.feed(b"\n")] == ["x"]


def test_bom_at_start_is_skipped(split: Split) -> None:
    assert datas(b"\xef\xbb\xbfdata: a\n\n", split) == ["a"]


def test_only_one_bom_is_skipped(split: Split) -> None:
    # The second BOM makes the field name "\ufeffdata", which is unknown.
    assert datas(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n", split) == ["b"]


def test_bom_later_in_the_stream_is_text(split: Split) -> None:
    assert datas(b"data: a\xef\xbb\xbf\n\n", split) == ["a\ufeff"]


def test_comments_are_ignored_and_do_not_dispatch(split: Split) -> None:
    body = b": keep-alive\n\n: one\n:two\ndata: a\n: inside\ndata: b\n\n"
    assert datas(body, split) == ["a\nb"]


def test_one_optional_space_after_colon(split: Split) -> None:
    assert datas(b"data:a\n\ndata: b\n\ndata:  c\n\n", split) == ["a", "b", " c"]


def test_field_without_colon_has_empty_value(split: Split) -> None:
    assert datas(b"data\ndata: x\n\n", split) == ["\nx"]
    assert datas(b"data\n\n", split) == [""]


def test_multi_line_data_joined_with_newline(split: Split) -> None:
    assert datas(b'data: {\ndata: "a": 1\ndata: }\n\n', split) == ['{\n"a": 1\n}']


def test_event_id_and_retry(split: Split) -> None:
    body = b"event: error\nid: 7\nretry: 3000\ndata: x\n\ndata: y\n\n"
    first, second = decode(body, split)
    assert first == Event(data="x", type="error", id="7", retry=3000)
    # The event type resets after dispatch; the last event id does not.
    assert second == Event(data="y", type="message", id="7", retry=3000)


def test_retry_that_is_not_digits_is_ignored(split: Split) -> None:
    (event,) = decode(b"retry: 10s\ndata: x\n\n", split)
    assert event.retry is None


def test_id_with_nul_is_ignored(split: Split) -> None:
    (event,) = decode(b"id: 1\x002\ndata: x\n\n", split)
    assert event.id == ""


def test_no_dispatch_when_data_buffer_is_empty(split: Split) -> None:
    # An event type without data is not an event, and the type is reset.
    assert decode(b"event: ping\n\ndata: x\n\n", split) == [Event(data="x")]


def test_unknown_fields_are_ignored(split: Split) -> None:
    assert datas(b"foo: bar\ndata: x\nbaz\n\n", split) == ["x"]


def test_unterminated_event_is_discarded_at_close(split: Split) -> None:
    decoder = SSEDecoder()
    assert decode(b"data: a\n\ndata: b\n", split, decoder) == [Event(data="a")]
    assert decoder.has_unterminated_event


def test_utf8_split_across_reads_comes_out_whole(split: Split) -> None:
    assert datas("data: 😀😀😀\n\n".encode(), split) == ["😀😀😀"]


def test_invalid_utf8_becomes_replacement_character(split: Split) -> None:
    assert datas(b"data: a\xffb\n\n", split) == ["a\ufffdb"]


def test_empty_reads_are_harmless() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"") == []
    assert [e.data for e in decoder.feed(b"data: a\n\n")] == ["a"]


def test_line_bound_is_a_protocol_error_and_sticks() -> None:
    decoder = SSEDecoder(max_line_bytes=16)
    with pytest.raises(SSEProtocolError, match="line longer than 16 bytes"):
        for _ in range(5):
            decoder.feed(b"data: 0123")
    with pytest.raises(SSEProtocolError):
        decoder.feed(b"\n\n")  # stays in its error state


def test_event_bound_is_a_protocol_error() -> None:
    decoder = SSEDecoder(max_event_bytes=10)
    with pytest.raises(SSEProtocolError, match="event data longer"):
        decoder.feed(b"data: 123456\ndata: 123456\n")


def test_feed_after_close_is_refused() -> None:
    decoder = SSEDecoder()
    decoder.close()
    with pytest.raises(RuntimeError):
        decoder.feed(b"data: x\n\n")


_lines = st.lists(
    st.one_of(
        st.sampled_from([b"", b": comment", b"event: ping", b"id: 3", b"retry: 10", b"data"]),
        st.builds(lambda s: b"data: " + s.encode(), st.text(max_size=8)),
        st.binary(max_size=6).filter(lambda b: b"\r" not in b and b"\n" not in b),
    ),
    max_size=12,
)


@settings(deadline=None)
@given(
    lines=_lines,
    ends=st.lists(st.sampled_from([b"\n", b"\r\n", b"\r"]), min_size=12, max_size=12),
    bom=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
)
def test_events_do_not_depend_on_how_the_body_is_cut(
    lines: list[bytes], ends: list[bytes], bom: bool, cuts: list[int]
) -> None:
    body = (b"\xef\xbb\xbf" if bom else b"") + b"".join(
        line + end for line, end in zip(lines, ends, strict=False)
    )
    reference = decode(body, lambda b: iter([b]))
    points = sorted({c for c in cuts if 0 < c < len(body)})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode(body, lambda _: iter(pieces)) == reference


def test_event_bound_counts_characters_not_bytes() -> None:
    # Six two-byte characters are 12 bytes but 6 characters plus the line's 1.
    decoder = SSEDecoder(max_event_bytes=10)
    assert [e.data for e in decoder.feed("data: éééééé\n\n".encode())] == ["éééééé"]
    with pytest.raises(SSEProtocolError, match="event data longer"):
        SSEDecoder(max_event_bytes=10).feed("data: éééééééééé\n\n".encode())


def test_a_large_line_in_small_reads_comes_out_whole() -> None:
    decoder = SSEDecoder()
    body = b"data: " + b"x" * 100_000 + b"\r\n\r\n"
    events = [e for i in range(0, len(body), 1000) for e in decoder.feed(body[i : i + 1000])]
    assert [len(e.data) for e in events] == [100_000]


def test_events_gives_the_undecoded_data() -> None:
    raw = SSEDecoder().events(b"event: x\nid: 4\ndata: a\xff\ndata: b\n\n")
    assert raw == [("x", b"a\xff\nb", "4", None)]


def simple_events(body: bytes) -> list[Event]:
    """WHATWG §9.2.6 read literally: decode the whole body, split it, walk the lines."""
    text = body.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    lines = re.split("\r\n|\r|\n", text)[:-1]  # the last line has no end: it is discarded
    events, data, type_, last_id, retry = [], [], "", "", None
    for line in lines:
        if line == "":
            if data:
                events.append(Event("\n".join(data), type_ or "message", last_id, retry))
            data, type_ = [], ""
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            type_ = value
        elif name == "id" and "\x00" not in value:
            last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return events


_line_heads = st.sampled_from(
    [
        b"",
        b"",
        b"data: ",
        b"data: ",
        b"data:",
        b"data",
        b"event: ",
        b"event:error",
        b"id: ",
        b"id:",
        b"retry: ",
        b"retry:",
        b": ",
        b":",
        b"\xef\xbb\xbf",
        b"foo: ",
    ]
)
_line_tails = st.one_of(
    st.sampled_from(
        [b"", b"{}", b"[DONE]", b"\x00", b"\xe6\x97", b"\xff", b"12", b" 7", "é😀".encode()]
    ),
    st.binary(max_size=5).filter(lambda b: b"\r" not in b and b"\n" not in b),
)
_lines_ended = st.lists(
    st.tuples(_line_heads, _line_tails, st.sampled_from([b"\n", b"\r", b"\r\n", b"\n\n"])).map(
        b"".join
    ),
    max_size=30,
)


@settings(deadline=None, max_examples=400)
@given(
    bom=st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\xef\xbb"]),
    lines=_lines_ended,
    last=_line_tails,
    sizes=st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8),
)
def test_the_decoder_gives_what_a_literal_reading_of_the_standard_gives(
    bom: bytes, lines: list[bytes], last: bytes, sizes: list[int]
) -> None:
    body = bom + b"".join(lines) + last
    reads, at = [], 0
    while at < len(body):
        size = sizes[len(reads) % len(sizes)]
        reads.append(body[at : at + size])
        at += size
    assert decode(body, lambda _: iter(reads)) == simple_events(body)
