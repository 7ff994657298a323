"""Checking incremental delivery (semantics §11, the outcome's ``deltas``).

The harness finds where each event ends with its own minimal scan of the
body — blank lines, ``data`` lines, ``choices[].delta.content`` — so that the
check does not lean on the reference parser it is meant to be independent
of. A piece of content must be surfaced no later than the end of the read
that completed the event carrying it.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any

__all__ = ["check_deltas", "content_events"]

_LINE = re.compile(rb"([^\r\n]*)(\r\n|\r|\n)")


def content_events(body: bytes) -> list[tuple[int, int, str]]:
    """``(end offset, choice, text)`` for every content delta, in body order.

    An event ends with the line end of the blank line that closes it. Events
    that are not JSON chunks ([DONE], comments, corrupt data) carry nothing.
    """
    found: list[tuple[int, int, str]] = []
    data: list[bytes] = []
    for match in _LINE.finditer(body):
        line = match.group(1)
        if line:
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            continue
        if data:
            found.extend((match.end(), choice, text) for choice, text in _contents(data))
        data = []
    return found


def _contents(data: list[bytes]) -> list[tuple[int, str]]:
    try:
        chunk = json.loads(b"\n".join(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return []
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    pieces = []
    for choice in choices if isinstance(choices, list) else []:
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta")
        text = delta.get("content") if isinstance(delta, dict) else None
        index = choice.get("index", 0)
        if isinstance(text, str) and text and isinstance(index, int):
            pieces.append((index, text))
    return pieces


def check_deltas(body: bytes, ends: list[int], deltas: Any) -> str | None:
    """Why the reported ``deltas`` break the incremental rule, or ``None``."""
    if not isinstance(deltas, list):
        return "the adapter reports no deltas list"
    surfaced: dict[int, list[tuple[int, str]]] = {}
    last_at = 0
    for delta in deltas:
        at = delta["at_byte"]
        if at < last_at or at > len(body):
            return f"deltas: at_byte {at} goes backwards or past the body ({len(body)} bytes)"
        last_at = at
        surfaced.setdefault(delta["choice"], []).append((at, delta["content"]))
    wanted: dict[int, list[tuple[int, str]]] = {}
    for end, choice, text in content_events(body):
        wanted.setdefault(choice, []).append((end, text))
    for choice in sorted(set(wanted) | set(surfaced)):
        problem = _check_choice(choice, wanted.get(choice, []), surfaced.get(choice, []), ends)
        if problem:
            return problem
    return None


def _check_choice(
    choice: int, wanted: list[tuple[int, str]], got: list[tuple[int, str]], ends: list[int]
) -> str | None:
    want_text = "".join(text for _, text in wanted)
    got_text = "".join(text for _, text in got)
    if got_text != want_text:
        return (
            f"deltas of choice {choice} add up to {_short(got_text)}, "
            f"the stream's content is {_short(want_text)}"
        )
    needed = 0
    for end, text in wanted:
        needed += len(text)
        # The read that completed this event ends at the first boundary at or after it.
        read_end = ends[bisect.bisect_left(ends, end)] if ends and end <= ends[-1] else end
        shown = sum(len(t) for at, t in got if at <= read_end)
        if shown < needed:
            return (
                f"choice {choice}: {_short(text)} (event ending at byte {end}) was not "
                f"surfaced by the end of its read at byte {read_end}; "
                f"{shown} of {needed} characters were"
            )
    return None


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
