"""A sans-IO Server-Sent Events decoder over bytes.

It follows WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event
stream": lines end at CRLF, LF or CR; one leading byte order mark is skipped;
lines starting with ``:`` are comments; a field is split at its first colon
and loses one space after it; ``data`` lines join with ``\\n``; a blank line
dispatches, unless the data buffer is empty.

Lines are split on bytes and each complete line is decoded on its own. CR
and LF never occur inside a multi-byte UTF-8 sequence, so this is the same as
decoding the stream incrementally and then splitting, and a character split
across reads is simply held with the rest of its line until the line ends.

The decoder takes ``bytes`` and never ``str``: ``feed(data) -> list[Event]``
and ``close() -> list[Event]``. It does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_LINE_BYTES", "Event", "SSEDecoder", "SSEProtocolError"]

# A line longer than this is a protocol error rather than something to buffer
# for ever. Real chunks are a few hundred bytes; the largest seen in recordings
# (a whole tool call or a long citation list in one event) are tens of KiB.
# 16 MiB leaves room for a base64 image in one line and still bounds memory.
MAX_LINE_BYTES = 16 * 1024 * 1024

# The data buffer of one event is bounded by the same reasoning: a multi-line
# event is no larger in practice than a single-line one.
MAX_EVENT_BYTES = 16 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event. ``type`` defaults to ``"message"``."""

    data: str
    type: str = "message"
    id: str = ""
    retry: int | None = None


class SSEProtocolError(Exception):
    """The stream broke a bound. The decoder stays in its error state."""


class SSEDecoder:
    """Turns body bytes into events. Feed it reads of any size."""

    def __init__(
        self, max_line_bytes: int = MAX_LINE_BYTES, max_event_bytes: int = MAX_EVENT_BYTES
    ) -> None:
        self._max_line = max_line_bytes
        self._max_event = max_event_bytes
        self._pending = bytearray()  # an unfinished line
        self._at_start = True  # nothing seen yet: a BOM may follow
        self._skip_lf = False  # the previous read ended in CR: an LF next is part of it
        self._data: list[str] = []
        self._data_size = 0
        self._type = ""
        self._last_id = ""
        self._retry: int | None = None
        self._error: SSEProtocolError | None = None
        self._closed = False

    @property
    def has_unterminated_event(self) -> bool:
        """True when bytes of an event have arrived that no blank line closed."""
        return bool(self._pending) or bool(self._data)

    def feed(self, data: bytes) -> list[Event]:
        """Take the next read and return the events it completed."""
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("feed() after close()")
        if not data:
            return []
        if self._at_start:
            data = self._strip_bom(data)
            if not data:
                return []
        if self._skip_lf:
            # §9.2.6: CRLF is one line end even when a read ends between them.
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        if b"\n" not in data and b"\r" not in data:
            self._pending += data
            self._check_line_bound()
            return []
        if self._pending:
            self._pending += data
            buf = bytes(self._pending)
            self._pending.clear()
        else:
            buf = data
        lines = buf.splitlines(keepends=True)
        last = lines[-1]
        if not last.endswith((b"\n", b"\r")):
            self._pending += lines.pop()
            self._check_line_bound()
        elif last.endswith(b"\r"):
            self._skip_lf = True
        events: list[Event] = []
        for line in lines:
            event = self._line(line.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[Event]:
        """Mark the end of the body.

        An event not closed by a blank line is discarded, as WHATWG says
        (§9.2.6: "Once the end of the file is reached, any pending data must
        be discarded"). ``has_unterminated_event`` tells whether one was.
        """
        if self._error is not None:
            raise self._error
        self._closed = True
        return []

    def _strip_bom(self, data: bytes) -> bytes:
        # The BOM may itself arrive one byte per read.
        candidate = bytes(self._pending) + data
        if len(candidate) < len(_BOM) and _BOM.startswith(candidate):
            self._pending = bytearray(candidate)
            return b""
        self._at_start = False
        self._pending.clear()
        if candidate.startswith(_BOM):
            return candidate[len(_BOM) :]
        return candidate

    def _check_line_bound(self) -> None:
        if len(self._pending) > self._max_line:
            self._error = SSEProtocolError(
                f"line longer than {self._max_line} bytes without a line end"
            )
            raise self._error

    def _line(self, raw: bytes) -> Event | None:
        if not raw:
            return self._dispatch()
        if raw[:1] == b":":
            return None  # a comment
        if raw[:5] == b"data:":
            # Nearly every line is a data line: skip the general split.
            value = raw[6:] if raw[5:6] == b" " else raw[5:]
            self._append_data(value.decode("utf-8", errors="replace"))
            return None
        line = raw.decode("utf-8", errors="replace")
        name, colon, value_text = line.partition(":")
        if colon and value_text[:1] == " ":
            value_text = value_text[1:]
        if name == "data":
            self._append_data(value_text)
        elif name == "event":
            self._type = value_text
        elif name == "id":
            if "\x00" not in value_text:
                self._last_id = value_text
        elif name == "retry" and value_text.isascii() and value_text.isdigit():
            self._retry = int(value_text)
        return None

    def _append_data(self, value: str) -> None:
        self._data_size += len(value) + 1
        if self._data_size > self._max_event:
            self._error = SSEProtocolError(f"event data longer than {self._max_event} bytes")
            raise self._error
        self._data.append(value)

    def _dispatch(self) -> Event | None:
        if not self._data:
            self._type = ""
            return None
        event = Event(
            data="\n".join(self._data),
            type=self._type or "message",
            id=self._last_id,
            retry=self._retry,
        )
        self._data = []
        self._data_size = 0
        self._type = ""
        return event
