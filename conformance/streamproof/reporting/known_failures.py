"""Today's failures as a known-failures file: ``run --write-expect FILE``.

Every case that failed, crashed or timed out (or was already a known
failure, ``xfail``) becomes an entry of an expectations file
(``schemas/expectations.schema.json``): one entry with ``"transport": "all"``
when the case failed under every transport that ran it, on the same field
groups, else one entry per failing transport. Each entry lists the field groups that failed
(``groups``, docs/semantics.md §12.6) and a reason naming the divergence
(``content fails: choices[0].content: want 'a', got 'b'``); it carries no
issue URL, for a person to add. The reason and issue of an entry that was
already known (a run with ``--expect``) are kept. Fed back with ``--expect``,
the file makes today's run pass; a case that starts passing shows up as
``xpass``, and one that starts failing on another group fails the run.

A result of the random transport that says which seeds it failed and passed
under (``run --seeds``, or a run against an entry naming seeds) is written
from those seeds, not from its verdict: failing under some seeds only, it
becomes a ``random`` entry with ``failing_seeds`` and ``passing_seeds``,
judged seed by seed by ``--expect`` (see harness/expectations.py); failing
under every seed, an ordinary entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..corpus.schemas import schema_errors
from ..harness.projection import GROUPS
from .run_files import row_divergence

__all__ = ["FAILURES", "expectations_document", "write_expectations"]

FAILURES = frozenset({"fail", "crash", "timeout", "xfail"})
_DETAIL_LIMIT = 200
# How runner.Engine words an xfail: "known failure: REASON[ (ISSUE)]; VERDICT: DETAIL".
_KNOWN = re.compile(
    r"known failure: (?P<reason>.*?)(?: \((?P<issue>https?://[^\s)]+)\))?; "
    r"(?P<verdict>fail|crash|timeout): (?P<detail>.*)",
    re.DOTALL,
)


def _cut(text: str, limit: int = _DETAIL_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fails(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` failed (under some seed, when it names its seeds)."""
    seeds = row.get("seeds")
    if seeds is not None:
        return bool(seeds["failing"])
    return row["verdict"] in FAILURES


def _partial(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` failed under some seeds and passed under others."""
    seeds = row.get("seeds")
    return seeds is not None and bool(seeds["failing"]) and bool(seeds["passing"])


def _failing_groups(rows: list[Mapping[str, Any]]) -> list[str]:
    """The groups that failed in any of ``rows`` (every compared one for a crash)."""
    found: set[str] = set()
    for row in rows:
        found |= {g for g, v in (row.get("groups") or {}).items() if v == "fail"}
    return sorted(found, key=GROUPS.index)


def _entry(
    case: str, transport: str, row: Mapping[str, Any], rows: list[Mapping[str, Any]]
) -> dict[str, Any]:
    """One expectation for a failing result ``row`` (``rows``: every row it stands for)."""
    groups = _failing_groups(rows)
    entry: dict[str, Any] = {"case": case, "transport": transport, **_why(row, groups)}
    if groups:
        entry["groups"] = groups
    if _partial(row):
        entry["failing_seeds"] = list(row["seeds"]["failing"])
        entry["passing_seeds"] = list(row["seeds"]["passing"])
    return entry


def _why(row: Mapping[str, Any], groups: list[str]) -> dict[str, str]:
    """The reason (and issue) of the entry for ``row``: kept when known, else the
    failing groups and the divergence."""
    entry: dict[str, str] = {}
    detail = row_divergence(row)
    message = str(row.get("message", ""))
    known = _KNOWN.fullmatch(message) if row["verdict"] == "xfail" else None
    if known and known["reason"].strip():
        entry["reason"] = known["reason"].strip()
        if known["issue"]:
            entry["issue"] = known["issue"]
        return entry
    if row["verdict"] in ("crash", "timeout"):
        detail = f"{row['verdict']}: {detail}"
    if row["verdict"] in ("pass", "xpass"):  # failed under another seed, not this run's
        detail = "under the seeds listed"
    what = f"{', '.join(groups)} fail{'s' * (len(groups) == 1)}: " if groups else ""
    entry["reason"] = f"{what}{_cut(detail) or row['verdict']}"
    return entry


def expectations_document(results_doc: Mapping[str, Any]) -> dict[str, Any]:
    """The expectations listing every failure of a results document, in its order."""
    ran: dict[str, list[str]] = {}
    failing: dict[str, list[Mapping[str, Any]]] = {}
    for row in results_doc["results"]:
        ran.setdefault(row["case"], []).append(row["transport"])
        if _fails(row):
            failing.setdefault(row["case"], []).append(row)
    entries: list[dict[str, Any]] = []
    for case, rows in failing.items():
        same_groups = len({tuple(_failing_groups([r])) for r in rows}) == 1
        if len(rows) == len(ran[case]) and same_groups and not any(_partial(r) for r in rows):
            # a reason already known under one transport stands for all of them
            known = next((r for r in rows if r["verdict"] == "xfail"), rows[0])
            entries.append(_entry(case, "all", known, rows))
        else:
            entries.extend(_entry(case, row["transport"], row, [row]) for row in rows)
    return {
        "adapter": str(results_doc["adapter"]["name"]),
        "corpus": str(results_doc["corpus"]["version"]),
        "expectations": entries,
    }


def write_expectations(results_doc: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """Write the failures of ``results_doc`` as an expectations file; return it."""
    document = expectations_document(results_doc)
    problem = schema_errors("expectations", document)
    if problem:  # our own bug: never write a file --expect would refuse
        raise ValueError(f"expectations document does not match its schema: {problem}")
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return document
