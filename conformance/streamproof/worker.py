"""The old path of :mod:`streamproof.harness.worker`: the adapter worker.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

import sys

from .harness.worker import (
    main,
)

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
