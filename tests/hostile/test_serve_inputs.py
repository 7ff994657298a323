"""``serve`` facing a hostile corpus or client: refused corpora, malformed
requests answered with an OpenAI-style JSON error and one log line."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.corpus import load_corpus
from streamproof.live.serve import ReplayServer

from .corpus_builder import CHUNKED, STREAM, build_corpus


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


@pytest.fixture
def port(root: Path) -> Iterator[int]:
    with ReplayServer(load_corpus(root)) as server:
        yield int(server.base_url.rsplit(":", 1)[1])


def _exchange(port: int, raw: bytes) -> tuple[str, dict[str, str], bytes]:
    """Send ``raw`` as is; the status line, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            assert chunk, f"no response head: {data!r}"
            data += chunk
        head, body = data.split(b"\r\n\r\n", 1)
        status, *lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
        while len(body) < int(headers["content-length"]):
            chunk = sock.recv(65536)
            assert chunk, "body cut short"
            body += chunk
    return status, headers, body


def _openai_error(headers: dict[str, str], body: bytes) -> dict[str, object]:
    assert headers["content-type"].startswith("application/json")
    error = json.loads(body)["error"]
    assert {"message", "type", "code"} <= set(error)
    assert isinstance(error["message"], str) and "\n" not in error["message"]
    return dict(error)


def _one_line_logs(caplog: pytest.LogCaptureFixture) -> list[str]:
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert records, "nothing logged"
    for record in records:
        assert record.exc_info is None and "\n" not in record.getMessage()
    return [r.getMessage() for r in records]


@pytest.mark.parametrize(
    "raw",
    [
        b"GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /v1/models HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n",
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n",
        b"GET /v1/models HTTP/9.9\x1b[2J\r\n\r\n",
    ],
)
def test_a_malformed_request_gets_a_json_400_and_one_log_line(
    port: int, raw: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        status, headers, body = _exchange(port, raw)
    assert status.split()[1] == "400"
    error = _openai_error(headers, body)
    assert error["code"] == "bad_request"
    logs = _one_line_logs(caplog)
    assert all("\x1b" not in line for line in logs)


def test_an_oversized_body_gets_a_json_413(port: int, caplog: pytest.LogCaptureFixture) -> None:
    body = b'{"model": "streamproof:' + STREAM.encode() + b'", "x": "' + b"a" * (2 << 20) + b'"}'
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    with caplog.at_level(logging.WARNING):
        status, headers, answer = _exchange(port, head.encode() + body)
    assert status.split()[1] == "413"
    assert _openai_error(headers, answer)["code"] == "request_too_large"
    assert any("413" in line for line in _one_line_logs(caplog))


def test_a_deeply_nested_request_body_is_a_400_not_a_500(port: int) -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    status, headers, answer = _exchange(port, head.encode() + body)
    assert status.split()[1] == "400"
    assert _openai_error(headers, answer)["code"] == "invalid_json"


def test_serve_refuses_a_corpus_with_a_link(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = root / "cases" / STREAM / "response.sse"
    body.unlink()
    os.symlink("/etc/passwd", body)
    assert main(["serve", "--corpus", str(root), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"streamproof: {body}: a symbolic link; a corpus holds regular files and folders only\n"
    )


def test_serve_refuses_a_header_with_cr_lf_and_bad_delays(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case_json = root / "cases" / STREAM / "case.json"
    data = json.loads(case_json.read_text(encoding="utf-8"))
    data["response"]["headers"]["x-a"] = "1\r\nx-b: 2"
    case_json.write_text(json.dumps(data), encoding="utf-8")
    chunks = root / "cases" / CHUNKED / "chunks.json"
    sizes = json.loads(chunks.read_text(encoding="utf-8"))["sizes"]
    chunks.write_text(json.dumps({"sizes": sizes, "delays_ms": ["soon"] * len(sizes)}))
    assert main(["serve", "--corpus", str(root)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "Traceback" not in "".join(err)
    assert "control character" in err[0] or "control character" in err[1]
    assert any("'delays_ms' must be" in line for line in err)
