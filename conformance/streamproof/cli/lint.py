"""``streamproof lint``: how far one response departs from the OpenAI reference.

The target is a body file (``.sse``, ``.json``, anything else is sniffed), a
case id of the corpus (``openai/text-stream-obfuscation``) or a live
endpoint (``--base-url URL --model M [--scenario NAME]``, one request of
``streamproof.live.record.SCENARIOS``). The checks are the library in
:mod:`streamproof.checks`.

Output: one line per deviation or note, ``OFFSET  SEVERITY  QUIRK
explanation``, sorted by offset, then a summary line and a line naming what
to cite (the tool's version, the corpus version and digest, the quirk
catalogue's digest); ``--json`` prints one JSON document instead, with the
same three under ``tool``, ``corpus`` and ``catalogue``. A note is a quirk
that is the provider's own signalling (an error reported inside a 200
stream, ``streamproof.checks.report.SIGNALS``), not a deviation. Exit
status: 0 when no deviation is ``must``, 1 when one is, 2 on a usage error
(one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..__about__ import __version__
from ..checks.report import LintReport, body_kind, lint_body, lint_case, sniff
from ..corpus.cases import Corpus, default_root, file_digests, load_corpus, tree_digest
from ..corpus.gate import UnsafeFile, read_text
from ..corpus.quirks import Catalogue, load_quirks
from ..errors import CorpusError
from ..live import record

__all__ = ["LintError", "add_arguments", "run"]

_CASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*$")


class LintError(Exception):
    """A usage error: one line, exit 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def run(args: argparse.Namespace) -> int:
    """Run ``streamproof lint``; 0 clean of must, 1 a must deviation, 2 a usage error."""
    try:
        report, cited = _report(args)
    except (LintError, CorpusError, UnsafeFile) as exc:
        print(f"streamproof lint: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"streamproof lint: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.json:
        document = {**cited, **report.as_dict()}
        print(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print("\n".join([*report.lines(), _cite_line(cited)]))
    return report.exit_code


def _report(args: argparse.Namespace) -> tuple[LintReport, dict[str, Any]]:
    """The report, and what graded it: tool, corpus and catalogue (see :func:`_cited`)."""
    root = (args.corpus or default_root()).resolve()
    catalogue, problems = load_quirks(root)
    if catalogue is None:
        raise LintError(problems[0])
    if args.base_url:
        if args.target:
            raise LintError("give TARGET or --base-url, not both")
        return _live(args, catalogue), _cited(root, catalogue)
    if not args.target:
        raise LintError("give a TARGET (a body file or a case id) or --base-url URL --model M")
    path = Path(args.target)
    if path.is_file():
        body = path.read_bytes()
        kind = {".sse": "stream"}.get(path.suffix) or sniff(body)
        return lint_body(body, kind, catalogue, target=str(path)), _cited(root, catalogue)
    if not _CASE_ID.match(args.target):
        raise LintError(f"{args.target}: no such file, and not a case id (provider/slug)")
    corpus = load_corpus(root)
    case = next((c for c in corpus.cases if c.id == args.target), None)
    if case is None:
        raise LintError(f"{args.target}: no such file or case (see 'streamproof list')")
    return lint_case(case, catalogue), _cited(root, catalogue, corpus)


def _cited(root: Path, catalogue: Catalogue, corpus: Corpus | None = None) -> dict[str, Any]:
    """The versions a lint result is cited with: the tool, the corpus, its quirk catalogue.

    The corpus digest is the one a results file records (``corpus.sha256``): over
    every file but the manifest, read now, so it names the catalogue that graded.
    """
    if corpus is None:
        version = read_text(root / "VERSION", root).strip()
        digest = tree_digest(file_digests(root))
    else:
        version, digest = corpus.version, corpus.sha256
    return {
        "tool": {"name": "streamproof", "version": __version__},
        "corpus": {"version": version, "sha256": digest},
        "catalogue": {"file": "quirks.json", "sha256": catalogue.sha256},
    }


def _cite_line(cited: dict[str, Any]) -> str:
    tool, corpus, catalogue = cited["tool"], cited["corpus"], cited["catalogue"]
    return (
        f"linted by {tool['name']} {tool['version']} with corpus {corpus['version']} "
        f"(sha256 {corpus['sha256']}), quirk catalogue sha256 {catalogue['sha256']}"
    )


def _live(args: argparse.Namespace, catalogue: Catalogue) -> LintReport:
    """One request of ``record.SCENARIOS`` to the endpoint, its body linted as read."""

    if not args.model:
        raise LintError("--base-url needs --model")
    if args.timeout <= 0:
        raise LintError("--timeout must be a positive number of seconds")
    if args.scenario not in record.SCENARIOS:
        raise LintError(f"--scenario {args.scenario!r}: choose from {', '.join(record.SCENARIOS)}")
    if not args.base_url.startswith(("http://", "https://")):
        raise LintError(f"--base-url {args.base_url!r} is not an http(s) URL")
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise LintError(f"--api-key-env: ${args.api_key_env} is not set")
    request = {"model": args.model, **record.SCENARIOS[args.scenario]}
    url = args.base_url.rstrip("/") + "/chat/completions"
    try:
        got = record.capture(url, request, api_key=key, timeout=args.timeout)
    except record.RecordError as exc:
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
