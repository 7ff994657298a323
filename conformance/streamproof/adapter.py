"""The old path of :mod:`streamproof.harness.loader`: the adapter loader, the replay.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .harness.loader import (
    CAPABILITIES,
    Adapter,
    AdapterError,
    ReplayResponse,
    builtin_names,
    load_adapter,
    load_sibling,
)

__all__ = [
    "CAPABILITIES",
    "Adapter",
    "AdapterError",
    "ReplayResponse",
    "builtin_names",
    "load_adapter",
    "load_sibling",
]
