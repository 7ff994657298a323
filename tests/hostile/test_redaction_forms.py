"""Issue 26, items 9, 25, 31, 32, 33: no key gets into a recorded case, in any form.

A replay server plays a stranger's endpoint that echoes the key: streamed a
few characters per delta, as HTML entities, hex or ``\\x`` escapes, in a
header's name. ``streamproof record`` must write no file from which a client
could read the key back, keep every length and chunk boundary, and refuse a
key too short to mask when the response holds it. ``validate`` looks for
secrets in every file, and the corpus gate refuses a hard link.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import html
import json
import os
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest

from streamproof.cli import main
from streamproof.corpus import gate, load_corpus
from streamproof.corpus.validate import check_corpus, write_manifest
from streamproof.harness.comparison import compare
from streamproof.harness.transports import boundaries, split
from streamproof.live.redact import redact_body, redact_headers
from streamproof.reference import read_response

from .corpus_builder import CHUNKED, STREAM, build_corpus, one_line, one_stream_corpus

pytest.importorskip("httpx")
serve = pytest.importorskip("streamproof.live.serve")

KEY = "sk-proj-Ab3Cd9Ef7_Gh1-Ij5Kl2Mn8Op4Qr6"
VARIABLE = "STREAMPROOF_FORMS_KEY"


# -- what a client can read out of a file ---------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _events(blob: bytes) -> list[Any]:
    found = []
    for line in [blob, *blob.splitlines()]:
        with contextlib.suppress(ValueError):
            found.append(json.loads(line.removeprefix(b"data: ")))
    return found


def _joined(events: list[Any]) -> list[str]:
    """Each choice's content, joined across deltas, as a client assembles it."""
    parts: dict[Any, str] = {}
    for event in events:
        for choice in event.get("choices") or [] if isinstance(event, dict) else []:
            content = (choice.get("delta") or {}).get("content") or ""
            parts[choice.get("index")] = parts.get(choice.get("index"), "") + content
    return list(parts.values())


