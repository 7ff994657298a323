"""The old path of :mod:`streamproof.harness.nodejs`: the Node adapters' runtime.

Kept so that existing imports and commands go on working; new code imports
the new path (see docs/architecture.md)."""

from __future__ import annotations

import sys

from .harness.nodejs import (
    BUILTIN,
    INSTALL_COMMAND,
    RUNTIME_MAJOR,
    NodeSetupError,
    cache_dir,
    command_for,
    install,
    main,
    node_binary,
)

__all__ = [
    "BUILTIN",
    "INSTALL_COMMAND",
    "RUNTIME_MAJOR",
    "NodeSetupError",
    "cache_dir",
    "command_for",
    "install",
    "main",
    "node_binary",
]

if __name__ == "__main__":
    sys.exit(main())
