"""streamproof record, redact and review: recorded through the replay server, in tmp folders."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from hostile.corpus_builder import one_stream_corpus

from streamproof.cli.record import add_arguments as add_record_arguments
from streamproof.cli.review import add_arguments as add_review_arguments
from streamproof.corpus import Corpus, load_corpus
from streamproof.corpus.schemas import schema_errors
from streamproof.corpus.validate import check_corpus, write_manifest
from streamproof.harness.comparison import best_alternative, compare
from streamproof.harness.engine import select
from streamproof.harness.selection import awaiting_review
from streamproof.harness.transports import boundaries, split
from streamproof.live.record import SCENARIOS, record_main
from streamproof.live.redact import redact_body, redact_headers
from streamproof.live.review import review_main
from streamproof.reference import read_response

pytest.importorskip("httpx")
serve = pytest.importorskip("streamproof.live.serve")

STREAM = "openai/text-stream-include-usage"
NON_STREAM = "openai/non-streamed-text"
CUT_OFF = "generic/cut-off-inside-event"
CR_LINES = "sse-spec/cr-line-endings"
SHORT = "openai/usage-chunk-never-arrives"

KEY = "sk-proj-Q7wErT9yUiOp3AsDfGhJkL2zXcVbNm4QwErTyUi"
BEARER = "eyJhbGciOi0123456789abcdefXYZ"
ORG = "org-Ab12Cd34Ef56Gh78Ij90Kl12"
PROJECT = "proj_Zy98Xw76Vu54Ts32Rq10Po98"
COOKIE = "sess7d9f8a7s6d5f4g3h2j1k0l9z8x7c6v"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


def record(*argv: str | Path) -> int:
    parser = argparse.ArgumentParser()
    add_record_arguments(parser)
    return record_main(parser.parse_args([str(a) for a in argv]))


def review(stdin: str, monkeypatch: pytest.MonkeyPatch, *argv: str | Path) -> int:
    parser = argparse.ArgumentParser()
    add_review_arguments(parser)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return review_main(parser.parse_args([str(a) for a in argv]))


def new_corpus(root: Path) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "VERSION").write_text("0.0.1\n")
    (root / "FORMAT").write_text("2\n")
    return root


def recorded(folder: Path) -> tuple[dict[str, Any], bytes, list[int]]:
    data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    body = (folder / data["response"]["body"]).read_bytes()
    chunks = json.loads((folder / "chunks.json").read_text(encoding="utf-8"))
    assert len(chunks["delays_ms"]) == len(chunks["sizes"])
    return data, body, list(accumulate(chunks["sizes"]))


@pytest.mark.parametrize(
    ("transport", "cases"),
    [("lines", [STREAM, NON_STREAM, CUT_OFF, CR_LINES]), ("random", [STREAM, NON_STREAM, CUT_OFF])],
)
def test_round_trip_through_the_replay_server(
    corpus: Corpus, tmp_path: Path, transport: str, cases: list[str]
) -> None:
    root = new_corpus(tmp_path / "corpus")
    with serve.ReplayServer(corpus, transport=transport, seed=5, chunk_delay=0.003) as server:
        for case_id in cases:
            out = root / "cases/replay" / case_id.replace("/", "-")
            code = record(
                "--base-url",
                f"{server.base_url}/v1",
                "--model",
                f"streamproof:{case_id}",
                "--scenario",
                "non-stream" if case_id == NON_STREAM else "usage",
                "--out",
                out,
            )
            assert code == 0
            served = next(c for c in corpus.cases if c.id == case_id)
            data, body, ends = recorded(out)
            assert body == served.body  # byte for byte
            expected_ends = boundaries(served.body, transport, seed=5)
            if data["response"]["body"] == "response.sse":
                # A stream is sent chunked, one HTTP chunk per read, and h11 hands
                # httpx one piece per chunk even when the kernel delivers several
                # in one segment: the served reads come back exactly.
                assert ends == expected_ends
            else:
                # Other bodies are framed by Content-Length, so nothing marks a
                # read but time: the kernel may merge writes that arrive within
                # one recv. The chunk delay keeps them apart in practice; what
                # must hold is that every recorded boundary is a served one.
                assert set(ends) <= set(expected_ends)
            assert schema_errors("case", data) is None
            assert data["provenance"]["kind"] == "recorded"
            assert "reviewed_by" not in data["provenance"]
            assert data["provenance"]["endpoint"] == "127.0.0.1"
            outcome = read_response(
                data["response"]["status"],
                data["response"]["headers"],
                data["request"],
                split(body, ends),
            )
            assert compare(data["expected"], outcome) == []
            # the reference reading agrees with the hand-written expectation
            assert best_alternative(served.alternatives, outcome) == []
    loaded = load_corpus(root)
    assert len(awaiting_review(loaded.cases)) == len(cases)
    assert select(loaded.cases, []) == []
    cut = json.loads((root / "cases/replay/generic-cut-off-inside-event/case.json").read_text())
    assert cut["expected"]["status"] == "truncated"
    assert "RemoteProtocolError" in cut["comment"]


LEAKY_BODY = (
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,'
    '"delta":{"role":"assistant","content":"Hi \\u00e9\\n"},"finish_reason":null}],'
    f'"x_debug":{{"api_key":"{KEY}","organization":"{ORG}","project":"{PROJECT}",'
    f'"auth":"Bearer {BEARER}","headers":"Cookie: session={COOKIE}; theme=dark"}}}}\n\n'
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,'
    '"delta":{"content":"there."},"finish_reason":"stop"}],'
    f'"usage":{{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}},"token":"{KEY[3:]}"}}'
    "\n\ndata: [DONE]\n\n"
).encode()
LEAKY_HEADERS = {
    "content-type": "text/event-stream; charset=utf-8",
    "set-cookie": f"session={COOKIE}; Path=/; HttpOnly",
    "authorization": f"Bearer {BEARER}",
    "openai-organization": ORG,
    "openai-project": PROJECT,
    "x-request-id": "req_123",
    "x-echo": f"key={KEY}",
}
SECRETS = (KEY, KEY[3:], BEARER, ORG, PROJECT, COOKIE)


@pytest.fixture
def leaky_corpus(tmp_path: Path) -> Iterator[Corpus]:
    """A corpus of one case whose bytes and headers leak every kind of secret."""
    root = tmp_path / "leaky"
    one_stream_corpus(
        root, "leaky/stream", "a stream that leaks secrets", LEAKY_BODY, LEAKY_HEADERS
    )
    yield load_corpus(root)


def test_redaction_keeps_every_length_and_the_outcome(
    leaky_corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMPROOF_TEST_KEY", KEY)
    root = new_corpus(tmp_path / "corpus")
    out = root / "cases/leaky/recorded"
    with serve.ReplayServer(leaky_corpus, transport="random", seed=11) as server:
        code = record(
            "--base-url",
            f"{server.base_url}/v1",
            "--model",
            "streamproof:leaky/stream",
            "--api-key-env",
            "STREAMPROOF_TEST_KEY",
            "--scenario",
            "usage",
            "--out",
            out,
        )
    assert code == 0
    data, body, ends = recorded(out)
    everything = b"".join(p.read_bytes() for p in out.iterdir())
    for secret in SECRETS:
        assert secret.encode() not in everything, secret
    assert len(body) == len(LEAKY_BODY) and ends[-1] == len(body)
    assert ends == boundaries(LEAKY_BODY, "random", seed=11)
    assert b'"Hi \\u00e9\\n"' in body  # escapes are never masked
    headers = data["response"]["headers"]
    assert "set-cookie" not in headers and "authorization" not in headers
    assert headers["openai-organization"] == "*" * len(ORG)
    assert len(headers["x-echo"]) == len(LEAKY_HEADERS["x-echo"])
    assert headers["x-request-id"] == "req_123"
    original = read_response(200, LEAKY_HEADERS, data["request"], split(LEAKY_BODY, ends))
    assert read_response(200, headers, data["request"], split(body, ends)) == original
    write_manifest(root)
    assert check_corpus(root) == []  # validate finds no secret, and no other problem


def test_redact_body_masks_in_place() -> None:
    text = f'{{"a":"{KEY}","key":"{COOKIE}","note":"sk-short","word":"org-wide"}}'.encode()
    masked = redact_body(text)
    assert len(masked) == len(text)
    parsed = json.loads(masked)
    assert set(parsed["a"]) == {"*"} and set(parsed["key"]) == {"*"}
    assert parsed["note"] == "sk-short" and parsed["word"] == "org-wide"
    assert redact_body(b"token=abcd1234", ["abcd1234"]) == b"token=********"
    assert redact_headers([("Cookie", "a=b"), ("X-A", "1"), ("x-a", "2")]) == {"x-a": "1, 2"}


def test_redaction_changes_no_reading_of_the_corpus(corpus: Corpus) -> None:
    for case in corpus.cases:
        masked = redact_body(case.body)
        assert len(masked) == len(case.body), case.id
        before = read_response(case.status, case.headers, case.request, [case.body])
        after = read_response(case.status, case.headers, case.request, [masked])
        assert after["status"] == before["status"], case.id
        assert after["choices"] == before["choices"], case.id


def record_one(corpus: Corpus, root: Path, case_id: str = SHORT) -> Path:
    out = root / "cases/replay/short"
    with serve.ReplayServer(corpus, transport="lines") as server:
        code = record(
            "--base-url",
            f"{server.base_url}/v1",
            "--model",
            f"streamproof:{case_id}",
            "--scenario",
            "text",
            "--out",
            out,
        )
    assert code == 0
    return out


def test_review_walks_every_field_and_makes_the_case_runnable(
    corpus: Corpus,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = new_corpus(tmp_path / "corpus")
    out = record_one(corpus, root)
    before = json.loads((out / "case.json").read_text())
    assert before["expected"]["choices"][0].keys() == {"index", "role", "content", "finish_reason"}
    assert not load_corpus(root).cases[0].runnable
    capsys.readouterr()
    answers = [
        "y",  # status
        "y",  # choices[0].index
        "n",  # choices[0].role: leave it out
        "maybe",  # not an answer: asked again
        "e",  # choices[0].content: edited as plain text
        "Yes, it is.",
        "y",  # choices[0].finish_reason
        "y",  # accept
        "a short answer streamed by the replay server",  # title
    ]
    code = review(
        "\n".join(answers) + "\n",
        monkeypatch,
        "replay/short",
        "--corpus",
        root,
        "--reviewer",
        "Ada Lovelace",
    )
    shown = capsys.readouterr().out
    assert code == 0, shown
    assert "¦" in shown and "\\n" in shown  # the wire view with the recorded reads
    assert "expected.choices[0].content" in shown
    after = json.loads((out / "case.json").read_text())
    assert after["provenance"]["reviewed_by"] == "Ada Lovelace"
    assert after["expected"]["choices"] == [
        {"index": 0, "content": "Yes, it is.", "finish_reason": "stop"}
    ]
    assert "role" not in after["requires"]
    assert after["title"] == "a short answer streamed by the replay server"
    assert "awaits" not in after["comment"] and "Ada Lovelace" in after["comment"]
    assert schema_errors("case", after) is None
    loaded = load_corpus(root)
    assert loaded.cases[0].runnable and awaiting_review(loaded.cases) == []
    assert [c.id for c in select(loaded.cases, [])] == ["replay/short"]


@pytest.mark.parametrize("stdin", ["y\ny\nq\n", "y\ny\n", "y\ny\ny\ny\ny\nn\n"])
def test_review_that_stops_writes_nothing(
    corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stdin: str
) -> None:
    root = new_corpus(tmp_path / "corpus")
    out = record_one(corpus, root)
    before = (out / "case.json").read_bytes()
    assert review(stdin, monkeypatch, out, "--reviewer", "someone") == 1
    assert (out / "case.json").read_bytes() == before


def test_review_refuses_a_case_that_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review("", monkeypatch, STREAM, "--reviewer", "someone") == 2
    assert "not recorded" in capsys.readouterr().err


def test_usage_errors_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STREAMPROOF_UNSET", raising=False)
    (tmp_path / "cases/p/exists").mkdir(parents=True)
    base = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    bad: dict[str, list[str | Path]] = {
        "unknown scenario": [*base, "--scenario", "nope", "--out", tmp_path / "cases/p/a"],
        "existing folder": [*base, "--scenario", "text", "--out", tmp_path / "cases/p/exists"],
        "unset key": [
            *base,
            "--scenario",
            "text",
            "--out",
            tmp_path / "cases/p/b",
            "--api-key-env",
            "STREAMPROOF_UNSET",
        ],
        "bad slug": [*base, "--scenario", "text", "--out", tmp_path / "cases/p/Bad_Slug"],
        "other provider": [
            *base,
            "--scenario",
            "text",
            "--out",
            tmp_path / "cases/p/c",
            "--provider",
            "q",
        ],
        "not a url": [
            "--base-url",
            "localhost",
            "--model",
            "m",
            "--scenario",
            "text",
            "--out",
            tmp_path / "cases/p/d",
        ],
    }
    for name, argv in bad.items():
        assert record(*argv) == 2, name
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and err.startswith("streamproof: "), name
    assert not (tmp_path / "cases/p/a").exists()
    assert set(SCENARIOS) >= {"text", "usage", "tool", "parallel-tools", "reasoning", "n2"}


def test_an_unreachable_endpoint_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cases/p/x"
    argv = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--scenario", "text"]
    assert record(*argv, "--out", out, "--timeout", "5") == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not out.exists()


def test_every_scenario_request_is_json() -> None:
    for name, body in SCENARIOS.items():
        assert "model" not in body, name
        assert json.loads(json.dumps(body)) == body
    assert SCENARIOS["error"]["messages"] == []
    assert SCENARIOS["non-stream"]["stream"] is False
    assert SCENARIOS["length"]["max_tokens"] == 5
