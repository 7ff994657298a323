"""Where the shipped corpus, schemas, adapters and semantics document are.

A wheel carries them under ``streamproof/_data/``; an editable install or a
checkout has them at the repository root, two folders above this package.
Both are found by the same function, so no code path knows which it is.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["data_path"]

_PACKAGE = Path(__file__).resolve().parent


def data_path(name: str) -> Path:
    """The shipped folder or file ``name`` (``corpus``, ``schemas``, ...)."""
    packaged = _PACKAGE / "_data" / name
    if packaged.exists():
        return packaged
    checkout = _PACKAGE.parent.parent / name
    if checkout.exists():
        return checkout
    raise FileNotFoundError(f"streamproof is installed without its {name!r} data")
