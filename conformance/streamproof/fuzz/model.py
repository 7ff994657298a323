"""The abstract response the fuzzer draws, and its outcome by construction.

A ``Response`` says what a server meant to send — chunks of per-choice
deltas, usage, an error, the end marker — and how it framed the bytes
(``quirks``). ``outcomes`` folds the abstract values into the outcomes that
docs/semantics.md requires, without reading any bytes: the reference parser
is under test like every other parser, so nothing here may come from it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from ..corpus.validate import CHOICE_FIELD_CAPABILITY, choice_field_capability

__all__ = [
    "AudioDelta",
    "CallDelta",
    "Chunk",
    "Delta",
    "Done",
    "Event",
    "Response",
    "StreamError",
    "Usage",
    "outcomes",
    "requires",
    "token_logprob",
    "url_citation",
    "valid",
]


@dataclass(frozen=True)
class CallDelta:
    """One tool-call fragment; ``head`` says it carries id, type and name (§6.7)."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""
    head: bool = False
    custom: bool = False  # a custom tool's call: ``arguments`` is its input (§6.9)


@dataclass(frozen=True)
class AudioDelta:
    """One ``delta.audio`` (§6.11); empty values and ``expires_at`` 0 are not sent."""

    id: str = ""
    data: bytes = b""
    transcript: str = ""
    expires_at: int = 0


@dataclass(frozen=True)
class Delta:
    """What one chunk says about one choice; empty text means the key is not sent."""

    choice: int = 0
    content: str = ""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: tuple[CallDelta, ...] = ()
    finish_reason: str = ""
    function_call: tuple[str, str] | None = None  # name ("" not sent), arguments (§6.8)
    logprobs: tuple[str, ...] = ()  # the tokens of logprobs.content (§6.10)
    audio: AudioDelta | None = None
    annotations: tuple[str, ...] = ()  # the urls of url_citation annotations (§6.12)


def token_logprob(token: str) -> dict[str, Any]:
    """The logprobs entry the model sends for ``token``."""
    return {"token": token, "logprob": -0.5, "bytes": list(token.encode()), "top_logprobs": []}


def url_citation(url: str) -> dict[str, Any]:
    """The annotation the model sends for ``url``."""
    return {"type": "url_citation", "url_citation": {"url": url, "title": url[-3:]}}


@dataclass(frozen=True)
class Usage:
    prompt: int
    completion: int

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
        }


@dataclass(frozen=True)
class Chunk:
    """One ``data:`` event; no deltas renders as ``"choices": []``."""

    deltas: tuple[Delta, ...] = ()
    usage: Usage | None = None


@dataclass(frozen=True)
class StreamError:
    """An error inside a 200 stream: an ``error`` object (§8.1) or ``event: error`` (§8.2)."""

    message: str
    type: str = ""
    code: str = ""
    as_event: bool = False


@dataclass(frozen=True)
class Done:
    """``data: [DONE]`` (§4.1)."""


Event = Chunk | StreamError | Done


@dataclass(frozen=True)
class Response:
    """One abstract response.

    ``kind`` is ``stream``, ``json`` (a non-streamed body: one ``Chunk``
    whose deltas are whole messages) or ``http-error`` (``error`` is the
    body's error, ``html`` a proxy page instead of JSON).
    """

    kind: str = "stream"
    events: tuple[Event, ...] = ()
    status: int = 200
    error: StreamError | None = None
    html: bool = False
    id: str = "chatcmpl-fuzz"
    model: str = "fuzz-model"
    quirks: frozenset[str] = field(default_factory=frozenset)


def valid(response: Response) -> bool:
    """Whether ``response`` is one the model describes without ambiguity.

    Choices are numbered 0… with no gap, each tool call starts with its head
    delta and its indexes have no gap, a non-streamed body is one chunk, and
    nothing follows ``[DONE]`` or an error. The shrinker keeps to this.
    """
    if response.kind == "http-error":
        return response.error is not None
    if response.kind == "json":
        only = response.events[0] if len(response.events) == 1 else None
        if not isinstance(only, Chunk) or len({d.choice for d in only.deltas}) != len(only.deltas):
            return False
    seen: set[int] = set()
    calls: dict[int, set[int]] = {}
    for n, event in enumerate(response.events):
        if not isinstance(event, Chunk):
            if n != len(response.events) - 1 and not (
                isinstance(event, StreamError) and isinstance(response.events[n + 1], Done)
            ):
                return False
            continue
        for delta in event.deltas:
            seen.add(delta.choice)
            mine = calls.setdefault(delta.choice, set())
            for call in delta.tool_calls:
                if call.index not in mine and not call.head:
                    return False
                mine.add(call.index)
    ok_calls = all(indexes == set(range(len(indexes))) for indexes in calls.values())
    return seen == set(range(len(seen))) and ok_calls


def _fold(response: Response, events: tuple[Event, ...]) -> dict[str, Any]:
    choices: dict[int, dict[str, Any]] = {}
    usage: dict[str, int] | None = None
    error: dict[str, Any] | None = None
    done = False
    chunks = 0
    for event in events:
        if isinstance(event, Done):
            done = True
            break
        if isinstance(event, StreamError):
            error = _error(event)
            break
        chunks += 1
        for delta in event.deltas:
            _add(choices.setdefault(delta.choice, _empty(delta.choice)), delta)
        if event.usage is not None:
            usage = event.usage.as_dict()
        if any(d.finish_reason == "error" for d in event.deltas):
            break  # §8.3, §8.4: nothing after the error counts
    listed = [_finished(choices[i]) for i in sorted(choices)]
    errored = any(c["finish_reason"] == "error" for c in listed)
    if error is not None or errored:
        status = "error"
    elif response.kind == "json" or done or (listed and all(c["finish_reason"] for c in listed)):
        status = "complete"
    else:
        status = "truncated"
    outcome: dict[str, Any] = {
        "status": status,
        "choices": listed,
        "usage": usage,
        "id": response.id if chunks else None,  # §10: only chunks carry them
        "model": response.model if chunks else None,
    }
    if error is not None:
        outcome["error"] = error
    if status == "error":
        # As the corpus's error cases do: after an error the text that arrived
        # is stated (semantics §12.5), usage only if it arrived, metadata not at all.
        del outcome["id"], outcome["model"]
        if usage is None:
            del outcome["usage"]
    return outcome


