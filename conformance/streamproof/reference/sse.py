"""A sans-IO Server-Sent Events decoder over bytes.

It follows WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event
stream": lines end at CRLF, LF or CR; one leading byte order mark is skipped;
lines starting with ``:`` are comments; a field is split at its first colon
and loses one space after it; ``data`` lines join with ``\\n``; a blank line
dispatches, unless the data buffer is empty.

Lines are found in bytes with ``bytes.find`` and an event's data is decoded
once, when it is dispatched. CR and LF never occur inside a multi-byte UTF-8
sequence, so this is the same as decoding the stream incrementally and then
splitting, and a character split across reads is simply held with the rest of
its line until the line ends.

The decoder takes ``bytes`` and never ``str``: ``feed(data) -> list[Event]``
and ``close() -> list[Event]``. It does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

__all__ = ["MAX_LINE_BYTES", "Event", "RawEvent", "SSEDecoder", "SSEProtocolError"]

# A line longer than this is a protocol error rather than something to buffer
# for ever. Real chunks are a few hundred bytes; the largest seen in recordings
# (a whole tool call or a long citation list in one event) are tens of KiB.
# 16 MiB leaves room for a base64 image in one line and still bounds memory.
MAX_LINE_BYTES = 16 * 1024 * 1024

# The data buffer of one event is bounded by the same reasoning: a multi-line
# event is no larger in practice than a single-line one.
MAX_EVENT_BYTES = 16 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"

# What ``SSEDecoder.events`` returns for each event: its type, its data as
# UTF-8 bytes (not yet decoded), its last event id and its retry.
RawEvent = tuple[str, bytes | bytearray, str, int | None]


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event. ``type`` defaults to ``"message"``."""

    data: str
    type: str = "message"
    id: str = ""
    retry: int | None = None


class SSEProtocolError(Exception):
    """The stream broke a bound. The decoder stays in its error state."""


def _text(data: bytes | bytearray) -> str:
    return data.decode("utf-8", errors="replace")


