"""What a results file claims, checked: ``streamproof verify`` and its badge.

A results file (``run --json``) is a claim: "this parser, on this corpus,
got these verdicts". ``verify`` checks that the claim is consistent with the
corpus it names and with itself: the schema, the corpus version and digest,
each result's case, severity and expectation digest, the skips against the
adapter's declared capabilities, and the summary, its coverage figures
included, against the verdicts; and the file must be strict JSON (no NaN,
no Infinity). It does not re-run the parser: a verdict flipped by hand from
``fail`` to ``pass`` (with the summary fixed to match) is beyond what a file
can show; re-running the adapter is the only check of that.

A badge is computed from a verified file only, never from an unverified one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..corpus.cases import Case, Corpus, load_corpus
from ..corpus.schemas import validator
from ..harness.strict_json import loads as strict_loads
from .coverage import REAL_CONNECTION, coverage, lacking_from_message

__all__ = [
    "BADGE_SEVERITY",
    "as_corpus",
    "badge_document",
    "read_document",
    "recount",
    "verify",
    "verify_document",
    "write_badge",
    "write_json",
]

# The severity a badge speaks for: every parser must get these right.
BADGE_SEVERITY = "must"
_PASSING = frozenset({"pass", "xpass"})
_SCHEMA_PROBLEMS = 10


def as_corpus(corpus: Corpus | Path | None) -> Corpus:
    """``corpus`` loaded, unless it already is."""
    return corpus if isinstance(corpus, Corpus) else load_corpus(corpus)


def read_document(path: Path) -> tuple[Any, str | None]:
    """The JSON in ``path`` and ``None``, or ``None`` and why it is not JSON.

    Strict JSON only: ``NaN`` or ``Infinity`` anywhere makes it not JSON.
    ``OSError`` (a missing or unreadable file) propagates: that is a usage error.
    """
    data = path.read_bytes()
    try:
        return strict_loads(data.decode("utf-8")), None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        return None, f"not valid JSON: {exc}"


def recount(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The summary the per-case verdicts add up to (as ``results.summarize``)."""
    counts = Counter(str(r["verdict"]) for r in results)
    summary = {
        "total": len(results),
        "passed": counts["pass"],
        "failed": counts["fail"],
        "skipped": counts["skip"],
        "crashed": counts["crash"],
        "timed_out": counts["timeout"],
        "xfailed": counts["xfail"],
        "xpassed": counts["xpass"],
    }
    summary["errors"] = summary["crashed"] + summary["timed_out"]
    return summary


def verify(results_path: Path, corpus: Corpus | Path | None = None) -> list[str]:
    """Every problem of the results file at ``results_path``; empty when verified.

    ``corpus`` is the corpus the file must have been run on: a loaded corpus,
    a corpus folder, or ``None`` for the corpus shipped with streamproof.
    ``OSError`` when the file cannot be read, ``CorpusError`` when the corpus
    cannot be loaded (both usage errors).
    """
    document, problem = read_document(results_path)
    if problem:
        return [f"{results_path}: {problem}"]
    return [f"{results_path}: {p}" for p in verify_document(document, as_corpus(corpus))]


