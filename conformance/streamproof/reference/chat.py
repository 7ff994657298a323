"""The reference reading of chat completion chunks, sans-IO.

``StreamAccumulator`` takes the events of ``streamproof.reference.sse`` and builds the
outcome of docs/semantics.md; ``read_body`` does the same for a whole
non-streamed body or an HTTP error. Nothing here knows about transports,
adapters or the runner.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .fastjson import Text, exact_loads, fast_loads, has_float
from .sse import Event

__all__ = ["ContentPiece", "StreamAccumulator", "error_from_body", "read_completion"]

Outcome = dict[str, Any]


@dataclass(slots=True, unsafe_hash=True)
class ContentPiece:
    """A piece of content surfaced by one event (semantics §11). Read-only by convention."""

    choice: int
    content: str


@dataclass(slots=True)
class _ToolCall:
    index: int
    id: str | None = None
    type: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "id": self.id,
            "type": self.type,
            "function": {"name": self.name, "arguments": "".join(self.arguments)},
        }


@dataclass(slots=True)
class _Choice:
    index: int
    role: str | None = None
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    tool_calls: dict[int, _ToolCall] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "role": self.role,
            "content": "".join(self.content),
            "reasoning": "".join(self.reasoning),
            "refusal": "".join(self.refusal),
            "finish_reason": self.finish_reason,
            "tool_calls": [self.tool_calls[i].as_dict() for i in sorted(self.tool_calls)],
        }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _first(current: str | None, value: Any) -> str | None:
    """Keep the first non-empty string (semantics §6.7, §10)."""
    if current:
        return current
    return value if isinstance(value, str) and value else current


def _error_fields(error: Any) -> dict[str, Any]:
    """The outcome's error from a provider's error value (semantics §8.1)."""
    if isinstance(error, dict):
        code = error.get("code")
        return {
            "message": _text(error.get("message")) or json.dumps(error),
            "type": error.get("type") if isinstance(error.get("type"), str) else None,
            "code": code if isinstance(code, (str, int)) and not isinstance(code, bool) else None,
        }
    if isinstance(error, str):
        return {"message": error, "type": None, "code": None}
    return {"message": json.dumps(error), "type": None, "code": None}


class StreamAccumulator:
    """Accumulates the chunks of one stream into an outcome."""

    def __init__(self) -> None:
        self._choices: dict[int, _Choice] = {}
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
            self._error = {"message": message, "type": None, "code": None}

    def feed(self, event: Event) -> list[ContentPiece]:
        """Take one event; return the content it surfaced."""
        pieces: list[ContentPiece] = []
        if event.type == "message" and event.data == "[DONE]":
            if not self.finished:
                self._done = True
        else:
            self.take(event.type, event.data, pieces)
        return pieces

    def take(self, type_: str, data: Text, pieces: list[ContentPiece]) -> None:
        """Take one event as its type and data (UTF-8 bytes as ``SSEDecoder.events`` gives
        them, or text); append the content it surfaced to ``pieces``."""
        if self._done or self._error is not None:
            return  # semantics §4.1, §8.4: nothing after [DONE] or an error
        if type_ != "message":
            if type_ == "error":
                # semantics §8.2: the data is read as in §8.1, so a wrapped
                # {"error": {...}} gives the inner object's message, type and code.
                parsed = _loads_or_text(_text_of(data))
                if isinstance(parsed, dict) and parsed.get("error") is not None:
                    parsed = parsed["error"]
                self._error = _error_fields(parsed)
            return  # semantics §4.5
        if data == b"[DONE]":
            self._done = True
            return
        # Text (``feed``, or a large event from the reader) goes to json directly.
        fast = fast_loads() if type(data) is not str else None
        chunk: Any = None
        if fast is not None:
            try:
                chunk = fast(data)
            except ValueError:
                fast = None
        if fast is None:
            try:
                chunk = exact_loads(data)
            except ValueError as exc:
                self.fail(f"corrupt event {_text_of(data)[:80]!r}: {exc}")
                return
        if type(chunk) is not dict:
            self.fail(f"event data is not a JSON object: {_text_of(data)[:80]!r}")
            return
        self._chunk(chunk, data if fast is not None else None, pieces)

    def _chunk(self, chunk: dict[str, Any], fast: Text | None, pieces: list[ContentPiece]) -> None:
        # ``fast`` is the chunk's text when orjson read it: where a number
        # reaches the outcome, a float may be an integer past 64 bits, and the
        # standard library's reading of the text decides (see fastjson).
        if self._id is None:
            self._id = _first(None, chunk.get("id"))
        if self._model is None:
            self._model = _first(None, chunk.get("model"))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            if fast is not None and has_float(usage):
                usage = exact_loads(fast)["usage"]
            self._usage = usage  # semantics §7.1, as sent
        choices = chunk.get("choices")
        if type(choices) is list:
            for position, raw in enumerate(choices):
                if type(raw) is not dict:
                    continue
                if fast is not None and _inexact_numbers(raw):
                    raw = exact_loads(fast)["choices"][position]
                if isinstance(raw.get("index", 0), int):
                    self._choice_delta(raw, pieces)
        error = chunk.get("error")
        if error is not None:
            if fast is not None and has_float(error):
                error = exact_loads(fast)["error"]
            self._error = _error_fields(error)  # semantics §8.1

    def _choice_delta(self, raw: dict[str, Any], pieces: list[ContentPiece]) -> None:
        index = raw.get("index", 0)
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = _Choice(index)
        delta = raw.get("delta")
        if type(delta) is dict:
            content = delta.get("content")
            if type(content) is str:
                if content:
                    choice.content.append(content)
                    pieces.append(ContentPiece(index, content))
            elif content is not None:
                for text in _content_parts(content, choice):
                    choice.content.append(text)
                    pieces.append(ContentPiece(index, text))
            if len(delta) > 1 or content is None:
                _delta_rest(choice, delta)
        reason = raw.get("finish_reason")
        if reason and isinstance(reason, str):
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


def _delta_rest(choice: _Choice, delta: dict[str, Any]) -> None:
    """Everything of a delta but its content."""
    role = delta.get("role")
    if isinstance(role, str) and role:
        choice.role = role
    if isinstance(delta.get("reasoning_content"), str):
        choice.reasoning.append(delta["reasoning_content"])
    elif isinstance(delta.get("reasoning"), str):
        choice.reasoning.append(delta["reasoning"])
    if isinstance(delta.get("refusal"), str):
        choice.refusal.append(delta["refusal"])
    calls = delta.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            _tool_call_delta(choice, call)


def _content_parts(content: Any, choice: _Choice) -> list[str]:
    """Text to add to content; thinking parts go to reasoning (semantics §6.3)."""
    if isinstance(content, str):
        return [content] if content else []
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                texts.append(part["text"])
        elif part.get("type") == "thinking":
            choice.reasoning.extend(_thinking_texts(part.get("thinking")))
    return texts


def _thinking_texts(thinking: Any) -> list[str]:
    """A thinking part's text: a string, or (Mistral) a list of text parts."""
    if isinstance(thinking, str):
        return [thinking]
    if isinstance(thinking, list):
        return [
            p["text"] for p in thinking if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def _tool_call_delta(choice: _Choice, raw: dict[str, Any]) -> None:
    index = raw.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        # A call without an index is a whole call in one delta (seen from
        # some servers); it takes the next free slot.
        index = len(choice.tool_calls)
    call = choice.tool_calls.get(index)
    if call is None:
        call = choice.tool_calls[index] = _ToolCall(index)
    call.id = _first(call.id, raw.get("id"))
    call.type = _first(call.type, raw.get("type"))
    function = raw.get("function")
    if isinstance(function, dict):
        call.name = _first(call.name, function.get("name"))
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])


def _loads_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


def error_from_body(status: int, body: bytes) -> Outcome:
    """The outcome of an HTTP error status (semantics §8.5, §8.6)."""
    parsed = _loads_or_text(body.decode("utf-8", errors="replace"))
    if isinstance(parsed, dict) and "error" in parsed:
        error = _error_fields(parsed["error"])
    elif isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        error = _error_fields(parsed)
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
    except ValueError as exc:
        return _failed(f"body is not JSON: {exc}")
    if not isinstance(parsed, dict):
        return _failed("body is not a JSON object")
    if parsed.get("error") is not None:
        return {**_failed(""), "error": _error_fields(parsed["error"])}
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
    choice = _Choice(index if isinstance(index, int) else 0)
    message = raw.get("message")
    if isinstance(message, dict):
        choice.role = message.get("role") if isinstance(message.get("role"), str) else None
        choice.content.extend(_content_parts(message.get("content"), choice))
        reasoning = message.get("reasoning_content")
        if not isinstance(reasoning, str):
            reasoning = message.get("reasoning")
        if isinstance(reasoning, str):
            choice.reasoning.append(reasoning)
        choice.refusal.append(_text(message.get("refusal")))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                _tool_call_delta(choice, call)
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
