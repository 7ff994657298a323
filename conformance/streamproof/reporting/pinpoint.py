"""Where in the body a failure arises: the byte a report's wire view is centred on.

A best effort in three steps, each sound when it answers:

1. the outcome's ``deltas`` say after how many bytes each piece of content
   was surfaced (``at_byte``, semantics §11): the first piece that does not
   continue the expected text points at the read that brought it;
2. for a ``content`` divergence, the body's own content events (the harness's
   scan, no parser of ours) are followed until the outcome stops containing
   them: that event carries the first text the adapter lost or changed;
3. otherwise the diverging fields' keys are searched in the body, in the
   order of the divergences: the occurrence followed closely by its expected
   (else its actual) value wins, or for an object or a list its key's first one.

A crash has no divergence: its reply's ``at_byte`` (the body bytes the
adapter had been handed when it raised, docs/protocol.md) points at the last
read it got. When nothing answers (a crash without ``at_byte``, a truncated
stream, a key the body lacks) the answer is the end of the body, where a
parser that stops early stops.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from ..harness.comparison import MISSING
from ..harness.engine import Result
from ..harness.incremental import content_events

__all__ = ["Pinpoint", "pinpoint"]

# How far after a key its value may start: a key, a colon and some spaces.
_NEAR = 64
# How many divergences are looked for by key: the first ones, as the report shows them.
_TRIED = 5
_CONTENT_PATH = re.compile(r"^choices\[(\d+)\]\.content$")
_INDEX = re.compile(r"\[\d+\]")


class Pinpoint(NamedTuple):
    at: int  # a byte offset into the body
    how: str  # how it was found, for the reader


def pinpoint(body: bytes, result: Result) -> Pinpoint:
    """The byte where ``result``'s first divergence arises in ``body``."""
    end = Pinpoint(max(0, len(body) - 1), "the end of the body (no closer place is known)")
    if not result.mismatches:
        return _from_at_byte(result.at_byte, len(body)) or end
    first = result.mismatches[0]
    content = _CONTENT_PATH.match(first.path)
    if content and isinstance(first.expected, str):
        choice = int(content.group(1))
        actual = first.actual if isinstance(first.actual, str) else ""
        found = _from_deltas(result.outcome, choice, first.expected) or _from_events(
            body, choice, actual
        )
        if found:
            return found
    if first.path == "status" and "truncated" in (first.expected, first.actual):
        return end  # a stream cut short, or read as cut, shows it at its end
    for divergence in result.mismatches[:_TRIED]:
        found = _from_key(body, divergence.path, divergence.expected, divergence.actual)
        if found:
            return found
    return end


def _from_at_byte(at: int | None, size: int) -> Pinpoint | None:
    if at is None or at > size:  # more than the body: no read of this case
        return None
    if at == 0:
        return Pinpoint(0, "the start of the body: the adapter raised before it was handed a byte")
    return Pinpoint(at - 1, f"the last read the adapter was handed before it raised (at_byte {at})")


def _from_deltas(outcome: dict[str, Any] | None, choice: int, expected: str) -> Pinpoint | None:
    deltas = (outcome or {}).get("deltas")
    if not isinstance(deltas, list):
        return None
    text = ""
    for delta in deltas:
        if not isinstance(delta, dict) or delta.get("choice") != choice:
            continue
        text += str(delta.get("content", ""))
        at = delta.get("at_byte")
        if not expected.startswith(text) and isinstance(at, int) and at > 0:
            return Pinpoint(at - 1, f"the read that surfaced the first wrong delta (at_byte {at})")
    return None


def _from_events(body: bytes, choice: int, actual: str) -> Pinpoint | None:
    text = ""
    for stop, index, piece in content_events(body):
        if index != choice:
            continue
        text += piece
        if not actual.startswith(text):
            return Pinpoint(stop - 1, "the event whose content the outcome lacks or changes")
    return None


def _from_key(body: bytes, path: str, expected: Any, actual: Any) -> Pinpoint | None:
    name = _INDEX.sub("", path.removesuffix(".length")).rsplit(".", 1)[-1]
    if not name:
        return None
    key = json.dumps(name).encode()
    places = [m.start() for m in re.finditer(re.escape(key), body)]
    for value, whose in ((expected, "expected"), (actual, "actual")):
        if value is MISSING or isinstance(value, (dict, list)):
            continue
        wanted = json.dumps(value, ensure_ascii=False).encode()
        for place in places:
            if wanted in body[place + len(key) : place + len(key) + _NEAR + len(wanted)]:
                return Pinpoint(place, f"the event carrying {name!r} with the {whose} value")
    if places and isinstance(expected, (dict, list)):
        # An object or list is not searched by value: its key's first place is where it came.
        return Pinpoint(places[0], f"the event carrying {name!r}")
    return None
