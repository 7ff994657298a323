"""What the chunks build: the choices, their tool calls and content pieces, errors.

The data model shared by ``chat``'s stream accumulation and its reading of
non-streamed bodies, and the rules for reading a provider's values into it
(docs/semantics.md §6, §8.1, §10).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Choice",
    "ContentPiece",
    "ToolCall",
    "content_parts",
    "error_fields",
    "first_text",
    "loads_or_text",
    "tool_call_delta",
]


#: A piece of content surfaced by one event (semantics §11): the index of its
#: choice and its text. A plain tuple: a stream surfaces one per content delta,
#: and building a class instance for each cost the parser a twentieth of its time.
ContentPiece = tuple[int, str]


@dataclass(slots=True)
class ToolCall:
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
class Choice:
    index: int
    role: str | None = None
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    tool_calls: dict[int, ToolCall] = field(default_factory=dict)
    #: The call each index as sent continues (semantics §6.7): it differs
    #: from the index only where a new id started a new call there.
    open_calls: dict[int, ToolCall] = field(default_factory=dict)

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


def first_text(current: str | None, value: Any) -> str | None:
    """Keep the first non-empty string (semantics §6.7, §10)."""
    if current:
        return current
    return value if isinstance(value, str) and value else current


def error_fields(error: Any) -> dict[str, Any]:
    """The outcome's error from a provider's error value (semantics §8.1)."""
    if isinstance(error, dict):
        message, type_, code = error.get("message"), error.get("type"), error.get("code")
    else:  # a string is the message; anything else is shown as JSON
        message, type_, code = error, None, None
    return {
        "message": message if isinstance(message, str) else json.dumps(error),
        "type": type_ if isinstance(type_, str) else None,
        "code": code if type(code) in (str, int) else None,  # (not a bool)
    }


def content_parts(content: Any, choice: Choice) -> list[str]:
    """Text to add to content from an array of parts; thinking parts go to reasoning
    (semantics §6.3). A string is the caller's to add; anything else adds nothing."""
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"]:
                texts.append(part["text"])
        elif part.get("type") == "thinking":
            choice.reasoning.extend(thinking_texts(part.get("thinking")))
    return texts


def thinking_texts(thinking: Any) -> list[str]:
    """A thinking part's text: a string, or (Mistral) a list of text parts."""
    if isinstance(thinking, str):
        return [thinking]
    if isinstance(thinking, list):
        return [
            p["text"] for p in thinking if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    return []


def tool_call_delta(choice: Choice, raw: dict[str, Any]) -> None:
    """Add one tool-call fragment to its call (semantics §6.7)."""
    index = raw.get("index")
    new_id = raw.get("id")
    if type(index) is not int or index < 0:
        # A call without an index that is a whole number ≥ 0 is a whole call in
        # one delta (seen from some servers): it takes the next free index.
        call = _new_call(choice)
    else:
        open_call = choice.open_calls.get(index)
        if open_call is None:
            call = choice.open_calls[index] = _new_call(choice, index)
        elif open_call.id and isinstance(new_id, str) and new_id and new_id != open_call.id:
            # Another id at an index in use starts another call (servers reuse
            # index 0 for each call); it takes the next free index.
            call = choice.open_calls[index] = _new_call(choice)
        else:
            call = open_call
    call.id = first_text(call.id, new_id)
    call.type = first_text(call.type, raw.get("type"))
    function = raw.get("function")
    if isinstance(function, dict):
        call.name = first_text(call.name, function.get("name"))
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])


def _new_call(choice: Choice, index: int | None = None) -> ToolCall:
    """A call at ``index``, or at the index after every one in use."""
    calls = choice.tool_calls
    if index is None or index in calls:
        index = max(calls) + 1 if calls else 0
    call = calls[index] = ToolCall(index)
    return call


def loads_or_text(data: str) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return data
