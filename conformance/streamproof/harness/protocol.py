"""The harness side of the subprocess protocol (docs/protocol.md).

One ``AdapterProcess`` owns one persistent child: it starts it, shakes hands,
sends a case, waits for the reply under a deadline, and kills and restarts
the child when it hangs, dies or breaks the protocol. Every in-process Python
adapter runs this way too, through ``streamproof.harness.worker``.

POSIX only: replies are read with ``select`` so that a deadline holds even
when the child stops writing halfway through a line. Every child is started
by ``spawn.Child``: on Linux below a supervisor that ends it and everything it
started whenever it stops (a normal end, a timeout, a death, an interrupt, the
harness's own death however it comes), elsewhere in a process group of its
own that is killed whole.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import nodejs, spawn
from .capture import OutputCapture, last_meaningful_line
from .crash_site import Frame, at_byte_from, frames_from
from .lines import MAX_REPLY, LineReader, LineTooLong, ReadTimeout, StreamClosed
from .loader import CAPABILITIES, V1_CAPABILITIES, AdapterError
from .strict_json import NotStrictJSON, loads

__all__ = ["MAX_REPLY", "AdapterProcess", "Reply", "Trace", "close_all", "process_for"]

# Told of every protocol line: ("to-adapter" or "from-adapter", the child's pid, the line).
Trace = Callable[[str, int, bytes], None]

# Importing a large SDK in a fresh interpreter can take seconds on a busy
# machine; the handshake gets this long before the adapter is declared dead.
# A run's --timeout replaces it, but a handshake always gets at least
# MIN_START_TIMEOUT: a case's time limit is about parsing, and a start that a
# loaded CI machine slows to a few seconds must not fail every restart.
START_TIMEOUT = 60.0
MIN_START_TIMEOUT = 10.0


def close_all() -> None:
    """End every live adapter child and all it started, without waiting.

    For the interpreter's exit (registered with ``atexit``) and for signal
    handlers: it waits for nothing, so it is safe anywhere.
    """
    spawn.close_all()


atexit.register(close_all)


# A crash's traceback is kept up to this many characters (its innermost end).
TRACEBACK_LIMIT = 16 * 1024


@dataclass(frozen=True)
class Reply:
    """What came back for one case: an outcome, or why there is none."""

    kind: str  # "outcome", "crash", "timeout", "invalid"
    outcome: Any = None
    message: str = ""
    output: str = ""  # what the adapter printed while it ran this case (bounded)
    traceback: str = ""  # where the adapter raised, for a crash it reported
    frames: tuple[Frame, ...] = ()  # the same place as frames, outermost first (crash_site)
    at_byte: int | None = None  # body bytes the adapter had been handed when it raised


class _Dead(Exception):
    """The child died, hung or broke the protocol; ``reply`` says how."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.message)
        self.reply = reply


def process_for(spec: str) -> list[str]:
    """The command that serves ``spec``: ``cmd:…`` as given, anything else in our worker."""
    if spec.startswith("cmd:"):
        argv = shlex.split(spec[4:])
        if not argv:
            raise AdapterError("cmd: needs a command, e.g. cmd:node adapter.mjs")
        return argv
    node = nodejs.command_for(spec)  # a built-in Node adapter, run by the cached runtime
    if node is not None:
        return node
    return [sys.executable, "-m", "streamproof.harness.worker", spec]


