"""The old path of :mod:`streamproof.harness.comparison`: the comparison of outcomes.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .harness.comparison import (
    MISSING,
    Divergence,
    best_alternative,
    compare,
)

__all__ = ["MISSING", "Divergence", "best_alternative", "compare"]
