"""How ``streamproof run`` takes SIGTERM, and a standard output whose reader left."""

from __future__ import annotations

import contextlib
import io
import signal
from collections.abc import Iterator
from typing import TextIO

from . import _closed_pipe

__all__ = ["ClosedQuietly", "terminate_interrupts"]


@contextlib.contextmanager
def terminate_interrupts(received: list[int]) -> Iterator[None]:
    """SIGTERM takes Ctrl-C's path: it raises ``KeyboardInterrupt`` (and is noted)."""

    def interrupt(signum: int, frame: object) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class ClosedQuietly(io.TextIOBase):
    """Standard output that drops what it is given once its reader is gone (``| head -1``)."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            _closed_pipe()  # (points stdout at /dev/null)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            _closed_pipe()

    def fileno(self) -> int:
        return self._stream.fileno()
