"""The bytes transport's boundaries cross the pipe as {"every": 1} only to a worker that says so."""

from __future__ import annotations

import io
import json

import pytest

from streamproof.corpus import load_corpus
from streamproof.harness.engine import Engine, Verdict
from streamproof.harness.messages import run_message
from streamproof.harness.protocol import AdapterProcess
from streamproof.harness.transports import boundaries
from streamproof.harness.worker import _ends, serve

BODY = b"data: {}\r\n\r\n"


def test_the_message_is_compact_for_every_byte_only_when_asked() -> None:
    every = boundaries(BODY, "bytes")
    lines = boundaries(BODY, "lines")
    compact = run_message("c", "bytes", 200, {}, {}, BODY, every, compact=True)
    assert compact["boundaries"] == {"every": 1}
    assert run_message("c", "bytes", 200, {}, {}, BODY, every)["boundaries"] == every
    assert run_message("c", "lines", 200, {}, {}, BODY, lines, compact=True)["boundaries"] == lines
    whole = run_message("c", "whole", 200, {}, {}, b"x", [1], compact=True)
    assert whole["boundaries"] == {"every": 1}  # one byte, one read: the same thing


@pytest.mark.parametrize(
    ("sent", "size", "ends"),
    [
        ({"every": 1}, 5, [1, 2, 3, 4, 5]),
        ({"every": 2}, 5, [2, 4, 5]),
        ({"every": 9}, 5, [5]),
        ({"every": 1}, 0, []),
        ([3, 5], 5, [3, 5]),
    ],
)
def test_the_worker_reads_both_forms(sent: object, size: int, ends: list[int]) -> None:
    assert _ends(sent, size) == ends


@pytest.mark.parametrize("step", [0, -1, 1.5, True, "1", None])
def test_a_bad_compact_form_is_a_crash_reply_not_a_dead_worker(step: object) -> None:
    lines = [
        {"cmd": "start", "protocol": 1},
        {
            "cmd": "run", "seq": 1, "case": "c", "transport": "bytes", "status": 200,
            "headers": {"content-type": "text/event-stream"}, "request": {"stream": True},
            "body": "ZGF0YTogW0RPTkVdCgo=", "boundaries": {"every": step},
        },
        {"cmd": "stop"},
    ]  # fmt: skip
    out = io.StringIO()
    assert serve("reference", io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out) == 0
    hello, reply = (json.loads(line) for line in out.getvalue().splitlines())
    assert hello["compact_boundaries"] is True
    assert reply["seq"] == 1
    assert reply["crash"].startswith("protocol: boundaries")


def test_the_handshake_decides_and_the_verdict_is_the_same() -> None:
    process = AdapterProcess("reference")
    process.start()
    try:
        assert process.compact_boundaries
    finally:
        process.close()
    case = next(c for c in load_corpus().cases if c.id == "generic/finish-without-done")
    engine = Engine("reference", seed=1)
    try:
        assert engine.run(case, "bytes").verdict is Verdict.PASS
        engine.process.compact_boundaries = False  # as for an adapter that does not say so
        assert engine.run(case, "bytes").verdict is Verdict.PASS
    finally:
        engine.close()


def test_a_worker_that_does_not_say_so_gets_the_list() -> None:
    process = AdapterProcess("reference")
    process._handshake({"name": "x", "version": "1"})
    assert process.compact_boundaries is False
