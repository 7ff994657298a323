"""Faults on a real connection: ``wire/`` cases, ``serve`` producing each fault,
``validate`` checking the ``fault`` field, in-process runs skipping them.

The server's bytes are read with a plain socket, so what a client library
would make of them plays no part: the head, the body bytes up to
``after_byte`` framed as announced, and how the connection ends (a clean
EOF, or ``ConnectionResetError`` for a reset).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import Case, Corpus, load_corpus
from streamproof.corpus.validate import check_corpus
from streamproof.harness.engine import Engine, Verdict
from streamproof.harness.transports import boundaries, split
from streamproof.live.faults import FAULT_KINDS, fault_pieces
from streamproof.live.serve import ReplayServer, is_stream
from streamproof.reporting.coverage import REAL_CONNECTION, lacking_from_message

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def wire_cases(corpus: Corpus) -> list[Case]:
    return [case for case in corpus.cases if case.id.startswith("wire/")]


@pytest.fixture(scope="module")
def server(corpus: Corpus) -> Iterator[ReplayServer]:
    with ReplayServer(corpus) as running:
        yield running


@dataclass
class Raw:
    """A response read off a socket until the connection ended."""

    head: str
    body: bytes  # everything after the head, framing included
    ending: str  # "eof" or "reset"
    headers: list[tuple[str, str]] = field(default_factory=list)


def read_raw(base_url: str, case_id: str, transport: str) -> Raw:
    port = int(base_url.rsplit(":", 1)[1])
    request = (
        f"POST /cases/{case_id}/{transport}/v1/chat/completions HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Connection: close\r\nContent-Length: 2\r\n\r\n{}"
    ).encode()
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(request)
        try:
            while chunk := sock.recv(65536):
                data += chunk
            ending = "eof"
        except ConnectionResetError:
            ending = "reset"
    head, _, body = data.partition(b"\r\n\r\n")
    text = head.decode("latin-1")
    lines = text.split("\r\n")[1:]
    headers = [(k, v.strip()) for k, v in (line.split(":", 1) for line in lines)]
    return Raw(text, body, ending, headers)


def chunked(pieces: list[bytes]) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces)


def sent_reads(case: Case, transport: str) -> list[bytes]:
    """The transport's reads of the body, cut at ``after_byte``."""
    assert case.fault is not None
    after = case.fault["after_byte"]
    reads, offset = [], 0
    for data in split(case.body, boundaries(case.body, transport, seed=0, case_dir=case.dir)):
        piece = data[: max(0, after - offset)]
        offset += len(data)
        if piece:
            reads.append(piece)
    return reads


# -- the corpus ---------------------------------------------------------------------


def test_every_fault_kind_has_a_case_and_only_wire_cases_have_faults(
    corpus: Corpus, wire_cases: list[Case]
) -> None:
    assert {case.fault["kind"] for case in wire_cases if case.fault} == set(FAULT_KINDS)
    assert all(case.fault is not None and case.provider == "wire" for case in wire_cases)
    assert [c.id for c in corpus.cases if c.fault and c not in wire_cases] == []
    for case in wire_cases:
        assert case.fault is not None and 0 <= case.fault["after_byte"] < len(case.body)
        assert case.data["provenance"]["kind"] == "synthetic"


# -- each fault on the wire ------------------------------------------------------------


@pytest.mark.parametrize("transport", ["whole", "lines", "bytes"])
def test_serve_produces_each_fault_exactly(
    server: ReplayServer, wire_cases: list[Case], transport: str
) -> None:
    for case in wire_cases:
        assert case.fault is not None
        kind, after = case.fault["kind"], case.fault["after_byte"]
        raw = read_raw(server.base_url, case.id, transport)
        assert (
            raw.head.split("\r\n")[0] == f"HTTP/1.1 {case.status} {HTTPStatus(case.status).phrase}"
        )
        reads = sent_reads(case, transport)
        assert b"".join(reads) == case.body[:after]
        uses_chunks = kind == "chunked-cut" or (kind == "reset" and is_stream(case))
        framing = (
            [("transfer-encoding", "chunked")]
            if uses_chunks
            else [("content-length", str(len(case.body)))]
        )
        closing = [] if kind == "reset" else [("connection", "close")]
        assert raw.headers == [*case.headers.items(), *framing, *closing], case.id
        # Exactly the bytes up to after_byte, one HTTP chunk per read when
        # chunked, and never a terminating chunk.
        assert raw.body == (chunked(reads) if uses_chunks else b"".join(reads)), case.id
        assert raw.ending == ("reset" if kind == "reset" else "eof"), case.id


def test_a_reset_is_a_reset_and_a_cut_is_a_clean_close(
    server: ReplayServer, wire_cases: list[Case]
) -> None:
    by_kind = {case.fault["kind"]: case for case in wire_cases if case.fault}
    with pytest.raises(ConnectionResetError):
        _recv_all(server, by_kind["reset"])
    for kind in ("chunked-cut", "short-content-length"):
        data = _recv_all(server, by_kind[kind])
        assert not data.endswith(b"0\r\n\r\n")


