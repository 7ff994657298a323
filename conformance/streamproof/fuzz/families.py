"""Families of generated streams that grow in one dimension, for cost verdicts.

Each family is an abstract ``Response`` of size ``n`` rendered by the
fuzzer's renderer, and the reads it is delivered in. Only one thing grows per
family, so the growth of an adapter's time is the growth of its cost in
that dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .model import CallDelta, Chunk, Delta, Done, Response
from .render import render

__all__ = ["FAMILIES", "STANDARD", "Family", "Stream", "standard_stream"]

KiB = 1024
MiB = 1024 * KiB
#: Reads of this size for every family but ``reads``: a common socket read.
READ_SIZE = 8 * KiB


@dataclass(frozen=True)
class Stream:
    """A body, its headers and where its reads end."""

    body: bytes
    headers: dict[str, str]
    request: dict[str, object]
    ends: list[int]
    events: int


def _stream(response: Response, read_size: int = READ_SIZE) -> Stream:
    wire = render(response)
    body = wire.body
    ends = [*range(read_size, len(body), read_size), len(body)]
    events = len(response.events)
    return Stream(body, wire.headers, dict(wire.request), ends, events)


def _finish() -> tuple[Chunk, Done]:
    return Chunk((Delta(0, finish_reason="stop"),)), Done()


def event_size(n: int) -> Stream:
    """One content event of ``n`` bytes of text."""
    text = ("streaming " * (n // 10 + 1))[:n]
    return _stream(Response(events=(Chunk((Delta(0, content=text),)), *_finish())))


def events(n: int) -> Stream:
    """``n`` content events of a word each."""
    chunks = tuple(Chunk((Delta(0, content=f"w{i % 10} "),)) for i in range(n))
    return _stream(Response(events=(*chunks, *_finish())))


def tool_fragments(n: int) -> Stream:
    """One tool call whose arguments arrive in ``n`` fragments."""
    head = Chunk((Delta(0, tool_calls=(CallDelta(0, "call_1", "f", "{", head=True),)),))
    parts = tuple(
        Chunk((Delta(0, tool_calls=(CallDelta(0, arguments='"k":1,'),)),)) for _ in range(n)
    )
    tail = Chunk((Delta(0, tool_calls=(CallDelta(0, arguments='"z":0}'),)),))
    return _stream(Response(events=(head, *parts, tail, *_finish())))


def reads(n: int) -> Stream:
    """A body of about ``n`` bytes delivered one byte per read."""
    per_event = len(events(1).body) - len(events(0).body)
    stream = events(max(1, n // per_event))
    return Stream(
        stream.body,
        stream.headers,
        stream.request,
        list(range(1, len(stream.body) + 1)),
        stream.events,
    )


@dataclass(frozen=True)
class Family:
    name: str
    unit: str
    make: Callable[[int], Stream]
    sizes: tuple[int, ...]
    quick: tuple[int, ...]


def _doubling(low: int, high: int) -> tuple[int, ...]:
    sizes, n = [], low
    while n <= high:
        sizes.append(n)
        n *= 2
    return tuple(sizes)


FAMILIES = {
    f.name: f
    for f in (
        Family(
            "event-size",
            "bytes",
            event_size,
            _doubling(64 * KiB, 8 * MiB),
            _doubling(64 * KiB, 2 * MiB),
        ),
        Family("events", "events", events, _doubling(1024, 64 * 1024), _doubling(1024, 16 * 1024)),
        Family(
            "tool-fragments",
            "fragments",
            tool_fragments,
            _doubling(1024, 64 * 1024),
            _doubling(1024, 16 * 1024),
        ),
        Family(
            "reads",
            "1-byte reads",
            reads,
            _doubling(4 * KiB, 256 * KiB),
            _doubling(4 * KiB, 64 * KiB),
        ),
    )
}

#: The standard stream of the throughput figures: 16k word events in 8 KiB reads.
STANDARD = 16 * 1024


def standard_stream() -> Stream:
    return events(STANDARD)
