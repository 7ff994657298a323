"""Checks that look across a stream's chunks once it has ended.

What one chunk cannot show: whether id, model and created stay the same,
where usage falls relative to the answer, how each choice's finish reasons,
roles and tool calls unfold, and how the JSON text is written from chunk to
chunk. :class:`AcrossChunks` holds these checks and the per-chunk and
per-choice records they read; :mod:`streamproof.checks.stream` fills the
records while it walks the events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rules import _Checker
from .scan import Event, _objects, _sorted_keys

__all__ = ["AcrossChunks"]

# Chunk keys that stay the same through a stream, and the quirk of one that changes.
_STEADY = (("id", "per-chunk-id"), ("created", "created-varies"), ("model", "model-varies"))


@dataclass
class _Tool:
    at: int
    id: str = ""
    deltas: int = 0
    whole: bool = False  # the first delta had the name and non-empty arguments


@dataclass
class _Choice:
    deltas: int = 0
    filled: int = 0  # deltas that are not {}
    with_role: int = 0  # ... of which state a role
    substance: int = 0  # deltas with text, reasoning, a refusal or tool calls so far
    role_seen: bool = False
    role_at: int = -1  # where the first role was stated
    role_after_text: int = -1  # where a bare role delta came after the text started
    finishes: list[int] = field(default_factory=list)  # the chunks that carried one
    last_finish: str = ""
    tool_calls: bool = False
    tools: dict[int, _Tool] = field(default_factory=dict)


@dataclass
class _Chunk:
    number: int
    event: Event
    body: dict[str, Any]
    regular: bool = False  # neither an error nor a filter chunk
    terminal: bool = False  # a chat.completion frame of whole messages
    substance: bool = False  # a delta carries text, reasoning, a refusal or tool calls
    first_finish: bool = False  # a choice got its first finish reason here
    usage: bool = False  # carries a real top-level usage


class AcrossChunks(_Checker):
    """The whole-stream checks; a subclass records ``chunks`` and ``choices``."""

    chunks: list[_Chunk]

    def metadata(self, chunks: list[_Chunk]) -> None:
        """The same id, model and created on every chunk, and real values."""
        if not chunks:
            return
        first = chunks[0].body
        if all(c.body.get("id") == "" for c in chunks):
            self.add(chunks[0].event.locate("id"), "id-empty", 'id is "" on every chunk')
        for key, quirk in _STEADY:
            changed = next(
                (c for c in chunks if key in c.body and key in first and c.body[key] != first[key]),
                None,
            )
            if changed is not None:
                message = f"{key} changes from {first[key]!r} to {changed.body[key]!r}"
                self.add(changed.event.locate(key), quirk, message)
        zero = next((c for c in chunks if c.body.get("created") == 0), None)
        if zero is not None:
            self.add(zero.event.locate("created"), "created-zero", "created is 0")

    def usage_places(self, chunks: list[_Chunk]) -> None:
        """Usage belongs in a chunk of its own once the answer is over."""
        usage = [c for c in chunks if c.usage and not c.terminal]
        answer_end = max((c.number for c in chunks if c.substance or c.first_finish), default=-1)
        first_finish = min((c.number for c in chunks if c.first_finish), default=None)
        early = [c for c in usage if c.number < answer_end]
        if early:
            message = "usage arrives before the answer is over"
            self.add(early[0].event.locate("usage"), "usage-cumulative-every-chunk", message)
            return
        for c in usage:
            at = c.event.locate("usage")
            if c.first_finish:
                message = "usage on the chunk with the finish reason"
                self.add_once(at, "usage-in-finish-chunk", message)
            elif first_finish is not None and c.number > first_finish and c.body.get("choices"):
                message = "usage on a trailing chunk whose choices is not empty"
                self.add_once(at, "usage-trailing-choice", message)

    def choice_story(self, state: _Choice) -> None:
        if len(state.finishes) > 1:
            at = self.chunks[state.finishes[1]].event.locate("choices")
            if len(state.finishes) == state.deltas:
                message = "every chunk carries a finish reason"
                self.add_once(at, "finish-reason-every-chunk", message)
            else:
                self.add_once(at, "finish-reason-repeated", "the finish reason is sent again")
        if state.tool_calls and state.last_finish == "stop":
            at = self.chunks[state.finishes[-1]].event.locate("choices")
            message = "finish_reason stop after tool calls"
            self.add_once(at, "finish-reason-stop-after-tool-calls", message)
        if state.filled > 1 and state.with_role == state.filled:
            message = "every delta repeats the role"
            self.add_once(state.role_at, "role-every-delta", message)
        elif state.role_after_text >= 0:
            message = "a role-only delta after the text started"
            self.add_once(state.role_after_text, "role-chunk-after-text", message)
        whole = [tool for tool in state.tools.values() if tool.deltas == 1 and tool.whole]
        if whole:
            message = "a whole tool call (name and arguments) in one delta"
            self.add_once(whole[0].at, "tool-call-single-delta", message)

    def json_text(self, chunks: list[_Chunk]) -> None:
        if not chunks:
            return
        at = chunks[0].event.at
        if all(_sorted_keys(c.body) for c in chunks):
            message = "every JSON object has its keys in alphabetical order"
            self.add(at, "alphabetical-keys", message)
        if len(chunks) > 1 and all(
            "citations" in c.body or "search_results" in c.body for c in chunks
        ):
            self.add(at, "citations-every-chunk", "citations on every chunk")
        seen: set[tuple[str, str, str]] = set()  # (object path, key, key after it)
        for c in chunks:
            for path, obj in _objects(c.body):
                keys = list(obj)
                for i, a in enumerate(keys):
                    for b in keys[i + 1 :]:
                        if (path, b, a) in seen:
                            message = f"{a!r} now comes before {b!r} in {path or 'the chunk'}"
                            self.add_once(c.event.at, "key-order-varies", message)
                        seen.add((path, a, b))
