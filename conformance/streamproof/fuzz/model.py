"""The abstract response the fuzzer draws, and its outcome by construction.

A ``Response`` says what a server meant to send — chunks of per-choice
deltas, usage, an error, the end marker — and how it framed the bytes
(``quirks``). ``outcomes`` folds the abstract values into the outcomes that
docs/semantics.md requires, without reading any bytes: the reference parser
is under test like every other parser, so nothing here may come from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..corpus.validate import CHOICE_FIELD_CAPABILITY

__all__ = [
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


@dataclass(frozen=True)
class Delta:
    """What one chunk says about one choice; empty text means the key is not sent."""

    choice: int = 0
    content: str = ""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: tuple[CallDelta, ...] = ()
    finish_reason: str = ""


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
        got = choice["tool_calls"].setdefault(
            call.index,
            {"index": call.index, "id": call.id, "type": "function", "function": {}},
        )
        function = got["function"]
        function.setdefault("name", call.name)
        function["arguments"] = function.get("arguments", "") + call.arguments


def _finished(choice: dict[str, Any]) -> dict[str, Any]:
    calls = choice["tool_calls"]
    return {**choice, "tool_calls": [calls[i] for i in sorted(calls)]}


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
    """The capabilities a case of ``response`` requires (README.md, 'Terms': capabilities)."""
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
            found.update(cap for key, cap in CHOICE_FIELDS.items() if choice[key] and key != "role")
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
            if k == "index" or CHOICE_FIELDS.get(k, "content") in capabilities
        }
        for choice in outcome["choices"]
    ]
    return kept