class SSEDecoder:
    """Turns body bytes into events. Feed it reads of any size."""

    def __init__(
        self, max_line_bytes: int = MAX_LINE_BYTES, max_event_bytes: int = MAX_EVENT_BYTES
    ) -> None:
        self._max_line = max_line_bytes
        self._max_event = max_event_bytes
        self._pending = bytearray()  # an unfinished line (it holds no CR and no LF)
        self._at_start = True  # nothing seen yet: a BOM may follow
        self._skip_lf = False  # the previous read ended in CR: an LF next is part of it
        self._data: list[bytes | bytearray] = []  # the data lines of this event, undecoded
        self._data_size = 0  # what counts against max_event_bytes (see _append_data)
        self._exact_size = False  # _data_size counts characters, not bytes
        self._type = ""
        self._last_id = ""
        self._retry: int | None = None
        self._error: SSEProtocolError | None = None
        self._closed = False
        # At the start, after a CR, after an error or after close: events()
        # takes its careful path.
        self._irregular = True

    @property
    def has_unterminated_event(self) -> bool:
        """True when bytes of an event have arrived that no blank line closed."""
        return bool(self._pending) or bool(self._data)

    def feed(self, data: bytes) -> list[Event]:
        """Take the next read and return the events it completed."""
        return [Event(_text(d), t, i, r) for t, d, i, r in self.events(data)]

    def events(self, data: bytes) -> list[RawEvent]:
        """``feed`` without decoding: each event as ``(type, data bytes, id, retry)``.

        The data is the UTF-8 of the event's data lines joined with LF;
        ``data.decode("utf-8", errors="replace")`` is ``Event.data``.
        """
        if self._irregular:
            return self._irregular_events(data)
        if not data:
            return []
        if b"\r" in data:
            return self._read(data, 0)
        # The common read: LF line ends only, no state to look at.
        last = data.rfind(b"\n")
        if last < 0:
            pending = self._pending
            pending += data
            if len(pending) > self._max_line:
                self._check_line_bound()
            return []
        tail_size = len(data) - last - 1
        if tail_size > self._max_line:
            self._pending += data[last + 1 :]
            self._check_line_bound()
        events: list[RawEvent] = []
        self._lf_lines(data, 0, events)
        if tail_size:
            self._pending += data[last + 1 :]
        return events

    def _irregular_events(self, data: bytes) -> list[RawEvent]:
        """``events`` at the start, after a CR, after an error or after close."""
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
        start = 0
        if self._skip_lf:
            # §9.2.6: CRLF is one line end even when a read ends between them.
            self._skip_lf = False
            if data[:1] == b"\n":
                start = 1
        self._irregular = False
        return self._read(data, start)

    def _read(self, data: bytes, start: int) -> list[RawEvent]:
        """Every line of ``data[start:]``, whatever ends them."""
        lf = data.find(b"\n", start)
        cr = data.find(b"\r", start)
        if lf < 0 and cr < 0:
            self._pending += data[start:] if start else data
            self._check_line_bound()
            return []
        # The bytes after the last line end stay pending. Checked first, so a
        # read that breaks the bound dispatches nothing, as it always has.
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        tail_size = len(data) - last - 1
        if tail_size > self._max_line:
            self._pending += data[last + 1 :]
            self._check_line_bound()
        events: list[RawEvent] = []
        if cr < 0:
            self._lf_lines(data, start, events)
        else:
            self._any_lines(data, start, lf, cr, events)
        if tail_size:
            self._pending += data[last + 1 :]
        elif data[-1:] == b"\r":
            self._skip_lf = self._irregular = True
        return events

    def _line_with_pending(self, data: bytes, start: int, end: int) -> bytearray | bytes:
        """The line ending at ``end``, with what earlier reads left of it."""
        if not self._pending:
            return data[start:end]
        line = self._pending
        line += data[start:end]
        self._pending = bytearray()
        return line

    def _lf_lines(self, data: bytes, start: int, events: list[RawEvent]) -> None:
        """Every line of a read without CR: the common case, kept lean."""
        lines = data.split(b"\n")
        lines.pop()  # the bytes after the last LF: the caller keeps them
        first = 1 if start else 0  # data[0] was the LF of a CRLF: not a line
        pending = self._pending
        if pending:  # (never after a CR, so never with start == 1)
            self._pending = bytearray()
            pending += lines[0]
            first = 1
            if (
                pending.startswith(b"data: ")
                and not self._exact_size
                and self._data_size + len(pending) <= self._max_event
            ):
                del pending[:6]  # in place: a large line is not copied again
                self._data.append(pending)
                self._data_size += len(pending) + 1
            else:
                self._line(pending, events)
        if first >= len(lines):
            return
        data_lines = self._data
        if not self._exact_size and self._data_size + len(data) <= self._max_event:
            # No event can pass the bound within this read: no counting.
            self._lf_lines_unbounded(lines, first, events)
            return
        size = self._data_size
        limit = -1 if self._exact_size else self._max_event
        for i in range(first, len(lines)):
            line = lines[i]
            if line:
                if line.startswith(b"data: "):
                    value = line[6:]
                    size += len(value) + 1
                    if size <= limit:
                        data_lines.append(value)
                        continue
                    size -= len(value) + 1
                    self._data_size = size
                    self._append_data(value)
                else:
                    self._data_size = size
                    self._line(line, events)
                data_lines = self._data
                size = self._data_size
                limit = -1 if self._exact_size else self._max_event
            elif data_lines:
                events.append(
                    (
                        self._type or "message",
                        data_lines[0] if len(data_lines) == 1 else b"\n".join(data_lines),
                        self._last_id,
                        self._retry,
                    )
                )
                data_lines = self._data = []
                size = 0
                self._type = ""
                if self._exact_size:
                    self._exact_size = False
                    limit = self._max_event
            else:
                self._type = ""
        self._data_size = size

    def _lf_lines_unbounded(self, lines: list[bytes], first: int, events: list[RawEvent]) -> None:
        """``_lf_lines`` for a read too short to break the event bound."""
        data_lines = self._data
        type_, last_id, retry = self._type, self._last_id, self._retry
        for line in islice(lines, first, None) if first else lines:
            if line:
                if line.startswith(b"data: "):
                    data_lines.append(line[6:])
                else:
                    self._type = type_
                    self._line(line, events)
                    data_lines = self._data
                    type_, last_id, retry = self._type, self._last_id, self._retry
            elif data_lines:
                events.append(
                    (
                        type_ or "message",
                        data_lines[0] if len(data_lines) == 1 else b"\n".join(data_lines),
                        last_id,
                        retry,
                    )
                )
                data_lines = self._data = []
                type_ = ""
            else:
                type_ = ""
        self._type = type_
        self._data_size = sum(map(len, data_lines)) + len(data_lines) if data_lines else 0

    def _any_lines(self, data: bytes, start: int, lf: int, cr: int, events: list[RawEvent]) -> None:
        """Every line of a read with CR in it: CR, LF and CRLF all end a line."""
        first = True
        size = len(data)
        while lf >= 0 or cr >= 0:
            if cr < 0 or 0 <= lf < cr:
                end = after = lf
            else:
                end = after = cr
                if cr + 1 < size and data[cr + 1] == 0x0A:
                    after = cr + 1
            if first:
                self._line(self._line_with_pending(data, start, end), events)
                first = False
            else:
                self._line(data[start:end], events)
            start = after + 1
            if 0 <= lf < start:
                lf = data.find(b"\n", start)
            if 0 <= cr < start:
                cr = data.find(b"\r", start)

    def close(self) -> list[Event]:
        """Mark the end of the body.

        An event not closed by a blank line is discarded, as WHATWG says
        (§9.2.6: "Once the end of the file is reached, any pending data must
        be discarded"). ``has_unterminated_event`` tells whether one was.
        """
        if self._error is not None:
            raise self._error
        self._closed = self._irregular = True
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
            self._irregular = True
            self._error = SSEProtocolError(
                f"line longer than {self._max_line} bytes without a line end"
            )
            raise self._error

    def _line(self, raw: bytes | bytearray, events: list[RawEvent]) -> None:
        if not raw:
            if self._data:
                events.append(self._dispatch())
            else:
                self._type = ""
            return
        if raw[:1] == b":":
            return  # a comment
        if raw[:5] == b"data:":
            # Nearly every line is a data line: skip the general split.
            cut = 6 if raw[5:6] == b" " else 5
            if isinstance(raw, bytearray):
                del raw[:cut]  # in place: a large line is not copied again
                self._append_data(raw)
            else:
                self._append_data(raw[cut:])
            return
        line = _text(raw)
        name, colon, value_text = line.partition(":")
        if colon and value_text[:1] == " ":
            value_text = value_text[1:]
        if name == "data":
            self._append_data(b"")  # "data" without a colon: "data:" lines are above
        elif name == "event":
            self._type = value_text
        elif name == "id":
            if "\x00" not in value_text:
                self._last_id = value_text
        elif name == "retry" and value_text.isascii() and value_text.isdigit():
            self._retry = int(value_text)

    def _append_data(self, value: bytes | bytearray) -> None:
        # The bound counts decoded characters plus one per line, as it always
        # has. A line has at least as many bytes as characters, so bytes are
        # counted until they pass the bound; only then are characters counted.
        if self._exact_size:
            self._data_size += len(_text(value)) + 1
        else:
            self._data_size += len(value) + 1
            if self._data_size > self._max_event:
                self._exact_size = True
                self._data_size = sum(len(_text(v)) + 1 for v in (*self._data, value))
        if self._data_size > self._max_event:
            self._irregular = True
            self._error = SSEProtocolError(f"event data longer than {self._max_event} bytes")
            raise self._error
        self._data.append(value)

    def _dispatch(self) -> RawEvent:
        data = self._data
        event = (
            self._type or "message",
            data[0] if len(data) == 1 else b"\n".join(data),
            self._last_id,
            self._retry,
        )
        self._data = []
        self._data_size = 0
        self._exact_size = False
        self._type = ""
        return event
