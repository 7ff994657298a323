"""The history of each scored library: one record per release, and the page over them.

``scripts/history`` installs each release of a library into an environment
of its own, scores it and writes one record per release to
``reports/history/<adapter>/<version>.json`` (``record_of`` makes it from the
run's baseline). ``history_page`` reads the records of one corpus digest and
renders ``reports/history.html`` from ``templates/history.html.j2``: per
library, the pass rate of each release and its field groups; per case, the
release where it started passing or failing. Records of another corpus digest
are counted, not shown (they are re-scored when the history next runs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..harness.strict_json import read_document
from .render import template

__all__ = [
    "RECORD_FORMAT",
    "case_verdicts",
    "history_page",
    "load_records",
    "record_of",
    "transitions",
    "version_key",
    "write_history_page",
]

#: The format of a history record; a record of another format is read as stale.
RECORD_FORMAT = 1

# A case's verdict over its transports: the worst one decides.
_WORST = ("crash", "timeout", "fail", "xpass", "xfail", "pass", "skip")
_FAILING = frozenset({"crash", "timeout", "fail"})


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Order releases as their registries do, near enough: numbers as numbers."""
    parts = re.split(r"[.+\-]", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def case_verdicts(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each case's verdict over its transports (the worst of them) from baseline rows."""
    found: dict[str, str] = {}
    for row in rows:
        case, verdict = str(row["case"]), str(row["verdict"])
        known = found.get(case)
        if known is None or _WORST.index(verdict) < _WORST.index(known):
            found[case] = verdict
    return found


def record_of(
    baseline: Mapping[str, Any],
    *,
    library: str,
    package: str,
    version: str,
    resolved: Mapping[str, str],
    tool: str,
) -> dict[str, Any]:
    """The history record of one scored release, from its run's baseline document."""
    rows = baseline["results"]
    failing: dict[str, list[str]] = {}
    for row in rows:
        bad = sorted(g for g, v in (row.get("groups") or {}).items() if v != "pass")
        if bad:
            failing[row["case"]] = sorted({*failing.get(row["case"], []), *bad})
    return {
        "format": RECORD_FORMAT,
        "library": library,
        "package": package,
        "version": version,
        "resolved": dict(sorted(resolved.items())),
        "tool": tool,
        "corpus": dict(baseline["corpus"]),
        "transports": list(baseline["transports"]),
        "status": "scored",
        "summary": baseline["summary"],
        "cases": dict(sorted(case_verdicts(rows).items())),
        "failing_groups": dict(sorted(failing.items())),
    }


def load_records(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every record under ``folder`` (``<adapter>/<version>.json``), by library, oldest first."""
    found: dict[str, list[dict[str, Any]]] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*/*.json")):
        record = read_document(path)
        if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
            raise ValueError(f"{path}: not a history record of format {RECORD_FORMAT}")
        found.setdefault(path.parent.name, []).append(record)
    for records in found.values():
        records.sort(key=lambda r: version_key(str(r["version"])))
    return found


def transitions(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Where each case started passing or failing, over scored releases oldest first."""
    changes: list[dict[str, str]] = []
    before: dict[str, tuple[str, str]] = {}  # case -> (verdict, release)
    for record in records:
        if record["status"] != "scored":
            continue
        for case, verdict in record["cases"].items():
            if verdict == "skip":
                continue
            last = before.get(case)
            before[case] = (verdict, record["version"])
            if last is None:
                continue
            was_failing, failing = last[0] in _FAILING, verdict in _FAILING
            if was_failing != failing:
                changes.append(
                    {
                        "case": case,
                        "change": "started failing" if failing else "started passing",
                        "release": str(record["version"]),
                        "previous": last[1],
                        "verdict": verdict,
                        "was": last[0],
                    }
                )
    return changes


def _release_row(record: dict[str, Any], groups: list[str]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "version": record["version"],
        "status": record["status"],
        "reason": record.get("reason", ""),
        "resolved": record.get("resolved", {}),
        "package": record.get("package", ""),
    }
    if record["status"] != "scored":
        return row
    cases = record["cases"]
    judged = [v for v in cases.values() if v != "skip"]
    row["cases_passed"] = sum(v in ("pass", "xfail") for v in judged)
    row["cases_judged"] = len(judged)
    row["rate"] = _percent(row["cases_passed"], row["cases_judged"])
    figures = record["summary"].get("groups", {})
    row["groups"] = {
        g: (
            _percent(figures[g]["cases"]["passed"], figures[g]["cases"]["compared"])
            if g in figures and figures[g].get("cases", {}).get("compared")
            else None
        )
        for g in groups
    }
    return row


def _percent(part: int, whole: int) -> str | None:
    return f"{100 * part / whole:.1f}%" if whole else None


#: What a person found when they checked a change against the library:
#: ``reports/history/checked.json``, library -> release -> {"found", "source"}.
CHECKED = "checked.json"


def load_checked(folder: Path) -> dict[str, dict[str, dict[str, str]]]:
    """The hand checks of changes (``CHECKED``); empty when there are none.

    ``ValueError`` names the file when it is not library -> release ->
    {"found": text, "source": text}.
    """
    path = folder / CHECKED
    if not path.is_file():
        return {}
    document = read_document(path)
    shaped = isinstance(document, dict) and all(
        isinstance(releases, dict)
        and all(
            isinstance(check, dict)
            and set(check) == {"found", "source"}
            and all(isinstance(v, str) and v for v in check.values())
            for check in releases.values()
        )
        for releases in document.values()
    )
    if not shaped:
        raise ValueError(f"{path}: not library -> release -> {{found, source}}")
    return document  # type: ignore[no-any-return]


def history_page(
    records: Mapping[str, list[dict[str, Any]]],
    corpus_sha256: str,
    checked: Mapping[str, Mapping[str, Mapping[str, str]]] | None = None,
) -> dict[str, Any]:
    """What ``templates/history.html.j2`` shows: the records of ``corpus_sha256`` alone.

    Each change carries what a person found checking it against the library's
    changelog or source (``checked``), or nothing: the page says which.
    """
    libraries = []
    stale = 0
    for name in sorted(records):
        current = [r for r in records[name] if r["corpus"]["sha256"] == corpus_sha256]
        stale += len(records[name]) - len(current)
        if not current:
            continue
        groups = sorted(
            {
                g
                for r in current
                if r["status"] == "scored"
                for g, f in r["summary"].get("groups", {}).items()
                if f.get("cases", {}).get("compared")
            }
        )
        libraries.append(
            {
                "name": name,
                "package": current[-1].get("package", ""),
                "groups": groups,
                "releases": [_release_row(r, groups) for r in reversed(current)],
                "transitions": [
                    {**change, "checked": (checked or {}).get(name, {}).get(change["release"])}
                    for change in transitions(current)
                ],
                "scored": sum(r["status"] == "scored" for r in current),
                "window": (current[0]["version"], current[-1]["version"]),
            }
        )
    return {"libraries": libraries, "corpus_sha256": corpus_sha256, "stale": stale}


def write_history_page(
    folder: Path, out: Path, corpus: Mapping[str, str], tool: str
) -> dict[str, Any]:
    """Render the page of the records under ``folder`` on ``corpus`` into ``out``."""
    page = history_page(load_records(folder), corpus["sha256"], load_checked(folder))
    html = template("history.html.j2").render(page=page, corpus=corpus, tool=tool)
    write_atomic(out, html)
    return page


def dump_record(record: Mapping[str, Any]) -> str:
    """A record as its file holds it: sorted keys, one indent, strict JSON."""
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
