"""The harness side of the subprocess protocol (CONTRACT §4).

One ``AdapterProcess`` owns one persistent child: it starts it, shakes hands,
sends a case, waits for the reply under a deadline, and kills and restarts
the child when it hangs, dies or breaks the protocol. Every in-process Python
adapter runs this way too, through ``streamproof.harness.worker``.

POSIX only: replies are read with ``select`` so that a deadline holds even
when the child stops writing halfway through a line.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from . import nodejs
from .loader import CAPABILITIES, AdapterError
from .strict_json import NotStrictJSON, reject_constant

__all__ = ["AdapterProcess", "Reply", "process_for"]

# Importing a large SDK in a fresh interpreter can take seconds on a busy
# machine; the handshake gets this long before the adapter is declared dead.
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Reply:
    """What came back for one case: an outcome, or why there is none."""

    kind: str  # "outcome", "crash", "timeout", "invalid"
    outcome: Any = None
    message: str = ""


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

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.argv = process_for(spec)
        self.name = spec
        self.version = "unknown"
        self.capabilities: frozenset[str] = frozenset(CAPABILITIES)
        self.supports_call = False
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._buffer = b""
        self._seq = 0

    # -- life cycle -------------------------------------------------------

    def start(self) -> None:
        """Start the child and read its handshake; ``AdapterError`` if it cannot."""
        self._spawn()
        try:
            hello = self._exchange({"cmd": "start", "protocol": 1}, START_TIMEOUT, seq=None)
        except _Dead as dead:
            self.close()
            raise AdapterError(f"{self.spec}: {dead.reply.message}") from None
        if "error" in hello:
            self.close()
            raise AdapterError(str(hello["error"]))
        self._handshake(hello)

    def _handshake(self, hello: dict[str, Any]) -> None:
        self.name = str(hello.get("name") or self.spec)
        self.version = str(hello.get("version") or "unknown")
        declared = hello.get("capabilities")
        if declared is not None:
            unknown = sorted(set(declared) - CAPABILITIES)
            if unknown:
                self.close()
                raise AdapterError(f"{self.spec}: unknown capabilities {unknown}")
            self.capabilities = frozenset(declared)
        self.supports_call = bool(hello.get("call", False))

    def _spawn(self) -> None:
        # A file, not a pipe: nobody has to drain it, so a chatty adapter never blocks.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,  # a kill reaches the adapter's own children too
            )
        except OSError as exc:
            raise AdapterError(f"{self.spec}: cannot start {self.argv[0]!r}: {exc}") from None
        self._buffer = b""

    def close(self) -> None:
        """Ask the child to stop, then make sure it has."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(b'{"cmd": "stop"}\n')
                proc.stdin.flush()
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._discard()

    def _discard(self) -> None:
        """Kill the child if it still runs and release everything it held."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                _kill(proc)
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _restart(self) -> None:
        self._discard()
        self.restarts += 1
        self.start()

    # -- one case ---------------------------------------------------------

    def run(self, message: dict[str, Any], timeout: float) -> Reply:
        """Send one ``run`` (or ``call``) message; never raises for the child's faults."""
        if self._proc is None:
            self.start()
        self._seq += 1
        try:
            reply = self._exchange(message, timeout, seq=self._seq)
        except _Dead as dead:
            self._restart()
            return dead.reply
        if "crash" in reply:
            return Reply("crash", message=" ".join(str(reply["crash"]).split()))
        if "invalid" in reply:
            return Reply("invalid", message=str(reply["invalid"]))
        if "outcome" not in reply:
            self._restart()
            return Reply("crash", message=f"protocol: reply without outcome or crash: {reply!r}")
        return Reply("outcome", outcome=reply["outcome"])

    def _exchange(
        self, message: dict[str, Any], timeout: float, *, seq: int | None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        if seq is not None:
            message = {**message, "seq": seq}
        self._write(json.dumps(message).encode() + b"\n", deadline, timeout)
        while True:
            line = self._read_line(deadline, timeout)
            try:
                reply = json.loads(line, parse_constant=reject_constant)
            except NotStrictJSON as exc:  # NaN or Infinity: not JSON, whatever Python accepts
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
            # A late reply to a case that already timed out: skip it.

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
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Dead(Reply("timeout", message=f"no reply within {timeout:g} s"))
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                raise _Dead(self._death())
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _death(self) -> Reply:
        proc = self._proc
        assert proc is not None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        last = self._last_stderr_line()
        said = f": {last}" if last else ""
        return Reply("crash", message=f"adapter process died (exit code {code}){said}")

    def _last_stderr_line(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = [
            x.strip()
            for x in self._stderr.read()[-4096:].decode(errors="replace").splitlines()
            if x.strip()
        ]
        return lines[-1][:200] if lines else ""


def run_message(
    case_id: str,
    transport: str,
    status: int,
    headers: dict[str, str],
    request: dict[str, Any],
    body: bytes,
    ends: list[int],
) -> dict[str, Any]:
    """The ``run`` message of one case under one transport."""
    return {
        "cmd": "run",
        "case": case_id,
        "transport": transport,
        "status": status,
        "headers": headers,
        "request": request,
        "body": base64.b64encode(body).decode("ascii"),
        "boundaries": ends,
    }


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
