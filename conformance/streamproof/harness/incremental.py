"""Checking incremental delivery (semantics §11, the outcome's ``deltas``).

The harness finds where each event ends with its own minimal scan of the
body — a leading byte order mark, blank lines, ``event`` and ``data`` lines,
``choices[].delta.content`` as a string or as an array of ``text`` parts —
so that the check does not lean on the reference parser it is meant to be
independent of. A piece of content must be surfaced no later than the end of
the read that completed the event carrying it.

A parser may stop before the end of the stream (at an event it reads as
corrupt, §4.3, or an error, §8.4): the deltas must then add up to the
content its outcome reports, and that content must be where the stream's
content starts. An event left without its closing blank line at the end of
the body (§3.6) may be kept or discarded: its content counts as surfaced in
time at the end of the body, and need not surface at all.
"""

from __future__ import annotations

import bisect
import functools
import json
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from ..reference import body_kind

__all__ = ["check_deltas", "content_events", "covers"]

_BOM = b"\xef\xbb\xbf"


@functools.lru_cache(maxsize=16)
def content_events(body: bytes, *, tail: bool = False) -> tuple[tuple[int, int, str], ...]:
    """``(end offset, choice, text)`` for every content delta, in body order.

    An event ends with the line end of the blank line that closes it. Events
    that are not JSON chunks ([DONE], comments, corrupt data) carry nothing.
    With ``tail``, an event the body leaves without its closing blank line
    (semantics §3.6, read either way) is counted too, ending at the end of the
    body. The scan of a body is kept for the next transport of the same case.
    """
    found: list[tuple[int, int, str]] = []
    data: list[bytes] = []
    named = False  # an ``event:`` line other than ``message``: not a chunk (§4.5)
    end = len(_BOM) if body.startswith(_BOM) else 0
    # bytes.splitlines ends a line at CR, LF or CRLF, as SSE does; a last
    # line with no end is no line (and the split is linear in the body,
    # whatever its lines' lengths).
    for raw in body[end:].splitlines(keepends=True):
        end += len(raw)
        line = raw.rstrip(b"\r\n")
        if len(line) == len(raw):
            if tail and line.startswith(b"data:"):  # a last line with no end (§3.6)
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
            break
        if line:
            name, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if name == b"data":
                data.append(value)
            elif name == b"event":
                named = value not in (b"", b"message")
            continue
        if data and not named:
            found.extend((end, choice, text) for choice, text in _contents(data))
        data = []
        named = False
    if tail and data and not named:
        found.extend((len(body), choice, text) for choice, text in _contents(data))
    return tuple(found)


def covers(status: int, headers: Mapping[str, str], request: Mapping[str, Any]) -> bool:
    """True for a streamed body: the check runs there when an adapter claims ``incremental``."""
    return body_kind(status, headers, request) == "stream"


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
        content = delta.get("content") if isinstance(delta, dict) else None
        index = choice.get("index", 0)
        if not isinstance(index, int):
            continue
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for part in parts:
            text = (
                part.get("text") if isinstance(part, dict) and part.get("type") == "text" else None
            )
            if isinstance(text, str) and text:
                pieces.append((index, text))
    return pieces


def check_deltas(
    body: bytes, ends: list[int], deltas: Any, outcome: Mapping[str, Any] | None = None
) -> str | None:
    """Why the reported ``deltas`` break the incremental rule, or ``None``.

    Without ``outcome`` the deltas must add up to the whole stream's content;
    with it, to each choice's content in the outcome, which the stream's
    content must start with.
    """
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
    for end, choice, text in content_events(body, tail=True):
        wanted.setdefault(choice, []).append((end, text))
    reported = _reported(outcome)
    for choice in sorted(set(wanted) | set(surfaced)):
        problem = _check_choice(
            choice, wanted.get(choice, []), surfaced.get(choice, []), ends, reported
        )
        if problem:
            return problem
    return None


def _reported(outcome: Mapping[str, Any] | None) -> dict[int, str] | None:
    """Each choice's content in ``outcome`` (``None`` without an outcome)."""
    if outcome is None:
        return None
    choices = outcome.get("choices")
    listed = choices if isinstance(choices, list) else []
    return {
        c["index"]: c["content"]
        for c in listed
        if isinstance(c, dict)
        and isinstance(c.get("index"), int)
        and isinstance(c.get("content"), str)
    }


def _check_choice(
    choice: int,
    wanted: list[tuple[int, str]],
    got: list[tuple[int, str]],
    ends: list[int],
    reported: dict[int, str] | None,
) -> str | None:
    want_text = "".join(text for _, text in wanted)
    got_text = "".join(text for _, text in got)
    if reported is None and got_text != want_text:
        return (
            f"deltas of choice {choice} add up to {_short(got_text)}, "
            f"the stream's content is {_short(want_text)}"
        )
    if reported is not None:
        if got_text != reported.get(choice, ""):
            return (
                f"deltas of choice {choice} add up to {_short(got_text)}, "
                f"the outcome's content is {_short(reported.get(choice, ''))}"
            )
        if not want_text.startswith(got_text):
            return (
                f"deltas of choice {choice} add up to {_short(got_text)}, "
                f"not a start of the stream's content {_short(want_text)}"
            )
    # How many characters had surfaced by each delta (``got`` is in byte order).
    got_at = [at for at, _ in got]
    shown_by = [0, *accumulate(len(t) for _, t in got)]
    needed = 0
    for end, text in wanted:
        if needed >= len(got_text):
            break  # the parser stopped before this event (it may, §4.3, §8.4)
        needed += len(text)
        # The read that completed this event ends at the first boundary at or after it.
        read_end = ends[bisect.bisect_left(ends, end)] if ends and end <= ends[-1] else end
        shown = shown_by[bisect.bisect_right(got_at, read_end)]
        if shown < needed:
            return (
                f"choice {choice}: {_short(text)} (event ending at byte {end}) was not "
                f"surfaced by the end of its read at byte {read_end}; "
                f"{shown} of {needed} characters were"
            )
    return None


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
