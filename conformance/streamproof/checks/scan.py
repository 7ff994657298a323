"""The byte level of ``streamproof lint``: where things are in a body.

A finding names a quirk of ``corpus/quirks.json`` and the byte offset in the
body where it shows. The SSE scan is our own, not ``SSEDecoder``, because
every line, field and event must keep its offset; it splits lines and events
the way WHATWG §9.2.6 does. A finding about JSON points at the key it is
about (the opening quote of ``"total_tokens"``, of ``"id"`` …), found by a
small scanner over the raw bytes, so the offset is exact even when the same
key occurs deeper in the object. Also here: the checks of JSON text that
look at how a body is written rather than what it says.

The checks of chunks and bodies are in :mod:`streamproof.checks.rules` and
:mod:`streamproof.checks.stream`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "Finding", "JSONPath"]


@dataclass(frozen=True, order=True)
class Finding:
    """One deviation before its severity is looked up: where, which quirk, why."""

    offset: int
    quirk: str
    message: str


_CONTROL_FIELDS = frozenset({"event", "id", "retry"})
_LONG_LINE = 64 * 1024
_BIG_INT = 2**53
_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_END_NAMES = {b"\r\n": "CRLF", b"\r": "CR", b"\n": "LF"}
_WHITE = b" \t\r\n"

JSONPath = tuple[Any, ...]


# ------------------------------------------------------------------------ where a key is


def _skip_ws(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in _WHITE:
        i += 1
    return i


def _string_end(data: bytes, i: int) -> int:
    """The index after the string starting at ``data[i] == '"'``."""
    i += 1
    while i < len(data):
        if data[i] == 0x5C:  # a backslash escapes the next byte
            i += 2
        elif data[i] == 0x22:
            return i + 1
        else:
            i += 1
    return i


def _value_end(data: bytes, i: int) -> int:
    """The index after the JSON value starting at ``i``."""
    if i < len(data) and data[i] == 0x22:
        return _string_end(data, i)
    depth = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x22:
            i = _string_end(data, i)
            continue
        if byte in b"{[":
            depth += 1
        elif byte in b"}]":
            if depth == 0:
                return i
            depth -= 1
            if depth == 0:
                return i + 1
        elif byte == 0x2C and depth == 0:
            return i
        i += 1
    return i


def _find(data: bytes, path: JSONPath, i: int = 0) -> int | None:
    """Where ``path`` is in the JSON text: a key's opening quote or a list item's start."""
    i = _skip_ws(data, i)
    if not path:
        return i
    head, rest = path[0], path[1:]
    opener = b"{" if isinstance(head, str) else b"["
    if data[i : i + 1] != opener:
        return None
    i += 1
    position = 0
    while True:
        i = _skip_ws(data, i)
        if i >= len(data) or data[i] in b"}]":
            return None
        if isinstance(head, str):
            key_at = i
            i = _string_end(data, i)
            try:
                key = json.loads(data[key_at:i])
            except ValueError:
                return None
            i = _skip_ws(data, i) + 1  # the colon
            if key == head:
                return key_at if not rest else _find(data, rest, i)
        else:
            i = _skip_ws(data, i)
            if position == head:
                return _find(data, rest, i)
            position += 1
        i = _skip_ws(data, _value_end(data, _skip_ws(data, i)))
        if data[i : i + 1] != b",":
            return None
        i += 1


# ------------------------------------------------------------------------------- SSE scan


@dataclass
class Event:
    """One event block: where it starts, its data lines and its other fields."""

    start: int
    spans: list[tuple[int, bytes]] = field(default_factory=list)  # (offset of value, value)
    type: str = ""
    control: bool = False  # has an event, id or retry line

    @property
    def data(self) -> bytes:
        return b"\n".join(value for _, value in self.spans)

    @property
    def at(self) -> int:
        """Where the event's data starts (its first line when it has none)."""
        return self.spans[0][0] if self.spans else self.start

    def offset_of(self, index: int) -> int:
        """The body offset of byte ``index`` of :attr:`data`."""
        pos = 0
        for offset, value in self.spans:
            if index <= pos + len(value):
                return offset + index - pos
            pos += len(value) + 1
        return self.at

    def locate(self, *path: Any) -> int:
        """The body offset of ``path`` in the event's JSON, else of the data."""
        found = _find(self.data, path)
        return self.at if found is None else self.offset_of(found)


@dataclass
class _Body:
    """A whole JSON body, located like an event."""

    data: bytes

    def locate(self, *path: Any) -> int:
        found = _find(self.data, path)
        return 0 if found is None else found


@dataclass
class _Scan:
    findings: list[Finding]
    events: list[Event]
    open_event: Event | None  # an event the body ended in, before its blank line


def _lines(body: bytes, start: int) -> Iterator[tuple[int, bytes, bytes]]:
    """(offset, line, line end) for every line; the last may have no end."""
    pos = start
    while pos < len(body):
        match = _LINE_END.search(body, pos)
        if match is None:
            yield pos, body[pos:], b""
            return
        yield pos, body[pos : match.start()], match.group()
        pos = match.end()


