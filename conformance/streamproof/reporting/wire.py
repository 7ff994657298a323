"""Showing bytes to people: invisible bytes made visible, reads marked."""

from __future__ import annotations

__all__ = ["visible", "wire_view"]

_NAMED = {0x0D: "\\r", 0x0A: "\\n", 0x00: "\\0", 0x09: "\\t"}


def visible(data: bytes, following: bytes = b"") -> str:
    """``data`` as text with CR, LF, NUL, tab, the BOM and bad bytes escaped.

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
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
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
