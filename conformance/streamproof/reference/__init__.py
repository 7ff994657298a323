"""The reference parser: bytes in, an outcome out, with no I/O of its own.

Layer 1, the lowest. ``sse`` decodes the event stream (WHATWG rules, bounded
buffers), ``chat`` accumulates chat completion chunks and reads
non-streamed bodies, ``choices`` holds what they build, ``fastjson`` reads
JSON (the standard library's, its scanner called directly), ``reader``
decides what a body is and ties them together. Standard library only at
import: it imports nothing from the rest of streamproof, so it can be read,
copied and tested on its own.
"""

from __future__ import annotations

from .chat import ContentPiece, StreamAccumulator, error_from_body, read_completion
from .reader import MAX_BUFFERED_BODY, ResponseReader, body_kind, read_response
from .sse import Event, SSEDecoder, SSEProtocolError

__all__ = [
    "MAX_BUFFERED_BODY",
    "ContentPiece",
    "Event",
    "ResponseReader",
    "SSEDecoder",
    "SSEProtocolError",
    "StreamAccumulator",
    "body_kind",
    "error_from_body",
    "read_completion",
    "read_response",
]
