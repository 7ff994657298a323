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
from ..harness.projection import GroupPlan, plan_groups
from ..harness.strict_json import read_document as read_strict
from .coverage import coverage
from .groups import group_figures, profile_figures

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
    """The JSON in ``path`` and ``None``, or ``None`` and why it is not JSON (naming ``path``).

    Strict JSON only (``strict_json.read_document``): ``NaN``, ``Infinity``
    or ``1e400`` anywhere, or a nesting past its bound, makes it not JSON.
    ``OSError`` (a missing or unreadable file, a FIFO) propagates: that is a
    usage error.
    """
    try:
        return read_strict(path), None
    except ValueError as exc:  # one line naming the file
        return None, str(exc)


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
        return [problem]
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
    shard = document["run"].get("shard")
    if shard is not None and shard["count"] > 1:
        problems.append(
            f"run.shard: the file is shard {shard['index']}/{shard['count']} of a run: merge "
            "its shards (streamproof merge) and verify the merged file"
        )
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
    plans = _plans(document, corpus)
    problems.extend(_coverage_problems(document, corpus, plans))
    problems.extend(_result_problems(document, corpus, plans))
    return problems


def _plans(document: dict[str, Any], corpus: Corpus) -> dict[str, GroupPlan]:
    """What the run judged of each case it names (docs/semantics.md §12.6)."""
    capabilities = set(document["adapter"]["capabilities"])
    in_process = not document["run"].get("http", False)
    names = {row["case"] for row in document["results"]}
    return {
        c.id: plan_groups(c, capabilities, in_process=in_process)
        for c in corpus.cases
        if c.id in names
    }


def _coverage_problems(
    document: dict[str, Any], corpus: Corpus, plans: Mapping[str, GroupPlan]
) -> list[str]:
    """The coverage, group and profile figures of the summary against those its
    results add up to. A file written before a figure existed has none, and it
    is not checked.
    """
    cases = {c.id: c for c in corpus.cases}
    rows = []
    for row in document["results"]:
        plan = plans.get(row["case"])
        lacking = plan.lacking if plan is not None and row["verdict"] == "skip" else ()
        rows.append((row["severity"], row["verdict"], lacking))
    counted: dict[str, Any] = coverage(rows)
    known = [r for r in document["results"] if r["case"] in cases]
    counted["groups"] = group_figures(
        (r["case"], r.get("groups"), r.get("not_exposed", ())) for r in known
    )
    counted["profiles"] = profile_figures(
        ((cases[r["case"]], r.get("groups")) for r in known),
        in_process=not document["run"].get("http", False),
    )
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


def _result_problems(
    document: dict[str, Any], corpus: Corpus, plans: Mapping[str, GroupPlan]
) -> list[str]:
    cases = {c.id: c for c in corpus.cases}
    transports = set(document["run"]["transports"])
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
        problems.extend(f"{where}: {p}" for p in _row_problems(row, case, plans[case.id]))
    return problems


def _row_problems(row: dict[str, Any], case: Case, plan: GroupPlan) -> list[str]:
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
    judged = not plan.gap and bool(plan.exposed)
    if row["verdict"] == "skip" and judged:
        shown = ", ".join(sorted(plan.exposed))
        problems.append(f"skip, yet the adapter exposes groups the case states ({shown})")
    if row["verdict"] != "skip" and not judged:
        problems.append(f"{row['verdict']}, yet the adapter lacks {', '.join(plan.lacking)}")
    groups = row.get("groups") or {}
    beyond = sorted(set(groups) - plan.exposed - {"status"})
    if beyond:
        problems.append(f"judged on {', '.join(beyond)}, which the adapter does not expose")
    if row["verdict"] == "pass" and row["mismatches"]:
        problems.append("pass with mismatches")
    if row["verdict"] == "pass" and any(v != "pass" for v in groups.values()):
        problems.append("pass with a failing group")
    return problems


def _where(path: list[Any]) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.lstrip(".") or "(top level)"


def badge_document(document: Mapping[str, Any], corpus: Corpus) -> dict[str, Any]:
    """A shields.io endpoint badge for a results document (verify it first).

    It counts cases of severity ``must`` (the unit is named: "must 12/15
    cases"): a case passes when it passed (or xpassed) under every transport
    that ran it; one the adapter skipped under every transport (a capability
    it does not declare) is left out of the count and shown as skipped, with
    the share of ``must`` cases scored in the message and a yellow colour, so
    that a badge never reads as a full pass when cases were skipped; a
    runnable ``must`` case of the corpus that the file has no result for
    counts as not passed, so a partial run cannot look complete. A case is
    judged on the field groups the adapter exposes (docs/semantics.md
    §12.6): when some it states were not compared, the message gives the
    share of fields compared and the colour is yellow.
    """
    verdicts: dict[str, list[str]] = {}
    stated = compared = 0
    for row in document["results"]:
        if row["severity"] == BADGE_SEVERITY:
            verdicts.setdefault(row["case"], []).append(row["verdict"])
            judged = len(row.get("groups") or {})
            compared += judged
            stated += judged + len(row.get("not_exposed") or ())
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
    message = f"{BADGE_SEVERITY} {passed}/{total} cases"
    if skipped:
        message += f", {_share(passed + failed, total + skipped)} scored"
    notes = [f"{n} {label}" for n, label in ((unrun, "not run"), (skipped, "skipped")) if n]
    if notes:
        message += f" ({', '.join(notes)})"
    partial = stated and compared < stated
    if partial:  # a case passes on what the adapter exposes: say how much that was
        message += f", {_share(compared, stated)} of fields compared"
    if total == 0:
        color = "lightgrey"
    elif passed == total:
        color = "yellow" if skipped or partial else "green"
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
