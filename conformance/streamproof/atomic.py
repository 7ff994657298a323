"""Files written whole or not at all.

Every file streamproof writes goes through ``write_atomic`` (or, written
piece by piece, ``writing_atomic``): the text is written to a temporary
file in the target's own folder, flushed to disk, then renamed over the
target with ``os.replace``. A crash, an interruption
or a full disk leaves the old file (or no file), never half of a new one.
``replace_into`` does the same for a file another program wrote (pytest's
JUnit XML, pytest-html's report). Standard library only; every layer may
import this module.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["discard", "replace_into", "temporary_beside", "write_atomic", "writing_atomic"]

_PREFIX = ".streamproof-partial-"


def temporary_beside(target: Path) -> Path:
    """A new, empty temporary file in ``target``'s folder (created now)."""
    fd, name = tempfile.mkstemp(prefix=f"{_PREFIX}{target.name}.", dir=target.parent)
    os.close(fd)
    return Path(name)


def discard(path: Path) -> None:
    """Remove ``path`` if it exists."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def replace_into(temporary: Path, target: Path) -> None:
    """Move the finished ``temporary`` over ``target`` in one step.

    ``mkstemp`` creates files readable by their owner only; the moved file
    gets the permissions a plain ``open(target, "w")`` would have given it.
    """
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)
    os.replace(temporary, target)


def write_atomic(target: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``target`` all at once: a temporary file, then a rename."""
    with writing_atomic(target, encoding=encoding) as out:
        out.write(text)


@contextlib.contextmanager
def writing_atomic(target: Path, *, encoding: str = "utf-8") -> Iterator[TextIO]:
    """A file to write ``target`` through, piece by piece; it replaces ``target``
    in one step when the block ends, and is removed if the block raises."""
    temporary = temporary_beside(target)
    try:
        with open(temporary, "w", encoding=encoding, newline="") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        replace_into(temporary, target)
    except BaseException:
        discard(temporary)
        raise