class AdapterProcess:
    """A persistent adapter child, restarted whenever it misbehaves."""

    def __init__(
        self,
        spec: str,
        *,
        timeout: float | None = None,
        start_timeout: float | None = None,
        max_reply: int = MAX_REPLY,
        trace: Trace | None = None,
    ) -> None:
        """``timeout`` is the run's per-case timeout (``--timeout``), from which
        the handshake's follows; ``start_timeout`` sets the handshake's exactly."""
        self.spec = spec
        self.argv = process_for(spec)
        self.name = spec
        self.version = "unknown"
        self.capabilities: frozenset[str] = V1_CAPABILITIES  # none declared: the first fourteen
        self.supports_call = False
        # The worker reads {"every": 1} for the bytes transport's boundaries (docs/adapters.md).
        self.compact_boundaries = False
        self.restarts = 0
        if start_timeout is None:
            start_timeout = START_TIMEOUT if timeout is None else max(timeout, MIN_START_TIMEOUT)
        self.start_timeout = start_timeout
        self.max_reply = max_reply
        self.trace = trace
        # What the adapter did between two cases (died, wrote a line no message
        # asked for): faults of the adapter, charged to no case.
        self.faults: list[str] = []
        self._after = ""  # "after its reply to CASE": the last reply, for those faults
        # Set when a restart failed: every later case is a crash saying why.
        self.broken = ""
        self._proc: Any = None  # a spawn.Child (tests give a stand-in)
        self._capture: OutputCapture | None = None
        self._lines: LineReader | None = None
        self._seq = 0

    # -- life cycle -------------------------------------------------------

    def start(self) -> None:
        """Start the child and read its handshake; ``AdapterError`` if it cannot."""
        self._spawn()
        try:
            hello = self._converse({"cmd": "start", "protocol": 1}, self.start_timeout, seq=None)
        except _Dead as dead:
            self._discard()  # it hung, died or broke the protocol: no polite stop
            raise AdapterError(f"{self.spec}: {dead.reply.message}") from None
        if "error" in hello:
            self.close()
            raise AdapterError(str(hello["error"]))
        self._handshake(hello)

    def _handshake(self, hello: dict[str, Any]) -> None:
        version = hello.get("version")
        if not isinstance(version, str) or not version.strip():
            self.close()
            got = "none" if version is None else json.dumps(version)[:80]
            raise AdapterError(
                f"{self.spec}: the handshake MUST name the adapter's version "
                f'("version": a non-empty string), got {got} (docs/protocol.md)'
            )
        self.name = str(hello.get("name") or self.spec)
        self.version = version
        declared = hello.get("capabilities")
        if declared is not None:
            if not isinstance(declared, list) or not all(isinstance(c, str) for c in declared):
                self.close()
                raise AdapterError(
                    f"{self.spec}: the handshake's capabilities must be a list of names, "
                    f"got {json.dumps(declared)[:80]}"
                )
            unknown = sorted(set(declared) - CAPABILITIES)
            if unknown:
                self.close()
                raise AdapterError(f"{self.spec}: unknown capabilities {unknown}")
            self.capabilities = frozenset(declared)
        self.supports_call = bool(hello.get("call", False))
        self.compact_boundaries = hello.get("compact_boundaries") is True

    def _spawn(self) -> None:
        try:
            # stderr is a pipe drained by a thread into a bounded ring: a
            # chatty adapter never blocks, and nothing grows on disk.
            proc = spawn.Child(self.argv)
        except OSError as exc:
            raise AdapterError(f"{self.spec}: cannot start {self.argv[0]!r}: {exc}") from None
        self._proc = proc
        assert proc.stdout is not None and proc.stderr is not None
        self._lines = LineReader(proc.stdout.fileno(), self.max_reply)
        # The capture owns the descriptor from here on and closes it.
        self._capture = OutputCapture(os.dup(proc.stderr.fileno()))
        proc.stderr.close()

    def close(self) -> None:
        """Ask the child to stop, then make sure it has."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                assert proc.stdin is not None
                self._traced("to-adapter", b'{"cmd": "stop"}\n')
                proc.stdin.write(b'{"cmd": "stop"}\n')
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()

    def _discard(self) -> None:
        """End the child and everything it started, and release everything it held.

        Done even when the child already exited: whatever the adapter started
        (a server, a helper, a ``sleep``) dies with it.
        """
        proc, self._proc = self._proc, None
        self._after = ""
        if proc is not None:
            proc.kill()
        if self._capture is not None:
            self._capture.close()
            self._capture = None
        self._lines = None

    def interrupt(self, why: str) -> None:
        """From another thread: kill the child's group now, and start no other.

        The case under way (in the thread that runs it) ends as a crash, and
        so does every later one, saying ``why``. It takes no lock and touches
        nothing the running thread uses, so it is safe while a case runs.
        """
        self.broken = why
        proc = self._proc
        if proc is not None:
            proc.abandon()

    def _restart(self) -> None:
        """A fresh child; if it cannot start, every later case is a crash saying so."""
        self._discard()
        if self.broken:  # interrupted: no child after that
            return
        self.restarts += 1
        try:
            self.start()
        except AdapterError as exc:
            self.broken = f"the adapter could not be restarted: {exc}"

    # -- one case ---------------------------------------------------------

    def run(self, message: dict[str, Any], timeout: float) -> Reply:
        """Send one ``run`` (or ``call``) message; never raises for the child's faults."""
        if self.broken:
            return Reply("crash", message=self.broken)
        self._settle()
        if self.broken:  # the restart after a fault failed, or the run was interrupted
            return Reply("crash", message=self.broken)
        if self._proc is None:
            self.start()
        self._seq += 1
        mark = self._capture.mark() if self._capture is not None else 0
        try:
            reply = self._converse(message, timeout, seq=self._seq)
        except _Dead as dead:
            output = self._output(mark)
            self._restart()
            return replace(dead.reply, output=output)
        output = self._output(mark)
        self._after = f"after its reply to {message.get('case') or f'message {self._seq}'}"
        if "crash" in reply:
            crash = _one_line(reply["crash"]) or "the adapter reported a crash with no message"
            frames = reply.get("traceback")
            shown = frames[-TRACEBACK_LIMIT:] if isinstance(frames, str) else ""
            return Reply(
                "crash",
                message=crash,
                output=output,
                traceback=shown,
                frames=frames_from(reply.get("frames")),
                at_byte=at_byte_from(reply.get("at_byte")),
            )
        if "invalid" in reply:
            invalid = _one_line(reply["invalid"]) or "the adapter's outcome is invalid"
            return Reply("invalid", message=invalid, output=output)
        if "outcome" not in reply:
            self._restart()
            shown = repr(reply)[:200]
            return Reply(
                "crash", message=f"protocol: reply without outcome or crash: {shown}", output=output
            )
        return Reply("outcome", outcome=reply["outcome"], output=output)

    def _settle(self) -> None:
        """Before a case: a fault since the last reply is the adapter's, not this case's.

        A child that died after its last reply, or wrote a line no message
        asked for (a late error, a second reply), is restarted now, and the
        fault is kept in ``faults`` naming the case it followed; the case
        about to run starts on a healthy child and is not charged with it.
        """
        proc, lines = self._proc, self._lines
        if proc is None or lines is None or not self._after:
            return
        if proc.poll() is None and not lines.waiting():
            return
        after = self._after
        try:
            line = lines.read_line(time.monotonic() + 0.2)
        except (ReadTimeout, StreamClosed, LineTooLong):
            line = None
        if line is not None:
            self._traced("from-adapter", line)
            fault = f"{after}, the adapter wrote a line no message asked for: {line[:120]!r}"
        else:
            fault = f"{after}, the {self._death().message}"
        self.faults.append(fault)
        self._after = ""
        self._restart()

    def _traced(self, direction: str, line: bytes) -> None:
        if self.trace is not None and self._proc is not None:
            self.trace(direction, self._proc.pid, line)

    def _output(self, mark: int) -> str:
        return self._capture.since(mark) if self._capture is not None else ""

    def _converse(
        self, message: dict[str, Any], timeout: float, *, seq: int | None
    ) -> dict[str, Any]:
        """``_exchange``; a reply nested too deeply to decode breaks the protocol too."""
        try:
            return self._exchange(message, timeout, seq=seq)
        except RecursionError:
            raise _Dead(Reply("crash", message="protocol: reply nested too deeply")) from None

    def _exchange(
        self, message: dict[str, Any], timeout: float, *, seq: int | None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        if seq is not None:
            message = {**message, "seq": seq}
        data = json.dumps(message).encode() + b"\n"
        self._traced("to-adapter", data)
        self._write(data, deadline, timeout)
        while True:
            line = self._read_line(deadline, timeout)
            self._traced("from-adapter", line)
            try:
                reply = loads(line)
            except NotStrictJSON as exc:  # NaN, Infinity, 1e400: not JSON, whatever Python reads
                raise _Dead(
                    Reply("crash", message=f"protocol: reply is not strict JSON: {exc}")
                ) from None
            except ValueError:
                raise _Dead(
                    Reply("crash", message=f"protocol: not a JSON line: {line[:80]!r}")
                ) from None
            if not isinstance(reply, dict):
                raise _Dead(Reply("crash", message=f"protocol: not an object: {line[:80]!r}"))
            if seq is None or reply.get("seq") == seq:
                return reply
            # Not a late reply to an earlier case: a timeout restarts the
            # child, so none can come. Waiting on would only end in a timeout.
            got = f"seq {json.dumps(reply['seq'])[:40]}" if "seq" in reply else "no seq"
            raise _Dead(Reply("crash", message=f"protocol: reply with {got}, expected seq {seq}"))

    def _write(self, data: bytes, deadline: float, timeout: float) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        fd = proc.stdin.fileno()
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Dead(Reply("timeout", message=f"no progress within {timeout:g} s"))
            _, ready, _ = select.select([], [fd], [], remaining)
            if not ready:
                continue
            try:
                written = os.write(fd, view[: 1 << 16])
            except (BrokenPipeError, OSError):
                raise _Dead(self._death()) from None
            view = view[written:]

    def _read_line(self, deadline: float, timeout: float) -> bytes:
        assert self._lines is not None
        try:
            return self._lines.read_line(deadline)
        except ReadTimeout:
            raise _Dead(Reply("timeout", message=f"no reply within {timeout:g} s")) from None
        except StreamClosed:
            raise _Dead(self._death()) from None
        except LineTooLong:
            raise _Dead(
                Reply(
                    "crash",
                    message=f"protocol: reply longer than the maximum reply size "
                    f"({self.max_reply} bytes)",
                )
            ) from None

    def _death(self) -> Reply:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        last = last_meaningful_line(self._capture.tail()) if self._capture is not None else ""
        said = f": {last}" if last else ""
        return Reply("crash", message=f"adapter process died (exit code {code}){said}")


def _one_line(said: Any) -> str:
    return " ".join(str(said).split())
