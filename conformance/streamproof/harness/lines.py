"""Reading the protocol's JSON lines from a child, in linear time and bounded.

Each read is appended to one ``bytearray`` and only the new bytes are
searched for the line end, so a reply of n bytes costs O(n) whatever the
size of the reads (appending to ``bytes`` and searching from the start each
time made a 100 MB reply take minutes). A reply longer than ``max_reply``
is refused as soon as that many bytes arrived without a line end, rather
than read until the deadline.
"""

from __future__ import annotations

import os
import select
import time

__all__ = ["MAX_REPLY", "LineReader", "LineTooLong", "ReadTimeout", "StreamClosed"]

# The largest reply line the harness reads (docs/protocol.md, "Size
# limits"): an outcome of about 100 MB fits; a runaway writer is stopped
# there instead of filling the memory.
MAX_REPLY = 128 * 1024 * 1024

_READ = 1 << 16


class ReadTimeout(Exception):
    """No complete line before the deadline."""


class StreamClosed(Exception):
    """The child closed its end (it exited) before ending the line."""


class LineTooLong(Exception):
    """The line grew past the maximum reply size."""


class LineReader:
    """Lines from a file descriptor, each read under a deadline."""

    def __init__(self, fd: int, max_reply: int = MAX_REPLY) -> None:
        self.fd = fd
        self.max_reply = max_reply
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer known to hold no line end

    def waiting(self) -> bool:
        """Whether anything (bytes, or the end of the stream) can be read now."""
        return bool(self._buffer) or bool(select.select([self.fd], [], [], 0)[0])

    def read_line(self, deadline: float) -> bytes:
        """The next line without its ``\\n``; raises when none comes in time."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end > self.max_reply:
                raise LineTooLong(end)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > self.max_reply:
                raise LineTooLong(len(self._buffer))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReadTimeout
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                continue
            data = os.read(self.fd, _READ)
            if not data:
                raise StreamClosed
            self._buffer += data
