"""The replay server: exact bytes on the wire, real clients, delays, cuts, errors, load.

Every server binds 127.0.0.1 on port 0 and is stopped by its fixture or
``with`` block. Timings are checked with generous bounds only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest

from streamproof.cli.serve import add_arguments
from streamproof.corpus import Case, Corpus, load_corpus
from streamproof.harness.transports import boundaries, split
from streamproof.live.serve import (
    KEEPALIVE_COMMENT,
    MODEL_PREFIX,
    ReplayServer,
    event_boundaries,
)
from streamproof.reference import body_kind, read_response

STREAM_CRLF = "sse-spec/crlf-line-endings"
STREAM_TEXT = "openai/text-stream-include-usage"
JSON_TEXT = "openai/non-streamed-text"
HTTP_429 = "generic/http-429-json"
HTML_502 = "generic/http-502-html"
TRUNCATED = "generic/cut-off-inside-event"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def cases(corpus: Corpus) -> dict[str, Case]:
    return {case.id: case for case in corpus.cases}


@pytest.fixture(scope="module")
def server(corpus: Corpus) -> Iterator[ReplayServer]:
    with ReplayServer(corpus) as running:
        yield running


def _port(server: ReplayServer) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


def _is_stream(case: Case) -> bool:
    return body_kind(case.status, case.headers, case.request) == "stream"


def _truncated(case: Case) -> bool:
    return any(alt.get("status") == "truncated" for alt in case.alternatives)


@dataclass
class Wire:
    """One response as read off a raw socket."""

    status_line: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    chunks: list[bytes] = field(default_factory=list)  # HTTP chunks, for chunked bodies
    arrivals: list[float] = field(default_factory=list)  # when each chunk was complete
    complete: bool = False  # the terminating chunk (or all of Content-Length) arrived
    started: float = 0.0

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name), None)

    def json(self) -> Any:
        return json.loads(self.body)


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buffer = sock, b""

    def fill(self) -> bool:
        data = self.sock.recv(65536)
        self.buffer += data
        return bool(data)

    def until(self, marker: bytes) -> bytes | None:
        while marker not in self.buffer:
            if not self.fill():
                return None
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def exactly(self, size: int) -> bytes | None:
        while len(self.buffer) < size:
            if not self.fill():
                return None
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data


def raw_request(port: int, target: str, method: str = "POST", body: bytes = b"{}") -> Wire:
    """Send one HTTP/1.1 request by hand and read the response exactly as framed."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        started = time.monotonic()
        sock.sendall(
            f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        reader = _Reader(sock)
        head = reader.until(b"\r\n\r\n")
        assert head is not None, "no response head"
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = [(k, v.strip()) for k, v in (line.split(":", 1) for line in lines)]
        wire = Wire(status_line, headers, started=started)
        if wire.header("transfer-encoding") == "chunked":
            while (size_line := reader.until(b"\r\n")) is not None:
                size = int(size_line, 16)
                data = reader.exactly(size + 2)
                if data is None:
                    break
                assert data.endswith(b"\r\n")
                if size == 0:
                    wire.complete = True
                    break
                wire.chunks.append(data[:-2])
                wire.arrivals.append(time.monotonic())
            wire.body = b"".join(wire.chunks)
        else:
            length = wire.header("content-length")
            assert length is not None, "neither chunked nor Content-Length"
            data = reader.exactly(int(length))
            wire.complete = data is not None
            wire.body = data or b""
        return wire


def _path(case_id: str, transport: str, endpoint: str = "chat/completions") -> str:
    return f"/cases/{case_id}/{transport}/v1/{endpoint}"


# -- exact bytes ---------------------------------------------------------------


@pytest.mark.parametrize("transport", ["whole", "bytes"])
@pytest.mark.parametrize("case_id", [STREAM_CRLF, JSON_TEXT, HTTP_429, HTML_502])
def test_status_headers_and_body_are_replayed_exactly(
    server: ReplayServer, cases: dict[str, Case], case_id: str, transport: str
) -> None:
    case = cases[case_id]
    wire = raw_request(_port(server), _path(case_id, transport))
    assert wire.status_line == f"HTTP/1.1 {case.status} {HTTPStatus(case.status).phrase}"
    # The case's headers as written, no charset or Date or Server added, plus one framing header.
    framing = (
        ("Transfer-Encoding", "chunked")
        if _is_stream(case)
        else ("Content-Length", str(len(case.body)))
    )
    assert wire.headers == [*case.headers.items(), framing]
    assert wire.complete
    assert wire.body == case.body
    if _is_stream(case):
        assert wire.chunks == split(case.body, boundaries(case.body, transport))


def test_every_case_is_replayed_exactly(server: ReplayServer, corpus: Corpus) -> None:
    # A wire/ case breaks its connection on purpose: tests/test_wire_faults.py.
    for case in (c for c in corpus.cases if c.fault is None):
        wire = raw_request(_port(server), _path(case.id, "whole"))
        assert wire.status_line.split(" ", 2)[1] == str(case.status), case.id
        assert wire.headers[:-1] == list(case.headers.items()), case.id
        assert wire.body == case.body, case.id
        assert wire.complete != _truncated(case), case.id


@pytest.mark.parametrize("case_id", [STREAM_CRLF, STREAM_TEXT, "sse-spec/cr-line-endings"])
def test_each_read_of_lines_is_one_http_chunk(
    server: ReplayServer, cases: dict[str, Case], case_id: str
) -> None:
    case = cases[case_id]
    wire = raw_request(_port(server), _path(case_id, "lines"))
    assert wire.complete
    assert wire.chunks == split(case.body, boundaries(case.body, "lines"))
    assert len(wire.chunks) > 10


def test_the_model_name_picks_the_case_and_optionally_the_transport(
    server: ReplayServer, cases: dict[str, Case]
) -> None:
    case = cases[STREAM_CRLF]
    for model, transport in [(case.id, "whole"), (f"{case.id}@lines", "lines")]:
        body = json.dumps({"model": MODEL_PREFIX + model, "stream": True}).encode()
        wire = raw_request(_port(server), "/v1/chat/completions?ignored=1", body=body)
        assert wire.body == case.body
        assert wire.chunks == split(case.body, boundaries(case.body, transport))


# -- real clients ----------------------------------------------------------------


def test_the_official_openai_client_needs_only_base_url_and_model(
    server: ReplayServer, cases: dict[str, Case]
) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="unused", max_retries=0)
    try:
        expected = cases[STREAM_TEXT].alternatives[0]["choices"][0]["content"]
        stream = client.chat.completions.create(
            model=f"{MODEL_PREFIX}{STREAM_TEXT}",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == expected
        completion = client.chat.completions.create(
            model=f"{MODEL_PREFIX}{JSON_TEXT}", messages=[{"role": "user", "content": "hi"}]
        )
        assert (
            completion.choices[0].message.content
            == (cases[JSON_TEXT].alternatives[0]["choices"][0]["content"])
        )
        assert {m.id for m in client.models.list()} >= {f"{MODEL_PREFIX}{STREAM_TEXT}"}
        with pytest.raises(openai.NotFoundError, match="no case"):
            client.chat.completions.create(
                model=f"{MODEL_PREFIX}openai/no-such-case", messages=[], stream=True
            )
    finally:
        client.close()


def test_the_case_path_route_works_with_the_openai_client(
    server: ReplayServer, cases: dict[str, Case]
) -> None:
    openai = pytest.importorskip("openai")
    base_url = server.case_base_url(STREAM_TEXT, "bytes")
    assert base_url == f"{server.base_url}/cases/{STREAM_TEXT}/bytes/v1"
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    try:
        stream = client.chat.completions.create(
            model="anything", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == cases[STREAM_TEXT].alternatives[0]["choices"][0]["content"]
    finally:
        client.close()


def test_curl_sees_the_reads_arrive_with_the_configured_delays(
    corpus: Corpus, cases: dict[str, Case]
) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    case = cases["gemini/one-chunk-with-role-content-and-finish"]
    reads = split(case.body, boundaries(case.body, "lines"))
    first, between = 0.3, 0.1  # 0.15 s and 0.05 s, times delay_scale 2
    with ReplayServer(
        corpus, transport="lines", first_byte_delay=0.15, chunk_delay=0.05, delay_scale=2.0
    ) as server:
        url = server.case_base_url(case.id, "lines") + "/chat/completions"
        started = time.monotonic()
        with subprocess.Popen(
            [curl, "-N", "-s", "-X", "POST", url], stdout=subprocess.PIPE
        ) as curl_:
            assert curl_.stdout is not None
            arrivals, received = [], b""
            while data := os.read(curl_.stdout.fileno(), 65536):
                arrivals.append(time.monotonic())
                received += data
        assert curl_.returncode == 0
    assert received == case.body
    assert arrivals[0] - started >= first * 0.8
    assert arrivals[-1] - arrivals[0] >= between * (len(reads) - 1) * 0.8
    assert len(arrivals) >= min(3, len(reads))  # the reads came apart, not in one burst
    assert arrivals[-1] - started < 15


def test_recorded_delays_are_replayed_times_the_scale(tmp_path: Path, corpus: Corpus) -> None:
    source = corpus.root / "cases" / "generic" / "json-split-mid-object-across-reads"
    root = tmp_path / "corpus"
    shutil.copytree(source, root / "cases" / "generic" / source.name)
    (root / "VERSION").write_text(f"{corpus.version}\n", encoding="utf-8")
    (root / "FORMAT").write_text("2\n", encoding="utf-8")
    chunks = root / "cases" / "generic" / source.name / "chunks.json"
    sizes = json.loads(chunks.read_text(encoding="utf-8"))["sizes"]
    delays_ms = [0] * (len(sizes) - 1) + [250]
    chunks.write_text(json.dumps({"sizes": sizes, "delays_ms": delays_ms}), encoding="utf-8")
    small = load_corpus(root)
    with ReplayServer(small, delay_scale=2.0) as server:
        wire = raw_request(_port(server), _path(small.cases[0].id, "recorded"))
    assert [len(c) for c in wire.chunks] == sizes
    assert wire.arrivals[-1] - wire.arrivals[-2] >= 0.45  # 250 ms × 2
    assert wire.arrivals[-2] - wire.started < 0.45


# -- cuts and errors -------------------------------------------------------------


def test_a_truncated_case_is_cut_without_the_final_chunk(
    server: ReplayServer, cases: dict[str, Case]
) -> None:
    case = cases[TRUNCATED]
    assert _truncated(case)
    for transport in ("whole", "lines"):
        wire = raw_request(_port(server), _path(TRUNCATED, transport))
        assert wire.body == case.body
        assert not wire.complete
    aiohttp = pytest.importorskip("aiohttp")

    async def read() -> bytes:
        async with (
            aiohttp.ClientSession() as session,
            session.post(server.base_url + _path(TRUNCATED, "lines")) as response,
        ):
            return bytes(await response.read())

    with pytest.raises(aiohttp.ClientPayloadError):
        asyncio.run(read())


@pytest.mark.parametrize(
    ("target", "method", "status"),
    [
        (_path("openai/no-such-case", "whole"), "POST", 404),
        (_path("nobody/nothing", "whole", "models"), "GET", 404),
        (_path(STREAM_TEXT, "sideways"), "POST", 404),
        (_path(STREAM_TEXT, "recorded"), "POST", 404),  # it has no chunks.json
        (f"/cases/openai/../../{STREAM_TEXT}/whole/v1/chat/completions", "POST", 404),
        ("/cases/openai%2Ftext-stream-include-usage/whole/v1/chat/completions", "POST", 404),
        (f"/cases/openai/..%2F..%2F{STREAM_TEXT}/whole/v1/chat/completions", "POST", 404),
        ("/cases/../v1/models", "GET", 404),
        ("/v1/../v1/models", "GET", 404),
        ("//etc/passwd", "GET", 404),
        ("/cases//etc/passwd/whole/v1/chat/completions", "POST", 404),
        ("/cases/generic/http-429-json/whole/v1/chat/completions/../../../case.json", "GET", 404),
        ("/", "GET", 404),
        ("/v1/chat/completions", "GET", 405),
        ("/v1/models", "POST", 405),
        (_path(STREAM_TEXT, "whole"), "DELETE", 405),
    ],
)
def test_unknown_cases_and_path_tricks_get_openai_style_errors(
    server: ReplayServer, target: str, method: str, status: int
) -> None:
    wire = raw_request(_port(server), target, method=method)
    assert wire.status_line.split(" ", 2)[1] == str(status)
    error = wire.json()["error"]
    assert error["message"] and error["type"] == "invalid_request_error"
    if status == 405:
        assert wire.header("allow") in ("GET", "POST")


@pytest.mark.parametrize(
    ("model", "status", "text"),
    [
        ("gpt-4o-mini", 404, "is not a streamproof case"),
        (f"{MODEL_PREFIX}openai/no-such-case", 404, "no case 'openai/no-such-case'"),
        (f"{MODEL_PREFIX}../../etc/passwd", 404, "no case"),
        (f"{MODEL_PREFIX}{STREAM_TEXT}@sideways", 404, "no transport 'sideways'"),
        (None, 400, "no model"),
    ],
)
def test_the_model_route_names_what_is_wrong(
    server: ReplayServer, model: str | None, status: int, text: str
) -> None:
    wire = raw_request(
        _port(server), "/v1/chat/completions", body=json.dumps({"model": model}).encode()
    )
    assert wire.status_line.split(" ", 2)[1] == str(status)
    assert text in wire.json()["error"]["message"]


def test_models_lists_every_case(server: ReplayServer, corpus: Corpus) -> None:
    for target in ("/v1/models", _path(STREAM_TEXT, "bytes", "models")):
        listing = raw_request(_port(server), target, method="GET").json()
        assert listing["object"] == "list"
        assert [m["id"] for m in listing["data"]] == [MODEL_PREFIX + c.id for c in corpus.cases]
        assert all(m["object"] == "model" for m in listing["data"])


# -- keep-alives -----------------------------------------------------------------


def test_a_comment_at_every_event_boundary_changes_no_outcome(corpus: Corpus) -> None:
    checked = 0
    for case in corpus.cases:
        if not _is_stream(case):
            continue
        points = event_boundaries(case.body)
        padded, start = b"", 0
        for offset in sorted(points):
            padded += case.body[start:offset] + KEEPALIVE_COMMENT + points[offset] * 2
            start = offset
        padded += case.body[start:]
        args = (case.status, case.headers, case.request)
        assert read_response(*args, [padded]) == read_response(*args, [case.body]), case.id
        checked += bool(points)
    assert checked > 200


@pytest.mark.parametrize(
    "case_id",
    [
        STREAM_CRLF,
        "sse-spec/cr-line-endings",
        "sse-spec/bom-at-start",
        "deepseek/stalls-mid-reasoning-with-keep-alives",
        JSON_TEXT,
    ],
)
def test_keepalive_injection_keeps_the_outcome(
    corpus: Corpus, cases: dict[str, Case], case_id: str
) -> None:
    case = cases[case_id]
    with ReplayServer(corpus, chunk_delay=0.012, keepalive=0.005) as server:
        wire = raw_request(_port(server), _path(case_id, "lines"))
    args = (case.status, case.headers, case.request)
    assert read_response(*args, wire.chunks or [wire.body]) == read_response(*args, [case.body])
    # A "lines" read never holds two line ends, so the injected comments are easy to tell.
    comments = {KEEPALIVE_COMMENT + end * 2 for end in (b"\r\n", b"\n", b"\r")}
    original, at = b"", []
    for chunk in wire.chunks or [wire.body]:
        if chunk in comments:
            at.append(len(original))
        else:
            original += chunk
    assert original == case.body
    if _is_stream(case):
        assert at, "no keep-alive was sent"
        assert set(at) <= set(event_boundaries(case.body))
    else:
        assert not at


# -- lifecycle, command line, load -----------------------------------------------


def test_start_and_stop(corpus: Corpus) -> None:
    server = ReplayServer(corpus)
    with pytest.raises(RuntimeError):
        _ = server.base_url
    server.stop()  # never started: nothing to do
    url = server.start()
    assert url.startswith("http://127.0.0.1:") and url == server.base_url
    with pytest.raises(RuntimeError):
        server.start()
    server.stop()
    server.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", _port(server)), 1):
        pass
    with pytest.raises(ValueError, match="unknown transport"):
        ReplayServer(corpus, transport="sideways")


def test_stop_cuts_open_streams_and_returns_promptly(corpus: Corpus) -> None:
    server = ReplayServer(corpus, chunk_delay=10.0)
    server.start()
    try:
        sock = socket.create_connection(("127.0.0.1", _port(server)), timeout=10)
        sock.sendall(f"POST {_path(STREAM_TEXT, 'lines')} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        reader = _Reader(sock)
        assert reader.until(b"\r\n\r\n") is not None  # the head, then a 10 s wait
    finally:
        started = time.monotonic()
        server.stop()
    assert time.monotonic() - started < 5
    with sock:
        while reader.fill():  # the server closed the connection
            pass


def test_add_arguments_takes_milliseconds_and_seconds() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--chunk-delay", "20", "--keepalive", "15", "--transport", "lines"])
    assert (args.host, args.port, args.chunk_delay, args.keepalive) == ("127.0.0.1", 0, 20.0, 15.0)
    assert (args.transport, args.first_byte_delay, args.delay_scale, args.corpus) == (
        "lines",
        0.0,
        1.0,
        None,
    )
    with pytest.raises(SystemExit):
        parser.parse_args(["--keepalive", "0"])


def test_main_serves_until_ctrl_c(cases: dict[str, Case]) -> None:
    code = (
        "import argparse, sys; from streamproof.cli import serve; "
        "p = argparse.ArgumentParser(); serve.add_arguments(p); "
        "sys.exit(serve.run(p.parse_args(sys.argv[1:])))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, "--port", "0", "--transport", "lines"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith(f"serving {len(cases)} cases on http://127.0.0.1:")
        assert "(try: curl -N" in line
        port = int(line.split("http://127.0.0.1:", 1)[1].split()[0])
        wire = raw_request(port, _path(STREAM_TEXT, "whole"))
        assert wire.body == cases[STREAM_TEXT].body
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_200_concurrent_streams_are_byte_identical(corpus: Corpus) -> None:
    aiohttp = pytest.importorskip("aiohttp")
    chosen = [c for c in corpus.cases if not _truncated(c) and c.fault is None]
    transports = ["whole", "lines", "random", "random", "bytes"]
    # Cases from all over the corpus, stream and not, under four transports.
    jobs = [(chosen[i * 7 % len(chosen)], transports[i % len(transports)]) for i in range(200)]

    async def fetch(session: Any, url: str, case: Case) -> bytes:
        async with session.post(url) as response:
            assert response.status == case.status
            return bytes(await response.read())

    async def run_all(base_url: str) -> list[bytes]:
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            fetches = (fetch(session, base_url + _path(c.id, t), c) for c, t in jobs)
            return await asyncio.wait_for(asyncio.gather(*fetches), timeout=50)

    # Every stream waits 0.2 s before its first read: one at a time would take 40 s.
    with ReplayServer(corpus, seed=7, first_byte_delay=0.2) as server:
        started = time.monotonic()
        bodies = asyncio.run(run_all(server.base_url))
        elapsed = time.monotonic() - started
    assert [b == c.body for b, (c, _) in zip(bodies, jobs, strict=True)] == [True] * 200
    assert elapsed < 20
