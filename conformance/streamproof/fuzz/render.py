"""An abstract response as the bytes a server would send.

Deterministic: the same ``Response`` always gives the same bytes, so a
shrunk response reproduces. ``Response.quirks`` chooses framing variants
and chunk shapes, each named by its id in ``corpus/quirks.json``; none of
them changes what the response means (docs/semantics.md §3, §4.4, §6).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from .model import (
    AudioDelta,
    CallDelta,
    Chunk,
    Delta,
    Done,
    Event,
    Response,
    StreamError,
    token_logprob,
    url_citation,
)

__all__ = ["FRAMING", "JSON_SHAPES", "LINE_ENDS", "QUIRKS", "Wire", "render"]

#: Line-end quirks; at most one applies (LF when none).
LINE_ENDS = ("crlf", "cr", "mixed-line-endings")
#: Framing quirks of the event stream (§3).
FRAMING = (
    *LINE_ENDS,
    "no-space-after-colon",
    "space-after-colon",
    "comment",
    "bom",
    "multi-line-data",
    "event-id",
    "retry",
    "unknown-field",
    "blank-lines",
    "no-final-blank-line",
)
#: Chunk shapes that say the same thing another way (§4.4, §6).
JSON_SHAPES = (
    "json-python-separators",
    "alphabetical-keys",
    "content-null",
    "finish-reason-key-missing",
    "finish-reason-empty-string",
    "usage-null",
    "tool-calls-null",
    "role-every-delta",
    "vendor-fields",
    "obfuscation",
)
QUIRKS = (*FRAMING, *JSON_SHAPES)
CREATED = 1700000000


@dataclass(frozen=True)
class Wire:
    """A response on the wire: what a case's ``response`` and body file hold."""

    status: int
    headers: dict[str, str]
    request: dict[str, Any]
    body: bytes
    body_name: str


def render(response: Response) -> Wire:
    request: dict[str, Any] = {
        "model": response.model,
        "messages": [{"role": "user", "content": "fuzz"}],
        "stream": response.kind == "stream",
    }
    if any(isinstance(e, Chunk) and e.usage for e in response.events):
        request["stream_options"] = {"include_usage": True}
    if response.kind == "http-error":
        return _http_error(response, request)
    if response.kind == "json":
        body = _dumps(_completion(response), response.quirks).encode()
        return Wire(200, {"content-type": "application/json"}, request, body, "response.json")
    headers = {"content-type": "text/event-stream; charset=utf-8"}
    return Wire(200, headers, request, _stream(response), "response.sse")


def _http_error(response: Response, request: dict[str, Any]) -> Wire:
    error = response.error
    assert error is not None
    if response.html:
        page = f"<html><body><h1>{response.status} Bad Gateway</h1></body></html>\n"
        return Wire(
            response.status, {"content-type": "text/html"}, request, page.encode(), "response.body"
        )
    body = _dumps({"error": _error_object(error)}, response.quirks).encode()
    return Wire(
        response.status, {"content-type": "application/json"}, request, body, "response.body"
    )


def _error_object(error: StreamError) -> dict[str, Any]:
    found: dict[str, Any] = {"message": error.message}
    if error.type:
        found["type"] = error.type
    if error.code:
        found["code"] = error.code
    return found


def _dumps(value: Any, quirks: frozenset[str], indent: int | None = None) -> str:
    if "json-python-separators" in quirks:
        return json.dumps(value, sort_keys="alphabetical-keys" in quirks, indent=indent)
    return json.dumps(
        value,
        ensure_ascii=False,
        separators=(",", ":") if indent is None else (",", ": "),
        sort_keys="alphabetical-keys" in quirks,
        indent=indent,
    )


# -- the event stream ---------------------------------------------------------


def _stream(response: Response) -> bytes:
    quirks = response.quirks
    lines: list[str] = []  # "" is a blank line
    seen: set[int] = set()
    for n, event in enumerate(response.events):
        if "comment" in quirks:
            lines.append(": keep-alive")
        if "event-id" in quirks:
            lines.append(f"id: {n + 1}")
        if "retry" in quirks and n == 0:
            lines.append("retry: 3000")
        if "unknown-field" in quirks:
            lines.append("x-fuzz: 1")
        lines.extend(_event_lines(response, event, seen))
        lines.append("")
        if "blank-lines" in quirks:
            lines.append("")
    if "no-final-blank-line" in quirks and lines:
        while lines and lines[-1] == "":
            lines.pop()
    text = _join(lines, quirks)
    if "no-final-blank-line" in quirks:
        text = text[: -len(_last_end(text))] if _last_end(text) else text
    return ("\ufeff" if "bom" in quirks else "").encode() + text.encode()


def _last_end(text: str) -> str:
    if text.endswith("\r\n"):
        return "\r\n"
    return text[-1:] if text[-1:] in ("\r", "\n") else ""


def _join(lines: list[str], quirks: frozenset[str]) -> str:
    """Every line with its end; the ends of mixed-line-endings cycle, and a lone
    CR is never followed by an end that starts with LF (that would be one CRLF, §3.1)."""
    fixed = "\r\n" if "crlf" in quirks else "\r" if "cr" in quirks else "\n"
    out: list[str] = []
    cycle = ("\n", "\r\n", "\r")
    previous = ""
    for n, line in enumerate(lines):
        end = fixed
        if "mixed-line-endings" in quirks:
            end = cycle[n % 3]
            if previous == "\r" and not line and end.startswith("\n"):
                end = "\r"
        out.append(line + end)
        previous = end
    return "".join(out)


