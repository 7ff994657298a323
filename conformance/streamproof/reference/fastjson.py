"""The JSON loader of the reference parser: the standard library's, called lean.

``json.loads`` is three Python calls around the C scanner of
``json.JSONDecoder``. For a text that starts with a value and ends with it,
calling the scanner directly gives the same value; anything else (whitespace
around the value, no value, an error) goes through ``json.loads``, which
gives its own result or error. Bytes are decoded as UTF-8 with replacement
characters first, so invalid UTF-8 reads as ``U+FFFD``.

``tests/test_fastjson.py`` proves ``exact_loads`` equal to ``json.loads``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["Text", "exact_loads"]

Text = str | bytes | bytearray  # JSON text, or its UTF-8

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
