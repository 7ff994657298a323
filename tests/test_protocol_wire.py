"""The harness's side of the wire: the trace, the handshake's MUSTs, faults between cases."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamproof.harness.capture import last_meaningful_line
from streamproof.harness.loader import AdapterError
from streamproof.harness.messages import run_message
from streamproof.harness.protocol import AdapterProcess
from streamproof.harness.trace import TraceFile

ROOT = Path(__file__).parent.parent
BROKEN = Path(__file__).parent / "adapters" / "protocol"
TEMPLATE = f"cmd:{sys.executable} adapters/templates/protocol_adapter.py"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="no system node")
BODY = b'data: {"choices": [{"index": 0, "delta": {"content": "Hi"}}]}\n\ndata: [DONE]\n\n'


def _streamproof(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )


def _message(case: str, body: bytes = BODY) -> dict[str, object]:
    return run_message(case, "whole", 200, {}, {"model": "m"}, body, [len(body)])


# -- run --trace --------------------------------------------------------------


def test_run_trace_writes_both_directions_of_every_message(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    cases = ["generic/finish-reason-length", "sse-spec/crlf-only-before-done"]
    args = ["run", "--adapter", TEMPLATE, "--transport", "lines", "--no-html", "--trace", trace]
    proc = _streamproof(*args, *[a for c in cases for a in ("--case", c)])
    assert proc.returncode in (0, 1), proc.stderr
    rows = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert all(set(r) == {"time", "pid", "dir", "bytes", "line"} for r in rows)
    assert all(r["time"].endswith("Z") and r["bytes"] == len(r["line"].encode()) for r in rows)
    messages = [(r["dir"], json.loads(r["line"])) for r in rows]
    # The probe: start, its handshake, stop; then the run's own process.
    probe, run = rows[0]["pid"], rows[3]["pid"]
    assert probe != run
    assert [m.get("cmd", "reply") for _, m in messages[:4]] == ["start", "reply", "stop", "start"]
    sent = [m for d, m in messages if d == "to-adapter" and m.get("cmd") == "run"]
    got = [m for d, m in messages if d == "from-adapter" and "seq" in m]
    assert [m["seq"] for m in sent] == [m["seq"] for m in got] == [1, 2]
    assert sorted(m["case"] for m in sent) == sorted(cases)
    assert all(m["transport"] == "lines" and m["boundaries"][-1] > 0 for m in sent)
    assert messages[-1] == ("to-adapter", {"cmd": "stop"})


def test_a_trace_line_is_cut_at_its_limit_and_says_so(tmp_path: Path) -> None:
    trace = TraceFile(tmp_path / "t.jsonl", append=False, limit=10)
    trace("to-adapter", 7, b'{"cmd": "run", "body": "xxxxxxxx"}\n')
    trace("from-adapter", 7, b"\xff{}")
    trace.close()
    trace("to-adapter", 7, b"after close: dropped")
    first, second = (json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines())
    assert first["line"] == '{"cmd": "r' and first["truncated"] is True and first["bytes"] == 34
    assert second["line"] == "\ufffd{}" and "truncated" not in second


def test_the_trace_option_is_in_run_help() -> None:
    out = _streamproof("run", "--help").stdout
    assert "--trace FILE" in out
    assert "cmd:" in out and "docs/protocol.md" in out


# -- the handshake's MUSTs ----------------------------------------------------


def test_a_handshake_without_version_is_refused_in_one_line() -> None:
    proc = _streamproof("run", "--adapter", f"cmd:{sys.executable} {BROKEN / 'no_version.py'}")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "MUST name the adapter's version" in proc.stderr and "got none" in proc.stderr
    with pytest.raises(AdapterError, match='got ""'):
        hello = json.dumps({"name": "x", "version": "", "capabilities": []})
        script = Path(__file__).parent / "adapters" / "scripted_protocol.py"
        AdapterProcess(f"cmd:{sys.executable} {script} '{hello}' ok").start()


# -- faults between cases are charged to no case ------------------------------


@pytest.mark.parametrize(
    ("adapter", "said"),
    [
        ("late_line.py", "wrote a line no message asked for"),
        ("dies_after_reply.py", "adapter process died (exit code 3)"),
    ],
)
def test_a_fault_after_a_reply_is_the_adapters_not_the_next_cases(adapter: str, said: str) -> None:
    process = AdapterProcess(f"cmd:{sys.executable} {BROKEN / adapter}")
    try:
        first = process.run(_message("p/quiet"), 10)
        time.sleep(0.4)  # the late line is written, or the process has died
        second = process.run(_message("p/second"), 10)
    finally:
        process.close()
    assert first.kind == second.kind == "outcome"
    assert process.restarts == 1
    assert len(process.faults) == 1
    assert (
        process.faults[0].startswith("after its reply to p/quiet, ") and said in process.faults[0]
    )


@needs_node
def test_a_node_error_thrown_after_a_reply_is_not_charged_to_the_next_case() -> None:
    process = AdapterProcess(f"cmd:{NODE} {BROKEN / 'late_throw.mjs'}")
    try:
        # The first case's timer throws while the second case runs.
        replies = [process.run(_message(f"p/{n}"), 10) for n in range(3)]
        time.sleep(0.3)
        output = process._output(0)
    finally:
        process.close()
    assert [r.kind for r in replies] == ["outcome"] * 3, replies
    assert "late failure of p/0" in output
    assert "comes from case p/0 (seq 1), after its reply" in output


# -- errors that point at the cause -------------------------------------------


@needs_node
@pytest.mark.parametrize(
    ("script", "cause"),
    [
        ("throws_on_load.mjs", "Error: cannot load the parser: missing grammar file"),
        ("no_such_adapter.mjs", "Error: Cannot find module"),
    ],
)
def test_a_node_adapter_that_cannot_load_shows_the_cause(script: str, cause: str) -> None:
    proc = _streamproof("run", "--adapter", f"cmd:{NODE} {BROKEN / script}", "--no-html")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert cause in proc.stderr and "Node.js v" not in proc.stderr, proc.stderr
    assert "exit code 1" in proc.stderr


def test_the_error_line_wins_over_what_node_prints_after_it() -> None:
    text = (
        "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n"
        "Error: Cannot find module '/x/a.mjs'\n    at Module._load (node:internal:1:2) {\n"
        "  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2\n"
    )
    assert last_meaningful_line(text) == "Error: Cannot find module '/x/a.mjs'"
    assert last_meaningful_line("TypeError [ERR_X]: bad\n}\n") == "TypeError [ERR_X]: bad"
    assert last_meaningful_line("starting\nfatal: out of memory\n") == "fatal: out of memory"
