"""Masking secrets in recorded responses without moving a single byte.

Every mask has the length of what it hides, so the offsets of ``chunks.json``
stay valid, and it is made of ``*``: never a quote or a backslash (a JSON
string stays a JSON string, an escape sequence is never touched) and never a
character of a key or token, so ``streamproof validate``'s secret scan does
not mistake a mask for a key. Secret headers are dropped, since ``validate``
refuses them even masked; identity headers keep their name with a masked value.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["MASK", "redact_body", "redact_headers", "redact_text"]

MASK = ord("*")

# Whole matches are masked.
_WHOLE = (
    re.compile(rb"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}"),  # sk-…, sk-proj-…, sk-svcacct-…
    re.compile(rb"(?<![A-Za-z0-9_-])org-(?=[A-Za-z]*[0-9])[A-Za-z0-9]{12,}"),
    re.compile(rb"(?<![A-Za-z0-9_-])proj_(?=[A-Za-z]*[0-9])[A-Za-z0-9]{12,}"),
    re.compile(rb"AIza[0-9A-Za-z_-]{35}"),  # Google API keys
    re.compile(rb"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"),
)
# Group 1 is masked.
_BEARER = re.compile(rb"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})")
_NAMED = re.compile(
    rb"(?i)(?:key|token|secret|password)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9._~+/=-]{16,})"
)
_COOKIE = re.compile(rb"(?i)\b(?:set-)?cookie[\"']?\s*[:=]\s*[\"']?([^\"'\r\n\\]+)")
_COOKIE_VALUE = re.compile(rb"=([^;,\s]+)")

# Dropped from recorded headers: ``validate`` rejects them whatever their value.
SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
)
# Kept with the whole value masked: they name the account that made the call.
IDENTITY_HEADERS = frozenset(
    {"openai-organization", "openai-project", "x-organization-id", "x-project-id"}
)


def redact_body(data: bytes, secrets: Iterable[str | bytes] = ()) -> bytes:
    """``data`` with every secret masked by as many ``*`` as it has bytes.

    ``secrets`` are known values (the API key that was sent) masked wherever
    they occur, beside what the patterns find.
    """
    out = bytearray(data)
    protected = _escapes(data)
    for known in secrets:
        value = known.encode("utf-8") if isinstance(known, str) else known
        if len(value) >= 8:  # a shorter "secret" would mask words everywhere
            _mask_known(data, out, value)
    for pattern in _WHOLE:
        for found in pattern.finditer(data):
            _mask(out, protected, found.start(), found.end())
    for found in _BEARER.finditer(data):
        if _mixed(found.group(1)):
            _mask(out, protected, found.start(1), found.end(1))
    for found in _NAMED.finditer(data):
        if _looks_random(found.group(1)):
            _mask(out, protected, found.start(1), found.end(1))
    for line in _COOKIE.finditer(data):
        for pair in _COOKIE_VALUE.finditer(line.group(1)):
            start = line.start(1) + pair.start(1)
            _mask(out, protected, start, start + len(pair.group(1)))
    return bytes(out)


def redact_text(text: str, secrets: Iterable[str | bytes] = ()) -> str:
    """``redact_body`` for a header value or any other text."""
    return redact_body(text.encode("utf-8"), secrets).decode("utf-8")


def redact_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    secrets: Iterable[str | bytes] = (),
) -> dict[str, str]:
    """Lower-case names; secret headers dropped, identity headers and secrets masked.

    Repeated headers are joined with ``", "`` as HTTP allows.
    """
    items = headers.items() if isinstance(headers, Mapping) else headers
    known = list(secrets)
    kept: dict[str, str] = {}
    for name, value in items:
        key = name.lower()
        if key in SECRET_HEADERS:
            continue
        value = "*" * len(value) if key in IDENTITY_HEADERS else redact_text(value, known)
        kept[key] = f"{kept[key]}, {value}" if key in kept else value
    return kept


# A JSON string literal (RFC 8259 §7), and a run of URL-encoded text (RFC 3986 §2.1).
_JSON_STRING = re.compile(rb'"((?:[^"\\\r\n]|\\.)*)"')
_PERCENT_RUN = re.compile(rb"[%A-Za-z0-9._~+/=-]+")  # decoded only when it holds a "%"
_JSON_ESCAPES = {
    b'"': '"',
    b"\\": "\\",
    b"/": "/",
    b"b": "\b",
    b"f": "\f",
    b"n": "\n",
    b"r": "\r",
    b"t": "\t",
}
_BASE64_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")


def _mask_known(data: bytes, out: bytearray, value: bytes) -> None:
    """Mask ``value`` however the body carries it: as is, in base64, and inside
    JSON strings and URL-encoded text once their escapes are decoded.

    A client reads ``"\\u0073k-…"`` or ``sk%2D…`` as the key itself, so the
    key is looked for in what a client decodes; the mask covers every byte
    of the escapes that spell it (``\\u0073`` becomes six ``*``), so the
    string stays valid and no offset moves.
    """
    for form, extend in _forms(value):
        for found in re.finditer(re.escape(form), data):
            start, end = found.start(), found.end()
            if extend:  # the base64 characters that hold the key's first and last bits
                start -= start > 0 and data[start - 1] in _BASE64_CHARS
                end += end < len(data) and data[end] in _BASE64_CHARS
            out[start:end] = b"*" * (end - start)
    needles = [form.decode("latin-1") for form, _ in _forms(value)]
    for pattern in (_JSON_STRING, _PERCENT_RUN):
        for found in pattern.finditer(data):
            raw = found.group(1) if pattern is _JSON_STRING else found.group()
            if b"\\" not in raw and b"%" not in raw:
                continue
            base = found.start(1) if pattern is _JSON_STRING else found.start()
            text, spans = _json_spans(raw) if pattern is _JSON_STRING else _percent_spans(raw)
            views = [(text, spans)]
            if pattern is _JSON_STRING and "%" in text:  # URL-encoded inside a JSON string
                inner, inner_spans = _percent_spans(text.encode("latin-1", "replace"))
                views.append((inner, [(spans[a][0], spans[b - 1][1]) for a, b in inner_spans]))
            for view, where in views:
                for needle in needles:
                    for hit in re.finditer(re.escape(needle), view):
                        start, end = where[hit.start()][0], where[hit.end() - 1][1]
                        out[base + start : base + end] = b"*" * (end - start)


def _forms(value: bytes) -> list[tuple[bytes, bool]]:
    """``value`` and the parts of its base64 encodings that depend on it alone.

    Embedded in a longer base64 text (``user:key``, ``Bearer key``), the key's
    encoding depends on its offset modulo 3: each of the three alignments,
    in the standard and the URL-safe alphabet, gives the characters made of
    the key's bits only (``True``: the neighbours holding its edge bits are
    masked too).
    """
    forms = [(value, False)]
    for align in range(3):
        encoded = base64.b64encode(bytes(align) + value).rstrip(b"=")
        first = -(-align * 8 // 6)  # the first character holding no prefix bit
        last = (align + len(value)) * 8 // 6  # past the last holding key bits only
        core = encoded[first:last]
        forms.append((core, True))
        forms.append((core.replace(b"+", b"-").replace(b"/", b"_"), True))
    return list(dict.fromkeys(forms))


def _json_spans(raw: bytes) -> tuple[str, list[tuple[int, int]]]:
    """A JSON string's content decoded, with the raw span of every character."""
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(raw):
        if raw[i] == 0x5C and raw[i + 1 : i + 2] == b"u":
            width, char = 6, chr(int(raw[i + 2 : i + 6], 16)) if _hex(raw[i + 2 : i + 6]) else "?"
        elif raw[i] == 0x5C:
            width, char = 2, _JSON_ESCAPES.get(raw[i + 1 : i + 2], "?")
        else:
            width, char = 1, chr(raw[i])
        text.append(char)
        spans.append((i, min(i + width, len(raw))))
        i += width
    return "".join(text), spans


