"""Strict JSON (RFC 8259): no NaN, no Infinity, string keys only.

Python's ``json`` reads and writes ``NaN`` and ``Infinity`` by default and
turns an ``int`` key into a string without a word; neither is JSON, and a
results file that carries them is not one any other tool can read. Nor is
a number beyond a double's range (``1e400``), which Python reads as ``inf``
without a word. The worker refuses such an outcome (``first_problem``), the
harness refuses such a reply from an adapter in any language (``loads``),
and ``verify``, ``diff``, ``report`` and ``--expect`` refuse such a file
(``read_document``, which also bounds its nesting and refuses a FIFO).

Standard library only at import: the adapter worker imports it.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "DOCUMENT_DEPTH",
    "NotStrictJSON",
    "finite_float",
    "first_problem",
    "loads",
    "read_document",
    "reject_constant",
]

#: Deepest nesting of a results, baseline or known-failures file: far more
#: than any of them has, and far from Python's recursion limit.
DOCUMENT_DEPTH = 256

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class NotStrictJSON(ValueError):
    """A JSON text uses a constant outside the standard (``NaN``, ``Infinity``)."""


def reject_constant(name: str) -> NoReturn:
    """``parse_constant`` for ``json.loads``: refuse ``NaN``, ``Infinity``, ``-Infinity``."""
    raise NotStrictJSON(f"{name} is not JSON (RFC 8259 has no NaN or Infinity)")


def finite_float(text: str) -> float:
    """``parse_float`` for ``json.loads``: refuse a number beyond a double's range."""
    value = float(text)
    if math.isinf(value):
        raise NotStrictJSON(f"{text} is out of the range of a double (RFC 8259 §6)")
    return value


def loads(text: str | bytes) -> Any:
    """``json.loads`` that raises ``NotStrictJSON`` on ``NaN``, ``Infinity`` and ``1e400``."""
    return json.loads(text, parse_constant=reject_constant, parse_float=finite_float)


def read_document(path: Path) -> Any:
    """The strict JSON file ``path`` names, at most :data:`DOCUMENT_DEPTH` levels deep.

    ``OSError`` when it cannot be read, a FIFO, a device or a socket included
    (opened without waiting for a writer); ``ValueError`` naming ``path`` in
    one line when its text is not UTF-8, not strict JSON or nested too deep.
    """
    from ..corpus.gate import decode, parse_json  # (not at import: the worker imports this)

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as file:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind:
            raise OSError(0, f"{kind}, not a regular file", str(path))
        os.set_blocking(fd, True)
        text = decode(file.read(), path)
    return parse_json(
        text, path, depth=DOCUMENT_DEPTH, parse_constant=reject_constant, parse_float=finite_float
    )


def _not_regular(mode: int) -> str | None:
    """What a file that is not a regular file is, or ``None``."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a FIFO" if stat.S_ISFIFO(mode) else "a device or a socket"


def _step(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def first_problem(value: Any) -> str | None:
    """Where ``value`` stops being strict JSON, e.g. ``choices[0].usage.total_tokens is NaN``.

    Only what ``json.dumps`` would write silently is looked for (a float that
    is not finite, a key that is not a string); a value it cannot write at
    all is left for ``json.dumps`` to refuse. Iterative, and each container
    is visited once, so neither a deep nor a circular value defeats it.
    """
    if _all_strict(value):
        return None  # the common case, found without building a path per value
    stack: list[tuple[str, Any]] = [("", value)]
    seen: set[int] = set()
    while stack:
        path, item = stack.pop()
        where = path or "the outcome"
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where} is {json.dumps(item)}"
        if not isinstance(item, (dict, list, tuple)) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return f"{where} has a key that is not a string: {key!r}"
            children = [(_step(path, k), v) for k, v in item.items()]
        else:
            children = [(_step(path, i), v) for i, v in enumerate(item)]
        stack.extend(reversed(children))
    return None


def _all_strict(value: Any) -> bool:
    """Whether ``first_problem`` would find nothing: the same walk, no paths."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if type(item) is float:
            if not math.isfinite(item):
                return False
            continue
        if isinstance(item, dict):
            if id(item) in seen:
                continue
            seen.add(id(item))
            for key in item:
                if type(key) is not str:
                    return False
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return False
    return True