def _decoded(text: str) -> list[str]:
    """``text`` with each encoding a client might undo undone (this test's own)."""
    found = [text, urllib.parse.unquote(text), html.unescape(text)]
    with contextlib.suppress(UnicodeDecodeError):
        found.append(codecs.decode(text.encode("latin-1", "replace"), "unicode_escape"))
    for run in re.findall(r"[0-9A-Fa-f]{16,}", text):
        for start in (0, 1):
            digits = run[start:][: (len(run) - start) // 2 * 2]
            found.append(bytes.fromhex(digits).decode("latin-1"))
    for run in re.findall(r"[A-Za-z0-9+/_=-]{8,}", text):
        for start in range(4):
            chunk = run[start:].rstrip("=")
            chunk += "=" * (-len(chunk) % 4)
            for alphabet in (None, b"-_"):
                with contextlib.suppress(binascii.Error, ValueError):
                    found.append(base64.b64decode(chunk, altchars=alphabet).decode("latin-1"))
    return found


def readings(blob: bytes) -> list[str]:
    """Everything a client could read out of ``blob``: the bytes, every JSON
    string in it, the text joined across deltas, each of them decoded."""
    events = _events(blob)
    texts = [blob.decode("latin-1"), *_joined(events)]
    texts += [text for event in events for text in _strings(event)]
    return [decoded for text in texts for decoded in _decoded(text)]


def holds(blob: bytes, key: str = KEY) -> bool:
    return any(key in text or key.lower() in text.lower() for text in readings(blob))


# -- a stranger's endpoint, recorded -----------------------------------------


def chunk(content: str, *, finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"content": content}, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def stream(*contents: str) -> bytes:
    events = [chunk(text) for text in contents] + [chunk("", finish="stop")]
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def in_pieces(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


def serving(folder: Path, body: bytes, headers: dict[str, str] | None = None) -> Path:
    """A corpus of one case, ``leaky/echo``, that answers with ``body``."""
    answer = {"content-type": "text/event-stream", **(headers or {})}
    return one_stream_corpus(
        folder / "served", "leaky/echo", "an endpoint that echoes the key", body, answer
    )


def record(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: bytes,
    *,
    key: str = KEY,
    headers: dict[str, str] | None = None,
) -> tuple[int, Path]:
    """``streamproof record`` of ``body`` with ``key`` sent; the exit code and the case folder."""
    monkeypatch.setenv(VARIABLE, key)
    served = load_corpus(serving(tmp_path, body, headers))
    root = tmp_path / "corpus"
    (root / "cases").mkdir(parents=True)
    (root / "VERSION").write_text("0.0.1\n")
    (root / "FORMAT").write_text("2\n")
    out = root / "cases" / "leaky" / "recorded"
    with serve.ReplayServer(served, transport="random", seed=3) as server:
        argv = [
            "record",
            "--base-url",
            f"{server.base_url}/v1",
            "--model",
            "streamproof:leaky/echo",
        ]
        argv += ["--api-key-env", VARIABLE, "--scenario", "text", "--out", str(out)]
        return main(argv), out


def written(out: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out.iterdir())}


def assert_consistent(out: Path, served: bytes) -> dict[str, Any]:
    """Every length and read kept; the expectation is the reading of what was written."""
    data = json.loads((out / "case.json").read_text(encoding="utf-8"))
    body = (out / "response.sse").read_bytes()
    sizes = json.loads((out / "chunks.json").read_text(encoding="utf-8"))["sizes"]
    ends = list(accumulate(sizes))
    assert len(body) == len(served) and ends == boundaries(served, "random", seed=3)
    response = data["response"]
    outcome = read_response(
        response["status"], response["headers"], data["request"], split(body, ends)
    )
    assert compare(data["expected"], outcome) == []
    return data


# -- item 9: a key streamed a few characters per delta -------------------------


def test_a_key_streamed_three_characters_per_delta_is_masked_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = stream("Your key is ", *in_pieces(KEY, 3), ", keep it safe.")
    assert KEY.encode() not in body and holds(body), "the test streams the key in pieces"
    code, out = record(tmp_path, monkeypatch, body)
    assert code == 0
    for name, blob in written(out).items():
        assert not holds(blob), name
    data = assert_consistent(out, body)
    content = data["expected"]["choices"][0]["content"]
    assert content == "Your key is " + "*" * len(KEY) + ", keep it safe."
    write_manifest(out.parents[2])
    assert check_corpus(out.parents[2]) == []


def test_a_key_redaction_cannot_mask_is_refused_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two choices interleaved, the key in pieces in the first: no field's
    values join into the key, the first choice's content does."""
    events = []
    for piece in in_pieces(KEY, 3):
        for index, text in ((0, piece), (1, "..")):
            event = chunk(text)
            event["choices"][0]["index"] = index
            events.append(f"data: {json.dumps(event)}\n\n")
    body = ("".join(events) + "data: [DONE]\n\n").encode()
    code, out = record(tmp_path, monkeypatch, body)
    err = capsys.readouterr().err
    assert code == 2 and one_line(err), err
    assert f"${VARIABLE}" in err and "cannot mask" in err and KEY not in err
    assert not out.exists()


def test_validate_scans_every_file_for_secrets(tmp_path: Path) -> None:
    root = build_corpus(tmp_path)
    case_json = root / "cases" / STREAM / "case.json"
    data = json.loads(case_json.read_text(encoding="utf-8"))
    data["expected"]["choices"][0]["content"] = f"the key: {KEY}"  # joined from the deltas
    case_json.write_text(json.dumps(data), encoding="utf-8")
    chunks = root / "cases" / CHUNKED / "chunks.json"
    chunks.write_text(chunks.read_text().replace("{", f'{{"note": "{KEY}", ', 1))
    (root / "README.md").write_text(f"call it with api_key={KEY[8:]}\n")
    write_manifest(root)
    problems = check_corpus(root)
    for path in (case_json, chunks, root / "README.md"):
        said = [p for p in problems if p.startswith(f"{path}:") and "secret" in p]
        assert len(said) == 1, (path, problems)
        assert KEY not in said[0]  # the message shows a few characters only


# -- item 31: HTML entities, hex and \x escapes ------------------------------------


def _entities(text: str, how: str) -> str:
    if how == "decimal":
        return "".join(f"&#{ord(c)};" for c in text)
    if how == "hex":
        return "".join(f"&#x{ord(c):x};" if i % 2 else c for i, c in enumerate(text))
    return "".join({"_": "&lowbar;", "-": "&#45"}.get(c, c) for c in text)  # named, no ";"


def _x(text: str) -> str:
    return "".join(f"\\x{ord(c):02x}" if i % 3 else c for i, c in enumerate(text))


FORMS = {
    "html decimal entities": stream("echo: " + _entities(KEY, "decimal")),
    "html hex entities": stream("echo: " + _entities(KEY, "hex")),
    "html named entities, no semicolon": stream(_entities(KEY, "named")),
    "html entities json-escaped": stream(_entities(KEY, "decimal")).replace(b"&", b"\\u0026"),
    "hex lower-case": stream("id " + KEY.encode().hex()),
    "hex upper-case": stream(KEY.encode().hex().upper() + " end"),
    "hex across deltas": stream(*in_pieces(KEY.encode().hex(), 5)),
    "\\x escapes in a json string": stream(_x(KEY)),
    "\\x escapes outside json": b"data: " + _x(KEY).encode() + b"\n\n",
    "entities across deltas": stream(*in_pieces(_entities(KEY, "decimal"), 4)),
    "url-encoded across deltas": stream(*in_pieces(urllib.parse.quote(KEY, safe="_"), 2)),
    "base64 across deltas": stream(*in_pieces(base64.b64encode(KEY.encode()).decode(), 3)),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_key_is_masked_in_every_encoded_form(form: str) -> None:
    body = FORMS[form]
    assert holds(body), "the test plants the key"
    masked = redact_body(body, [KEY])
    assert len(masked) == len(body)
    assert not holds(masked)
    for event in _events(masked):  # every JSON event still parses
        assert event == "[DONE]" or isinstance(event, dict)
    assert len(_events(masked)) == len(_events(body))


def test_every_form_at_once_is_masked_in_a_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = b"".join(FORMS[form] for form in sorted(FORMS) if "outside" not in form)
    headers = {"x-echo": _entities(KEY, "decimal"), "x-hex": KEY.encode().hex(), "x-esc": _x(KEY)}
    code, out = record(tmp_path, monkeypatch, body, headers=headers)
    assert code == 0
    for name, blob in written(out).items():
        assert not holds(blob), name
    assert_consistent(out, body)


# -- item 32: a key in a header's name -----------------------------------------------


def test_a_key_in_a_header_name_is_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"x-echo-{KEY.lower()}"  # the wire and the corpus hold names lower-cased
    code, out = record(tmp_path, monkeypatch, stream("hi"), headers={name: "1"})
    assert code == 0
    headers = json.loads((out / "case.json").read_text())["response"]["headers"]
    masked = [h for h in headers if h.startswith("x-echo-")]
    assert masked == ["x-echo-" + "*" * len(KEY)] and headers[masked[0]] == "1"
    for blob in written(out).values():
        assert not holds(blob)
    assert redact_headers([(f"X-{KEY}", "v")], [KEY]) == {"x-" + "*" * len(KEY): "v"}


# -- item 33: a key too short to mask -------------------------------------------------

SHORT = "Zq7xK2"


@pytest.mark.parametrize(
    "body",
    [
        stream(f"your key is {SHORT}."),
        stream("your key is ", *in_pieces(SHORT, 2), "."),
        stream(base64.b64encode(f"user:{SHORT}".encode()).decode()),
    ],
    ids=["plain", "across deltas", "base64"],
)
def test_a_short_key_in_the_response_is_refused_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    body: bytes,
) -> None:
    code, out = record(tmp_path, monkeypatch, body, key=SHORT)
    err = capsys.readouterr().err
    assert code == 2 and one_line(err), err
    assert f"${VARIABLE}" in err and "too short" in err and SHORT not in err
    assert not out.exists()


@pytest.mark.parametrize("key", ["EMPTY", "ollama", "none"])
def test_a_placeholder_key_the_response_does_not_hold_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    body = stream("It is empty; nonetheless, nothing to say.")
    body = body.replace(b'"model": "m"', b'"model": "m", "system_fingerprint": "fp_ollama"')
    code, out = record(tmp_path, monkeypatch, body, key=key)
    assert code == 0
    assert (out / "response.sse").read_bytes() == body  # nothing masked


# -- item 25: a hard link out of the corpus ------------------------------------------


def _hard_linked(tmp_path: Path) -> tuple[Path, Path]:
    root = build_corpus(tmp_path)
    body = root / "cases" / STREAM / "response.sse"
    outside = tmp_path / "outside-secret.txt"
    outside.write_bytes(body.read_bytes())  # the same bytes: only the link is wrong
    body.unlink()
    os.link(outside, body)
    return root, body


@pytest.mark.parametrize(
    "argv",
    [["validate"], ["list"], ["show", STREAM], ["run", "--adapter", "reference"]],
    ids=["validate", "list", "show", "run"],
)
def test_a_hard_link_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    root, body = _hard_linked(tmp_path)
    code = main([*argv, "--corpus", str(root)])
    err = capsys.readouterr().err
    line = [text for text in err.splitlines() if str(body) in text]
    assert code == 2 and "Traceback" not in err, err
    assert len(line) == 1 and "a hard link" in line[0], err


def test_serve_refuses_a_hard_link(tmp_path: Path) -> None:
    root, body = _hard_linked(tmp_path)
    command = [sys.executable, "-m", "streamproof", "serve", "--port", "0", "--corpus", str(root)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2 and one_line(done.stderr), done.stderr
    assert f"{body}: a hard link" in done.stderr


def test_the_installed_package_data_may_be_hard_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _hard_linked(tmp_path)
    monkeypatch.setattr(gate, "_INSTALLED", os.path.realpath(root))  # as uv installs a wheel
    assert {case.id for case in load_corpus(root).cases} == {STREAM, CHUNKED}
