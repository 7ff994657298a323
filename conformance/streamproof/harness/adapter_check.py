"""``streamproof check-adapter``: does an adapter speak the protocol?

A fixed script of protocol situations (docs/protocol.md) is played against
one adapter command, each with what the protocol requires and what the
adapter did. Only the protocol is judged, never the parser: an outcome that
would fail a case is fine, a reply that is not a strict JSON object, or that
answers another ``seq``, is not.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import spawn
from .capture import OutputCapture, last_meaningful_line
from .lines import MAX_REPLY, LineReader, LineTooLong, ReadTimeout, StreamClosed
from .loader import CAPABILITIES, AdapterError
from .protocol import MIN_START_TIMEOUT, Trace, process_for
from .strict_json import NotStrictJSON, loads

__all__ = ["Check", "check_adapter"]

# How long a process gets to end after "stop" or the end of its stdin.
EXIT_LIMIT = 3.0
# How long the check watches a process after a reply for a late line or a death.
SETTLE = 0.5


@dataclass(frozen=True)
class Check:
    """One required behaviour: what the protocol asks, what the adapter did."""

    rule: str
    requires: str
    did: str
    ok: bool


class _Child:
    """One adapter process, driven a message at a time."""

    def __init__(self, argv: list[str], trace: Trace | None) -> None:
        try:
            self.proc = spawn.Child(argv)  # ends with everything it started (spawn.py)
        except OSError as exc:
            raise AdapterError(f"cannot start {argv[0]!r}: {exc}") from None
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.trace = trace
        self.lines = LineReader(self.proc.stdout.fileno(), MAX_REPLY)
        self.capture = OutputCapture(os.dup(self.proc.stderr.fileno()))
        self.proc.stderr.close()

    def send(self, message: dict[str, Any], timeout: float) -> str:
        """Write one line; what went wrong, or ``""``."""
        data = json.dumps(message).encode() + b"\n"
        if self.trace is not None:
            self.trace("to-adapter", self.proc.pid, data)
        assert self.proc.stdin is not None
        fd, view = self.proc.stdin.fileno(), memoryview(data)
        deadline = time.monotonic() + timeout
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return f"did not read its stdin within {timeout:g} s"
            if not select.select([], [fd], [], remaining)[1]:
                continue
            try:
                view = view[os.write(fd, view[: 1 << 16]) :]
            except OSError:
                return self.died()
        return ""

    def receive(self, timeout: float) -> tuple[Any, str]:
        """The next line, decoded: (value, ``""``), or (None, why there is none)."""
        try:
            line = self.lines.read_line(time.monotonic() + timeout)
        except ReadTimeout:
            return None, f"no reply within {timeout:g} s"
        except StreamClosed:
            return None, self.died()
        except LineTooLong:
            return None, f"a reply longer than {MAX_REPLY} bytes"
        if self.trace is not None:
            self.trace("from-adapter", self.proc.pid, line)
        try:
            value = loads(line)
        except (NotStrictJSON, ValueError, RecursionError) as exc:
            return None, f"wrote a line that is not strict JSON ({exc}): {line[:80]!r}"
        if not isinstance(value, dict):
            return None, f"wrote a JSON line that is not an object: {line[:80]!r}"
        return value, ""

    def died(self) -> str:
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "closed its stdout but kept running"
        last = last_meaningful_line(self.capture.tail())
        return f"exited (code {code})" + (f": {last}" if last else "")

    def exits_within(self, seconds: float) -> int | None:
        try:
            return self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        self.proc.kill()
        self.capture.close()


# -- the cases the script sends --------------------------------------------


def _sse(*pieces: str) -> bytes:
    events = [
        {"id": "chk", "object": "chat.completion.chunk", "model": "check", "choices": [c]}
        for c in [{"index": 0, "delta": {"role": "assistant", "content": ""}}]
        + [{"index": 0, "delta": {"content": p}} for p in pieces]
        + [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    ]
    text = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events)
    return (text + "data: [DONE]\n\n").encode()


SMALL = _sse("Hello", " world")
# A data line cut inside its JSON: a parser that raises on it makes a crash reply.
BROKEN = b'data: {"choices": [{"index": 0, "delta": {"content": "Hel\n\ndata: [DONE]\n\n'
LARGE = _sse(*(f"piece {i:05d} of a long answer. " for i in range(4000)))
UNICODE = _sse("héllo wörld — ", "世界 ", "🎉")


def _lines(body: bytes) -> list[int]:
    return [i + 1 for i, byte in enumerate(body) if byte == 0x0A] or ([len(body)] if body else [])


def _inside_characters(body: bytes) -> list[int]:
    """Ends just after the first byte of every multi-byte character, and the end."""
    cuts = [i + 1 for i, byte in enumerate(body) if byte >= 0xC0]
    return [*cuts, len(body)]


def _run(seq: int, name: str, transport: str, body: bytes, ends: list[int]) -> dict[str, Any]:
    return {
        "cmd": "run",
        "seq": seq,
        "case": f"check-adapter/{name}",
        "transport": transport,
        "status": 200,
        "headers": {"content-type": "text/event-stream"},
        "request": {"model": "check", "stream": True, "messages": []},
        "body": base64.b64encode(body).decode("ascii"),
        "boundaries": ends,
    }


# -- judging replies -------------------------------------------------------


def _judge_reply(reply: Any, why: str, seq: int) -> tuple[bool, str]:
    """Whether a reply to the message ``seq`` is well formed, and what it was."""
    if reply is None:
        return False, why
    if reply.get("seq") != seq:
        got = json.dumps(reply["seq"])[:40] if "seq" in reply else "none"
        return False, f"replied with seq {got} to the message with seq {seq}"
    if "outcome" in reply:
        outcome = reply["outcome"]
        if not isinstance(outcome, dict):
            return False, f"replied with an outcome that is {type(outcome).__name__}, not an object"
        return True, f"outcome (status {json.dumps(outcome.get('status'))[:40]})"
    if "crash" in reply:
        if not isinstance(reply["crash"], str):
            return False, "replied with a crash that is not a string"
        return True, f"crash: {' '.join(reply['crash'].split())[:100]}"
    if "invalid" in reply:
        return True, f"invalid: {' '.join(str(reply['invalid']).split())[:100]}"
    return False, f"replied with neither outcome nor crash: {json.dumps(reply)[:100]}"


def _handshake(hello: dict[str, Any]) -> Iterator[Check]:
    name, version = hello.get("name"), hello.get("version")
    yield Check(
        "name",
        "the handshake names the adapter: a non-empty string",
        f"name {json.dumps(name)[:80]}" if "name" in hello else "no name",
        isinstance(name, str) and bool(name.strip()),
    )
    yield Check(
        "version",
        "the handshake MUST give the parser's version: a non-empty string",
        f"version {json.dumps(version)[:80]}" if "version" in hello else "no version",
        isinstance(version, str) and bool(version.strip()),
    )
    declared = hello.get("capabilities")
    names = declared if isinstance(declared, list) else [None]
    good = all(isinstance(c, str) for c in names)
    unknown = sorted(set(names) - CAPABILITIES) if good else []
    yield Check(
        "capabilities",
        "the handshake lists the capabilities the parser exposes, by known names",
        (f"unknown names {unknown}" if unknown else f"capabilities {json.dumps(declared)[:100]}")
        if "capabilities" in hello
        else "no capabilities",
        good and not unknown,
    )
    protocol = hello.get("protocol", 1)
    yield Check(
        "protocol",
        "the handshake's protocol, if given, is 1",
        f"protocol {json.dumps(protocol)[:40]}" if "protocol" in hello else "no protocol (1)",
        protocol == 1 and not isinstance(protocol, bool),
    )
    call = hello.get("call", False)
    yield Check(
        "call",
        "the handshake's call, if given, is true or false",
        f"call {json.dumps(call)[:40]}" if "call" in hello else "no call (false)",
        isinstance(call, bool),
    )


class _Script:
    """The script's state: the process now served, the next seq."""

    def __init__(self, spec: str, timeout: float, trace: Trace | None) -> None:
        self.argv = process_for(spec)
        self.timeout = timeout
        self.start_timeout = max(timeout, MIN_START_TIMEOUT)
        self.trace = trace
        self.seq = 7  # not 1, and steps of 5: an adapter that counts for itself shows
        self.child: _Child | None = None

    def started(self) -> tuple[_Child, Any, str]:
        """A fresh child and its handshake (or None and why not)."""
        if self.child is not None:
            self.child.close()
        child = self.child = _Child(self.argv, self.trace)
        why = child.send({"cmd": "start", "protocol": 1}, self.start_timeout)
        if why:
            return child, None, why
        hello, why = child.receive(self.start_timeout)
        if hello is not None and "error" in hello:
            raise AdapterError(f"the adapter refused to start: {hello['error']}")
        return child, hello, why

    def case(self, name: str, transport: str, body: bytes, ends: list[int]) -> tuple[bool, str]:
        """Send one case to a live child (restarted if needed): well answered?, what it did."""
        if self.child is None or self.child.proc.poll() is not None:
            _, hello, why = self.started()
            if hello is None:
                return False, f"(restarted after the last check) {why}"
        assert self.child is not None
        self.seq += 5
        why = self.child.send(_run(self.seq, name, transport, body, ends), self.timeout)
        if why:
            self.close()
            return False, why
        reply, why = self.child.receive(self.timeout)
        ok, did = _judge_reply(reply, why, self.seq)
        if not ok:  # as a run does: a child that broke the protocol is not trusted again
            self.close()
        return ok, did

    def close(self) -> None:
        if self.child is not None:
            self.child.close()
            self.child = None


