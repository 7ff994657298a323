"""Lint reports: every deviation of one body from the OpenAI reference.

Every deviation names a quirk of the catalogue (``corpus/quirks.json``),
takes its severity from there and carries the byte offset in the body where
it shows. A quirk that is the provider's own signalling (:data:`SIGNALS`: an
error reported inside a 200 stream) is listed the same way as a *note*, with
no severity and no say in the exit status. The checks themselves are in
:mod:`streamproof.checks.rules` (which also lists what lint cannot see from
one body), :mod:`streamproof.checks.stream` and :mod:`streamproof.checks.scan`.
Used by the ``lint`` command and by the provider report.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..corpus.cases import SEVERITIES, Case
from ..corpus.quirks import Catalogue
from .rules import DETECTABLE, Finding, check_completion, check_error_body
from .stream import check_stream

__all__ = [
    "DETECTABLE",
    "KINDS",
    "NOTE",
    "SEVERITIES",
    "SIGNALS",
    "Deviation",
    "LintReport",
    "body_kind",
    "lint_body",
    "lint_case",
    "sniff",
]

#: What a body is: an SSE stream, a non-streamed chat.completion, an HTTP error body.
KINDS = ("stream", "completion", "error")

#: The label of a note: a quirk that is how a body says something, not a departure.
NOTE = "note"

#: Per kind of body, the quirks that are the provider's own signalling rather than a
#: departure from the reference. Once a stream has sent its 200 status and its first
#: bytes, the stream is the only channel left to report a failure: the OpenAI API
#: itself ends a failed stream with a data event carrying an ``error`` object (its
#: Python SDK raises it as ``APIError``), and OpenRouter, vLLM, TGI, SGLang and Groq
#: report mid-stream failures the same way or as ``event: error`` (their docs and
#: server code, cited in ``corpus/quirks.json``). Semantics §8.1 and §8.2 read it as
#: an error. So lint lists it as a note (how a client must read it), never as a
#: deviation, and it never sets the exit status. A non-streamed body has no such
#: excuse: the server knew of the failure before it sent the status, so there an
#: error with status 200 stays a deviation with the catalogue's severity.
SIGNALS: dict[str, frozenset[str]] = {"stream": frozenset({"error-in-200"})}


@dataclass(frozen=True)
class Deviation:
    """One departure from the reference: which quirk, how severe, where, why.

    A note (:data:`SIGNALS`) is the same value with ``severity`` :data:`NOTE`.

    A quirk that shows many times (every line ends CRLF, every data line lacks
    its space) is one deviation at its first offset; ``offsets`` has them all.
    """

    quirk: str
    severity: str
    offset: int
    message: str
    offsets: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        more = len(self.offsets) - 1
        return f"{self.message} (and {more} more)" if more > 0 else self.message

    def as_dict(self) -> dict[str, Any]:
        return {
            "quirk": self.quirk,
            "severity": self.severity,
            "offset": self.offset,
            "message": self.message,
            "offsets": list(self.offsets or (self.offset,)),
        }


@dataclass(frozen=True)
class LintReport:
    """Every deviation of one body, and every note (:data:`SIGNALS`), sorted by offset."""

    target: str
    kind: str
    size: int
    deviations: list[Deviation] = field(default_factory=list)
    notes: list[Deviation] = field(default_factory=list)

    @property
    def quirks(self) -> set[str]:
        """Every quirk the body shows, deviation or note."""
        return {d.quirk for d in (*self.deviations, *self.notes)}

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(d.severity for d in self.deviations)
        return {severity: found[severity] for severity in SEVERITIES}

    @property
    def exit_code(self) -> int:
        return 1 if self.counts["must"] else 0

    def summary(self) -> str:
        counts = ", ".join(f"{n} {severity}" for severity, n in self.counts.items())
        total = len(self.deviations)
        noun = "deviation" if total == 1 else "deviations"
        notes = len(self.notes)
        also = f" and {notes} note{'' if notes == 1 else 's'}" if notes else ""
        return f"{total} {noun} ({counts}){also} in {self.target}: {self.kind}, {self.size} bytes"

    def lines(self) -> list[str]:
        """``OFFSET  SEVERITY  QUIRK  explanation`` per deviation or note, then the summary."""
        shown = sorted((*self.deviations, *self.notes), key=lambda d: (d.offset, d.quirk))
        width = max((len(str(d.offset)) for d in shown), default=1)
        quirk_width = max((len(d.quirk) for d in shown), default=1)
        rows = [
            f"{d.offset:>{width}}  {d.severity:<6}  {d.quirk:<{quirk_width}}  {d.text}"
            for d in shown
        ]
        return [*rows, self.summary()]

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "bytes": self.size,
            "deviations": [d.as_dict() for d in self.deviations],
            "notes": [d.as_dict() for d in self.notes],
            "summary": self.counts,
            "exit": self.exit_code,
        }


def severity_of(quirk: str, catalogue: Catalogue) -> str:
    """The catalogue's severity; ``should`` for a quirk an older catalogue lacks."""
    known = catalogue.quirks.get(quirk)
    return "should" if known is None else str(known["severity"])


