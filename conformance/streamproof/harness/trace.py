"""``run --trace FILE``: the protocol traffic, one JSON line per message.

Each line of the file is one protocol line that went to the adapter or came
back from it, as it was on the pipe, with the time it was written or read::

    {"time": "2026-12-01T13:30:00.123456Z", "pid": 4242, "dir": "to-adapter",
     "bytes": 171, "line": "{\\"cmd\\": \\"run\\", \\"seq\\": 1, ...}"}

``pid`` tells the adapter processes apart (the probe, a restart). A line
longer than ``TRACE_LINE_LIMIT`` bytes is cut there and carries
``"truncated": true``; ``bytes`` is always the whole line's length. Bytes
that are not UTF-8 show as U+FFFD.
"""

from __future__ import annotations

import datetime
import json
import threading
from pathlib import Path
from typing import IO

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
        self._file: IO[str] = open(path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115

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
            if not self._file.closed:
                self._file.write(text)
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