def check_adapter(
    spec: str, *, timeout: float = 10.0, trace: Trace | None = None
) -> Iterator[Check]:
    """Play the script against ``spec``, one ``Check`` per required behaviour.

    ``AdapterError`` when the command cannot start at all or refuses to.
    """
    script = _Script(spec, timeout, trace)
    try:
        yield from _play(script)
    finally:
        script.close()


def _play(script: _Script) -> Iterator[Check]:
    child, hello, why = script.started()
    yield Check(
        "handshake",
        f"answers start with one strict JSON object line within {script.start_timeout:g} s",
        why or json.dumps(hello, ensure_ascii=False)[:160],
        hello is not None,
    )
    if hello is None:
        return
    yield from _handshake(hello)

    ok, did = script.case("seq", "lines", SMALL, _lines(SMALL))
    yield Check(
        "seq", "answers every run with its seq and an outcome object or a crash string", did, ok
    )

    pid = child.proc.pid
    ok_crash, did_crash = script.case("broken-json", "lines", BROKEN, _lines(BROKEN))
    ok, did = script.case("after-broken", "whole", SMALL, [len(SMALL)])
    same = script.child is not None and script.child.proc.pid == pid
    yield Check(
        "keeps-serving",
        "answers a case its parser fails on (a crash is fine), then keeps serving",
        f"{did_crash}; then, {'' if same else 'in a new process, '}{did}",
        ok_crash and ok and same,
    )

    for rule, requires, name, transport, body, ends in (
        ("empty-body", "answers an empty body (no reads)", "empty", "whole", b"", []),
        (
            "large-body",
            f"answers a body of {len(LARGE) // 1024} KiB in one read",
            "large",
            "whole",
            LARGE,
            [len(LARGE)],
        ),
        (
            "tiny-reads",
            f"answers {len(SMALL)} reads of one byte each",
            "tiny",
            "bytes",
            SMALL,
            list(range(1, len(SMALL) + 1)),
        ),
        (
            "non-ascii",
            "answers a body whose UTF-8 characters are split across reads",
            "unicode",
            "random",
            UNICODE,
            _inside_characters(UNICODE),
        ),
    ):
        ok, did = script.case(name, transport, body, ends)
        yield Check(rule, requires, did, ok)

    yield _quiet(script)
    yield from _endings(script)


