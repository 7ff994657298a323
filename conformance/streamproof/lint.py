"""``streamproof lint``: how far one response departs from the OpenAI reference.

The target is a body file (``.sse``, ``.json``, anything else is sniffed), a
case id of the corpus (``openai/text-stream-obfuscation``) or a live
endpoint (``--base-url URL --model M [--scenario NAME]``, one request of
``streamproof.record.SCENARIOS``). Every deviation names a quirk of the
catalogue (``corpus/quirks.json``), takes its severity from there and
carries the byte offset in the body where it shows; the checks are in
:mod:`streamproof.lint_checks` (which also lists what lint cannot see from
one body), :mod:`streamproof.lint_stream` and :mod:`streamproof.lint_scan`.

Output: one line per deviation, ``OFFSET  SEVERITY  QUIRK  explanation``,
sorted by offset, then a summary line; ``--json`` prints one JSON document
instead. Exit status: 0 when no deviation is ``must``, 1 when one is, 2 on
a usage error (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Case, CorpusError, default_root, load_corpus
from .lint_checks import (
    DETECTABLE,
    Finding,
    check_completion,
    check_error_body,
)
from .lint_stream import check_stream
from .quirks import Catalogue, load_quirks

__all__ = [
    "DETECTABLE",
    "KINDS",
    "SEVERITIES",
    "Deviation",
    "LintError",
    "LintReport",
    "add_arguments",
    "body_kind",
    "lint_body",
    "lint_case",
    "main",
]

SEVERITIES = ("must", "should", "may")
#: What a body is: an SSE stream, a non-streamed chat.completion, an HTTP error body.
KINDS = ("stream", "completion", "error")
_CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$")


class LintError(Exception):
    """A usage error: one line, exit 2."""


@dataclass(frozen=True)
class Deviation:
    """One departure from the reference: which quirk, how severe, where, why.

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
    """Every deviation of one body, sorted by offset."""

    target: str
    kind: str
    size: int
    deviations: list[Deviation] = field(default_factory=list)

    @property
    def quirks(self) -> set[str]:
        return {d.quirk for d in self.deviations}

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
        return f"{total} {noun} ({counts}) in {self.target}: {self.kind}, {self.size} bytes"

    def lines(self) -> list[str]:
        """``OFFSET  SEVERITY  QUIRK  explanation`` per deviation, then the summary."""
        width = max((len(str(d.offset)) for d in self.deviations), default=1)
        quirk_width = max((len(d.quirk) for d in self.deviations), default=1)
        rows = [
            f"{d.offset:>{width}}  {d.severity:<6}  {d.quirk:<{quirk_width}}  {d.text}"
            for d in self.deviations
        ]
        return [*rows, self.summary()]

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "bytes": self.size,
            "deviations": [d.as_dict() for d in self.deviations],
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
    return _sniff(body)


def _sniff(body: bytes) -> str:
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
    return LintReport(target, kind, len(body), _deviations(findings, catalogue))


def _deviations(findings: list[Finding], catalogue: Catalogue) -> list[Deviation]:
    """One deviation per quirk, at its first offset, sorted by offset."""
    by_quirk: dict[str, list[Finding]] = {}
    for finding in sorted(findings):
        by_quirk.setdefault(finding.quirk, []).append(finding)
    deviations = [
        Deviation(
            quirk,
            severity_of(quirk, catalogue),
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


# ----------------------------------------------------------------------- the command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``streamproof lint``."""
    parser.add_argument(
        "target",
        nargs="?",
        metavar="TARGET",
        help="a .sse or .json body file, or a case id such as openai/text-stream-obfuscation",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus for case ids and the quirk catalogue (default: the shipped one)",
    )
    live = parser.add_argument_group("a live endpoint (instead of TARGET)")
    live.add_argument("--base-url", metavar="URL", help="e.g. https://api.example.com/v1")
    live.add_argument("--model", metavar="M", help="the model to ask")
    live.add_argument(
        "--scenario", default="text", metavar="NAME", help="the request to send (default: text)"
    )
    live.add_argument(
        "--api-key-env", metavar="VAR", help="environment variable holding the API key"
    )
    live.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="seconds (default: 120)"
    )


def main(args: argparse.Namespace) -> int:
    """Run ``streamproof lint``; 0 clean of must, 1 a must deviation, 2 a usage error."""
    try:
        report = _report(args)
    except (LintError, CorpusError) as exc:
        print(f"streamproof lint: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"streamproof lint: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(report.lines()))
    return report.exit_code


def _report(args: argparse.Namespace) -> LintReport:
    root = (args.corpus or default_root()).resolve()
    catalogue, problems = load_quirks(root)
    if catalogue is None:
        raise LintError(problems[0])
    if args.base_url:
        if args.target:
            raise LintError("give TARGET or --base-url, not both")
        return _live(args, catalogue)
    if not args.target:
        raise LintError("give a TARGET (a body file or a case id) or --base-url URL --model M")
    path = Path(args.target)
    if path.is_file():
        body = path.read_bytes()
        kind = {".sse": "stream"}.get(path.suffix) or _sniff(body)
        return lint_body(body, kind, catalogue, target=str(path))
    if not _CASE_ID.match(args.target):
        raise LintError(f"{args.target}: no such file, and not a case id (provider/slug)")
    case = next((c for c in load_corpus(root).cases if c.id == args.target), None)
    if case is None:
        raise LintError(f"{args.target}: no such file or case (see 'streamproof list')")
    return lint_case(case, catalogue)


def _live(args: argparse.Namespace, catalogue: Catalogue) -> LintReport:
    """One request of ``record.SCENARIOS`` to the endpoint, its body linted as read."""
    from .record import SCENARIOS, RecordError, capture

    if not args.model:
        raise LintError("--base-url needs --model")
    if args.timeout <= 0:
        raise LintError("--timeout must be a positive number of seconds")
    if args.scenario not in SCENARIOS:
        raise LintError(f"--scenario {args.scenario!r}: choose from {', '.join(SCENARIOS)}")
    if not args.base_url.startswith(("http://", "https://")):
        raise LintError(f"--base-url {args.base_url!r} is not an http(s) URL")
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise LintError(f"--api-key-env: ${args.api_key_env} is not set")
    request = {"model": args.model, **SCENARIOS[args.scenario]}
    url = args.base_url.rstrip("/") + "/chat/completions"
    try:
        got = capture(url, request, api_key=key, timeout=args.timeout)
    except RecordError as exc:
        raise LintError(str(exc)) from None
    headers = {name.lower(): value for name, value in got.headers}
    kind = body_kind(
        got.body,
        status=got.status,
        content_type=headers.get("content-type"),
        stream_requested=bool(request.get("stream")),
    )
    return lint_body(
        got.body, kind, catalogue, target=f"{url} ({args.scenario}, HTTP {got.status})"
    )
