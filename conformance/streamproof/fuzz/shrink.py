"""Shrinking a disagreement: fewer events, fewer fields, shorter strings, fewer reads.

Greedy, in the spirit of delta debugging: try each smaller variant of the
current response, keep the first that still disagrees the same way, start
again; stop when none does or the budget of adapter runs is spent. Every
variant stays ``valid`` (the model describes it without ambiguity), so the
shrunk response's expectation is as sound as the drawn one's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from .model import CallDelta, Chunk, Delta, Event, Response, StreamError, valid

__all__ = ["shrink_reads", "shrink_response", "smaller"]


def shrink_response(
    response: Response, fails: Callable[[Response], bool], budget: int
) -> tuple[Response, int]:
    """The smallest variant of ``response`` found that still ``fails``; runs left."""
    improved = True
    while improved and budget > 0:
        improved = False
        for candidate in smaller(response):
            if budget <= 0:
                break
            budget -= 1
            if fails(candidate):
                response, improved = candidate, True
                break
    return response, budget


def shrink_reads(
    ends: list[int], fails: Callable[[list[int]], bool], budget: int
) -> tuple[list[int], int]:
    """Fewer reads: drop cut points, halves first, while the body still ``fails``."""
    if len(ends) > 1 and budget > 0:
        budget -= 1
        if fails(ends[-1:]):
            return ends[-1:], budget
    size = max(1, (len(ends) - 1) // 2)
    while size >= 1 and budget > 0:
        start, changed = 0, False
        while start < len(ends) - 1 and budget > 0:
            trial = ends[:start] + ends[start + size :]
            if trial and trial[-1] == ends[-1]:
                budget -= 1
                if fails(trial):
                    ends, changed = trial, True
                    continue
            start += size
        if not changed:
            size //= 2
    return ends, budget


def smaller(response: Response) -> Iterator[Response]:
    """Variants of ``response`` one step smaller, boldest first, all valid."""
    for candidate in _variants(response):
        if candidate != response and valid(candidate):
            yield candidate


def _variants(response: Response) -> Iterator[Response]:
    if response.quirks:
        yield replace(response, quirks=frozenset())
        for quirk in sorted(response.quirks):
            yield replace(response, quirks=response.quirks - {quirk})
    events = response.events
    if response.kind == "http-error" and response.error is not None:
        for error in _smaller_error(response.error):
            yield replace(response, error=error)
        return
    if response.kind == "stream":
        half = len(events) // 2
        if half:
            yield replace(response, events=events[half:])
            yield replace(response, events=events[:half])
        for n in range(len(events)):
            yield replace(response, events=events[:n] + events[n + 1 :])
    for n, event in enumerate(events):
        for smaller_event in _smaller_event(event):
            yield replace(response, events=(*events[:n], smaller_event, *events[n + 1 :]))


def _smaller_event(event: Event) -> Iterator[Event]:
    if isinstance(event, StreamError):
        yield from _smaller_error(event)
    if not isinstance(event, Chunk):
        return
    if event.usage is not None:
        yield replace(event, usage=None)
    deltas = event.deltas
    for n in range(len(deltas)):
        yield replace(event, deltas=deltas[:n] + deltas[n + 1 :])
    for n, delta in enumerate(deltas):
        for smaller_delta in _smaller_delta(delta):
            yield replace(event, deltas=(*deltas[:n], smaller_delta, *deltas[n + 1 :]))


def _smaller_delta(delta: Delta) -> Iterator[Delta]:
    for shorter in _shorter(delta.content, allow_empty=True):
        yield replace(delta, content=shorter)
    for shorter in _shorter(delta.reasoning, allow_empty=True):
        yield replace(delta, reasoning=shorter)
    for shorter in _shorter(delta.refusal, allow_empty=True):
        yield replace(delta, refusal=shorter)
    if delta.finish_reason:
        yield replace(delta, finish_reason="")
        if delta.finish_reason not in ("stop", "error"):
            yield replace(delta, finish_reason="stop")
    calls = delta.tool_calls
    for n in range(len(calls)):
        yield replace(delta, tool_calls=calls[:n] + calls[n + 1 :])
    for n, call in enumerate(calls):
        for smaller_call in _smaller_call(call):
            yield replace(delta, tool_calls=(*calls[:n], smaller_call, *calls[n + 1 :]))


def _smaller_call(call: CallDelta) -> Iterator[CallDelta]:
    for shorter in _shorter(call.arguments, allow_empty=True):
        yield replace(call, arguments=shorter)
    for shorter in _shorter(call.id, allow_empty=False):
        yield replace(call, id=shorter)
    for shorter in _shorter(call.name, allow_empty=False):
        yield replace(call, name=shorter)


def _smaller_error(error: StreamError) -> Iterator[StreamError]:
    for shorter in _shorter(error.message, allow_empty=False):
        yield replace(error, message=shorter)
    if error.type:
        yield replace(error, type="")
    if error.code:
        yield replace(error, code="")
    if error.as_event:
        yield replace(error, as_event=False)


def _shorter(text: str, *, allow_empty: bool) -> Iterator[str]:
    """Shorter strings: empty (when allowed), one character, the first half."""
    if not text:
        return
    if allow_empty:
        yield ""
    if len(text) > 1:
        yield text[:1]
        if len(text) > 3:
            yield text[: len(text) // 2]
        yield text[1:]
