"""Every process a benchmark times reads compiled bytecode, as an installed streamproof does.

An installer compiles a package's modules when it installs them; a checkout
on ``PYTHONPATH`` gets its ``__pycache__`` on the first import. With
``PYTHONDONTWRITEBYTECODE`` set (some shells and CI images set it), no
bytecode is ever written for a checkout, and every timed process would
compile each of its modules from source again: a fixed cost that no user of
an installed streamproof pays, and that would make each extra process (a
shard, a worker) look dearer than it is. ``use_compiled_bytecode()`` lets
the benchmark's processes write and read their bytecode in a folder of their
own (``PYTHONPYCACHEPREFIX``), never in the checkout; every script's
untimed warm-up run fills it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["use_compiled_bytecode"]


def use_compiled_bytecode(folder: Path | None = None) -> Path:
    """Set this process's environment (and so its children's) to keep bytecode in
    ``folder`` (default: ``streamproof-bench-bytecode`` in the temporary folder)."""
    folder = folder or Path(tempfile.gettempdir()) / "streamproof-bench-bytecode"
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    return folder
