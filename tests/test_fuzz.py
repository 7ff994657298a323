"""The fuzzer: its model, its renderer, its shrinker, and ``streamproof fuzz``.

Quick smoke budgets only; the nightly runs the full ones (scripts/fuzz-all).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.corpus.cases import default_root, load_case
from streamproof.corpus.quirks import load_quirks
from streamproof.fuzz.case import to_case
from streamproof.fuzz.generate import draw
from streamproof.fuzz.model import (
    AudioDelta,
    CallDelta,
    Chunk,
    Delta,
    Done,
    Response,
    StreamError,
    Usage,
    outcomes,
    requires,
)
from streamproof.fuzz.render import QUIRKS, render
from streamproof.fuzz.session import Fuzzer
from streamproof.fuzz.shrink import smaller
from streamproof.harness.loader import CAPABILITIES
from streamproof.harness.protocol import AdapterProcess
from streamproof.reference import read_response

ADAPTERS = Path(__file__).parent / "adapters"
ALL = frozenset(CAPABILITIES)


@pytest.fixture
def process(request: pytest.FixtureRequest) -> Iterator[AdapterProcess]:
    proc = AdapterProcess(str(request.param))
    proc.start()
    yield proc
    proc.close()


# -- the model, by hand -------------------------------------------------------


def test_model_interleaved_tool_calls_and_usage_by_hand() -> None:
    response = Response(
        events=(
            Chunk((Delta(0, tool_calls=(CallDelta(0, "a", "f", "{", head=True),)),)),
            Chunk(
                (
                    Delta(
                        0,
                        tool_calls=(CallDelta(0, arguments="}"), CallDelta(1, "b", "g", head=True)),
                    ),
                )
            ),
            Chunk((Delta(0, content="hi", finish_reason="tool_calls"),)),
            Chunk((), Usage(3, 4)),
        )
    )
    (outcome,) = outcomes(response)
    assert outcome["status"] == "complete"  # every choice finished (§5.2)
    choice = outcome["choices"][0]
    assert choice["content"] == "hi"
    assert choice["finish_reason"] == "tool_calls"
    assert [c["function"] for c in choice["tool_calls"]] == [
        {"name": "f", "arguments": "{}"},
        {"name": "g", "arguments": ""},
    ]
    assert outcome["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def test_model_error_keeps_text_before_it_and_an_open_last_event_gives_two_readings() -> None:
    errored = Response(
        events=(Chunk((Delta(0, content="a"),)), StreamError("boom", code="x"), Done())
    )
    (outcome,) = outcomes(errored)
    assert outcome["status"] == "error"
    assert outcome["choices"][0]["content"] == "a"
    assert outcome["error"] == {"message": "boom", "type": None, "code": "x"}
    open_end = Response(
        events=(Chunk((Delta(0, content="a"),)), Done()),
        quirks=frozenset({"no-final-blank-line"}),
    )
    assert [o["status"] for o in outcomes(open_end)] == ["truncated", "complete"]


def test_model_parts_of_the_chat_format_by_hand() -> None:
    audio = (AudioDelta("au", b"\x00\x01\x02", "Hi"), AudioDelta(data=b"\x03", expires_at=9))
    head = CallDelta(0, "c", "sql", "SE", head=True, custom=True)
    piece = CallDelta(0, arguments="L", custom=True)
    response = Response(
        events=(
            Chunk((Delta(0, function_call=("f", "{"), logprobs=("a",), audio=audio[0]),)),
            Chunk((Delta(0, function_call=("", "}"), annotations=("https://x.org",)),)),
            Chunk((Delta(0, tool_calls=(head,)),)),
            Chunk((Delta(0, tool_calls=(piece,), audio=audio[1]),)),
            Done(),
        )
    )
    (outcome,) = outcomes(response)
    choice = outcome["choices"][0]
    assert choice["function_call"] == {"name": "f", "arguments": "{}"}
    assert choice["logprobs"]["content"][0]["token"] == "a"
    assert choice["audio"] == {"id": "au", "data": "AAECAw==", "transcript": "Hi", "expires_at": 9}
    assert choice["annotations"][0]["url_citation"]["url"] == "https://x.org"
    assert choice["tool_calls"] == [
        {"index": 0, "id": "c", "type": "custom", "custom": {"name": "sql", "input": "SEL"}}
    ]
    assert requires(response) >= {"function_call", "custom_tool_calls", "logprobs", "audio"}
    wire = render(response)
    read = read_response(wire.status, wire.headers, wire.request, [wire.body])
    assert read["choices"][0] == choice | {"reasoning": "", "refusal": ""}


def test_the_parts_are_drawn_only_for_an_adapter_that_claims_them() -> None:
    parts = {"function_call", "custom_tool_calls", "logprobs", "audio", "annotations"}
    rng = random.Random(3)
    drawn = [requires(draw(rng, ALL)) for _ in range(400)]
    assert parts <= set().union(*drawn)
    rng = random.Random(3)
    assert not parts & set().union(*(requires(draw(rng, ALL - parts)) for _ in range(400)))


# -- rendering ----------------------------------------------------------------


def test_every_rendered_quirk_is_in_the_catalogue() -> None:
    catalogue, problems = load_quirks(default_root())
    assert catalogue is not None, problems
    assert set(QUIRKS) <= set(catalogue.quirks)


@pytest.mark.parametrize("quirk", QUIRKS)
def test_a_quirk_changes_the_bytes_not_the_meaning(quirk: str) -> None:
    # Checked with an independent reading of the bytes: the reference must
    # read each quirk as the model means it (the fuzzer tests the rest).
    response = Response(
        events=(
            Chunk((Delta(0),)),
            Chunk((Delta(0, content="a\nb"),)),
            Chunk((Delta(0, content="é", finish_reason="stop"),), Usage(1, 2)),
            Done(),
        ),
        quirks=frozenset({quirk}),
    )
    plain = render(Response(events=response.events)).body
    wire = render(response)
    assert wire.body != plain
    outcome = read_response(wire.status, wire.headers, wire.request, [wire.body])
    assert outcome["choices"][0]["content"] == "a\nbé"
    assert outcome["usage"]["total_tokens"] == 3


def test_rendering_is_deterministic_and_drawing_reproducible() -> None:
    first = [draw(random.Random(9), ALL) for _ in range(1)]
    again = [draw(random.Random(9), ALL) for _ in range(1)]
    assert first == again
    assert render(first[0]).body == render(again[0]).body


def test_shrinking_keeps_every_variant_valid_and_smaller() -> None:
    rng = random.Random(3)
    for _ in range(30):
        response = draw(rng, ALL)
        size = len(render(response).body)
        for variant in smaller(response):
            # Simpler: a quirk fewer (which may cost bytes), or no more bytes.
            assert variant.quirks <= response.quirks
            assert variant.quirks < response.quirks or len(render(variant).body) <= size
            assert outcomes(variant)  # the model describes it


# -- sessions -----------------------------------------------------------------


@pytest.mark.parametrize("process", ["reference"], indirect=True)
def test_reference_agrees_with_the_model_on_a_fixed_budget(process: AdapterProcess) -> None:
    report = Fuzzer(process, seed=17).run(max_examples=400)
    detail = report.finding and report.finding.summary("reference")
    assert report.finding is None, detail
    assert report.examples == 400


@pytest.mark.parametrize(
    ("process", "most_events"),
    [(ADAPTERS / "lf_only.py", 2), (ADAPTERS / "drops_second_tool_call.py", 4)],
    indirect=["process"],
)
def test_broken_adapter_is_found_and_shrunk_reproducibly(
    process: AdapterProcess, most_events: int, tmp_path: Path
) -> None:
    findings = []
    for out in (tmp_path / "one", tmp_path / "two"):
        report = Fuzzer(process, seed=0).run(max_examples=200, out=out, adapter="broken")
        assert report.finding is not None
        findings.append(report.finding)
    first, second = findings
    assert first.response == second.response and first.ends == second.ends
    assert first.events <= most_events
    assert first.folder is not None and first.folder.is_relative_to(tmp_path / "one")
    case, problems = load_case(first.folder / "case.json", tmp_path / "one")
    assert case is not None, problems
    assert case.data["provenance"]["kind"] == "synthetic"
    expected = to_case(first.response, ALL).data
    assert case.data.get("expected") == expected.get("expected")
    assert case.body == render(first.response).body


def _fuzz(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", "fuzz", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_cli_finds_writes_only_under_out_and_says_so_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "candidates"
    proc = _fuzz("--adapter", ADAPTERS / "lf_only.py", "--seed", "0", "--out", out, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stdout.splitlines()) == 1 and "disagreement" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["candidates"]
    (folder,) = (out / "cases" / "generic").iterdir()
    data = json.loads((folder / "case.json").read_text())
    assert data["id"] == f"generic/{folder.name}"
    # No server was seen sending a drawn response: no shape, the fuzzer's own
    # reading, so at most may (docs/evidence.md).
    assert data["evidence"]["shape"][0]["kind"] == "none"
    assert (data["evidence"]["reading"]["basis"], data["severity"]) == ("project", "may")
    case, problems = load_case(folder / "case.json", out)
    assert problems == [] and case is not None


def test_cli_reference_passes_and_usage_errors_exit_2(tmp_path: Path) -> None:
    proc = _fuzz("--max-examples", "30", "--out", tmp_path / "c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no disagreement in 30 example(s)" in proc.stdout
    assert not (tmp_path / "c").exists()
    timed = _fuzz("--seconds", "0.5", "--seed", "4", cwd=tmp_path)
    assert timed.returncode == 0 and "no disagreement" in timed.stdout, timed.stderr
    bad = _fuzz("--max-examples", "0", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    missing = _fuzz("--adapter", tmp_path / "nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


@pytest.mark.parametrize("process", [ADAPTERS / "naive_lines.py"], indirect=True)
def test_keep_going_reports_distinct_disagreements_only(process: AdapterProcess) -> None:
    report = Fuzzer(process, seed=5).run(max_examples=300, keep_going=3)
    assert len(report.findings) == 3
    keys = {(f.result.first_divergence.split(":")[0], f.response.quirks) for f in report.findings}
    assert len(keys) == 3
    assert all(f.events <= 4 for f in report.findings)


# -- --out is a corpus, and its candidates replay as reported ---------------------

_FOUND = re.compile(
    r"read\(s\): (?P<divergence>.*) -> (?P<case>generic/\S+) "
    r"\[(?P<transport>[a-z]+)\] in (?P<out>.+)$"
)


def _streamproof(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "adapter",
    [
        "drops_second_tool_call",  # fails on the tool calls
        "text_only",  # declares a few capabilities: judged on those alone, on replay too
        "flaky_reads",  # crashes under some reads only: the candidate keeps them
    ],
)
def test_out_is_a_corpus_whose_candidate_diverges_on_replay_as_reported(
    tmp_path: Path, adapter: str
) -> None:
    spec = ADAPTERS / f"{adapter}.py"
    proc = _fuzz("--adapter", spec, "--seed", "0", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = _FOUND.search(proc.stdout.strip())
    assert found is not None, proc.stdout
    case, transport, divergence = found["case"], found["transport"], found["divergence"]
    assert found["out"] == "out"
    out = tmp_path / "out"
    assert (out / "VERSION").is_file() and (out / "FORMAT").read_text() == "2\n"
    # validate takes the folder as it is: the manifest, requires, evidence and severity
    valid = _streamproof("validate", "--corpus", out, cwd=tmp_path)
    assert valid.returncode == 0, valid.stderr
    assert valid.stdout.startswith("ok: 1 cases, corpus 0.0.0")
    data = json.loads((out / "cases" / case / "case.json").read_text())
    assert data["severity"] == "may" and data["evidence"]["shape"][0]["kind"] == "none"
    assert (transport == "recorded") == (out / "cases" / case / "chunks.json").exists()
    shown = _streamproof("show", f"{case} [{transport}]", "--corpus", out, cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.startswith(f"{case} [may] "), shown.stderr
    # run replays it under the reported reads and diverges exactly as reported
    ran = _streamproof(
        "run", "--corpus", out, "--adapter", spec, "--case", f"{case} [{transport}]",
        "--no-html", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    verdict, _, detail = divergence.partition(": ")
    if verdict != "crash":
        verdict, detail = "fail", divergence
    line = f"{verdict.upper():<7} {case} [{transport}] (may): {detail}"
    assert ran.stdout.splitlines()[0] == line
    # and so does debug, in the foreground
    debug = _streamproof(
        "debug", f"{case} [{transport}]", "--corpus", out, "--adapter", spec, cwd=tmp_path
    )
    assert debug.returncode == 1, debug.stderr
    if verdict == "crash":
        assert detail in debug.stderr and "crash: the adapter raised" in debug.stdout
    else:
        assert debug.stdout.splitlines()[-1] == f"--- fail: {detail}"
