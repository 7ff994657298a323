"""Results as data: the summary, the exit status and the JSON document."""

from __future__ import annotations

import datetime
import json
import platform
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..__about__ import __version__
from ..atomic import write_atomic, writing_atomic
from ..corpus.cases import SEVERITIES, Corpus
from ..harness.engine import Result, Verdict
from .coverage import coverage, lacking_from_message

__all__ = [
    "SEVERITIES",
    "baseline_document",
    "coverage_of",
    "exit_status",
    "results_document",
    "summarize",
    "write_baseline",
    "write_json",
]

_FAILING = frozenset({Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.XPASS})


def summarize(results: Iterable[Result]) -> dict[str, int]:
    """Counts by verdict; ``incremental_checked`` (runs whose deltas were checked) when any were."""
    results = list(results)
    counts = Counter(r.verdict for r in results)
    summary = {
        "total": sum(counts.values()),
        "passed": counts[Verdict.PASS],
        "failed": counts[Verdict.FAIL],
        "skipped": counts[Verdict.SKIP],
        "crashed": counts[Verdict.CRASH],
        "timed_out": counts[Verdict.TIMEOUT],
        "xfailed": counts[Verdict.XFAIL],
        "xpassed": counts[Verdict.XPASS],
    }
    summary["errors"] = summary["crashed"] + summary["timed_out"]
    checked = sum(r.incremental for r in results)
    if checked:
        summary["incremental_checked"] = checked
    return summary


def coverage_of(results: Iterable[Result]) -> dict[str, Any]:
    """How much of the run was scored (``coverage.coverage``), from its results."""
    return coverage(
        (r.case.severity, r.verdict.value, lacking_from_message(r.verdict.value, r.message))
        for r in results
    )


def exit_status(results: Iterable[Result], fail_on: str = "may") -> int:
    """0 when nothing at or above ``fail_on`` failed, crashed, timed out or xpassed."""
    limit = SEVERITIES.index(fail_on)
    for result in results:
        if result.verdict in _FAILING and SEVERITIES.index(result.case.severity) <= limit:
            return 1
    return 0


def results_document(
    results: list[Result],
    *,
    corpus: Corpus,
    adapter: dict[str, Any],
    transports: list[str],
    seed: int,
) -> dict[str, Any]:
    return {
        "tool": {"name": "streamproof", "version": __version__},
        "corpus": {"version": corpus.version, "sha256": corpus.sha256, "path": str(corpus.root)},
        "adapter": adapter,
        "run": {
            "transports": transports,
            "seed": seed,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "platform": f"{platform.python_implementation()} {platform.python_version()} "
            f"on {platform.system()} {platform.machine()}",
        },
        "summary": {**summarize(results), **coverage_of(results)},
        "results": [r.as_dict() for r in results],
    }


def write_json(document: dict[str, Any], path: Path) -> None:
    """Write ``document``, which ``schemas/results.schema.json`` describes.

    It is not checked against the schema here: a document is built by this
    module and ``Result.as_dict`` alone, and the tests check every document
    their runs write (tests/commands.py), so the check would find only a bug
    of ours, and it cost a run more than the rest of writing it, the import
    of jsonschema included. It is written as it is encoded: the text of a
    large run is never held whole.
    """
    with writing_atomic(path) as out:
        json.dump(document, out, indent=2, ensure_ascii=False, allow_nan=False)
        out.write("\n")


def baseline_document(
    results: list[Result],
    *,
    corpus: Corpus,
    adapter: dict[str, Any],
    transports: list[str],
    seed: int,
) -> dict[str, Any]:
    """The run reduced to what must not change unless a verdict changes.

    No timings, dates or platform: regenerating it from the same adapter,
    corpus and seed gives the same bytes, so a diff shows only real changes.
    """
    return {
        "adapter": {"name": adapter["name"], "version": adapter["version"]},
        "corpus": {"version": corpus.version, "sha256": corpus.sha256},
        "transports": transports,
        "seed": seed,
        "summary": dict(summarize(results)),
        # What each case expected, so a later run can tell a changed
        # expectation from a changed parser.
        "expected_sha256": {r.case.id: r.case.expected_sha256 for r in results},
        "results": [
            {
                "case": r.case.id,
                "transport": r.transport,
                "verdict": r.verdict.value,
                **({"first_divergence": r.first_divergence} if r.first_divergence else {}),
            }
            for r in results
        ],
    }


def write_baseline(document: dict[str, Any], path: Path) -> None:
    """JSON with one result per line: small, and a diff shows one line per change."""
    head = {k: v for k, v in document.items() if k != "results"}
    lines = [
        json.dumps(r, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        for r in document["results"]
    ]
    text = json.dumps(head, indent=1, ensure_ascii=False, allow_nan=False)[:-2]
    text += ',\n "results": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"
    json.loads(text)  # it must stay one JSON document
    write_atomic(path, text)