def _field(name: str, value: str, quirks: frozenset[str], *, json_value: bool) -> str:
    if "no-space-after-colon" in quirks:
        return f"{name}:{value}"
    if "space-after-colon" in quirks and json_value:
        return f"{name}:  {value}"  # §3.4: one space is removed, the other is JSON whitespace
    return f"{name}: {value}"


def _event_lines(response: Response, event: Event, seen: set[int]) -> list[str]:
    quirks = response.quirks
    if isinstance(event, Done):
        return [_field("data", "[DONE]", quirks, json_value=False)]
    if isinstance(event, StreamError):
        data = {"error": _error_object(event)}
        head = ["event: error"] if event.as_event else []
        return head + _data_lines(data, quirks)
    return _data_lines(_chunk(response, event, seen), quirks)


def _data_lines(value: Any, quirks: frozenset[str]) -> list[str]:
    if "multi-line-data" in quirks:
        # Pretty-printed JSON breaks lines only between tokens, so the lines
        # joined with LF (§3.4) are the same JSON value.
        parts = _dumps(value, quirks, indent=1).split("\n")
    else:
        parts = [_dumps(value, quirks)]
    return [_field("data", part, quirks, json_value=True) for part in parts]


def _chunk(response: Response, chunk: Chunk, seen: set[int]) -> dict[str, Any]:
    quirks = response.quirks
    data: dict[str, Any] = {
        "id": response.id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": response.model,
        "choices": [_choice(d, seen, quirks) for d in chunk.deltas],
    }
    if chunk.usage is not None:
        data["usage"] = chunk.usage.as_dict()
    elif "usage-null" in quirks:
        data["usage"] = None
    if "vendor-fields" in quirks:
        data["system_fingerprint"] = "fp_fuzz"
        data["x_fuzz"] = {"queue_ms": 3, "usage": None}
    if "obfuscation" in quirks:
        data["obfuscation"] = "Zx9q"
    return data


def _choice(delta: Delta, seen: set[int], quirks: frozenset[str]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if delta.choice not in seen or "role-every-delta" in quirks:
        body["role"] = "assistant"
    seen.add(delta.choice)
    if delta.content:
        body["content"] = delta.content
    elif "content-null" in quirks:
        body["content"] = None
    if delta.reasoning:
        body["reasoning_content"] = delta.reasoning
    if delta.refusal:
        body["refusal"] = delta.refusal
    if delta.tool_calls:
        body["tool_calls"] = [_call(c) for c in delta.tool_calls]
    elif "tool-calls-null" in quirks:
        body["tool_calls"] = None
    body.update(_parts(delta))
    choice: dict[str, Any] = {"index": delta.choice, "delta": body}
    if delta.logprobs:
        choice["logprobs"] = {"content": [token_logprob(t) for t in delta.logprobs]}
    if delta.finish_reason:
        choice["finish_reason"] = delta.finish_reason
    elif "finish-reason-empty-string" in quirks:
        choice["finish_reason"] = ""
    elif "finish-reason-key-missing" not in quirks:
        choice["finish_reason"] = None
    return choice


def _call(call: CallDelta) -> dict[str, Any]:
    kind, key = ("custom", "input") if call.custom else ("function", "arguments")
    if call.head:
        return {
            "index": call.index,
            "id": call.id,
            "type": kind,
            kind: {"name": call.name, key: call.arguments},
        }
    return {"index": call.index, kind: {key: call.arguments}}


def _parts(delta: Delta) -> dict[str, Any]:
    """The legacy function call, audio and annotations of a delta or a message."""
    found: dict[str, Any] = {}
    if delta.function_call is not None:
        name, arguments = delta.function_call
        found["function_call"] = (
            {"name": name, "arguments": arguments} if name else {"arguments": arguments}
        )
    if delta.audio is not None:
        found["audio"] = _audio(delta.audio)
    if delta.annotations:
        found["annotations"] = [url_citation(u) for u in delta.annotations]
    return found


def _audio(audio: AudioDelta) -> dict[str, Any]:
    sent = {
        "id": audio.id,
        "data": base64.b64encode(audio.data).decode(),
        "transcript": audio.transcript,
        "expires_at": audio.expires_at,
    }
    return {k: v for k, v in sent.items() if v}


# -- a non-streamed body ------------------------------------------------------


def _completion(response: Response) -> dict[str, Any]:
    chunk = response.events[0]
    assert isinstance(chunk, Chunk)
    choices = []
    for delta in chunk.deltas:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": delta.content or None,
            "refusal": delta.refusal or None,
        }
        if delta.reasoning:
            message["reasoning_content"] = delta.reasoning
        if delta.tool_calls:
            message["tool_calls"] = [_call(c) for c in delta.tool_calls]
        message.update(_parts(delta))
        choice = {"index": delta.choice, "message": message, "finish_reason": delta.finish_reason}
        if delta.logprobs:
            choice["logprobs"] = {"content": [token_logprob(t) for t in delta.logprobs]}
        choices.append(choice)
    body: dict[str, Any] = {
        "id": response.id,
        "object": "chat.completion",
        "created": CREATED,
        "model": response.model,
        "choices": choices,
    }
    if chunk.usage is not None:
        body["usage"] = chunk.usage.as_dict()
    return body
