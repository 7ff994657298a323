"""What the chunks build: the choices, their tool calls and content pieces, errors.

The data model shared by ``chat``'s stream accumulation and its reading of
non-streamed bodies, and the rules for reading a provider's values into it
(docs/semantics.md §6, §8.1, §10).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Audio",
    "Choice",
    "ContentPiece",
    "NamedText",
    "ToolCall",
    "content_parts",
    "error_fields",
    "first_text",
    "loads_or_text",
    "logprobs_piece",
    "other_parts",
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
    #: A custom tool call's ``custom`` object (semantics §6.9): its name and
    #: input pieces; ``None`` while no delta of the call carried one.
    custom: NamedText | None = None
    function_seen: bool = False

    def as_dict(self) -> dict[str, Any]:
        call: dict[str, Any] = {"index": self.index, "id": self.id, "type": self.type}
        if self.custom is None or self.function_seen:
            call["function"] = {"name": self.name, "arguments": "".join(self.arguments)}
        if self.custom is not None:
            call["custom"] = {"name": self.custom.name, "input": "".join(self.custom.pieces)}
        return call


@dataclass(slots=True)
class NamedText:
    """A name (the first non-empty one) and the pieces of a text: a custom
    tool's input (semantics §6.9), a legacy function call's arguments (§6.8)."""

    name: str | None = None
    pieces: list[str] = field(default_factory=list)

    def take(self, name: Any, piece: Any) -> None:
        self.name = first_text(self.name, name)
        if isinstance(piece, str):
            self.pieces.append(piece)


@dataclass(slots=True)
class Audio:
    """A choice's audio (semantics §6.11): the decoded bytes of every ``data``
    piece, or the pieces as sent once one of them is not base64."""

    id: str | None = None
    data: bytearray = field(default_factory=bytearray)
    pieces: list[str] = field(default_factory=list)
    decodes: bool = True
    transcript: list[str] = field(default_factory=list)
    expires_at: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data = base64.b64encode(self.data).decode() if self.decodes else "".join(self.pieces)
        return {
            "id": self.id,
            "data": data,
            "transcript": "".join(self.transcript),
            "expires_at": self.expires_at,
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
    # The parts of semantics §6.8 to §6.12, each None until one arrived (an
    # outcome leaves them out then, which reads as null or [], §12.3).
    function_call: NamedText | None = None
    logprobs: dict[str, list[Any] | None] | None = None
    audio: Audio | None = None
    annotations: list[Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        choice: dict[str, Any] = {
            "index": self.index,
            "role": self.role,
            "content": "".join(self.content),
            "reasoning": "".join(self.reasoning),
            "refusal": "".join(self.refusal),
            "finish_reason": self.finish_reason,
            "tool_calls": [self.tool_calls[i].as_dict() for i in sorted(self.tool_calls)],
        }
        if self.function_call is not None:
            call = self.function_call
            choice["function_call"] = {"name": call.name, "arguments": "".join(call.pieces)}
        if self.logprobs is not None:
            choice["logprobs"] = dict(self.logprobs)
        if self.audio is not None:
            choice["audio"] = self.audio.as_dict()
        if self.annotations is not None:
            choice["annotations"] = self.annotations
        return choice


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
        elif (
            open_call.id
            and isinstance(new_id, str)
            and new_id
            and new_id != open_call.id
            and _names_a_tool(raw)
        ):
            # Another id at an index in use starts another call when it names
            # its tool (servers reuse index 0 for each call); it takes the next
            # free index. A nameless fragment with a fresh id continues the
            # open call (LM Studio sends a new id with every piece of one call).
            call = choice.open_calls[index] = _new_call(choice)
        else:
            call = open_call
    call.id = first_text(call.id, new_id)
    call.type = first_text(call.type, raw.get("type"))
    function = raw.get("function")
    if isinstance(function, dict):
        call.function_seen = True
        call.name = first_text(call.name, function.get("name"))
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])
    custom = raw.get("custom")
    if isinstance(custom, dict):  # semantics §6.9: a custom tool's name and input pieces
        if call.custom is None:
            call.custom = NamedText()
        call.custom.take(custom.get("name"), custom.get("input"))


def _names_a_tool(raw: dict[str, Any]) -> bool:
    """Whether a fragment carries a non-empty function or custom tool name (semantics §6.7)."""
    for key in ("function", "custom"):
        part = raw.get(key)
        if isinstance(part, dict) and isinstance(part.get("name"), str) and part["name"]:
            return True
    return False


def other_parts(choice: Choice, delta: dict[str, Any]) -> None:
    """The legacy function call, audio and annotations of a delta or a message
    (semantics §6.8, §6.11, §6.12)."""
    function_call = delta.get("function_call")
    if isinstance(function_call, dict):
        if choice.function_call is None:
            choice.function_call = NamedText()
        choice.function_call.take(function_call.get("name"), function_call.get("arguments"))
    audio = delta.get("audio")
    if isinstance(audio, dict):
        _audio_piece(choice, audio)
    annotations = delta.get("annotations")
    if isinstance(annotations, list):
        if choice.annotations is None:
            choice.annotations = []
        choice.annotations.extend(annotations)  # each delta adds its own, as sent


def logprobs_piece(choice: Choice, logprobs: dict[str, Any]) -> None:
    """Token lists of one chunk's ``logprobs`` object, concatenated (semantics §6.10)."""
    if choice.logprobs is None:
        choice.logprobs = {"content": None, "refusal": None}
    for key in ("content", "refusal"):
        tokens = logprobs.get(key)
        if isinstance(tokens, list):
            known = choice.logprobs[key]
            if known is None:
                choice.logprobs[key] = list(tokens)
            else:
                known.extend(tokens)


def _audio_piece(choice: Choice, audio: dict[str, Any]) -> None:
    if choice.audio is None:
        choice.audio = Audio()
    state = choice.audio
    state.id = first_text(state.id, audio.get("id"))
    data = audio.get("data")
    if isinstance(data, str) and data:
        state.pieces.append(data)
        if state.decodes:
            try:  # each piece is base64 of its own bytes: decode, then join
                state.data += base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                state.decodes = False  # not base64: the pieces are reported as sent
    transcript = audio.get("transcript")
    if isinstance(transcript, str):
        state.transcript.append(transcript)
    expires_at = audio.get("expires_at")
    if type(expires_at) is int:
        state.expires_at = expires_at  # the last one sent


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
