"""The old path of :mod:`streamproof.reference.sse`: the reference parser's SSE decoder.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .reference.sse import (
    MAX_EVENT_BYTES,
    MAX_LINE_BYTES,
    Event,
    SSEDecoder,
    SSEProtocolError,
)

__all__ = ["MAX_EVENT_BYTES", "MAX_LINE_BYTES", "Event", "SSEDecoder", "SSEProtocolError"]
