"""A timed exchange with an adapter's process, for cost verdicts.

``harness.protocol.AdapterProcess`` is built to survive any adapter, not to
time one: it reads a reply by appending to a ``bytes`` buffer and searching
all of it for the line end after every read, which costs time quadratic in
the reply's size (an outcome that carries 8 MiB of content took about a
second there). Here the same protocol (docs/protocol.md) is spoken with a reader
that only searches the new bytes, so the time measured is the adapter's own
plus linear transfer costs.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from typing import Any

from ..errors import AdapterError
from ..harness import spawn
from ..harness.protocol import START_TIMEOUT, process_for

__all__ = ["TimedAdapter"]


class TimedAdapter:
    """One adapter process; ``run`` returns ``(reply kind, seconds)``."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.name = spec
        self.version = "unknown"
        self._proc: spawn.Child | None = None
        self._pending = bytearray()

    def start(self) -> None:
        self._proc = spawn.Child(process_for(self.spec), stderr=subprocess.DEVNULL)
        self._pending.clear()
        kind, hello = self._exchange({"cmd": "start", "protocol": 1}, START_TIMEOUT)
        if kind != "reply" or not isinstance(hello, dict) or "error" in hello:
            self.close()
            raise AdapterError(f"{self.spec}: the adapter did not start ({kind}: {hello!r:.200})")
        self.name = str(hello.get("name") or self.spec)
        self.version = str(hello.get("version") or "unknown")

    def run(self, message: dict[str, Any], timeout: float) -> tuple[str, float, str]:
        """``("outcome" | "crash" | "timeout", seconds, detail)``; restarts after a fault."""
        if self._proc is None:
            self.start()
        started = time.perf_counter()
        kind, reply = self._exchange({**message, "seq": 1}, timeout)
        seconds = time.perf_counter() - started
        if kind != "reply":
            self.close()
            return kind, seconds, str(reply)
        if not isinstance(reply, dict) or "outcome" not in reply:
            return "crash", seconds, str(reply)[:200]
        return "outcome", seconds, ""

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.kill()  # and everything it started, whether it still runs or not (spawn.py)

    def _exchange(self, message: dict[str, Any], timeout: float) -> tuple[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + timeout
        try:
            proc.stdin.write(json.dumps(message).encode() + b"\n")
            proc.stdin.flush()
        except OSError:
            return "crash", "adapter process died"
        fd = proc.stdout.fileno()
        searched = 0
        while True:
            end = self._pending.find(b"\n", searched)
            if end >= 0:
                line = bytes(self._pending[:end])
                del self._pending[: end + 1]
                try:
                    return "reply", json.loads(line)
                except ValueError:
                    return "crash", f"not a JSON line: {line[:80]!r}"
            searched = len(self._pending)  # only the bytes still to come are searched
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout", f"no reply within {timeout:g} s"
            ready, _, _ = select.select([fd], [], [], remaining)
            if ready:
                data = os.read(fd, 1 << 20)
                if not data:
                    return "crash", "adapter process died"
                self._pending += data
