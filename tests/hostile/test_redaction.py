"""A server that echoes the API key encoded: ``record`` must still not keep it.

The key is planted in every form a client would decode back to the key:
JSON escapes (``\\u0073``, ``\\/``), base64 in both alphabets at every
alignment, URL encoding. After redaction no decoding of the body finds the
key, every length is kept and the JSON still parses.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
import urllib.parse

import pytest

from streamproof.live.redact import redact_body, redact_text

KEY = "sk-proj-Ab3/Cd9+Ef7_Gh1-Ij5Kl2Mn8Op4Qr6"


def _escaped(text: str, every: int = 2) -> str:
    """``text`` as a JSON encoder that escapes freely might write it."""
    out = []
    for i, ch in enumerate(text):
        if ch == "/":
            out.append("\\/")
        elif i % every == 0:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _sse(value: str) -> bytes:
    """A chunk whose content is ``value`` as raw JSON string content."""
    return (
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"'
        + value.encode("ascii")
        + b'"}}]}\n\ndata: [DONE]\n\n'
    )


def _decodings(body: bytes) -> list[bytes]:
    """Everything a client could read out of ``body``: the bytes, every JSON
    document decoded, then URL-decoded, then every base64 run decoded."""
    found = [body]
    for line in body.split(b"\n"):
        with contextlib.suppress(ValueError):
            found.append(
                json.dumps(json.loads(line.removeprefix(b"data: ")), ensure_ascii=False).encode()
            )
    found += [urllib.parse.unquote_to_bytes(text) for text in found]
    for text in list(found):
        for run in re.findall(rb"[A-Za-z0-9+/_=-]{8,}", text):
            for start in range(4):
                chunk = run[start:].rstrip(b"=")
                chunk += b"=" * (-len(chunk) % 4)
                for alphabet in (None, b"-_"):
                    with contextlib.suppress(binascii.Error, ValueError):
                        found.append(base64.b64decode(chunk, altchars=alphabet))
    return found


FORMS = {
    "literal": _sse(KEY),
    "json unicode escapes": _sse(_escaped(KEY)),
    "json escaped slash only": _sse(KEY.replace("/", "\\/")),
    "every character escaped": _sse(_escaped(KEY, every=1)),
    "base64 alone": _sse(base64.b64encode(KEY.encode()).decode()),
    "base64 basic auth": _sse(base64.b64encode(f"user:{KEY}".encode()).decode()),
    "base64 offset 2": _sse(base64.b64encode(f"ab{KEY}!".encode()).decode()),
    "base64 url-safe": _sse(base64.urlsafe_b64encode(f"x{KEY}".encode()).decode()),
    "base64 with json slash": _sse(
        base64.b64encode(f"?{KEY}".encode()).decode().replace("/", "\\/")
    ),
    "url-encoded": _sse("https://h/?key=" + urllib.parse.quote(KEY, safe="") + "&a=1"),
    "url-encoded every byte": _sse("".join(f"%{b:02X}" for b in KEY.encode())),
    "json-escaped url-encoding": _sse(_escaped(urllib.parse.quote(KEY, safe=""), every=3)),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_key_is_masked_in_every_form(form: str) -> None:
    body = FORMS[form]
    assert any(KEY.encode() in text for text in _decodings(body)), "the test plants the key"
    masked = redact_body(body, [KEY])
    assert len(masked) == len(body)
    for text in _decodings(masked):
        assert KEY.encode() not in text
    event = json.loads(masked.split(b"\n")[0].removeprefix(b"data: "))
    assert event["id"] == "c1"  # the JSON around the mask is intact


def test_a_json_escape_is_masked_whole_so_the_string_stays_valid() -> None:
    body = b'{"echo":"' + _escaped(KEY).encode() + b'","x":"\\u00e9\\n"}'
    masked = redact_body(body, [KEY])
    parsed = json.loads(masked)
    assert set(parsed["echo"]) == {"*"} and parsed["x"] == "é\n"


def test_text_without_the_key_is_left_alone() -> None:
    body = _sse(_escaped("hello there, nothing secret here at all"))
    body += b"data: " + base64.b64encode(b"some other bytes entirely") + b"\n\n"
    body += b"data: %41%42%43\n\n"
    assert redact_body(body, [KEY]) == body


def test_header_values_are_masked_in_encoded_forms_too() -> None:
    value = "Basic " + base64.b64encode(f"me:{KEY}".encode()).decode()
    masked = redact_text(value, [KEY])
    assert len(masked) == len(value) and KEY not in base64.b64decode(
        masked[6:] + "==", validate=False
    ).decode("latin-1")