def _scan(body: bytes) -> _Scan:
    findings: list[Finding] = []
    events: list[Event] = []
    pos = 0
    if body.startswith(_BOM):
        findings.append(Finding(0, "bom", "a UTF-8 byte order mark opens the body"))
        pos = len(_BOM)
    ends: dict[bytes, list[int]] = {}  # each kind of line end and where it shows
    block: Event | None = None
    comments: list[int] = []  # the comment lines since the last blank line
    for offset, line, end in _lines(body, pos):
        if end:
            ends.setdefault(end, []).append(offset + len(line))
        if len(line) > _LONG_LINE:
            findings.append(Finding(offset, "long-line", f"a line of {len(line)} bytes"))
        if not line:
            if block is None and not comments:
                findings.append(Finding(offset, "blank-lines", "a blank line with no event open"))
            elif block is None:
                findings.extend(_comments(comments, inside=False))
            else:
                findings.extend(_comments(comments, inside=True))
                _close(block, events, findings)
            block, comments = None, []
            continue
        if offset > pos and line.startswith(_BOM):
            findings.append(
                Finding(offset, "bom-mid-stream", "U+FEFF starts a line after the first")
            )
        if line[:1] == b":":
            comments.append(offset)
            continue
        if block is None:
            block = Event(start=offset)
        _field(line, offset, block, findings)
    findings.extend(_line_ends(ends))
    findings.extend(_comments(comments, inside=block is not None))
    return _Scan(findings, events, block)


def _line_ends(ends: dict[bytes, list[int]]) -> list[Finding]:
    found = [
        Finding(at, quirk, f"a line ends {_END_NAMES[end]}")
        for end, quirk in ((b"\r\n", "crlf"), (b"\r", "cr"))
        for at in ends.get(end, [])
    ]
    if len(ends) > 1:
        first, other = sorted(ends, key=lambda end: ends[end][0])[:2]
        found.append(
            Finding(
                ends[other][0],
                "mixed-line-endings",
                f"a {_END_NAMES[other]} line end after lines ended {_END_NAMES[first]}",
            )
        )
    return found


def _comments(offsets: list[int], *, inside: bool) -> Iterator[Finding]:
    """A comment inside an event is ``comment``; one in a block of its own a keep-alive."""
    for offset in offsets:
        if inside:
            yield Finding(offset, "comment", "a comment line inside an event")
        else:
            yield Finding(offset, "keep-alive-comment", "a comment line between events")


def _field(line: bytes, offset: int, block: Event, findings: list[Finding]) -> None:
    raw_name, colon, value = line.partition(b":")
    name = raw_name.decode("utf-8", errors="replace")
    shown = _short(line)
    value_at = offset + len(raw_name) + len(colon)
    if value[:1] == b" ":
        value, value_at = value[1:], value_at + 1
    if not colon:
        findings.append(Finding(offset, "field-without-colon", f"the line {shown} has no colon"))
    if name == "data":
        if colon and value_at == offset + 5 and value[:1] not in (b"", b"\t"):
            findings.append(
                Finding(offset, "no-space-after-colon", "data: without the space after the colon")
            )
        if not block.spans and value[:1] in (b" ", b"\t"):
            findings.append(
                Finding(value_at, "space-after-colon", "white space after the one space SSE drops")
            )
        if len(block.spans) == 1:
            findings.append(
                Finding(offset, "multi-line-data", "one event's data spread over several lines")
            )
        block.spans.append((value_at, value))
    elif name in _CONTROL_FIELDS:
        block.control = True
        if not colon:
            return
        if name == "event":
            block.type = value.decode("utf-8", errors="replace")
            findings.append(Finding(offset, "event-type", f"an event type: {shown}"))
        else:
            quirk = "event-id" if name == "id" else "retry"
            findings.append(Finding(offset, quirk, f"an {name} field: {shown}"))
    elif name == "[DONE]" and not colon:
        findings.append(
            Finding(offset, "bare-done-line", "[DONE] without data:, so no end marker arrives")
        )
    else:
        findings.append(Finding(offset, "unknown-field", f"a field SSE does not know: {shown}"))
        if name == "error":
            findings.append(
                Finding(offset, "error-sse-field", "an error in an error field, which SSE ignores")
            )
            findings.append(
                Finding(
                    offset, "error-in-200", "an error: field reports a failure after the 200 status"
                )
            )


def _close(block: Event, events: list[Event], findings: list[Finding]) -> None:
    if block.spans:
        events.append(block)
    elif block.control:
        findings.append(Finding(block.start, "empty-event", "an event block without data"))


def _short(line: bytes) -> str:
    text = line[:40].decode("utf-8", errors="replace")
    return repr(text + ("…" if len(line) > 40 else ""))


# ------------------------------------------------------------------------------- JSON text


def _python_separators(data: bytes) -> bool:
    """True when one-line JSON puts a space after its commas and colons, as Python does."""
    if b"\n" in data:
        return False
    comma = colon = False
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x22:
            i = _string_end(data, i)
            continue
        if byte in (0x2C, 0x3A) and data[i + 1 : i + 2] == b" ":
            comma, colon = comma or byte == 0x2C, colon or byte == 0x3A
        i += 1
    return comma and colon


def _objects(value: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object in ``value`` with a path whose list positions read ``[]``."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _objects(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item, f"{path}[]")


def _sorted_keys(value: dict[str, Any]) -> bool:
    """The chunk or body and its choices, deltas and messages have sorted keys.

    Vendor objects inside (Azure's prompt_filter_results, say) are not looked at.
    """
    objects = [value]
    choices = value.get("choices")
    for choice in choices if isinstance(choices, list) else []:
        if isinstance(choice, dict):
            objects.append(choice)
            objects.extend(v for k, v in choice.items() if k in ("delta", "message"))
    return all(list(obj) == sorted(obj) for obj in objects if isinstance(obj, dict))


def _big_int(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_big_int(v) for v in value.values())
    if isinstance(value, list):
        return any(_big_int(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > _BIG_INT
