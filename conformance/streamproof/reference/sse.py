"""A sans-IO Server-Sent Events decoder over bytes.

It follows WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event
stream": lines end at CRLF, LF or CR; one leading byte order mark is skipped;
lines starting with ``:`` are comments; a field is split at its first colon
and loses one space after it; ``data`` lines join with ``\\n``; a blank line
dispatches, unless the data buffer is empty.

Lines are found in bytes and an event's data is decoded once, when it is
read. CR and LF never occur inside a multi-byte UTF-8 sequence, so this is
the same as decoding the stream incrementally and then splitting, and a
character split across reads is simply held with the rest of its line until
the line ends.

Every line goes through ``_line``, which holds the rules, but for one
shortcut: a run of whole events that are each one ``data: `` line and a blank
line (what nearly every chat stream sends) is cut into events by one
``split``, with the same result.

The decoder takes ``bytes`` and never ``str``: ``feed(data) -> list[Event]``
and ``close() -> list[Event]``. It does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

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
        if self._error is not None:
            raise self._error
        if self._closed:
            raise RuntimeError("feed() after close()")
        if self._at_start:
            data = self._strip_bom(data)
        if self._skip_lf and data:
            # §9.2.6: CRLF is one line end even when a read ends between them.
            self._skip_lf = False
            if data[:1] == b"\n":
                data = data[1:]
        if b"\n" not in data and b"\r" not in data:
            self._pending += data  # the line under way goes on (a small read)
            if len(self._pending) > self._max_line:
                self._line_too_long()
            return []
        events: list[RawEvent] = []
        first = data.find(b"\n\n")
        last = data.rfind(b"\n\n")
        if last <= first or b"\r" in data:
            self._lines(data, events)
            return events
        # The read holds two blank lines or more: what comes up to the first
        # ends the event under way, what comes between it and the last is
        # whole events, what follows the last begins the next.
        self._lines(data[: first + 2], events)
        self._whole_events(data[first + 2 : last + 2], events)
        self._lines(data[last + 2 :], events)
        return events

    def _whole_events(self, data: bytes, events: list[RawEvent]) -> None:
        """Events from ``data``, which starts after a blank line and ends with one."""
        if len(data) > self._max_event:
            self._lines(data, events)  # the bounds are counted line by line
            return
        payloads = data[6:-2].split(b"\n\ndata: ")
        if data.startswith(b"data: ") and data.count(b"\n") == 2 * len(payloads):
            # Every LF is in a "\n\ndata: " or in the final "\n\n": each event
            # is one data line, and no payload holds an LF.
            events += zip(repeat("message"), payloads, repeat(self._last_id), repeat(self._retry))
        else:
            self._lines(data, events)  # comments, other fields, blank lines in a row

    def _lines(self, data: bytes, events: list[RawEvent]) -> None:
        """Every line of ``data``, whatever ends them; an unended last line stays pending."""
        lines: list[bytes | bytearray] = data.splitlines()  # type: ignore[assignment]
        tail: bytes | bytearray = b""
        if data.endswith(b"\r"):
            self._skip_lf = True  # an LF at the start of the next read ends nothing
        elif lines and not data.endswith(b"\n"):
            tail = lines.pop()
        pending = self._pending
        # What earlier reads left of the first line. Only a read holding a
        # line end gets here with something pending (events() keeps any
        # other read whole), so there is a first line.
        if pending:
            pending += lines[0]
            lines[0] = pending
            self._pending = bytearray()
        for line in lines:
            self._line(line, events)
        if tail:
            self._pending += tail
            if len(self._pending) > self._max_line:
                self._line_too_long()

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

    def _line_too_long(self) -> None:
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
        if raw.startswith(b"data:"):
            # Nearly every line is a data line: skip the general split.
            cut = 6 if raw[5:6] == b" " else 5
            if isinstance(raw, bytearray):
                del raw[:cut]  # in place: a large line is not copied again
                self._append_data(raw)
            else:
                self._append_data(raw[cut:])
            return
        # A comment (a line starting with ":") has an empty field name, which
        # no branch below takes: it is ignored.
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