def body_kind(
    body: bytes,
    *,
    status: int = 200,
    content_type: str | None = None,
    stream_requested: bool | None = None,
) -> str:
    """What the body is, by status, then content type, then the request (semantics §2)."""
    if status >= 400:
        return "error"
    media = (content_type or "").split(";")[0].strip().lower()
    if media == "text/event-stream":
        return "stream"
    if media == "application/json" or media.endswith("+json"):
        return "completion"
    if stream_requested is not None:
        return "stream" if stream_requested else "completion"
    return sniff(body)


def sniff(body: bytes) -> str:
    """What a body looks like when nothing else says: a stream, a completion or an error."""
    head = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"[", b"<"):  # an error wrapped in a list, an HTML error page
        return "error"
    if head[:1] != b"{":
        return "stream"
    try:
        value = json.loads(head)
    except ValueError:
        return "completion"
    if (
        isinstance(value, dict)
        and "choices" not in value
        and ("error" in value or "message" in value)
    ):
        return "error"
    return "completion"


def lint_body(body: bytes, kind: str, catalogue: Catalogue, *, target: str = "-") -> LintReport:
    """Lint one body of a known kind (see :data:`KINDS`)."""
    if kind == "stream":
        findings = check_stream(body)
    elif kind == "completion":
        findings = check_completion(body)
    elif kind == "error":
        findings = check_error_body(body)
    else:
        raise ValueError(f"unknown kind {kind!r}: choose from {', '.join(KINDS)}")
    signals = SIGNALS.get(kind, frozenset())
    every = _deviations(findings, catalogue, signals)
    deviations = [d for d in every if d.quirk not in signals]
    notes = [d for d in every if d.quirk in signals]
    return LintReport(target, kind, len(body), deviations, notes)


def _deviations(
    findings: list[Finding], catalogue: Catalogue, signals: frozenset[str]
) -> list[Deviation]:
    """One entry per quirk, at its first offset, sorted by offset; a signal is a note."""
    by_quirk: dict[str, list[Finding]] = {}
    for finding in sorted(findings):
        by_quirk.setdefault(finding.quirk, []).append(finding)
    deviations = [
        Deviation(
            quirk,
            NOTE if quirk in signals else severity_of(quirk, catalogue),
            found[0].offset,
            found[0].message,
            tuple(f.offset for f in found),
        )
        for quirk, found in by_quirk.items()
    ]
    return sorted(deviations, key=lambda d: (d.offset, d.quirk))


def lint_case(case: Case, catalogue: Catalogue) -> LintReport:
    """Lint a corpus case's body, read as its status, headers and request say."""
    stream = case.request.get("stream")
    kind = body_kind(
        case.body,
        status=case.status,
        content_type=case.headers.get("content-type"),
        stream_requested=stream if isinstance(stream, bool) else None,
    )
    return lint_body(case.body, kind, catalogue, target=case.id)
