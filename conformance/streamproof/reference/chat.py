"""The reference reading of chat completion chunks, sans-IO.

``StreamAccumulator`` takes the events of ``streamproof.reference.sse`` and builds the
outcome of docs/semantics.md; ``read_completion`` reads a non-streamed body as
the one chunk it amounts to, and ``error_from_body`` reads an HTTP error.
Nothing here knows about transports, adapters or the runner.

Every rule of a chunk is in one place, the loop of ``take_events``: it takes
the undecoded events of one read, each chunk read by ``fastjson``; ``take``
and ``feed`` hand it one event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .choices import (
    Choice,
    ContentPiece,
    content_parts,
    error_fields,
    first_text,
    loads_or_text,
    logprobs_piece,
    other_parts,
    tool_call_delta,
)
from .fastjson import Text, exact_loads
from .sse import Event

__all__ = ["ContentPiece", "StreamAccumulator", "error_from_body", "read_completion"]

Outcome = dict[str, Any]


class StreamAccumulator:
    """Accumulates the chunks of one stream into an outcome."""

    def __init__(self) -> None:
        self._choices: dict[int, Choice] = {}
        self._usage: dict[str, Any] | None = None
        self._error: dict[str, Any] | None = None
        self._done = False
        self._id: str | None = None
        self._model: str | None = None

    @property
    def finished(self) -> bool:
        """True once nothing more will be accumulated ([DONE] or an error)."""
        return self._done or self._error is not None

    def fail(self, message: str) -> None:
        """Record an error found outside the chunks (a broken frame)."""
        if self._error is None:
            self._error = error_fields(message)

    def feed(self, event: Event) -> list[ContentPiece]:
        """Take one event; return the content it surfaced."""
        pieces: list[ContentPiece] = []
        if not self.finished:  # semantics §4.1, §8.4: nothing after [DONE] or an error
            self.take(event.type, event.data, pieces)
        return pieces

    def take(self, type_: str, data: Text, pieces: list[ContentPiece]) -> None:
        """Take one event as its type and data (text, or UTF-8 bytes as ``SSEDecoder.events``
        gives them); append the pieces of content it surfaced to ``pieces``.
        Like ``take_events``, it is called only while not ``finished``."""
        self.take_events([(type_, data, "", None)], pieces)

    def take_events(
        self, events: Iterable[tuple[str, Text, str, int | None]], pieces: list[ContentPiece]
    ) -> None:
        """Take the events of one read as ``SSEDecoder.events`` gives them.

        Each piece of content surfaced is appended to ``pieces``. It stops
        at [DONE] or an error; the caller calls it again only while the
        accumulator is not ``finished`` (semantics §4.1, §8.4).
        """
        known, loads, large = self._choices, exact_loads, LARGE_EVENT
        unnamed = self._id is None or self._model is None  # (kept in a local: it is read per chunk)
        for type_, data, _, _ in events:
            if type_ != "message":
                if data in _DONE:  # semantics §4.1: [DONE] ends the stream whatever the type
                    self._done = True
                    return
                if type_ == "error":
                    self._error_event(data)
                    return
                continue  # semantics §4.5
            if len(data) > large:
                data = _text_freeing(data)
            try:
                chunk = loads(data)
            except (ValueError, RecursionError) as exc:  # nested past what json reads
                if data in _DONE:  # (it is no JSON, so it is looked for only here)
                    self._done = True
                else:
                    self.fail(f"corrupt event {_text_of(data)[:_QUOTED]!r}: {exc}")
                return
            if type(chunk) is not dict:
                self.fail(f"event data is not a JSON object: {_text_of(data)[:_QUOTED]!r}")
                return
            if unnamed:
                self._id = first_text(self._id, chunk.get("id"))
                self._model = first_text(self._model, chunk.get("model"))
                unnamed = self._id is None or self._model is None
            usage = chunk.get("usage")
            if type(usage) is dict:  # (a JSON object; read this way, no call for the common null)
                self._usage = usage  # semantics §7.1, as sent
            choices = chunk.get("choices")
            for raw in choices if isinstance(choices, list) else ():
                if isinstance(raw, dict):  # (anything else in the list is no choice)
                    index = raw.get("index")
                    if type(index) is not int or index < 0:
                        index = 0  # semantics §6.1: no index that is a whole number ≥ 0, choice 0
                    choice = known.get(index)
                    if choice is None:
                        choice = known[index] = Choice(index)
                    delta = raw.get("delta")
                    if isinstance(delta, dict):
                        content = delta.get("content")
                        if type(content) is str:  # the common delta: no list to build
                            if content:
                                choice.content.append(content)
                                pieces.append((index, content))
                        else:
                            for text in content_parts(content, choice):
                                choice.content.append(text)
                                pieces.append((index, text))
                        if len(delta) > 1 or content is None:  # more than the content
                            _other_fields(choice, delta)
                    logprobs = raw.get("logprobs")
                    if type(logprobs) is dict:  # (null, the common value, costs no call)
                        logprobs_piece(choice, logprobs)  # semantics §6.10
                    reason = raw.get("finish_reason")
                    if reason and isinstance(reason, str):
                        choice.finish_reason = reason  # semantics §6.4
                        if reason == "error":
                            self.fail("finish_reason 'error'")  # semantics §8.3
            error = chunk.get("error")
            if error is not None:
                self._error = error_fields(error)  # semantics §8.1
            if self._error is not None:
                return

    def _error_event(self, data: Text) -> None:
        # semantics §8.2: the data is read as in §8.1, so a wrapped
        # {"error": {...}} gives the inner object's message, type and code.
        parsed = loads_or_text(_text_of(data))
        if isinstance(parsed, dict) and parsed.get("error") is not None:
            parsed = parsed["error"]
        self._error = error_fields(parsed)

    def outcome(self, *, ended_cleanly: bool = True) -> Outcome:
        """The outcome so far; call after the body ended."""
        choices = [self._choices[i].as_dict() for i in sorted(self._choices)]
        if self._error is not None:
            status = "error"
        elif self._done or (choices and all(c["finish_reason"] for c in choices)):
            status = "complete"
        else:
            status = "truncated"
        return {
            "status": status,
            "choices": choices,
            "usage": self._usage,
            "error": self._error,
            "id": self._id,
            "model": self._model,
        }


_DONE = (b"[DONE]", "[DONE]")

# How much of a corrupt event's text, or of an error body that is not JSON,
# an error message quotes.
_QUOTED = 80
_QUOTED_BODY = 500


def _other_fields(choice: Choice, delta: dict[str, Any]) -> None:
    """What a delta holds besides content: role, reasoning, refusal, tool calls,
    the legacy function call, audio and annotations (§6)."""
    role = delta.get("role")
    if isinstance(role, str) and role:
        choice.role = role
    reasoning = delta.get("reasoning_content")
    if not isinstance(reasoning, str) or not reasoning:  # semantics §6.6: "" is none
        reasoning = delta.get("reasoning")
    if isinstance(reasoning, str):
        choice.reasoning.append(reasoning)
    refusal = delta.get("refusal")
    if isinstance(refusal, str):
        choice.refusal.append(refusal)
    calls = delta.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict):
            tool_call_delta(choice, call)
    other_parts(choice, delta)


# An event past this size is decoded first: its bytes are freed before it is
# parsed.
LARGE_EVENT = 1024 * 1024


def _text_freeing(data: Text) -> str:
    """``data`` decoded; a bytearray (the decoder's own buffer, no one else's) is emptied."""
    text = _text_of(data)
    if isinstance(data, bytearray):
        data.clear()
    return text


def _text_of(data: Text) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def error_from_body(status: int, body: bytes) -> Outcome:
    """The outcome of an HTTP error status (semantics §8.5, §8.6)."""
    parsed = loads_or_text(_text_of(body))
    if isinstance(parsed, dict) and "error" in parsed:
        error = parsed["error"]
    elif isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        error = parsed
    else:
        text = parsed if isinstance(parsed, str) else json.dumps(parsed)
        error = text.strip()[:_QUOTED_BODY] or f"HTTP {status}"
    outcome = _failed(error)
    outcome["error"]["http_status"] = status
    return outcome


def read_completion(body: bytes) -> Outcome:
    """The outcome of a non-streamed ``chat.completion`` body (semantics §9)."""
    try:
        parsed = json.loads(_text_of(body))
    except (ValueError, RecursionError) as exc:
        return _failed(f"body is not JSON: {exc}")
    if not isinstance(parsed, dict):
        return _failed("body is not a JSON object")
    # A completion reads as the one chunk it amounts to, each choice's
    # message as its delta (§9 asks of a message what §6 asks of a delta),
    # and then the end of the stream; a top-level error makes it an error, as
    # in a chunk (§8.1).
    choices = parsed.get("choices")
    if isinstance(choices, list):
        choices = [{**c, "delta": c.get("message")} for c in choices if isinstance(c, dict)]
    accumulator = StreamAccumulator()
    accumulator.take("message", json.dumps({**parsed, "choices": choices}), [])
    accumulator.take("message", "[DONE]", [])
    return accumulator.outcome()


def _failed(error: Any) -> Outcome:
    """The outcome of a body that is an error: ``error`` is read as in semantics §8.1."""
    return {
        "status": "error",
        "choices": [],
        "usage": None,
        "error": error_fields(error),
        "id": None,
        "model": None,
    }
