"""JSON shown as lines for a report, with the lines of the diverging paths marked.

Paths are the comparison's own (``choices[0].content``, ``choices.length``;
``harness.comparison``), so a divergence marks exactly the lines it is about:
the value at its path and everything inside it. A key the outcome lacks is
shown on the actual side as ``"key": <absent>``, never as ``null`` (§12.4).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from ..harness.comparison import MISSING, Divergence

__all__ = ["Line", "json_lines", "marked_paths"]

# Past this many lines a value is cut: a report shows the start of a long outcome.
LINE_LIMIT = 240


class Line(NamedTuple):
    text: str
    marked: bool


def marked_paths(divergences: Iterable[Divergence]) -> set[str]:
    """The paths whose lines a report marks (a length divergence marks the list)."""
    return {d.path.removesuffix(".length") if d.path != ".length" else "" for d in divergences}


def json_lines(
    value: Any, marked: set[str], absent: Iterable[str] = (), *, limit: int = LINE_LIMIT
) -> list[Line]:
    """``value`` indented like ``json.dumps(indent=2)``, one ``Line`` per line.

    ``absent`` are paths of keys ``value`` lacks: each is shown as a marked
    ``<absent>`` entry at the end of its parent object.
    """
    missing: dict[str, list[str]] = {}
    for path in absent:
        parent, _, key = path.rpartition(".")
        missing.setdefault(parent, []).append(key)
    lines = list(_lines(value, "", "", 0, marked, missing, False, last=True))
    if len(lines) > limit:
        lines = [*lines[:limit], Line(f"… {len(lines) - limit} more lines", False)]
    return lines


def _lines(
    value: Any,
    path: str,
    label: str,
    depth: int,
    marked: set[str],
    missing: dict[str, list[str]],
    inside: bool,
    *,
    last: bool,
) -> Iterator[Line]:
    mark = inside or path in marked
    pad = "  " * depth
    comma = "" if last else ","
    if isinstance(value, dict) and (value or path in missing):
        yield Line(f"{pad}{label}{{", mark)
        items = [(k, v) for k, v in value.items()] + [(k, MISSING) for k in missing.get(path, [])]
        for i, (key, item) in enumerate(items):
            sub = f"{path}.{key}" if path else key
            name = json.dumps(key, ensure_ascii=False) + ": "
            end = i == len(items) - 1
            if item is MISSING:
                yield Line(f"{pad}  {name}<absent>{'' if end else ','}", True)
            else:
                yield from _lines(item, sub, name, depth + 1, marked, missing, mark, last=end)
        yield Line(f"{pad}}}{comma}", mark)
    elif isinstance(value, list) and value:
        yield Line(f"{pad}{label}[", mark)
        for i, item in enumerate(value):
            sub = f"{path}[{i}]"
            end = i == len(value) - 1
            yield from _lines(item, sub, "", depth + 1, marked, missing, mark, last=end)
        yield Line(f"{pad}]{comma}", mark)
    else:
        text = "<absent>" if value is MISSING else json.dumps(value, ensure_ascii=False)
        yield Line(f"{pad}{label}{text}{comma}", mark)
