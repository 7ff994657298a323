"""Showing bytes to people: invisible bytes made visible, reads marked."""

from __future__ import annotations

__all__ = ["visible", "wire_view"]

_NAMED = {0x0D: "\\r", 0x0A: "\\n", 0x00: "\\0", 0x09: "\\t"}


def visible(data: bytes) -> str:
    """``data`` as text with CR, LF, NUL, tab, the BOM and bad bytes escaped.

    A line break follows every ``\\n`` so a stream still reads as lines.
    """
    out: list[str] = []
    text = data.decode("utf-8", errors="surrogateescape")
    for ch in text:
        code = ord(ch)
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
            parts.append(visible(shown[start : min(end, len(shown))]))
            start = end
        text = "¦".join(parts)
    if len(body) > limit:
        text += f"\n… {len(body) - limit} more bytes not shown"
    return text
