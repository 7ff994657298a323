"""Whatever an adapter writes back, the harness reads a reply or a crash.

Random bytes and random JSON lines are fed, in-process, to the harness's
side of the protocol through a stand-in child whose stdout is an ``os.pipe``
the test filled: every example ends in a ``Reply`` (an outcome, a crash or
an invalid outcome), never an exception, a timeout or a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamproof.harness.lines import LineReader, LineTooLong, StreamClosed
from streamproof.harness.protocol import AdapterProcess, Reply

HELLO = b'{"name": "fake", "version": "1"}\n'
MESSAGE = {"cmd": "run", "case": "c", "transport": "whole", "status": 200, "headers": {}}
SMALL_CAP = 512


class FakeChild:
    """Stands in for the adapter's ``spawn.Child``: it already wrote ``output`` and exited."""

    def __init__(self, output: bytes) -> None:
        out_r, out_w = os.pipe()
        self.writer = threading.Thread(target=self._write, args=(out_w, output), daemon=True)
        self.writer.start()
        in_r, in_w = os.pipe()
        self.stdout = os.fdopen(out_r, "rb")
        self.stdin = os.fdopen(in_w, "wb")
        self.unread = in_r  # what the harness sends lands here, unread
        self.pid = -1

    @staticmethod
    def _write(fd: int, output: bytes) -> None:
        # A thread: more than a pipe's capacity blocks until the harness reads.
        with contextlib.suppress(OSError):  # the harness stopped reading (a crash)
            os.write(fd, output)
        os.close(fd)

    def poll(self) -> int:
        return 0

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def kill(self) -> None:
        os.close(self.unread)
        self.stdin.close()
        self.stdout.close()  # a writer still blocked gets EPIPE

    def abandon(self) -> None:
        pass
        self.writer.join()


class FakeAdapter(AdapterProcess):
    """An adapter process whose children are ``FakeChild``: the first one says
    ``first`` after the handshake, the ones after a restart just shake hands."""

    def __init__(self, first: bytes, max_reply: int = SMALL_CAP) -> None:
        self.outputs = [HELLO + first]
        super().__init__("cmd:fake-adapter", max_reply=max_reply)

    def _spawn(self) -> None:
        child = FakeChild(self.outputs.pop(0) if self.outputs else HELLO)
        self._proc = child
        self._lines = LineReader(child.stdout.fileno(), self.max_reply)


def exchange(output: bytes, max_reply: int = SMALL_CAP) -> Reply:
    adapter = FakeAdapter(output, max_reply)
    adapter.start()
    started = time.monotonic()
    try:
        reply = adapter.run(dict(MESSAGE), timeout=10.0)
    finally:
        adapter.close()
    assert time.monotonic() - started < 10.0  # the reply came, not the deadline
    return reply


def assert_clean(reply: Any) -> None:
    assert isinstance(reply, Reply)
    assert reply.kind in ("outcome", "crash", "invalid"), reply
    if reply.kind != "outcome":
        assert reply.message and "\n" not in reply.message


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_are_a_reply_or_a_crash(data: bytes) -> None:
    assert_clean(exchange(data))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
replies = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"seq": st.one_of(st.just(1), json_values)},
        optional={"outcome": json_values, "crash": json_values, "invalid": json_values},
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(replies, max_size=3), st.sampled_from([b"", b"\n", b"{", b"[" * 5000]))
def test_random_json_lines_are_a_reply_or_a_crash(lines: list[Any], tail: bytes) -> None:
    output = b"".join(json.dumps(v).encode() + b"\n" for v in lines) + tail
    assert_clean(exchange(output))


def test_a_well_formed_reply_is_an_outcome() -> None:
    reply = exchange(b'{"seq": 1, "outcome": {"status": "complete"}}\n')
    assert reply == Reply("outcome", outcome={"status": "complete"})


def test_a_reply_nested_too_deeply_is_a_crash() -> None:
    reply = exchange(b"[" * 100_000 + b"\n", max_reply=1 << 20)
    assert reply.kind == "crash"
    assert "nested" in reply.message


def test_a_reply_over_the_cap_is_a_crash_naming_the_cap() -> None:
    reply = exchange(b'{"seq": 1, "outcome": "' + b"x" * SMALL_CAP + b'"}\n')
    assert reply.kind == "crash"
    said = f"protocol: reply longer than the maximum reply size ({SMALL_CAP} bytes)"
    assert reply.message == said


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=400))
def test_the_line_reader_splits_as_bytes_split_does(data: bytes, cap: int) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    reader = LineReader(read_end, max_reply=cap)
    *complete, rest = data.split(b"\n")
    try:
        for expected in complete:
            if len(expected) > cap:
                with pytest.raises(LineTooLong):
                    reader.read_line(time.monotonic() + 10)
                return
            assert reader.read_line(time.monotonic() + 10) == expected
        with pytest.raises(LineTooLong if len(rest) > cap else StreamClosed):
            reader.read_line(time.monotonic() + 10)
    finally:
        os.close(read_end)