def verify_document(document: Any, corpus: Corpus) -> list[str]:
    """The problems of a results document, checked against ``corpus``."""
    if isinstance(document, dict) and "tool" not in document and "transports" in document:
        return [
            "a baseline (run --baseline) has no severities or timings to verify: "
            "verify a results file (run --json)"
        ]
    if _marked_interrupted(document):
        return [
            "the file says its run was interrupted: an unfinished run is no result "
            "(run it again to the end)"
        ]
    errors = sorted(
        validator("results").iter_errors(document), key=lambda e: [str(p) for p in e.path]
    )
    if errors:
        shown = [f"schema: {_where(list(e.absolute_path))}: {e.message}" for e in errors]
        if len(shown) > _SCHEMA_PROBLEMS:
            rest = len(shown) - _SCHEMA_PROBLEMS
            shown = [*shown[:_SCHEMA_PROBLEMS], f"schema: … and {rest} more"]
        return shown  # the checks below rely on the shape
    problems: list[str] = []
    claimed = document["corpus"]
    if claimed["version"] != corpus.version:
        problems.append(
            f"corpus.version: the file says {claimed['version']!r}, "
            f"the corpus at {corpus.root} is {corpus.version!r}"
        )
    if claimed["sha256"] != corpus.sha256:
        problems.append(
            f"corpus.sha256: the file says {claimed['sha256']}, the corpus at {corpus.root} "
            f"digests to {corpus.sha256} (another corpus, or the file was edited)"
        )
    results: list[dict[str, Any]] = document["results"]
    counted = recount(results)
    for key, value in document["summary"].items():
        if key in counted and value != counted[key]:
            problems.append(
                f"summary.{key}: the file says {value}, its results add up to {counted[key]}"
            )
    problems.extend(_coverage_problems(document, corpus))
    problems.extend(_result_problems(document, corpus))
    return problems


def _coverage_problems(document: dict[str, Any], corpus: Corpus) -> list[str]:
    """The coverage figures of the summary against those its results add up to.

    A file written before the figures existed has none, and none are checked.
    """
    cases = {c.id: c for c in corpus.cases}
    capabilities = set(document["adapter"]["capabilities"])
    rows = []
    for row in document["results"]:
        case = cases.get(row["case"])
        lacking = case.requires - capabilities if case is not None else set()
        if case is not None and case.fault is not None:  # in-process, before capabilities
            said = lacking_from_message(row["verdict"], row.get("message", ""))
            lacking = set(said) if said == [REAL_CONNECTION] else lacking
        rows.append((row["severity"], row["verdict"], lacking if row["verdict"] == "skip" else ()))
    counted = coverage(rows)
    problems = []
    for key in counted:
        if key not in document["summary"]:
            continue
        claimed, actual = _leaves(document["summary"][key]), _leaves(counted[key])
        for path in sorted(set(claimed) | set(actual)):
            said, real = claimed.get(path, "nothing"), actual.get(path, 0)
            if said != real:
                problems.append(
                    f"summary.{key}{path}: the file says {said}, its results add up to {real}"
                )
    return problems


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """The leaves of nested objects by dotted path: ``{".must.runs": 12, …}``."""
    if not isinstance(value, dict):
        return {path: value}
    found: dict[str, Any] = {}
    for key, item in value.items():
        found.update(_leaves(item, f"{path}.{key}"))
    return found


def _marked_interrupted(document: Any) -> bool:
    """Whether the document says (at its top or in ``run``) that its run was interrupted."""
    if not isinstance(document, dict):
        return False
    run = document.get("run")
    marks = [document.get("interrupted"), run.get("interrupted") if isinstance(run, dict) else None]
    return any(mark not in (None, False) for mark in marks)


def _result_problems(document: dict[str, Any], corpus: Corpus) -> list[str]:
    cases = {c.id: c for c in corpus.cases}
    transports = set(document["run"]["transports"])
    capabilities = set(document["adapter"]["capabilities"])
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for index, row in enumerate(document["results"]):
        where = f"results[{index}] ({row['case']} [{row['transport']}])"
        key = (row["case"], row["transport"])
        if key in seen:
            problems.append(f"{where}: listed twice")
        seen.add(key)
        if row["transport"] not in transports:
            problems.append(f"{where}: transport not among the run's {sorted(transports)}")
        case = cases.get(row["case"])
        if case is None:
            problems.append(f"{where}: not a case of corpus {corpus.version}")
            continue
        problems.extend(f"{where}: {p}" for p in _row_problems(row, case, capabilities))
    return problems


