"""The JSON loader of the reference parser: orjson when it is installed.

The reference parser needs only the standard library. When ``orjson`` can be
imported (``pip install 'streamproof[fast]'``) it parses each chunk, and the
standard library's ``json`` is the fallback wherever orjson rejects a text
that ``json`` accepts (NaN, Infinity, lone surrogates, invalid UTF-8, deep
nesting): the text is then decoded as UTF-8 with replacement characters and
read by ``json.loads``, exactly as without orjson.

Where orjson accepts a text its result equals ``json.loads``'s but for one
thing: an integer outside 64 bits becomes a ``float``. ``has_float`` lets the
caller find such a value where a number reaches the outcome and read the
text again with ``exact_loads``. ``tests/test_fastjson.py`` proves both
loaders give the same outcomes.

orjson is imported on first use, never when the package is imported.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

__all__ = ["Text", "exact_loads", "fast_loads", "has_float", "loader_name", "use_loader"]

Text = str | bytes | bytearray  # JSON text, or its UTF-8
Loads = Callable[[Text], Any]

_UNRESOLVED: Any = object()
_fast: Loads | None = _UNRESOLVED


# json.loads is three Python calls around this C scanner: for a text that
# starts with a value and ends with it, calling the scanner gives the same
# value. Anything else (whitespace around the value, no value, an error) goes
# through json.loads, which gives its own result or error.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def exact_loads(data: Text) -> Any:
    """The standard library's reading of ``data`` (in bytes, bad UTF-8 becomes U+FFFD)."""
    if not isinstance(data, str):
        data = data.decode("utf-8", errors="replace")
    try:
        value, end = _scan(data, 0)
    except (StopIteration, ValueError, RecursionError):
        return json.loads(data)
    if end != len(data):
        return json.loads(data)
    return value


def fast_loads() -> Loads | None:
    """orjson's ``loads`` when it can be imported and is in use, else None."""
    global _fast
    if _fast is _UNRESOLVED:
        use_loader("auto")
    return _fast


def use_loader(name: str) -> None:
    """Choose the loader: ``"auto"`` (orjson when installed), ``"json"`` or ``"orjson"``.

    ``"orjson"`` raises ``ImportError`` when it is not installed.
    """
    global _fast
    if name == "json":
        _fast = None
    elif name == "orjson":
        _fast = importlib.import_module("orjson").loads
    elif name == "auto":
        try:
            _fast = importlib.import_module("orjson").loads
        except ImportError:
            _fast = None
    else:
        raise ValueError(f"unknown JSON loader {name!r}: auto, json or orjson")


def loader_name() -> str:
    """``"orjson"`` or ``"json"``: the loader chunks are read with."""
    return "json" if fast_loads() is None else "orjson"


def has_float(value: Any) -> bool:
    """True when ``value`` holds a float anywhere (a dict, a list or itself)."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return False
