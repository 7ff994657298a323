"""Masking secrets in recorded responses without moving a single byte.

Every mask has the length of what it hides, so the offsets of ``chunks.json``
stay valid, and it is made of ``*``: never a quote or a backslash (a JSON
string stays a JSON string, an escape sequence is never touched) and never a
character of a key or token, so ``streamproof validate``'s secret scan does
not mistake a mask for a key. Secret headers are dropped, since ``validate``
refuses them even masked; identity headers keep their name with a masked value.

A known secret (the key that was sent) is looked for in everything a client
reads out of the bytes: the bytes themselves, JSON strings unescaped, the
values of one JSON field joined across events (a key streamed a few
characters per delta), URL-encoded text, HTML entities, ``\\x`` escapes,
hex and base64 (docs of ``_views`` and ``_forms``).
"""

from __future__ import annotations

import base64
import html
import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping

__all__ = ["MASK", "SHORTEST", "appears", "redact_body", "redact_headers", "redact_text"]

MASK = ord("*")
#: Bytes in the shortest known secret that is masked: a shorter one would mask
#: words everywhere (``streamproof record`` refuses it when the response holds it).
SHORTEST = 8

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
    they occur, in any form a client decodes, beside what the patterns find.
    """
    out = bytearray(data)
    protected = _escapes(data)
    for known in secrets:
        value = _bytes(known)
        if len(value) >= SHORTEST:
            for view, start, end in _hits(data, value):
                _cover(out, protected, view, start, end)
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


def appears(data: bytes, secret: str | bytes) -> bool:
    """Whether a client can read ``secret`` out of ``data``, as ``redact_body`` looks.

    A secret shorter than :data:`SHORTEST` counts as itself only as a whole
    word (``fp_ollama`` does not hold ``ollama``), encoded wherever it is.
    """
    value = _bytes(secret)
    return next(_hits(data, value, word=len(value) < SHORTEST), None) is not None


def redact_text(text: str, secrets: Iterable[str | bytes] = ()) -> str:
    """``redact_body`` for a header value or any other text."""
    return redact_body(text.encode("utf-8"), secrets).decode("utf-8")


def redact_headers(
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    secrets: Iterable[str | bytes] = (),
) -> dict[str, str]:
    """Lower-case names; secret headers dropped, identity headers and secrets masked.

    A secret is masked in names too, in any case (names are case-insensitive,
    and what reaches us is often lower-cased already). Repeated headers are
    joined with ``", "`` as HTTP allows.
    """
    items = headers.items() if isinstance(headers, Mapping) else headers
    known = list(secrets)
    lowered = [secret.lower() for secret in known]
    kept: dict[str, str] = {}
    for name, value in items:
        if name.lower() in SECRET_HEADERS:
            continue
        value = "*" * len(value) if name.lower() in IDENTITY_HEADERS else redact_text(value, known)
        key = redact_text(redact_text(name, known).lower(), lowered)  # as sent, then lower-cased
        kept[key] = f"{kept[key]}, {value}" if key in kept else value
    return kept


def _bytes(secret: str | bytes) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


class _View:
    """Text a client reads out of raw bytes: without a parent, the bytes
    themselves; with one, character i is read from the parent's characters
    ``first[i]`` to ``stop[i] - 1``."""

    __slots__ = ("first", "parent", "stop", "text")

    def __init__(self, text: str, parent: _View | None = None) -> None:
        self.text, self.parent = text, parent
        self.first, self.stop = array("q"), array("q")

    def sources(self, i: int) -> Iterator[int]:
        """The offsets of the raw bytes that character ``i`` is read from."""
        if self.parent is None:
            yield i
            return
        for j in range(self.first[i], self.stop[i]):
            yield from self.parent.sources(j)

    def keep(self, first: int, stop: int) -> None:
        """Characters ``first`` to ``stop - 1`` of the parent are read as they are."""
        self.first.extend(range(first, stop))
        self.stop.extend(range(first + 1, stop + 1))


def _json_char(found: re.Match[str]) -> str:
    return chr(int(found[1], 16)) if found[1] else _JSON_ESCAPES[found[2]]


def _entity(found: re.Match[str]) -> str | None:
    text = html.unescape(found[0])
    return None if text == found[0] else text


def _hex_char(found: re.Match[str]) -> str:
    return chr(int(found[1], 16))


_JSON_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
# What a client undoes, in this order: JSON escapes (RFC 8259 §7), the \x
# escapes of C, Python and JavaScript, HTML character references (decimal,
# hex, named; browsers take them without ";"), URL encoding (RFC 3986 §2.1).
_DECODERS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str | None]], ...] = (
    (re.compile(r'\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt]))'), _json_char),
    (re.compile(r"\\x([0-9A-Fa-f]{2})"), _hex_char),
    (re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?"), _entity),
    (re.compile(r"%([0-9A-Fa-f]{2})"), _hex_char),
)
# A JSON string literal, and whether a ":" follows it (it names a field).
_JSON_STRING = re.compile(r'"((?:[^"\\\r\n]|\\.)*)"')
_NAMES_FIELD = re.compile(r"\s*:")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _hits(data: bytes, value: bytes, *, word: bool = False) -> Iterator[tuple[_View, int, int]]:
    """Every place a client reads ``value`` in ``data``: a view and its characters.

    With ``word``, ``value`` as itself counts only between non-word characters.
    """
    forms = _forms(value)
    for view in _views(data):
        text = view.text
        for form, kind in forms:
            for found in re.finditer(re.escape(form), text):
                start, end = found.span()
                if kind == "base64":  # the neighbours hold the key's first and last bits
                    start -= start > 0 and text[start - 1] in _BASE64_CHARS
                    end += end < len(text) and text[end] in _BASE64_CHARS
                elif kind == "plain" and word and _within_word(text, start, end):
                    continue
                yield view, start, end


def _within_word(text: str, start: int, end: int) -> bool:
    return (start > 0 and text[start - 1] in _WORD_CHARS) or (
        end < len(text) and text[end] in _WORD_CHARS
    )


def _views(data: bytes) -> list[_View]:
    """The bytes and the values of each JSON field joined in order, each with
    every subset of ``_DECODERS`` undone, in their order."""
    raw = _View(data.decode("latin-1"))
    views = [raw, *_joined(raw)]
    for pattern, char in _DECODERS:
        views += [view for view in (_decoded(v, pattern, char) for v in views) if view]
    return views


def _joined(raw: _View) -> list[_View]:
    """The values of each JSON field name, joined in order: the text a client
    assembles from deltas (``"content":"sk-"``, ``"content":"pro"``, …)."""
    fields: dict[str, list[re.Match[str]]] = {}
    name = ""
    for found in _JSON_STRING.finditer(raw.text):
        if _NAMES_FIELD.match(raw.text, found.end()):
            name = found[1]
        else:
            fields.setdefault(name, []).append(found)
    views = []
    for values in fields.values():
        if len(values) > 1:
            view = _View("".join(found[1] for found in values), raw)
            for found in values:
                view.keep(found.start(1), found.end(1))
            views.append(view)
    return views


def _decoded(
    view: _View, pattern: re.Pattern[str], char: Callable[[re.Match[str]], str | None]
) -> _View | None:
    """``view`` with what ``pattern`` finds decoded, or ``None`` when it finds nothing."""
    text, pieces, done = view.text, [], 0
    out = _View("", view)
    for found in pattern.finditer(text):
        first, stop = found.span()
        decoded = char(found)
        if decoded is None:
            continue
        pieces += [text[done:first], decoded]
        out.keep(done, first)
        out.first.extend([first] * len(decoded))
        out.stop.extend([stop] * len(decoded))
        done = stop
    if not pieces:
        return None
    pieces.append(text[done:])
    out.keep(done, len(text))
    out.text = "".join(pieces)
    return out


def _forms(value: bytes) -> list[tuple[str, str]]:
    """``value``, its hex and the parts of its base64 encodings that depend on it alone.

    Embedded in a longer base64 text (``user:key``, ``Bearer key``), the key's
    encoding depends on its offset modulo 3: each of the three alignments,
    in the standard and the URL-safe alphabet, gives the characters made of
    the key's bits only (kind ``base64``: the neighbours holding its edge bits
    are masked too).
    """
    forms = [(value, "plain"), (value.hex().encode(), "hex"), (value.hex().upper().encode(), "hex")]
    for align in range(3):
        encoded = base64.b64encode(bytes(align) + value).rstrip(b"=")
        first = -(-align * 8 // 6)  # the first character holding no prefix bit
        last = (align + len(value)) * 8 // 6  # past the last holding key bits only
        core = encoded[first:last]
        forms.append((core, "base64"))
        forms.append((core.replace(b"+", b"-").replace(b"/", b"_"), "base64"))
    return [(form.decode("latin-1"), kind) for form, kind in dict.fromkeys(forms)]


def _cover(out: bytearray, protected: bytearray, view: _View, start: int, end: int) -> None:
    """Mask the bytes of characters ``start`` to ``end - 1`` of ``view``, each
    escape they touch whole: a JSON string stays a JSON string."""
    for i in range(start, end):
        for first in view.sources(i):
            stop = first + 1
            while first > 0 and protected[first] == _INSIDE:
                first -= 1
            while stop < len(out) and protected[stop] == _INSIDE:
                stop += 1
            out[first:stop] = b"*" * (stop - first)


def _mask(out: bytearray, protected: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if not protected[i] and out[i] not in b'"\\\r\n':
            out[i] = MASK


_INSIDE = 2  # in ``_escapes``: a byte of an escape after its backslash


def _escapes(data: bytes) -> bytearray:
    """1 at the backslash of every escape (``\\n``, ``\\u00e9``), 2 at its other bytes."""
    flags = bytearray(len(data))
    i = 0
    while i < len(data):
        if data[i] == 0x5C:  # backslash
            width = 6 if data[i + 1 : i + 2] == b"u" else 2
            flags[i : i + width] = (b"\x01" + b"\x02" * (width - 1))[: len(flags[i : i + width])]
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
