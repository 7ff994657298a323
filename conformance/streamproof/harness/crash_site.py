"""Where a crash happened: the frames and the byte count an adapter reports with it.

A crash reply may carry ``frames`` (the stack where the parser raised,
outermost first, each a file, a line and a function) and ``at_byte`` (how
many body bytes the adapter had been handed when it raised); see
docs/protocol.md. Both are optional and checked strictly here: anything
malformed is dropped, and the crash stays a crash.

Reports show first the innermost frame outside the runtime's own library
and streamproof (:func:`raised_in`): ``json.loads`` raises in
``json/decoder.py`` and ``JSON.parse`` inside V8, but the line worth reading
is the parser's own call, a frame or two further out.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_FRAMES", "Frame", "at_byte_from", "frames_from", "is_runtime_own", "raised_in"]

#: At most this many frames (the innermost) are kept of a crash: a runaway
#: recursion's stack must not fill a results file, and the innermost frames
#: are the ones that say where it raised.
MAX_FRAMES = 64
# A file or function name longer than this is no name but a protocol fault.
_NAME_LIMIT = 4096

# Files that are no file on disk but the runtime's own code: Python's frozen
# modules, Node's internals, and V8's built-ins (``JSON.parse (<anonymous>)``).
_RUNTIME_PREFIXES = ("<frozen ", "node:")
_RUNTIME_NAMES = frozenset({"<anonymous>", "native"})
# Third-party code lives in these folders, even when they sit inside the
# standard library's folder (a venv's or a python.org build's lib/python3.X).
_THIRD_PARTY = frozenset({"site-packages", "dist-packages"})


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of the stack where an adapter raised."""

    file: str
    line: int  # 0 when the runtime did not say
    function: str  # "" for an anonymous function

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}, in {self.function}" if self.function else where

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "function": self.function}


def _frame(item: Any) -> Frame | None:
    if not isinstance(item, dict):
        return None
    file, line, function = item.get("file"), item.get("line"), item.get("function")
    if not (isinstance(file, str) and 0 < len(file) <= _NAME_LIMIT):
        return None
    if type(line) is not int or line < 0:  # a bool is no line number
        return None
    if not (isinstance(function, str) and len(function) <= _NAME_LIMIT):
        return None
    return Frame(file, line, function)


def frames_from(value: Any) -> tuple[Frame, ...]:
    """A reply's ``frames``, outermost first, the innermost ``MAX_FRAMES`` of them.

    ``()`` unless ``value`` is a list of objects, each with a non-empty string
    ``file``, an integer ``line`` ≥ 0 and a string ``function`` (other keys are
    ignored): one bad frame drops them all, as no order can be trusted then.
    """
    if not isinstance(value, list):
        return ()
    frames = []
    for item in value[-MAX_FRAMES:]:
        frame = _frame(item)
        if frame is None:
            return ()
        frames.append(frame)
    return tuple(frames)


def at_byte_from(value: Any) -> int | None:
    """A reply's ``at_byte`` if it is an integer ≥ 0, else ``None``."""
    return value if type(value) is int and value >= 0 else None


@functools.cache
def _own_folders() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(Python's standard library folders, streamproof's package folder, the
    shipped data in it), each as given and resolved, ending in a separator."""
    import sysconfig  # here: only a crash with frames needs it

    paths = sysconfig.get_paths()

    def both(folder: str) -> set[str]:
        return {
            os.path.join(os.path.abspath(folder), ""),
            os.path.join(os.path.realpath(folder), ""),
        }

    stdlib = both(paths["stdlib"]) | both(paths["platstdlib"])
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # A wheel ships the built-in adapters inside the package (resources.py):
    # they are adapters, and their frames are shown like a user's.
    data = both(os.path.join(package, "_data"))
    return tuple(sorted(stdlib)), tuple(sorted(both(package))), tuple(sorted(data))


def is_runtime_own(file: str) -> bool:
    """Whether ``file`` is the runtime's own library or streamproof, not the adapter's code.

    The runtime's own: Python's standard library (sysconfig's ``stdlib`` and
    ``platstdlib``, their ``site-packages`` left out), Node's ``node:``
    internals, V8's built-ins and Python's frozen modules.
    """
    if file.startswith(_RUNTIME_PREFIXES) or file in _RUNTIME_NAMES:
        return True
    if not os.path.isabs(file):
        return False
    stdlib, package, data = _own_folders()
    for path in {file, os.path.realpath(file)}:
        if path.startswith(package) and not path.startswith(data):
            return True
        if path.startswith(stdlib) and not _THIRD_PARTY & set(path.split(os.sep)):
            return True
    return False


def raised_in(frames: Iterable[Frame]) -> Frame | None:
    """The innermost of ``frames`` (outermost first) outside the runtime's library
    and streamproof: where the adapter's code, or the library it drives, raised."""
    for frame in reversed(tuple(frames)):
        if not is_runtime_own(frame.file):
            return frame
    return None