def _quiet(script: _Script) -> Check:
    """After a reply, nothing on stdout and no death until the next message."""
    requires = (
        f"after a reply, writes nothing on stdout and stays alive ({SETTLE:g} s watched); "
        "a late error belongs on stderr or in the case's own reply"
    )
    ok, did = script.case("quiet", "whole", SMALL, [len(SMALL)])
    if not ok or script.child is None:
        return Check("quiet-after-reply", requires, f"(the case itself) {did}", False)
    child = script.child
    time.sleep(SETTLE)
    if child.lines.waiting():
        late, why = child.receive(0.2)
        shown = json.dumps(late)[:100] if late is not None else why
        return Check("quiet-after-reply", requires, f"then wrote a line: {shown}", False)
    if child.proc.poll() is not None:
        return Check("quiet-after-reply", requires, f"then {child.died()}", False)
    return Check("quiet-after-reply", requires, "nothing more", True)


def _endings(script: _Script) -> Iterator[Check]:
    child = script.child
    if child is None or child.proc.poll() is not None:
        child, _, _ = script.started()
    child.send({"cmd": "stop"}, EXIT_LIMIT)
    code = child.exits_within(EXIT_LIMIT)
    yield Check(
        "stop",
        f"exits within {EXIT_LIMIT:g} s of a stop",
        f"still running after {EXIT_LIMIT:g} s" if code is None else f"exited (code {code})",
        code is not None,
    )
    child, hello, why = script.started()
    if hello is None:
        yield Check("stdin-closed", "exits when its stdin closes", f"(restarting) {why}", False)
        return
    assert child.proc.stdin is not None
    child.proc.stdin.close()
    code = child.exits_within(EXIT_LIMIT)
    yield Check(
        "stdin-closed",
        f"exits within {EXIT_LIMIT:g} s of its stdin closing",
        f"still running after {EXIT_LIMIT:g} s" if code is None else f"exited (code {code})",
        code is not None,
    )
