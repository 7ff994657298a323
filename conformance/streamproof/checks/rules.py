"""The checks behind ``streamproof lint``: body bytes in, findings out.

Here: the quirks lint can name, the checks a chunk of a stream and a whole
JSON body share (:class:`_Checker`), and the checks of a non-streamed
``chat.completion`` body and of an HTTP error body. The SSE scan and the
key locator are in :mod:`streamproof.checks.scan`; the checks of a stream in
:mod:`streamproof.checks.stream`.

:data:`DETECTABLE` is every quirk a finding can name: departures from the
OpenAI reference shape that one body shows by itself. Out of scope on
purpose, and so never reported:

- what depends on how the body was cut into reads, or on time:
  ``split-read``, ``utf8-split``, ``encoding``, ``incremental``;
- what needs the request, the headers or the story of the connection:
  ``usage-unrequested``, ``usage-missing``, ``cut-off``,
  ``stream-options-rejected``, ``content-type-*``, ``rate-limit``,
  ``overloaded``, ``insufficient-balance``, ``http-error-json``,
  ``proxy-error-page``;
- what the OpenAI reference itself does: ``obfuscation``, ``vendor-fields``,
  ``refusal-null``, ``refusal-field``, ``content-null``,
  ``content-key-missing``, ``empty-delta``, ``role-only-first-chunk``,
  ``usage-null``, ``usage-empty-choices``, ``usage-reasoning-tokens``,
  ``streamed-tool-call``, ``parallel-tool-calls``, ``tool-calls``,
  ``finish-reason-length`` / ``-tool-calls`` / ``-content-filter``,
  ``logprobs-stream``, ``n-greater-than-1``, ``n-choices-interleaved``,
  ``moderation-chunk``, ``message-annotations``, ``non-streamed``;
- how big the pieces are: ``per-token-chunks``, ``per-sentence-chunks``,
  ``single-chunk-answer``;
- vendor-private keys parsers ignore: ``content-filter-results``,
  ``content-filter-result-error``, ``latency-checkpoint``,
  ``usage-vendor-fields``, ``non-chatcmpl-id``;
- topics rather than byte patterns: ``line-endings``, ``field-parsing``,
  ``end-of-body``.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from ..corpus.schemas import validator
from .scan import (
    Event,
    Finding,
    JSONPath,
    _big_int,
    _Body,
    _python_separators,
    _skip_ws,
    _sorted_keys,
)

__all__ = [
    "DETECTABLE",
    "Finding",
    "check_completion",
    "check_error_body",
]


def _ids(text: str) -> frozenset[str]:
    return frozenset(text.split())


_FRAMING = _ids(
    """
    bom bom-mid-stream crlf cr mixed-line-endings long-line blank-lines
    keep-alive-comment comment no-space-after-colon space-after-colon
    field-without-colon unknown-field event-type event-id retry error-sse-field
    multi-line-data empty-event empty-data-event no-final-blank-line unterminated-event
    bare-done-line no-done data-after-done corrupt-json
    """
)

_JSON_TEXT = _ids(
    """
    json-python-separators alphabetical-keys key-order-varies big-int-seed
    """
)

_CHUNKS = _ids(
    """
    chunk-shape error-in-200 error-code-numeric error-code-digit-string
    object-chat-completion-done terminal-message-frame chunk-message-snapshot
    prompt-filter-chunk async-filter-annotation choices-null id-empty per-chunk-id
    created-zero created-varies model-varies citations-every-chunk legacy-text-field
    """
)

_DELTAS = _ids(
    """
    role-null role-empty-string role-every-delta role-chunk-after-text
    content-before-role content-parts-array refusal-empty-string tool-calls-null
    reasoning-content reasoning-field reasoning-both-fields reasoning-details
    think-tags-in-content replacement-char-in-content
    """
)

_FINISH = _ids(
    """
    finish-reason-empty-string finish-reason-key-missing finish-reason-eos
    finish-reason-error finish-reason-nonstandard finish-reason-repeated
    finish-reason-every-chunk finish-reason-stop-after-tool-calls finish-with-content
    done-without-finish
    """
)

_USAGE = _ids(
    """
    usage-total-mismatch usage-empty-object usage-zero-placeholder usage-in-finish-chunk
    usage-cumulative-every-chunk usage-trailing-choice usage-in-choice
    usage-in-vendor-object
    """
)

_TOOLS = _ids(
    """
    tool-call-no-index tool-call-index-not-zero tool-call-index-gap tool-call-empty-id
    tool-call-id-repeated tool-call-id-repeated-empty tool-call-empty-name-repeat
    tool-call-empty-arguments-delta tool-call-single-delta
    """
)

_BODIES = _ids(
    """
    leading-whitespace-json error-body-array error-string error-top-level-message
    error-message-object http-error-html
    """
)

#: Every quirk a finding can name.
DETECTABLE: frozenset[str] = frozenset(
    _FRAMING | _JSON_TEXT | _CHUNKS | _DELTAS | _FINISH | _USAGE | _TOOLS | _BODIES
)

_REFERENCE_FINISH = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
_SPECIFIC_FINISH = {"eos": "finish-reason-eos", "error": "finish-reason-error"}
_COUNTS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _missing(message: str) -> str:
    """The key a jsonschema ``required`` error names."""
    match = re.match(r"^'(.*)' is a required property$", message)
    return match.group(1) if match else message


def _where(path: JSONPath) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(top level)"


@cache
def _error_validator() -> Draft202012Validator:
    """The validator of ``$defs/errorBody`` in ``schemas/completion.schema.json``."""
    schema = validator("completion").schema
    assert isinstance(schema, dict)
    return Draft202012Validator(schema["$defs"]["errorBody"])


class _Checker:
    """Collects findings and the JSON paths they explain, so the schema check skips them."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.once: set[str] = set()
        self.explained: set[JSONPath] = set()

    def add(self, offset: int, quirk: str, message: str, *explains: JSONPath) -> None:
        self.findings.append(Finding(offset, quirk, message))
        self.explained.update(explains)

    def add_once(self, offset: int, quirk: str, message: str, *explains: JSONPath) -> None:
        """Add a finding the first time its quirk shows; later ones only explain paths."""
        self.explained.update(explains)
        if quirk not in self.once:
            self.once.add(quirk)
            self.findings.append(Finding(offset, quirk, message))

    def schema(
        self, schema: Draft202012Validator, value: Any, at: int, prefix: JSONPath = ()
    ) -> None:
        """A ``chunk-shape`` finding for each schema error that no finding explains.

        A missing key's path ends ``"(required)", key`` under the object lacking it.
        """
        for error in schema.iter_errors(value):
            path: JSONPath = (*prefix, *error.absolute_path)
            if error.validator == "required":
                path = (*path, "(required)", _missing(error.message))
            if any(path[: len(p)] == p for p in self.explained):
                continue
            where = _where(path[:-2] if error.validator == "required" else path)
            self.add(at, "chunk-shape", f"{where}: {error.message}")

    def error_code(self, error: Any, at: int, path: JSONPath) -> None:
        """OpenAI's error.code is a symbolic string or null."""
        code = error.get("code") if isinstance(error, dict) else None
        if isinstance(code, bool):
            return
        if isinstance(code, int):
            self.add(at, "error-code-numeric", f"error.code is the number {code}", (*path, "code"))
        elif isinstance(code, str) and code.isdigit():
            self.add(at, "error-code-digit-string", f"error.code is {code!r}", (*path, "code"))

    def usage_counts(self, usage: dict[str, Any], doc: Event | _Body, path: JSONPath) -> bool:
        """Check one usage object; True when it is a real count, not ``{}`` or zeros."""
        at = doc.locate(*path)
        if not usage:
            self.add_once(at, "usage-empty-object", "usage is {}", path)
            return False
        prompt, completion, total = (_count(usage.get(k)) for k in _COUNTS)
        present = [c for c in (prompt, completion, total) if c is not None]
        if present and not any(present):
            self.add_once(at, "usage-zero-placeholder", "a usage placeholder of zeros", path)
            return False
        if None not in (prompt, completion, total) and total != (prompt or 0) + (completion or 0):
            self.add(
                doc.locate(*path, "total_tokens"),
                "usage-total-mismatch",
                f"total_tokens {total} is not prompt {prompt} + completion {completion}",
            )
        return True

    def finish_value(self, reason: str, at: int, path: JSONPath) -> None:
        """A finish reason outside OpenAI's enum, or the empty string."""
        if reason == "":
            self.add_once(at, "finish-reason-empty-string", 'finish_reason ""', path)
        elif reason not in _REFERENCE_FINISH:
            quirk = _SPECIFIC_FINISH.get(reason, "finish-reason-nonstandard")
            self.add(at, quirk, f"finish_reason {reason!r} is not one of OpenAI's", path)

    def message_fields(
        self, doc: Event | _Body, message: dict[str, Any], path: JSONPath, *, delta: bool
    ) -> str:
        """What a delta or a message shows beside its role; returns its text content."""
        content = message.get("content")
        if isinstance(content, list):
            self.add_once(
                doc.locate(*path, "content"),
                "content-parts-array",
                "content is an array of parts",
                (*path, "content"),
            )
        if delta and "tool_calls" in message and message["tool_calls"] is None:
            self.add_once(
                doc.locate(*path, "tool_calls"),
                "tool-calls-null",
                "tool_calls is null",
                (*path, "tool_calls"),
            )
        reasoning_content = _text(message.get("reasoning_content"))
        reasoning = _text(message.get("reasoning"))
        if reasoning_content:
            at = doc.locate(*path, "reasoning_content")
            self.add_once(at, "reasoning-content", "reasoning in reasoning_content")
        if reasoning:
            at = doc.locate(*path, "reasoning")
            self.add_once(at, "reasoning-field", "reasoning in reasoning")
            if reasoning == reasoning_content:
                self.add_once(at, "reasoning-both-fields", "the same reasoning under both names")
        if message.get("reasoning_details"):
            at = doc.locate(*path, "reasoning_details")
            self.add_once(at, "reasoning-details", "structured reasoning_details")
        text = _text(content)
        if "<think>" in text:
            at = doc.locate(*path, "content")
            self.add_once(at, "think-tags-in-content", "reasoning in <think> tags in content")
        if "\ufffd" in text:
            at = doc.locate(*path, "content")
            self.add_once(at, "replacement-char-in-content", "U+FFFD in content")
        return text

    def role_value(self, doc: Event | _Body, message: dict[str, Any], path: JSONPath) -> bool:
        """Check the role; True when the message states a non-empty one."""
        role = message.get("role", ...)
        if role is None:
            at = doc.locate(*path, "role")
            self.add_once(at, "role-null", "role is null", (*path, "role"))
        elif role == "":
            at = doc.locate(*path, "role")
            self.add_once(at, "role-empty-string", 'role is ""', (*path, "role"))
        return isinstance(role, str) and role != ""


