"""Showing bytes to people: invisible bytes made visible, reads marked."""

from __future__ import annotations

__all__ = ["terminal_safe", "visible", "wire_view"]

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
