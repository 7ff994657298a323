"""The old path of :mod:`streamproof.reference.chat`: the reference parser's chat accumulator.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .reference.chat import (
    ContentPiece,
    StreamAccumulator,
    error_from_body,
    read_completion,
)

__all__ = ["ContentPiece", "StreamAccumulator", "error_from_body", "read_completion"]