def _recv_all(server: ReplayServer, case: Case) -> bytes:
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(
            f"POST /cases/{case.id}/whole/v1/chat/completions HTTP/1.1\r\n"
            "Host: x\r\nContent-Length: 0\r\n\r\n".encode()
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def test_the_server_keeps_serving_after_each_fault(
    server: ReplayServer, wire_cases: list[Case], corpus: Corpus
) -> None:
    for case in wire_cases:
        read_raw(server.base_url, case.id, "whole")
    plain = next(c for c in corpus.cases if c.id == "openai/text-stream-include-usage")
    raw = read_raw(server.base_url, plain.id, "whole")
    assert raw.ending == "eof" and raw.body.endswith(b"0\r\n\r\n")


def test_fault_pieces_cut_the_read_that_crosses_after_byte(wire_cases: list[Case]) -> None:
    case = next(c for c in wire_cases if c.fault and c.fault["kind"] == "chunked-cut")
    assert case.fault is not None
    after = case.fault["after_byte"]
    reads = [case.body[:3], b"", case.body[3 : after + 5], case.body[after + 5 :]]
    pieces = fault_pieces(case, reads, [0.0, 0.1, 0.2, 0.3], stream=True)
    assert pieces == [
        (chunked([case.body[:3]]), 0.0),
        (chunked([case.body[3:after]]), 0.2),
    ]


# -- validate ---------------------------------------------------------------------------


def _corpus_with(tmp_path: Path, edit: dict[str, Any] | None, move_to: str | None = None) -> Path:
    """A small corpus: VERSION and one wire case, edited."""
    root = tmp_path / "corpus"
    (root / "cases").mkdir(parents=True)
    shutil.copyfile(CORPUS_DIR / "VERSION", root / "VERSION")
    shutil.copyfile(CORPUS_DIR / "FORMAT", root / "FORMAT")
    source = CORPUS_DIR / "cases/wire/reset-mid-content"
    target_id = move_to or "wire/reset-mid-content"
    target = root / "cases" / target_id
    shutil.copytree(source, target)
    data = json.loads((target / "case.json").read_text(encoding="utf-8"))
    data["id"] = target_id
    data["provider"] = target_id.split("/", 1)[0]
    for key, value in (edit or {}).items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    (target / "case.json").write_text(json.dumps(data), encoding="utf-8")
    return root


def _fault_problems(root: Path) -> list[str]:
    """The problems about a fault (the file name before ': ' may say 'fault' too)."""
    return [p for p in check_corpus(root) if "fault" in p.split(": ", 1)[-1]]


def test_validate_accepts_a_wire_case(tmp_path: Path) -> None:
    assert _fault_problems(_corpus_with(tmp_path, None)) == []


def test_validate_wants_after_byte_within_the_body(tmp_path: Path) -> None:
    size = len((CORPUS_DIR / "cases/wire/reset-mid-content/response.sse").read_bytes())
    root = _corpus_with(tmp_path, {"fault": {"kind": "reset", "after_byte": size}})
    (problem,) = _fault_problems(root)
    assert f"fault after_byte {size} is not within the body ({size} bytes" in problem
    assert problem.startswith(str(root / "cases/wire/reset-mid-content/case.json"))


def test_validate_wants_a_fault_under_wire_and_nowhere_else(tmp_path: Path) -> None:
    (problem,) = _fault_problems(_corpus_with(tmp_path / "a", {"fault": None}))
    assert problem.endswith("a case under 'wire/' needs a 'fault'")
    (problem,) = _fault_problems(_corpus_with(tmp_path / "b", None, move_to="generic/reset"))
    assert problem.endswith("'fault' belongs to cases under 'wire/' only")


@pytest.mark.parametrize(
    "fault",
    [{"kind": "timeout", "after_byte": 3}, {"kind": "reset"}, {"kind": "reset", "after_byte": -1}],
)
def test_the_schema_rejects_a_malformed_fault(tmp_path: Path, fault: dict[str, Any]) -> None:
    problems = check_corpus(_corpus_with(tmp_path, {"fault": fault}))
    assert any("case.json" in p and "fault" in p.split(": ", 1)[-1] for p in problems), problems


# -- in-process runs skip them ----------------------------------------------------------


def test_in_process_runs_skip_a_fault_naming_it(wire_cases: list[Case]) -> None:
    engine = Engine("reference")
    try:
        for case in wire_cases:
            assert case.fault is not None
            result = engine.run(case, "whole")
            assert result.verdict is Verdict.SKIP
            kind, after = case.fault["kind"], case.fault["after_byte"]
            assert result.message.startswith(f"fault {kind} after byte {after} ")
            assert "run --http" in result.message
            assert lacking_from_message("skip", result.message) == [REAL_CONNECTION]
    finally:
        engine.close()


def test_a_fault_response_waits_for_the_whole_request(
    server: ReplayServer, wire_cases: list[Case]
) -> None:
    """A reset that came while the client still wrote its body would fail the
    write, and the client would never read the bytes sent before the reset."""
    case = next(c for c in wire_cases if c.fault and c.fault["kind"] == "reset")
    port = int(server.base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(
            f"POST /cases/{case.id}/whole/v1/chat/completions HTTP/1.1\r\n"
            "Host: x\r\nContent-Length: 2\r\n\r\n".encode()
        )
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # nothing before the body is complete
        sock.settimeout(20)
        sock.sendall(b"{}")
        data = b""
        with pytest.raises(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")


# -- run --http scores them -------------------------------------------------------------

# A user's adapter over real HTTP: httpx reads the body, the reference reader
# parses it, and httpx's documented transport errors are status "error" with
# the text that arrived.
HTTPX_ADAPTER = """
import httpx
from streamproof.reference import ResponseReader

NAME = "httpx-reference"
CAPABILITIES = {"content", "finish_reason", "stream_error", "truncation", "non_streaming"}

def parse(response):
    reader = ResponseReader(response.status, response.headers, response.request)
    for data in response.iter_bytes():
        reader.feed(data)
    return reader.close()

def call(base_url, request):
    url = base_url + "/chat/completions"
    with httpx.Client() as client, client.stream("POST", url, json=request) as response:
        reader = ResponseReader(response.status_code, dict(response.headers), request)
        try:
            for data in response.iter_raw():
                reader.feed(data)
        except httpx.TransportError as exc:
            outcome = reader.close()
            return {**outcome, "status": "error", "error": {"message": str(exc)}}
        return reader.close()
"""


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", "run", "--no-html", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_run_http_scores_the_wire_cases_and_in_process_skips_them(tmp_path: Path) -> None:
    pytest.importorskip("httpx")
    adapter = tmp_path / "httpx_reference.py"
    adapter.write_text(HTTPX_ADAPTER, encoding="utf-8")
    out = tmp_path / "http.json"
    common = ("--adapter", adapter, "--case", "wire/*", "--transport", "whole,bytes")
    proc = _run(*common, "--http", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert len(rows) == 12 and {r["verdict"] for r in rows} == {"pass"}
    proc = _run(*common, "--json", out)
    assert proc.returncode == 2
    assert "skipped for capabilities the adapter lacks (real-connection 12)" in proc.stderr
    assert "run --http scores faults on a real connection" in proc.stderr
    assert "Traceback" not in proc.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert {r["verdict"] for r in rows} == {"skip"}
    assert all(r["message"].startswith("fault ") for r in rows)


def test_the_nightly_scores_the_wire_cases_over_http(tmp_path: Path) -> None:
    """scripts/nightly runs an adapter with call() on wire/ over HTTP, as "http/<adapter>",
    and compares it with reports/baselines/http/<adapter>.json."""
    pytest.importorskip("openai")
    script = CORPUS_DIR.parent / "scripts" / "nightly"
    reports = tmp_path / "reports"
    (reports / "baselines" / "http").mkdir(parents=True)

    def nightly(out: Path) -> subprocess.CompletedProcess[str]:
        args = ["--case", "sse-spec/bom-at-start", "--case", "wire/*", "--transport", "whole"]
        return subprocess.run(
            [sys.executable, script, *args, "--reports", reports, "--out", out, "openai-python"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env={**os.environ, "PYTHON": sys.executable},
        )

    first = nightly(tmp_path / "first")
    assert first.returncode == 0, first.stdout + first.stderr
    fresh = tmp_path / "first" / "baselines" / "http" / "openai-python.json"
    rows = json.loads(fresh.read_text(encoding="utf-8"))["results"]
    assert {r["case"] for r in rows} == {
        f"wire/{p.name}" for p in (CORPUS_DIR / "cases/wire").iterdir()
    }
    assert "| http/openai-python | no baseline |" in first.stdout
    shutil.copyfile(fresh, reports / "baselines" / "http" / "openai-python.json")
    second = nightly(tmp_path / "second")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "| http/openai-python | compared | 0 | 0 |" in second.stdout


def test_verify_accepts_the_fault_skips_and_only_those(tmp_path: Path, corpus: Corpus) -> None:
    from streamproof.reporting.verify import verify_document

    out = tmp_path / "results.json"
    proc = _run(
        "--adapter", "reference", "--case", "wire/*", "--case", "generic/http-429-json",
        "--transport", "whole", "--json", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["summary"]["skipped_lacking"] == {REAL_CONNECTION: 6}
    assert verify_document(document, corpus) == []
    # The same skip message on a case without a fault is no excuse.
    row = next(r for r in document["results"] if r["case"] == "generic/http-429-json")
    wire_row = next(r for r in document["results"] if r["case"].startswith("wire/"))
    row.update(verdict="skip", message=wire_row["message"])
    document["summary"].update(passed=0, skipped=7)
    problems = verify_document(document, corpus)
    assert any("skip, yet the adapter exposes groups the case states" in p for p in problems)
