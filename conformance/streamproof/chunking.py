"""The old path of :mod:`streamproof.harness.transports`: the transports.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .harness.transports import (
    TRANSPORTS,
    boundaries,
    parse_transports,
    split,
)

__all__ = ["TRANSPORTS", "boundaries", "parse_transports", "split"]
