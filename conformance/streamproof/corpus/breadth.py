"""The breadth of the corpus per provider: cases, scenarios, wire shapes, evidence dates.

A scenario is what a case's expectation shows (text, tool calls, reasoning,
usage, an error, a cut…); a shape is a distinct framing and key order (first
chunk, its first choice, last chunk) among a provider's bodies. The corpus
README's breadth table (``scripts/corpus-breadth``) and the provider report
both come from :func:`breadth`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .cases import Case

__all__ = ["NOT_PROVIDERS", "SCENARIOS", "Breadth", "breadth", "scenarios", "shape"]

#: Folders that are not a provider: framing rules and behaviour common to all.
NOT_PROVIDERS = {"generic", "sse-spec"}
#: Scenario names in the order the table lists them.
SCENARIOS = (
    "text",
    "tool call",
    "parallel tool calls",
    "n>1",
    "reasoning",
    "refusal",
    "length",
    "content filter",
    "usage",
    "error in stream",
    "http error",
    "cut off",
    "non-streamed",
)


def scenarios(case: dict[str, Any], body: bytes) -> set[str]:
    """What a case shows, read from its expectation and its request."""
    expected = case.get("expected") or (case.get("expected_any") or [{}])[0]
    status = case.get("response", {}).get("status", 200)
    found: set[str] = set()
    choices = expected.get("choices") or []
    if len(choices) > 1:
        found.add("n>1")
    for choice in choices:
        calls = choice.get("tool_calls") or []
        if len(calls) > 1:
            found.add("parallel tool calls")
        elif calls:
            found.add("tool call")
        if choice.get("reasoning"):
            found.add("reasoning")
        if choice.get("refusal"):
            found.add("refusal")
        if choice.get("content"):
            found.add("text")
        reason = choice.get("finish_reason")
        if reason == "length":
            found.add("length")
        elif reason == "content_filter":
            found.add("content filter")
    if expected.get("usage"):
        found.add("usage")
    if expected.get("status") == "error":
        found.add("http error" if status >= 400 else "error in stream")
    elif expected.get("status") == "truncated":
        found.add("cut off")
    if case.get("response", {}).get("body") == "response.json" and status < 400:
        found.add("non-streamed")
    return found


def _events(body: bytes) -> list[object]:
    text = body.decode("utf-8", "replace").lstrip("\ufeff")
    out: list[object] = []
    data: list[str] = []
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:
        if line == "":
            if data:
                with contextlib.suppress(ValueError):
                    out.append(json.loads("\n".join(data)))
            data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
    return out


def shape(body_name: str, body: bytes) -> tuple[object, ...]:
    """A wire shape: framing and key orders, never words; two cases of one shape compare equal."""
    if not body_name.endswith(".sse"):
        try:
            obj = json.loads(body)
        except ValueError:
            return (body_name, "not json")
        return (body_name, tuple(obj) if isinstance(obj, dict) else type(obj).__name__)
    chunks = [c for c in _events(body) if isinstance(c, dict)]
    lines = re.split(rb"\r\n|\r|\n", body)
    eol = "CRLF" if b"\r\n" in body else ("CR" if b"\r" in body else "LF")
    spaced = any(line.startswith(b"data: ") for line in lines)
    comments = any(line.startswith(b":") for line in lines)
    done = any(line.strip() in (b"data: [DONE]", b"data:[DONE]") for line in lines)

    def keys(chunk: dict[str, Any] | None) -> tuple[str, ...]:
        return tuple(chunk) if chunk else ()

    def choice_keys(chunk: dict[str, Any] | None) -> tuple[str, ...]:
        first = ((chunk or {}).get("choices") or [None])[0]
        return tuple(first) if isinstance(first, dict) else ()

    first = chunks[0] if chunks else None
    last = chunks[-1] if chunks else None
    return (eol, spaced, comments, done, keys(first), choice_keys(first), keys(last))


@dataclass
class Breadth:
    """One provider's breadth."""

    provider: str
    cases: int = 0
    scenarios: set[str] = field(default_factory=set)
    shapes: set[tuple[object, ...]] = field(default_factory=set)
    dates: list[str] = field(default_factory=list)

    @property
    def scenario_names(self) -> list[str]:
        return [s for s in SCENARIOS if s in self.scenarios]

    @property
    def evidence(self) -> str:
        """``first to last`` date of the evidence, one date, or ``—``."""
        if not self.dates:
            return "—"
        first, last = min(self.dates), max(self.dates)
        return first if first == last else f"{first} to {last}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenario_names,
            "shapes": len(self.shapes),
            "evidence": self.evidence,
        }


def breadth(cases: Iterable[Case]) -> list[Breadth]:
    """One row per provider folder (not ``generic`` or ``sse-spec``), sorted by name."""
    rows: dict[str, Breadth] = {}
    for case in cases:
        if case.provider in NOT_PROVIDERS:
            continue
        row = rows.setdefault(case.provider, Breadth(case.provider))
        row.cases += 1
        row.scenarios |= scenarios(case.data, case.body)
        row.shapes.add(shape(case.data.get("response", {}).get("body", "response.sse"), case.body))
        observed = (case.data.get("provenance") or {}).get("observed")
        if observed:
            row.dates.append(observed)
    return [rows[name] for name in sorted(rows)]