# ------------------------------------------------------------------------ JSON bodies


def _load(body: bytes, checker: _Checker) -> tuple[Any, bytes, int] | None:
    """The parsed body, its JSON text and where that starts; ``None`` after a finding."""
    start = _skip_ws(body, 0)
    data = body[start:]
    try:
        return json.loads(data.decode("utf-8")), data, start
    except (ValueError, RecursionError) as exc:
        checker.add(start, "chunk-shape", f"the body is not JSON ({exc})")
        return None


def _shifted(findings: list[Finding], start: int) -> list[Finding]:
    return sorted(Finding(f.offset + start, f.quirk, f.message) for f in findings)


def check_completion(body: bytes) -> list[Finding]:
    """Every finding of a non-streamed ``chat.completion`` body, sorted by offset."""
    checker = _Checker([])
    if body[:1] in (b"\n", b"\r") and body.strip():
        checker.add(0, "leading-whitespace-json", "blank lines before the JSON body")
    loaded = _load(body, checker)
    if loaded is None:
        return sorted(checker.findings)
    value, data, start = loaded
    lead = list(checker.findings)
    checker.findings = []
    doc = _Body(data)
    if not isinstance(value, dict):
        checker.add(0, "chunk-shape", "the body is not a JSON object")
        return lead + _shifted(checker.findings, start)
    if _python_separators(data):
        checker.add(0, "json-python-separators", "JSON with ', ' and ': ' separators")
    if _sorted_keys(value):
        checker.add(0, "alphabetical-keys", "every JSON object has its keys in alphabetical order")
    if _big_int(value):
        checker.add(0, "big-int-seed", "an integer above 2^53")
    if value.get("error") is not None:
        at = doc.locate("error")
        checker.add(
            at,
            "error-in-200",
            "an error object in a 200 JSON body, whose status could have said so",
        )
        checker.error_code(value["error"], at, ("error",))
        return lead + _shifted(checker.findings, start)
    if value.get("id") == "":
        checker.add(doc.locate("id"), "id-empty", 'id is ""')
    if value.get("created") == 0:
        checker.add(doc.locate("created"), "created-zero", "created is 0")
    choices = value.get("choices")
    for i, choice in enumerate(choices if isinstance(choices, list) else []):
        if isinstance(choice, dict):
            _completion_choice(checker, doc, choice, ("choices", i))
    usage = value.get("usage")
    if isinstance(usage, dict):
        checker.usage_counts(usage, doc, ("usage",))
    checker.schema(validator("completion"), value, 0)
    return lead + _shifted(checker.findings, start)