def _percent_spans(raw: bytes) -> tuple[str, list[tuple[int, int]]]:
    """URL-encoded text decoded (``%XX``), with the raw span of every byte."""
    text: list[str] = []
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(raw):
        if raw[i] == 0x25 and _hex(raw[i + 1 : i + 3]):
            text.append(chr(int(raw[i + 1 : i + 3], 16)))
            spans.append((i, i + 3))
            i += 3
        else:
            text.append(chr(raw[i]))  # "+" stays "+": keys have no spaces
            spans.append((i, i + 1))
            i += 1
    return "".join(text), spans


def _hex(digits: bytes) -> bool:
    return len(digits) in (2, 4) and all(d in b"0123456789abcdefABCDEF" for d in digits)


def _mask(out: bytearray, protected: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if not protected[i] and out[i] not in b'"\\\r\n':
            out[i] = MASK


def _escapes(data: bytes) -> bytearray:
    """1 at every byte that belongs to a backslash escape (``\\n``, ``\\u00e9``)."""
    flags = bytearray(len(data))
    i = 0
    while i < len(data):
        if data[i] == 0x5C:  # backslash
            width = 6 if data[i + 1 : i + 2] == b"u" else 2
            flags[i : i + width] = b"\x01" * len(flags[i : i + width])
            i += width
        else:
            i += 1
    return flags


def _looks_random(token: bytes) -> bool:
    """A key rather than a word: letters and digits mixed, 3+ bits of entropy a byte."""
    if not _mixed(token):
        return False
    counts = Counter(token)
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return entropy >= 3.0


def _mixed(token: bytes) -> bool:
    return bool(re.search(rb"[0-9]", token) and re.search(rb"[A-Za-z]", token))
