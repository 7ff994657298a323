from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

pytest_plugins = ["pytester"]


def whole(data: bytes) -> Iterator[bytes]:
    yield data


def byte_by_byte(data: bytes) -> Iterator[bytes]:
    for i in range(len(data)):
        yield data[i : i + 1]


def at_line_ends(data: bytes) -> Iterator[bytes]:
    """A read ends after every CR and every LF (so every CRLF is split)."""
    start = 0
    for i, byte in enumerate(data):
        if byte in (0x0A, 0x0D):
            yield data[start : i + 1]
            start = i + 1
    if start < len(data):
        yield data[start:]


SPLITTERS: dict[str, Callable[[bytes], Iterator[bytes]]] = {
    "whole": whole,
    "bytes": byte_by_byte,
    "line-ends": at_line_ends,
}


@pytest.fixture(params=sorted(SPLITTERS))
def split(request: pytest.FixtureRequest) -> Callable[[bytes], Iterator[bytes]]:
    """Every parser test feeds its input whole, byte by byte and split at each line end."""
    return SPLITTERS[request.param]
