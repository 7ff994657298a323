"""What an adapter process writes to stderr, kept in a bounded ring.

A thread drains the child's stderr pipe as it arrives, so a chatty adapter
never blocks on a full pipe and nothing goes to disk. Only the last
``OUTPUT_LIMIT`` bytes are kept: enough for a traceback and the lines before
it, and a fixed cost per adapter process however much it prints. The
harness marks where a case starts and takes the slice printed since then.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading

__all__ = ["OUTPUT_LIMIT", "OutputCapture", "last_meaningful_line"]

# The last 64 KiB of an adapter's output per case (docs/cli.md, "Isolation
# and timeouts"): a deep traceback fits, a runaway logger costs no more.
OUTPUT_LIMIT = 64 * 1024

# Node prints its version after an uncaught exception's stack; the stack
# frames ("    at f (file.mjs:3:9)") name no cause either.
# Reads per catch-up: more than a pipe holds (64 KiB on Linux) in 64 KiB reads.
_READS = 16

_NOISE = re.compile(r"^(Node\.js v\d+\S*|at \S.*)$")


# An error's own line ("TypeError: x", "Error [ERR_X]: y"): Node prints more
# after it (frames, then the error's properties as "{ code: ... }"), so the
# last such line among the last few says more than the last line does.
_ERROR = re.compile(r"^(?:Uncaught )?[\w$.]*(?:Error|Exception)(?: \[\w+\])?: \S")
_ERROR_WINDOW = 30


def last_meaningful_line(text: str, limit: int = 200) -> str:
    """The error's own line if one ends the output, else the last line that says
    something: no blank, Node banner or stack frame."""
    lines = text.splitlines()
    for line in reversed(lines[-_ERROR_WINDOW:]):
        if _ERROR.match(line.strip()):
            return line.strip()[:limit]
    for line in reversed(lines):
        line = line.strip()
        if line and not _NOISE.match(line):
            return line[:limit]
    return ""


class OutputCapture:
    """Drains ``fd`` (the read end of a pipe) into a ring of ``limit`` bytes."""

    def __init__(self, fd: int, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self._fd = fd
        os.set_blocking(fd, False)
        self._stop_r, self._stop_w = os.pipe()
        self._lock = threading.Lock()
        self._tail = bytearray()
        self._total = 0  # every byte ever read, so a mark is a position in the stream
        self._eof = False
        self._thread = threading.Thread(target=self._drain, name="adapter-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while True:
            ready, _, _ = select.select([self._fd, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            with self._lock:
                if not self._pull():
                    return

    def _pull(self) -> bool:
        """Read what is waiting (lock held); False once the pipe is closed.

        At most ``_READS`` reads, so that a writer that never pauses cannot
        keep the thread from seeing ``close()``.
        """
        for _ in range(_READS):
            if self._eof:
                break
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return True
            if not data:
                self._eof = True
                break
            self._total += len(data)
            self._tail += data
            if len(self._tail) > self.limit:
                del self._tail[: len(self._tail) - self.limit]
        return not self._eof

    def mark(self) -> int:
        """A position in the output: what was written before now lies before it."""
        with self._lock:
            self._pull()
            return self._total

    def since(self, mark: int) -> str:
        """The output written after ``mark`` (its last ``limit`` bytes), as text.

        Whatever the child wrote before it wrote the reply is already in the
        pipe, so reading what is waiting here catches up with the thread.
        """
        with self._lock:
            self._pull()
            produced = self._total - mark
            kept = min(produced, len(self._tail))
            data = bytes(self._tail[len(self._tail) - kept :]) if kept else b""
        text = data.decode("utf-8", errors="replace")
        if produced > kept:
            text = f"…({produced - kept} earlier bytes dropped)\n" + text
        return text

    def tail(self) -> str:
        """Everything kept, as text."""
        return self.since(0)

    def close(self) -> None:
        """Stop the thread and close the pipe's read end."""
        with contextlib.suppress(OSError):
            os.write(self._stop_w, b"x")
        self._thread.join(timeout=5)
        for fd in (self._stop_r, self._stop_w, self._fd):
            with contextlib.suppress(OSError):
                os.close(fd)
