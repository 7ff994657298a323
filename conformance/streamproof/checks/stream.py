"""The checks of a streamed body: ``streamproof lint`` of an SSE stream.

:func:`check_stream` scans the body (:mod:`streamproof.checks.scan`), walks its
events in order, checks each chunk with the checks chunks share with whole
bodies (:mod:`streamproof.checks.rules`), then looks at the stream as a whole:
where usage and finish reasons fall, what changes from chunk to chunk, how
the stream ends.
"""

from __future__ import annotations

import json
from typing import Any

from ..corpus.schemas import validator
from .across_chunks import AcrossChunks, _Choice, _Chunk, _Tool
from .rules import _error_validator, _text
from .scan import (
    Event,
    Finding,
    JSONPath,
    _big_int,
    _python_separators,
    _scan,
)

__all__ = ["check_stream"]

#: Where an in-stream error stands: the status said success before the failure came.
_AFTER_200 = " after the 200 status"


def _event_error(data: bytes) -> Any:
    """The error an ``event: error`` carries: its JSON ``error``, its JSON, or its text."""
    text = data.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value["error"] if isinstance(value, dict) and "error" in value else value


def _saying(error: Any) -> str:
    """What an error says, shortened for one lint line: ``, saying '…'``, or nothing."""
    if isinstance(error, dict):
        error = error.get("message")
    if not isinstance(error, str) or not error.strip():
        return ""
    shown = error if len(error) <= 60 else error[:60] + "…"
    return f", saying {shown!r}"


