"""The reference reading of chat completion chunks, sans-IO.

``StreamAccumulator`` takes the events of ``streamproof.reference.sse`` and builds the
outcome of docs/semantics.md; ``read_completion`` and ``error_from_body`` do
the same for a whole non-streamed body or an HTTP error. Nothing here knows
about transports, adapters or the runner.

``take_events`` is the path of ``ResponseReader``: the undecoded events of one
read, each chunk read by ``fastjson`` and the common chunk (content at an
integer index) accumulated in line; everything else goes through ``take``
and ``_chunk``, which hold every rule.
"""

from __future__ import annotations

import json
from itertools import starmap
from typing import Any

from .choices import (
    Choice,
    ContentPiece,
    content_parts,
    error_fields,
    first_text,
    loads_or_text,
    text_or_empty,
    tool_call_delta,
)
from .fastjson import Text, exact_loads, fast_loads, has_float
from .sse import Event, RawEvent

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
        self._fast = fast_loads()

    @property
    def finished(self) -> bool:
        """True once nothing more will be accumulated ([DONE] or an error)."""
        return self._done or self._error is not None

    def fail(self, message: str) -> None:
        """Record an error found outside the chunks (a broken frame)."""
        if self._error is None:
            self._error = {"message": message, "type": None, "code": None}

    def feed(self, event: Event) -> list[ContentPiece]:
        """Take one event; return the content it surfaced."""
        pairs: list[tuple[int, str]] = []
        if event.type == "message" and event.data == "[DONE]":
            if not self.finished:
                self._done = True
        else:
            self.take(event.type, event.data, pairs)
        return list(starmap(ContentPiece, pairs))

    def take_events(self, events: list[RawEvent], pairs: list[tuple[int, str]]) -> None:
        """Take the events of one read as ``SSEDecoder.events`` gives them.

        Each piece of content surfaced is appended to ``pairs`` as
        ``(choice, content)``: ``ContentPiece(*pair)`` is the piece.
        """
        if self._done or self._error is not None:
            return
        fast = self._fast  # None: json reads every chunk, and its numbers are exact
        loads = fast or exact_loads
        known = self._choices
        large = LARGE_EVENT
        ids_known = self._id is not None and self._model is not None
        for type_, data, _, _ in events:
            # Every path that can finish the stream checks for it after.
            if len(data) > large or type_ != "message":
                self.take(type_, _text_freeing(data) if len(data) > large else data, pairs)
                if self._done or self._error is not None:
                    return
                ids_known = self._id is not None and self._model is not None
                continue
            try:
                chunk = loads(data)
            except ValueError:  # [DONE], or a text for json to read or to refuse
                chunk = None
            if (
                type(chunk) is not dict
                or not ids_known
                or ("usage" in chunk and chunk["usage"] is not None)
                or "error" in chunk
            ):
                if type(chunk) is dict:
                    self._chunk(chunk, data if fast else None, pairs)
                else:
                    self.take(type_, data, pairs)
                if self._done or self._error is not None:
                    return
                ids_known = self._id is not None and self._model is not None
                continue
            # The common chunk, in line: what _chunk does when only choices count.
            choices = chunk.get("choices")
            if type(choices) is not list:
                continue
            finishing = False
            for raw in choices:
                if type(raw) is not dict:
                    continue
                index = raw.get("index", 0)
                delta = raw.get("delta")
                if type(index) is int and type(delta) is dict and len(delta) == 1:
                    content = delta.get("content")
                    if type(content) is str:
                        choice = known.get(index)
                        if choice is None:
                            choice = known[index] = Choice(index)
                        if content:
                            choice.content.append(content)
                            pairs.append((index, content))
                        reason = raw.get("finish_reason")
                        if reason and isinstance(reason, str):
                            self._finish(choice, reason)
                            finishing = True
                        continue
                self._choice(choices, raw, data if fast else None, pairs)
                finishing = True
            if finishing and self._error is not None:
                return

    def take(self, type_: str, data: Text, pairs: list[tuple[int, str]]) -> None:
        """Take one event as its type and data (UTF-8 bytes as ``SSEDecoder.events`` gives
        them, or text); append ``(choice, content)`` of the content it surfaced to ``pairs``."""
        if self._done or self._error is not None:
            return  # semantics §4.1, §8.4: nothing after [DONE] or an error
        if type_ != "message":
            if type_ == "error":
                # semantics §8.2: the data is read as in §8.1, so a wrapped
                # {"error": {...}} gives the inner object's message, type and code.
                parsed = loads_or_text(_text_of(data))
                if isinstance(parsed, dict) and parsed.get("error") is not None:
                    parsed = parsed["error"]
                self._error = error_fields(parsed)
            return  # semantics §4.5
        if data == b"[DONE]":
            self._done = True
            return
        # Text (``feed``, or a large event) goes to json directly.
        fast = self._fast if type(data) is not str else None
        chunk: Any = None
        if fast is not None:
            try:
                chunk = fast(data)
            except (ValueError, RecursionError):
                fast = None
        if fast is None:
            try:
                chunk = exact_loads(data)
            except (ValueError, RecursionError) as exc:  # nested past what json reads
                self.fail(f"corrupt event {_text_of(data)[:80]!r}: {exc}")
                return
        if type(chunk) is not dict:
            self.fail(f"event data is not a JSON object: {_text_of(data)[:80]!r}")
            return
        self._chunk(chunk, data if fast is not None else None, pairs)

    def _chunk(
        self, chunk: dict[str, Any], fast: Text | None, pairs: list[tuple[int, str]]
    ) -> None:
        # ``fast`` is the chunk's text when orjson read it: where a number
        # reaches the outcome, a float may be an integer past 64 bits, and the
        # standard library's reading of the text decides (see fastjson).
        if self._id is None:
            self._id = first_text(None, chunk.get("id"))
        if self._model is None:
            self._model = first_text(None, chunk.get("model"))
        usage = chunk.get("usage")
        if usage is not None and isinstance(usage, dict):
            if fast is not None and has_float(usage):
                usage = exact_loads(fast)["usage"]
            self._usage = usage  # semantics §7.1, as sent
        choices = chunk.get("choices")
        if type(choices) is list:
            known = self._choices
            for raw in choices:
                if type(raw) is not dict:
                    continue
                # The common delta, {"content": "..."} at an integer index, in line.
                index = raw.get("index", 0)
                delta = raw.get("delta")
                if type(index) is int and type(delta) is dict and len(delta) == 1:
                    content = delta.get("content")
                    if type(content) is str:
                        choice = known.get(index)
                        if choice is None:
                            choice = known[index] = Choice(index)
                        if content:
                            choice.content.append(content)
                            pairs.append((index, content))
                        reason = raw.get("finish_reason")
                        if reason and isinstance(reason, str):
                            self._finish(choice, reason)
                        continue
                self._choice(choices, raw, fast, pairs)
        error = chunk.get("error")
        if error is not None:
            if fast is not None and has_float(error):
                error = exact_loads(fast)["error"]
            self._error = error_fields(error)  # semantics §8.1

    def _choice(
        self,
        choices: list[Any],
        raw: dict[str, Any],
        fast: Text | None,
        pairs: list[tuple[int, str]],
    ) -> None:
        if fast is not None and _inexact_numbers(raw):
            position = next(i for i, c in enumerate(choices) if c is raw)
            raw = exact_loads(fast)["choices"][position]
        if isinstance(raw.get("index", 0), int):
            self._choice_delta(raw, pairs)

    def _choice_delta(self, raw: dict[str, Any], pairs: list[tuple[int, str]]) -> None:
        index = raw.get("index", 0)
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = Choice(index)
        delta = raw.get("delta")
        if isinstance(delta, dict):
            if isinstance(delta.get("role"), str) and delta["role"]:
                choice.role = delta["role"]
            for text in content_parts(delta.get("content"), choice):
                choice.content.append(text)
                pairs.append((index, text))
            if isinstance(delta.get("reasoning_content"), str):
                choice.reasoning.append(delta["reasoning_content"])
            elif isinstance(delta.get("reasoning"), str):
                choice.reasoning.append(delta["reasoning"])
            if isinstance(delta.get("refusal"), str):
                choice.refusal.append(delta["refusal"])
            calls = delta.get("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                if isinstance(call, dict):
                    tool_call_delta(choice, call)
        reason = raw.get("finish_reason")
        if reason and isinstance(reason, str):
            self._finish(choice, reason)

    def _finish(self, choice: Choice, reason: str) -> None:
        choice.finish_reason = reason  # semantics §6.4
        if reason == "error" and self._error is None:
            self._error = {"message": "finish_reason 'error'", "type": None, "code": None}

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


# An event past this size is decoded first and read by the standard library's
# json: its bytes are freed before it is parsed, and orjson, fast on chunks,
# needs several times an event's size on a large one.
LARGE_EVENT = 1024 * 1024


def _text_freeing(data: bytes | bytearray) -> str:
    """``data`` decoded; a bytearray (the decoder's own buffer, no one else's) is emptied."""
    text = data.decode("utf-8", errors="replace")
    if isinstance(data, bytearray):
        data.clear()
    return text


def _text_of(data: Text) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def _inexact_numbers(raw: dict[str, Any]) -> bool:
    """True when a choice's index or a tool call's index is a float (see fastjson)."""
    if type(raw.get("index")) is float:
        return True
    delta = raw.get("delta")
    calls = delta.get("tool_calls") if type(delta) is dict else None
    if type(calls) is not list:
        return False
    return any(type(c) is dict and type(c.get("index")) is float for c in calls)


def error_from_body(status: int, body: bytes) -> Outcome:
    """The outcome of an HTTP error status (semantics §8.5, §8.6)."""
    parsed = loads_or_text(body.decode("utf-8", errors="replace"))
    if isinstance(parsed, dict) and "error" in parsed:
        error = error_fields(parsed["error"])
    elif isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        error = error_fields(parsed)
    else:
        text = parsed if isinstance(parsed, str) else json.dumps(parsed)
        error = {"message": text.strip()[:500] or f"HTTP {status}", "type": None, "code": None}
    error["http_status"] = status
    return {
        "status": "error",
        "choices": [],
        "usage": None,
        "error": error,
        "id": None,
        "model": None,
    }


def read_completion(body: bytes) -> Outcome:
    """The outcome of a non-streamed ``chat.completion`` body (semantics §9)."""
    try:
        parsed = json.loads(body.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:
        return _failed(f"body is not JSON: {exc}")
    if not isinstance(parsed, dict):
        return _failed("body is not a JSON object")
    if parsed.get("error") is not None:
        return {**_failed(""), "error": error_fields(parsed["error"])}
    choices = []
    for raw in parsed.get("choices") or []:
        if isinstance(raw, dict):
            choices.append(_message_choice(raw))
    choices.sort(key=lambda c: c["index"])
    usage = parsed.get("usage")
    return {
        "status": "complete",
        "choices": choices,
        "usage": usage if isinstance(usage, dict) else None,
        "error": None,
        "id": parsed.get("id") if isinstance(parsed.get("id"), str) else None,
        "model": parsed.get("model") if isinstance(parsed.get("model"), str) else None,
    }


def _message_choice(raw: dict[str, Any]) -> dict[str, Any]:
    index = raw.get("index", 0)
    choice = Choice(index if isinstance(index, int) else 0)
    message = raw.get("message")
    if isinstance(message, dict):
        choice.role = message.get("role") if isinstance(message.get("role"), str) else None
        choice.content.extend(content_parts(message.get("content"), choice))
        reasoning = message.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = message.get("reasoning")
        if isinstance(reasoning, str):
            choice.reasoning.append(reasoning)
        choice.refusal.append(text_or_empty(message.get("refusal")))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                tool_call_delta(choice, call)
    reason = raw.get("finish_reason")
    choice.finish_reason = reason if isinstance(reason, str) and reason else None
    return choice.as_dict()


def _failed(message: str) -> Outcome:
    return {
        "status": "error",
        "choices": [],
        "usage": None,
        "error": {"message": message, "type": None, "code": None},
        "id": None,
        "model": None,
    }
