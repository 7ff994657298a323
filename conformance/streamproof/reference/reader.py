"""The reference parser: one response in, one outcome out, sans-IO.

``ResponseReader`` decides what kind of body it has (semantics §2), feeds a
stream through ``SSEDecoder`` and ``StreamAccumulator`` as the bytes arrive,
and buffers any other body until ``close()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .chat import ContentPiece, Outcome, StreamAccumulator, error_from_body, read_completion
from .sse import SSEDecoder, SSEProtocolError

__all__ = ["ResponseReader", "body_kind", "read_response"]

# A non-streamed body is buffered whole; past this size it is refused rather
# than held. Completions are kilobytes; 64 MiB is far past any real one.
MAX_BUFFERED_BODY = 64 * 1024 * 1024


def body_kind(status: int, headers: Mapping[str, str], request: Mapping[str, Any]) -> str:
    """``"error"``, ``"stream"`` or ``"json"`` (semantics §2)."""
    if status >= 400:
        return "error"
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "text/event-stream":
        return "stream"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    return "stream" if request.get("stream") is True else "json"


class ResponseReader:
    """Reads one response body, fed in reads of any size."""

    def __init__(self, status: int, headers: Mapping[str, str], request: Mapping[str, Any]) -> None:
        self.status = status
        self.kind = body_kind(status, headers, request)
        self._decoder = SSEDecoder()
        self._chat = StreamAccumulator()
        self._body = bytearray()
        self._too_large = False

    def feed(self, data: bytes) -> list[ContentPiece]:
        """Take the next read; return the content it surfaced."""
        if self.kind != "stream":
            if len(self._body) + len(data) > MAX_BUFFERED_BODY:
                self._too_large = True
            else:
                self._body += data
            return []
        chat = self._chat
        if chat._done or chat._error is not None:  # chat.finished, without a call per read
            return []
        try:
            events = self._decoder.events(data)
        except SSEProtocolError as exc:
            chat.fail(str(exc))
            return []
        pieces: list[ContentPiece] = []
        chat.take_events(events, pieces)
        return pieces

    def close(self) -> Outcome:
        """The body ended: return the outcome."""
        if self.kind == "stream":
            # An event no blank line closed is discarded (semantics §3.6), so
            # the decoder has nothing more to give.
            return self._chat.outcome()
        if self._too_large:
            outcome = read_completion(b"")
            outcome["error"]["message"] = f"body larger than {MAX_BUFFERED_BODY} bytes"
            if self.kind == "error":
                outcome["error"]["http_status"] = self.status
            return outcome
        if self.kind == "error":
            return error_from_body(self.status, bytes(self._body))
        return read_completion(bytes(self._body))


def read_response(
    status: int, headers: Mapping[str, str], request: Mapping[str, Any], reads: Iterable[bytes]
) -> Outcome:
    """Read a whole response at once."""
    reader = ResponseReader(status, headers, request)
    for data in reads:
        reader.feed(data)
    return reader.close()