def _row_problems(row: dict[str, Any], case: Case, capabilities: set[str]) -> list[str]:
    problems = []
    if row["expected_sha256"] != case.expected_sha256:
        problems.append(
            f"expected_sha256 {row['expected_sha256'][:12]}… is not the case's expectation "
            f"({case.expected_sha256[:12]}…): the expectation was changed"
        )
    if row["severity"] != case.severity:
        problems.append(f"severity {row['severity']!r}, the case says {case.severity!r}")
    if not case.runnable:
        problems.append("the case is recorded and not yet reviewed: no run scores it")
    if row["transport"] == "recorded" and not case.has_chunks:
        problems.append("the case has no chunks.json: no run scores it under 'recorded'")
    missing = sorted(case.requires - capabilities)
    # A wire/ case skips in-process whatever the adapter declares (docs/semantics.md §5.4).
    message = row.get("message", "")
    off_the_wire = case.fault is not None and lacking_from_message("skip", message) != []
    if row["verdict"] == "skip" and not missing and not off_the_wire:
        problems.append("skip, yet the adapter declares every capability the case requires")
    if row["verdict"] != "skip" and missing:
        problems.append(f"{row['verdict']}, yet the adapter lacks {', '.join(missing)}")
    if row["verdict"] == "pass" and row["mismatches"]:
        problems.append("pass with mismatches")
    return problems


def _where(path: list[Any]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(top level)"


def badge_document(document: Mapping[str, Any], corpus: Corpus) -> dict[str, Any]:
    """A shields.io endpoint badge for a results document (verify it first).

    It counts cases of severity ``must``: a case passes when it passed (or
    xpassed) under every transport that ran it; one the adapter skipped under
    every transport (a capability it does not declare) is left out of the
    count and shown as skipped, with the share of ``must`` cases scored in
    the message and a yellow colour, so that a badge never reads as a full
    pass when cases were skipped; a runnable ``must`` case of the corpus that
    the file has no result for counts as not passed, so a partial run cannot
    look complete.
    """
    verdicts: dict[str, list[str]] = {}
    for row in document["results"]:
        if row["severity"] == BADGE_SEVERITY:
            verdicts.setdefault(row["case"], []).append(row["verdict"])
    passed = failed = skipped = 0
    for found in verdicts.values():
        ran = [v for v in found if v != "skip"]
        if not ran:
            skipped += 1
        elif all(v in _PASSING for v in ran):
            passed += 1
        else:
            failed += 1
    unrun = sum(
        1
        for c in corpus.cases
        if c.runnable and c.severity == BADGE_SEVERITY and c.id not in verdicts
    )
    total = passed + failed + unrun
    message = f"{BADGE_SEVERITY} {passed}/{total}"
    if skipped:
        message += f", {_share(passed + failed, total + skipped)} scored"
    notes = [f"{n} {label}" for n, label in ((unrun, "not run"), (skipped, "skipped")) if n]
    if notes:
        message += f" ({', '.join(notes)})"
    if total == 0:
        color = "lightgrey"
    elif passed == total:
        color = "yellow" if skipped else "green"
    else:
        color = "red"
    return {
        "schemaVersion": 1,
        "label": f"streamproof corpus {document['corpus']['version']}",
        "message": message,
        "color": color,
    }


def _share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage rounded down: 99.9% is not 100%."""
    if part and part * 100 < whole:
        return "<1%"
    return f"{part * 100 // whole}%"


def write_badge(
    results_path: Path, badge_path: Path, corpus: Corpus | Path | None = None
) -> tuple[dict[str, Any] | None, list[str]]:
    """Verify ``results_path`` and, only when verified, write its badge.

    Returns the badge (``None`` when refused) and the problems found.
    """
    loaded = as_corpus(corpus)
    problems = verify(results_path, loaded)
    if problems:
        return None, problems
    document, _ = read_document(results_path)
    badge = badge_document(document, loaded)
    write_json(badge_path, badge)
    return badge, []


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON."""
    write_atomic(path, json.dumps(data, indent=2, allow_nan=False) + "\n")