def _completion_choice(
    checker: _Checker, doc: _Body, choice: dict[str, Any], path: JSONPath
) -> None:
    if "text" in choice:
        checker.add_once(doc.locate(*path, "text"), "legacy-text-field", "a legacy text field")
    if isinstance(choice.get("usage"), dict):
        checker.add(doc.locate(*path, "usage"), "usage-in-choice", "usage inside a choice")
    message = choice.get("message")
    tool_calls: Any = None
    if isinstance(message, dict):
        checker.role_value(doc, message, (*path, "message"))
        checker.message_fields(doc, message, (*path, "message"), delta=False)
        if message.get("refusal") == "":
            at = doc.locate(*path, "message", "refusal")
            checker.add(at, "refusal-empty-string", 'refusal is ""')
        tool_calls = message.get("tool_calls")
        for j, call in enumerate(tool_calls if isinstance(tool_calls, list) else []):
            if isinstance(call, dict) and call.get("id") == "":
                at = doc.locate(*path, "message", "tool_calls", j, "id")
                checker.add_once(at, "tool-call-empty-id", 'a tool call whose id is ""')
    if "finish_reason" not in choice:
        message_text = "a choice without a finish_reason key"
        required = (*path, "(required)", "finish_reason")
        checker.add(doc.locate(*path), "finish-reason-key-missing", message_text, required)
        return
    reason = choice["finish_reason"]
    if isinstance(reason, str):
        checker.finish_value(reason, doc.locate(*path, "finish_reason"), (*path, "finish_reason"))
        if reason == "stop" and tool_calls:
            at = doc.locate(*path, "finish_reason")
            message_text = "finish_reason stop after tool calls"
            checker.add(at, "finish-reason-stop-after-tool-calls", message_text)