class _Stream(AcrossChunks):
    """Walks the events of one stream in order, then looks at the whole."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(findings)
        self.done_at: int | None = None
        self.after_done = False
        self.errors = sum(f.quirk == "error-in-200" for f in findings)
        self.chunks: list[_Chunk] = []
        self.choices: dict[int, _Choice] = {}
        self.refusals: list[tuple[int, str]] = []

    # -- events

    def event(self, event: Event) -> None:
        if self.done_at is not None:
            if not self.after_done:
                self.after_done = True
                self.add(event.start, "data-after-done", "an event after data: [DONE]")
            return
        if event.type not in ("", "message"):
            if event.type == "error":
                self.errors += 1
                said = _saying(_event_error(event.data))
                self.add(
                    event.start,
                    "error-in-200",
                    f"an event: error reports a failure{_AFTER_200}{said} (semantics §8.2)",
                )
            return
        text = event.data.decode("utf-8", errors="replace")
        if text == "[DONE]":
            self.done_at = event.at
            return
        body: Any = None
        problem = "is empty"
        if text.strip():
            try:
                body = json.loads(text)
                problem = "is not a JSON object"
            except (ValueError, RecursionError) as exc:
                problem = f"is not JSON ({exc})"
        else:
            self.add(event.at, "empty-data-event", "an event whose data is empty")
        if not isinstance(body, dict):
            self.errors += 1
            self.add(event.at, "corrupt-json", f"event data that {problem}")
            return
        chunk = _Chunk(len(self.chunks), event, body)
        self.chunks.append(chunk)
        self.chunk(chunk)

    def chunk(self, chunk: _Chunk) -> None:
        body, event = chunk.body, chunk.event
        self.explained = set()
        if _python_separators(event.data):
            self.add_once(event.at, "json-python-separators", "JSON with ', ' and ': ' separators")
        if _big_int(body):
            self.add_once(event.at, "big-int-seed", "an integer above 2^53")
        if body.get("error") is not None:
            self.errors += 1
            at = event.locate("error")
            said = _saying(body["error"])
            self.add(
                at,
                "error-in-200",
                f"an error object reports a failure{_AFTER_200}{said} (semantics §8.1)",
            )
            if isinstance(body["error"], str):
                self.explained.add(("error",))  # semantics §8.1: a string error is the message
            self.error_code(body["error"], at, ("error",))
            self.schema(_error_validator(), body, at)
            self.choices_of(chunk, deltas=False)
            return
        if body.get("id") == "" and body.get("object") == "":
            self.filter_chunk(chunk)
            return
        chunk.regular = True
        self.object_kind(chunk)
        if "choices" in body and body["choices"] is None:
            self.add(event.locate("choices"), "choices-null", '"choices": null', ("choices",))
        for key, value in body.items():
            if key != "usage" and isinstance(value, dict) and value.get("usage") is not None:
                self.add(
                    event.locate(key, "usage"),
                    "usage-in-vendor-object",
                    f"usage inside the vendor object {key!r}",
                )
        self.choices_of(chunk, deltas=not chunk.terminal)
        usage = body.get("usage")
        if isinstance(usage, dict):
            chunk.usage = self.usage_counts(usage, event, ("usage",))
        self.schema(validator("chunk"), body, event.at)

    def filter_chunk(self, chunk: _Chunk) -> None:
        """Azure's content-filter chunks: id and object "", created 0, no delta."""
        choices = chunk.body.get("choices")
        if choices == []:
            message = 'choices [], id, object and model "": prompt filter results'
            self.add(chunk.event.at, "prompt-filter-chunk", message)
        elif isinstance(choices, list) and any(
            isinstance(c, dict) and "delta" not in c for c in choices
        ):
            message = 'a filter annotation: choices without a delta, id and object ""'
            self.add(chunk.event.locate("choices"), "async-filter-annotation", message)
        else:
            self.add(chunk.event.at, "chunk-shape", 'a chunk whose id and object are ""')

    def object_kind(self, chunk: _Chunk) -> None:
        body, at = chunk.body, chunk.event.locate("object")
        kind = body.get("object")
        choices = body["choices"] if isinstance(body.get("choices"), list) else []
        if kind == "chat.completion.done":
            quirk, message = "object-chat-completion-done", "object 'chat.completion.done'"
        elif kind == "chat.completion":
            deltas = any(isinstance(c, dict) and "delta" in c for c in choices)
            if not any(isinstance(c, dict) and "message" in c for c in choices):
                return
            if deltas:
                quirk, message = "chunk-message-snapshot", "a message snapshot beside the delta"
            else:
                chunk.terminal = True
                quirk, message = "terminal-message-frame", "a frame with whole messages"
        else:
            return
        self.add(at, quirk, message, ("object",))

    # -- choices and deltas

    def choices_of(self, chunk: _Chunk, *, deltas: bool) -> None:
        choices = chunk.body.get("choices")
        for i, choice in enumerate(choices if isinstance(choices, list) else []):
            if isinstance(choice, dict):
                self.choice(chunk, choice, ("choices", i), deltas=deltas)

    def choice(
        self, chunk: _Chunk, choice: dict[str, Any], path: JSONPath, *, deltas: bool
    ) -> None:
        event = chunk.event
        index = choice.get("index")
        state = self.choices.setdefault(index if isinstance(index, int) else 0, _Choice())
        if "text" in choice:
            at = event.locate(*path, "text")
            self.add_once(at, "legacy-text-field", "the choice repeats its text in text")
        if isinstance(choice.get("usage"), dict):
            self.add(event.locate(*path, "usage"), "usage-in-choice", "usage inside a choice")
        # An error chunk's choices (deltas False) count for their finish reasons only.
        if "delta" not in choice:
            required = (*path, "(required)", "delta")
            if "message" in choice:
                self.explained.add(required)
            elif deltas:
                message = "a choice without a delta"
                self.add(event.locate(*path), "async-filter-annotation", message, required)
        elif deltas and "finish_reason" not in choice:
            message = "a choice without a finish_reason key"
            required = (*path, "(required)", "finish_reason")
            self.add_once(event.locate(*path), "finish-reason-key-missing", message, required)
        delta, reason = choice.get("delta"), choice.get("finish_reason")
        text = ""
        if deltas and isinstance(delta, dict):
            text = self.delta(chunk, state, delta, (*path, "delta"), finishes=bool(reason))
        if not isinstance(reason, str):
            return
        at = event.locate(*path, "finish_reason")
        self.finish_value(reason, at, (*path, "finish_reason"))
        if not reason:
            return
        if not state.finishes:
            chunk.first_finish = True
            if text:
                self.add_once(at, "finish-with-content", "the finish reason comes with text")
        state.finishes.append(chunk.number)
        state.last_finish = reason

    def delta(
        self,
        chunk: _Chunk,
        state: _Choice,
        delta: dict[str, Any],
        path: JSONPath,
        *,
        finishes: bool,
    ) -> str:
        event = chunk.event
        state.deltas += 1
        stated = self.role_value(event, delta, path)
        text = self.message_fields(event, delta, path, delta=True)
        if isinstance(delta.get("refusal"), str):
            self.refusals.append((event.locate(*path, "refusal"), delta["refusal"]))
        tool_calls = delta.get("tool_calls")
        substance = bool(
            text
            or isinstance(delta.get("content"), list)
            or _text(delta.get("reasoning_content"))
            or _text(delta.get("reasoning"))
            or _text(delta.get("refusal"))
            or tool_calls
        )
        bare_role = stated and not substance and not finishes
        if bare_role and state.substance and state.role_after_text < 0:
            state.role_after_text = event.locate(*path, "role")
        if stated and not state.role_seen:
            state.role_at = event.locate(*path, "role")
        state.role_seen = state.role_seen or stated
        if delta:
            state.filled += 1
            state.with_role += stated
        if substance:
            chunk.substance = True
            state.substance += 1
            if not state.role_seen:
                message = "content before any delta stated the role"
                self.add_once(event.locate(*path), "content-before-role", message)
        if isinstance(tool_calls, list):
            # An empty list (sent beside every piece of text by some servers) is no call.
            state.tool_calls = state.tool_calls or bool(tool_calls)
            for i, call in enumerate(tool_calls):
                if isinstance(call, dict):
                    self.tool_call(event, state, call, (*path, "tool_calls", i))
        return text

    def tool_call(self, event: Event, state: _Choice, call: dict[str, Any], path: JSONPath) -> None:
        function = call["function"] if isinstance(call.get("function"), dict) else {}
        call_id, name, arguments = call.get("id"), function.get("name"), function.get("arguments")
        index = call.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            message = "a tool call without an index"
            required = (*path, "(required)", "index")
            self.add_once(event.locate(*path), "tool-call-no-index", message, required)
            known = [i for i, t in state.tools.items() if call_id and t.id == call_id]
            index = known[0] if known else max(state.tools, default=-1) + 1
        tool = state.tools.get(index)
        if tool is None:
            at = event.locate(*path, "index")
            if not state.tools and index > 0:
                self.add(at, "tool-call-index-not-zero", f"the first tool call has index {index}")
            elif state.tools and index > max(state.tools) + 1:
                message = f"tool-call index {index} after {max(state.tools)}"
                self.add(at, "tool-call-index-gap", message)
            if call_id == "":
                at = event.locate(*path, "id")
                self.add_once(at, "tool-call-empty-id", 'a tool call whose id is ""')
            whole = bool(name) and bool(arguments)
            tool = state.tools[index] = _Tool(event.locate(*path), _text(call_id), 0, whole)
        else:
            self.later_tool_delta(event, tool, call_id, name, arguments, path)
        tool.deltas += 1

    def later_tool_delta(
        self, event: Event, tool: _Tool, call_id: Any, name: Any, arguments: Any, path: JSONPath
    ) -> None:
        if call_id == "":
            message = 'a later tool-call delta repeats id as ""'
            self.add_once(event.locate(*path, "id"), "tool-call-id-repeated-empty", message)
        elif call_id is not None and call_id == tool.id:
            message = "a later tool-call delta repeats the id"
            name_path = (*path, "function", "name")  # null after the first, with the id
            self.add_once(event.locate(*path, "id"), "tool-call-id-repeated", message, name_path)
        if name == "":
            message = 'a later tool-call delta has name ""'
            at = event.locate(*path, "function", "name")
            self.add_once(at, "tool-call-empty-name-repeat", message)
        if arguments == "":
            message = 'a tool-call fragment whose arguments are ""'
            at = event.locate(*path, "function", "arguments")
            self.add_once(at, "tool-call-empty-arguments-delta", message)

    # -- the end of the body

    def end(self, open_event: Event | None, size: int) -> None:
        if open_event is not None:
            self.open_event(open_event)
        regular = [c for c in self.chunks if c.regular]
        self.metadata(regular)
        self.usage_places(regular)
        for state in self.choices.values():
            self.choice_story(state)
        self.json_text(regular)
        if self.refusals and not any(text for _, text in self.refusals):
            self.add(self.refusals[0][0], "refusal-empty-string", 'refusal is "" on every delta')
        finished = any(state.finishes for state in self.choices.values())
        if self.done_at is None:
            self.add(size, "no-done", "the stream ends without data: [DONE]")
        elif not finished and not self.errors:
            self.add(
                self.done_at, "done-without-finish", "[DONE] but no choice got a finish reason"
            )

    def open_event(self, event: Event) -> None:
        """The body ended inside an event: a whole one lacks its blank line, a cut one is open."""
        data = event.data.decode("utf-8", errors="replace")
        whole = not event.spans or data == "[DONE]"
        if not whole:
            try:
                json.loads(data)
                whole = True
            except (ValueError, RecursionError):
                whole = False
        if whole:
            message = "the last event has no closing blank line"
            self.add(event.start, "no-final-blank-line", message)
            if event.spans:
                self.event(event)
        else:
            self.add(event.start, "unterminated-event", "the body ends inside an event")


def check_stream(body: bytes) -> list[Finding]:
    """Every finding of a streamed body, sorted by offset."""
    scan = _scan(body)
    stream = _Stream(scan.findings)
    for event in scan.events:
        stream.event(event)
    stream.end(scan.open_event, len(body))
    return sorted(stream.findings)
