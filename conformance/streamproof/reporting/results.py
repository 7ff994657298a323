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
from .groups import capability_gaps, group_figures, profile_figures

__all__ = [
    "SEVERITIES",
    "baseline_document",
    "coverage_of",
    "exit_status",
    "groups_of",
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


def groups_of(results: Iterable[Result], *, in_process: bool = True) -> dict[str, Any]:
    """The run per field group and per profile (``reporting.groups``), from its results."""
    results = list(results)
    return {
        "groups": group_figures((r.case.id, r.groups, r.not_exposed) for r in results),
        "profiles": profile_figures(((r.case, r.groups) for r in results), in_process=in_process),
    }


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
    in_process: bool = True,
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
            **({} if in_process else {"http": True}),
        },
        "summary": {
            **summarize(results),
            **coverage_of(results),
            **groups_of(results, in_process=in_process),
        },
        "capability_gaps": capability_gaps(
            (r.case for r in results), adapter.get("capabilities", ()), in_process=in_process
        ),
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
    in_process: bool = True,
) -> dict[str, Any]:
    """The run reduced to what must not change unless a verdict changes.

    Each row keeps its verdict, its first divergence and its groups (which
    were compared, with their verdicts, and which were not judged), so
    ``diff`` sees a group that starts failing and the matrix the share
    compared.

    No timings, dates or platform: regenerating it from the same adapter,
    corpus and seed gives the same bytes, so a diff shows only real changes.
    """
    return {
        "adapter": {
            "name": adapter["name"],
            "version": adapter["version"],
            "capabilities": sorted(adapter.get("capabilities", ())),
        },
        "corpus": {"version": corpus.version, "sha256": corpus.sha256},
        "transports": transports,
        "seed": seed,
        "summary": {**summarize(results), **groups_of(results, in_process=in_process)},
        # What each case expected, so a later run can tell a changed
        # expectation from a changed parser.
        "expected_sha256": {r.case.id: r.case.expected_sha256 for r in results},
        "results": [
            {
                "case": r.case.id,
                "transport": r.transport,
                "verdict": r.verdict.value,
                **({"first_divergence": r.first_divergence} if r.first_divergence else {}),
                **({"groups": r.groups} if r.groups else {}),
                **({"not_exposed": list(r.not_exposed)} if r.not_exposed else {}),
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
