"""Showing bytes to people: invisible bytes made visible, reads marked."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "WireWindow",
    "event_spans",
    "terminal_lines",
    "terminal_safe",
    "visible",
    "wire_view",
    "wire_window",
]

_NAMED = {0x0D: "\\r", 0x0A: "\\n", 0x00: "\\0", 0x09: "\\t"}

# What a terminal would act on rather than show: C0 controls (ESC starts the
# sequences that retitle a window or clear the screen, ECMA-48 §5), DEL, the
# C1 controls (0x9B is a one-byte CSI) and the bidirectional overrides that
# reorder what is shown (Unicode TR 9).
_UNSAFE = {
    code: _NAMED.get(code, f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    for code in (
        *range(0x20),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    )
}


def terminal_safe(text: str) -> str:
    """``text`` with every control character escaped, for one line on a terminal.

    Text from results files, adapters and cases goes through this before it
    is printed, so an adapter's crash message cannot move the cursor or
    rewrite the screen.
    """
    return text.translate(_UNSAFE)


def terminal_lines(text: str) -> str:
    """``text`` of several lines, each made :func:`terminal_safe`; the line breaks stay."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def visible(data: bytes, following: bytes = b"") -> str:
    """``data`` as text with CR, LF, NUL, tab, the BOM, bad bytes and every
    character :func:`terminal_safe` escapes escaped.

    A line break follows every line end (LF, CRLF, or a lone CR) so a stream
    still reads as lines. ``following`` is the byte after ``data``, if any,
    so that a CR ending one read and an LF starting the next read as CRLF.
    """
    out: list[str] = []
    text = data.decode("utf-8", errors="surrogateescape")
    for i, ch in enumerate(text):
        code = ord(ch)
        after = text[i + 1 : i + 2] or following[:1].decode("latin-1")
        if code == 0x0D and after != "\n":
            out.append("\\r\n")  # a lone CR ends a line too: show it as one
            continue
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code == 0xFEFF:
            out.append("<BOM>")
        elif code in _NAMED:
            out.append(_NAMED[code] + ("\n" if code == 0x0A else ""))
        elif code in _UNSAFE:  # the other controls, C1 and the bidi overrides
            out.append(_UNSAFE[code])
        else:
            out.append(ch)
    return "".join(out)


def wire_view(body: bytes, ends: list[int] | None = None, *, limit: int = 20_000) -> str:
    """The body made visible, with ``¦`` at every read boundary in ``ends``.

    Past ``limit`` bytes the rest is summarised in one line.
    """
    shown = body[:limit]
    if not ends:
        text = visible(shown)
    else:
        parts, start = [], 0
        for end in ends:
            if start >= len(shown):
                break
            stop = min(end, len(shown))
            parts.append(visible(shown[start:stop], shown[stop : stop + 1]))
            start = end
        text = "¦".join(parts)
    if len(body) > limit:
        text += f"\n… {len(body) - limit} more bytes not shown"
    return text


# An SSE event ends with a blank line: a line end right after a line end
# (WHATWG HTML "Server-sent events", "Interpreting an event stream").
_BLANK_LINE = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")


def event_spans(body: bytes) -> list[tuple[int, int]]:
    """``(start, stop)`` of each event of ``body``, the blank line included.

    A body that is not an event stream is one span; so is a tail that no
    blank line closes.
    """
    spans, start = [], 0
    for match in _BLANK_LINE.finditer(body):
        spans.append((start, match.end()))
        start = match.end()
    if start < len(body) or not spans:
        spans.append((start, len(body)))
    return spans


@dataclass(frozen=True)
class WireWindow:
    """The body around one byte: the event that holds it, a few events each
    side with the reads marked, and the rest as text shown only on request."""

    at: int  # the byte the window is centred on
    start: int  # the window is body[start:stop]; the focus event body[focus_start:focus_stop]
    stop: int
    focus_start: int
    focus_stop: int
    before: str  # body[:start] made visible, its head cut past the limit
    lead: str  # the window up to the focus event, reads marked with ¦
    focus: str
    tail: str  # the window after the focus event
    after: str  # body[stop:] made visible, its end cut past the limit
    reads: int  # read boundaries marked inside the window


def _marked(body: bytes, start: int, stop: int, ends: list[int]) -> tuple[str, int]:
    """``body[start:stop]`` made visible with ``¦`` at each read end inside it."""
    cuts = [e for e in ends if start < e < stop]
    parts, at = [], start
    for end in [*cuts, stop]:
        parts.append(visible(body[at:end], body[end : end + 1]))
        at = end
    return "¦".join(parts), len(cuts)


def wire_window(
    body: bytes,
    ends: list[int] | None,
    at: int,
    *,
    around: int = 2,
    window: int = 1_600,
    rest: int = 2_000,
) -> WireWindow:
    """The body centred on byte ``at``: its event and ``around`` events each side.

    The window keeps to about ``window`` bytes (fewer events when they are
    long; a slice around ``at`` when one event is longer); the bytes before
    and after it are made visible without read marks, at most ``rest`` bytes
    of each, the part nearest the window.
    """
    at = max(0, min(at, len(body) - 1))
    spans = event_spans(body)
    index = next(i for i, (a, b) in enumerate(spans) if a <= at < b or b == len(body))
    focus_start, focus_stop = spans[index]
    if focus_stop - focus_start > window:  # one long event, or a body that is no stream
        focus_start = max(focus_start, at - window // 2)
        focus_stop = min(focus_stop, focus_start + window)
    start, stop = focus_start, focus_stop
    for step in range(1, around + 1):
        if index - step >= 0 and stop - spans[index - step][0] <= window:
            start = spans[index - step][0]
        if index + step < len(spans) and spans[index + step][1] - start <= window:
            stop = spans[index + step][1]
    marks = ends or []
    lead, n_lead = _marked(body, start, focus_start, marks)
    focus, n_focus = _marked(body, focus_start, focus_stop, marks)
    tail, n_tail = _marked(body, focus_stop, stop, marks)
    # A read that ends where the focus event starts or stops is marked too.
    seams = [
        start < focus_start and focus_start in marks,
        focus_stop < stop and focus_stop in marks,
    ]
    if seams[0]:
        lead += "¦"
    if seams[1]:
        focus += "¦"
    head = max(0, start - rest)
    before = visible(body[head:start], body[start : start + 1])
    if head:
        before = f"… {head} earlier bytes not shown\n" + before
    after = visible(body[stop : stop + rest])
    if len(body) - stop > rest:
        after += f"\n… {len(body) - stop - rest} more bytes not shown"
    return WireWindow(
        at,
        start,
        stop,
        focus_start,
        focus_stop,
        before,
        lead,
        focus,
        tail,
        after,
        n_lead + n_focus + n_tail + sum(seams),
    )
