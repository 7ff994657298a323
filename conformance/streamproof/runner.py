"""The old path of :mod:`streamproof.harness.engine`: the engine.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

from .harness.engine import (
    Engine,
    Result,
    Verdict,
    default_timeout,
    judge,
    plan,
    run_all,
    select,
)

__all__ = ["Engine", "Result", "Verdict", "default_timeout", "judge", "plan", "run_all", "select"]