def _empty(index: int) -> dict[str, Any]:
    return {
        "index": index,
        "role": "assistant",
        "content": "",
        "reasoning": "",
        "refusal": "",
        "finish_reason": None,
        "tool_calls": {},
    }


def _add(choice: dict[str, Any], delta: Delta) -> None:
    choice["content"] += delta.content
    choice["reasoning"] += delta.reasoning
    choice["refusal"] += delta.refusal
    if delta.finish_reason:
        choice["finish_reason"] = delta.finish_reason  # §6.4: the last non-empty one
    for call in delta.tool_calls:
        kind = "custom" if call.custom else "function"
        got = choice["tool_calls"].setdefault(
            call.index, {"index": call.index, "id": call.id, "type": kind, kind: {}}
        )
        part = got[kind]
        part.setdefault("name", call.name)
        key = "input" if call.custom else "arguments"
        part[key] = part.get(key, "") + call.arguments
    _add_parts(choice, delta)


def _add_parts(choice: dict[str, Any], delta: Delta) -> None:
    """The parts of §6.8 to §6.12: each key appears once one arrived."""
    if delta.function_call is not None:
        name, arguments = delta.function_call
        call = choice.setdefault("function_call", {"name": None, "arguments": ""})
        call["name"] = call["name"] or name or None  # the first non-empty name
        call["arguments"] += arguments
    if delta.logprobs:
        logprobs = choice.setdefault("logprobs", {"content": [], "refusal": None})
        logprobs["content"] += [token_logprob(t) for t in delta.logprobs]
    if delta.audio is not None:
        sent = delta.audio
        audio = choice.setdefault(
            "audio", {"id": None, "data": b"", "transcript": "", "expires_at": None}
        )
        audio["id"] = audio["id"] or sent.id or None
        audio["data"] += sent.data
        audio["transcript"] += sent.transcript
        audio["expires_at"] = sent.expires_at or audio["expires_at"]
    if delta.annotations:
        choice.setdefault("annotations", []).extend(url_citation(u) for u in delta.annotations)


def _finished(choice: dict[str, Any]) -> dict[str, Any]:
    calls = choice["tool_calls"]
    done = {**choice, "tool_calls": [calls[i] for i in sorted(calls)]}
    if "audio" in done:  # the decoded pieces joined, as base64 (§6.11)
        done["audio"] = {**done["audio"], "data": base64.b64encode(done["audio"]["data"]).decode()}
    return done


def _error(error: StreamError, http_status: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "message": error.message,
        "type": error.type or None,
        "code": error.code or None,
    }
    if http_status is not None:
        found["http_status"] = http_status
    return found


def outcomes(response: Response) -> list[dict[str, Any]]:
    """Every acceptable outcome of ``response`` (two where the last event is left open, §3.6)."""
    if response.kind == "http-error":
        assert response.error is not None
        error = _error(response.error, response.status)
        if response.html:
            error = {"http_status": response.status}  # §8.6: the message is not compared
        return [{"status": "error", "choices": [], "error": error}]  # §8.5
    full = _fold(response, response.events)
    if response.kind == "stream" and "no-final-blank-line" in response.quirks and response.events:
        dropped = _fold(response, response.events[:-1])
        if dropped != full:
            return [dropped, full]
    return [full]


#: Outcome keys of a choice, and the capability that claims each (as ``validate`` reads them).
CHOICE_FIELDS = CHOICE_FIELD_CAPABILITY


def requires(response: Response) -> set[str]:
    """The capabilities a case of ``response`` requires (docs/terms.md: capability)."""
    found = {"content"}
    if response.kind == "http-error":
        return found | {"http_error"}
    if response.kind == "json":
        found.add("non_streaming")
    for alternative in outcomes(response):
        if alternative["status"] == "truncated":
            found.add("truncation")
        if alternative["status"] == "error":
            found.add("stream_error")
        if len(alternative["choices"]) > 1:
            found.add("multiple_choices")
        if alternative.get("usage") is not None:
            found.add("usage")
        for choice in alternative["choices"]:
            found.update(
                choice_field_capability(key, value) or "content"
                for key, value in choice.items()
                if value and key in CHOICE_FIELDS and key != "role"
            )
            if choice["finish_reason"]:
                found.add("finish_reason")
    return found


def claimed(outcome: dict[str, Any], capabilities: frozenset[str]) -> dict[str, Any]:
    """``outcome`` without the fields the adapter does not claim (they are not compared)."""
    kept = dict(outcome)
    for key, cap in (("usage", "usage"), ("id", "metadata"), ("model", "metadata")):
        if cap not in capabilities:
            kept.pop(key, None)
    if outcome.get("error") is None and "stream_error" not in capabilities:
        kept.pop("error", None)
    kept["choices"] = [
        {
            k: v
            for k, v in choice.items()
            if k == "index" or (choice_field_capability(k, v) or "content") in capabilities
        }
        for choice in outcome["choices"]
    ]
    return kept
