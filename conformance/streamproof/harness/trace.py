"""``run --trace FILE``: the protocol traffic, one JSON line per message.

Each line of the file is one protocol line that went to the adapter or came
back from it, as it was on the pipe, with the time it was written or read::

    {"time": "2026-12-01T13:30:00.123456Z", "pid": 4242, "dir": "to-adapter",
     "bytes": 171, "line": "{\\"cmd\\": \\"run\\", \\"seq\\": 1, ...}"}

``pid`` tells the adapter processes apart (the probe, a restart). A line
longer than ``TRACE_LINE_LIMIT`` bytes is cut there and carries
``"truncated": true``; ``bytes`` is always the whole line's length. Bytes
that are not UTF-8 show as U+FFFD.

The file is opened as every output is (``atomic``): never through a link, a
FIFO or a device written into. A new trace (``append=False``: ``run``'s
first process, ``check-adapter``) goes to a temporary file that replaces the
old trace when closed; appending (``run``'s session, whose engines may be
several at once, ``--streamproof-trace``) adds whole lines at the file's end.
A trace that cannot be written (a full disk) stops recording and says so,
naming the file, when it is closed: the adapter's session goes on meanwhile.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import threading
from pathlib import Path
from typing import TextIO

from ..atomic import opened_for_appending, writing_atomic, written_into

__all__ = ["TRACE_LINE_LIMIT", "TraceFile"]

# The most of one protocol line a trace keeps: a case body of about 750 KB
# (base64) fits whole, a runaway reply does not fill the disk.
TRACE_LINE_LIMIT = 1024 * 1024


class TraceFile:
    """Appends the protocol lines it is told of to ``path``; a ``protocol.Trace``."""

    def __init__(self, path: Path, *, append: bool = True, limit: int = TRACE_LINE_LIMIT) -> None:
        self.path = path
        self.limit = limit
        self._lock = threading.Lock()
        self._closing = contextlib.ExitStack()
        self._failure: OSError | None = None
        self._file: TextIO
        if append or written_into(path):
            self._file = self._closing.enter_context(opened_for_appending(path))
        else:
            self._file = self._closing.enter_context(writing_atomic(path))

    def __call__(self, direction: str, pid: int, line: bytes) -> None:
        line = line.removesuffix(b"\n")
        record: dict[str, object] = {
            "time": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "pid": pid,
            "dir": direction,
            "bytes": len(line),
            "line": line[: self.limit].decode("utf-8", errors="replace"),
        }
        if len(line) > self.limit:
            record["truncated"] = True
        text = json.dumps(record, ensure_ascii=False) + "\n"
        with self._lock:
            if self._file.closed or self._failure is not None:
                return
            try:
                self._file.write(text)
                self._file.flush()
            except OSError as exc:
                self._failure = OSError(exc.errno, exc.strerror, str(self.path))

    def close(self) -> None:
        """Finish the file; ``OSError`` naming it if a line could not be written
        (then a new trace leaves the old one as it was)."""
        with self._lock:
            failure, self._failure = self._failure, None
            if failure is None:
                self._closing.close()
                return
            with contextlib.suppress(OSError):  # (the same failure again, on closing)
                self._closing.__exit__(type(failure), failure, failure.__traceback__)
            raise failure