def check_error_body(body: bytes) -> list[Finding]:
    """Every finding of an HTTP error body (status 400 or above), sorted by offset."""
    checker = _Checker([])
    head = body[:512].lower()
    if b"<html" in head or b"<!doctype" in head:
        return [Finding(0, "http-error-html", "an HTML page instead of a JSON error")]
    if not body.strip():
        return [Finding(0, "chunk-shape", "an empty error body")]
    loaded = _load(body, checker)
    if loaded is None:
        return sorted(checker.findings)
    value, data, start = loaded
    doc = _Body(data)
    path: JSONPath = ()
    if isinstance(value, list):
        checker.add(0, "error-body-array", "the error object is wrapped in a JSON array")
        value = value[0] if value else None
        path = (0,)
    if not isinstance(value, dict):
        checker.add(0, "chunk-shape", "the error body is not a JSON object")
        return _shifted(checker.findings, start)
    error = value.get("error")
    if isinstance(error, str):
        at = doc.locate(*path, "error")
        checker.add(at, "error-string", "error is a plain string", (*path, "error"))
        checker.error_code(value, at, path)
    elif "error" not in value and "message" in value:
        at = doc.locate(*path, "message")
        message = "message at the top level with no error object"
        checker.add(at, "error-top-level-message", message, (*path, "(required)", "error"))
        checker.error_code(value, at, path)
        if not isinstance(value["message"], str):
            message = "the error message is not a string"
            checker.add(at, "error-message-object", message)
    elif isinstance(error, dict):
        if "message" in error and not isinstance(error["message"], str):
            at = doc.locate(*path, "error", "message")
            message = "error.message is not a string"
            checker.add(at, "error-message-object", message, (*path, "error", "message"))
        checker.error_code(error, doc.locate(*path, "error"), (*path, "error"))
    checker.schema(_error_validator(), value, 0, prefix=path)
    return _shifted(checker.findings, start)
