"""Runs read back: a results file or a baseline as one comparable record.

``load_run`` and ``run_record`` accept either format (``run --json`` or
``run --baseline``) and check it; ``row_divergence`` gives a result's first
divergence as the terminal shows it; ``retired_cases`` reads the manifest's
retired ids. Used by ``diff``, ``known_failures`` and the matrix's readers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.cases import Corpus, default_root, read_manifest
from ..corpus.schemas import schema_errors
from ..errors import CorpusError
from ..harness.comparison import Divergence
from ..harness.strict_json import read_document
from ..harness.transports import TRANSPORTS

__all__ = ["DiffError", "RunRecord", "load_run", "retired_cases", "row_divergence", "run_record"]


# The shape of a normalised baseline (results.baseline_document); it has no
# schema file of its own, being an internal format, so it is checked here.
_BASELINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["adapter", "corpus", "transports", "results"],
    "properties": {
        "adapter": {
            "type": "object",
            "required": ["name", "version"],
            "properties": {"name": {"type": "string"}, "version": {"type": "string"}},
        },
        "corpus": {
            "type": "object",
            "required": ["version", "sha256"],
            "properties": {"version": {"type": "string"}, "sha256": {"type": "string"}},
        },
        "transports": {"type": "array", "items": {"enum": list(TRANSPORTS)}},
        "expected_sha256": {"type": "object", "additionalProperties": {"type": "string"}},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["case", "transport", "verdict"],
                "properties": {
                    "case": {"type": "string"},
                    "transport": {"type": "string"},
                    "verdict": {
                        "enum": ["pass", "fail", "skip", "crash", "timeout", "xfail", "xpass"]
                    },
                    "first_divergence": {"type": "string"},
                },
            },
        },
    },
}


class DiffError(Exception):
    """A file cannot be compared: one line naming it (exit 2)."""


@dataclass(frozen=True)
class RunRecord:
    """One side of a diff, whichever file format it came from."""

    path: str
    kind: str  # "results" or "baseline"
    adapter: str
    corpus_version: str
    corpus_sha256: str
    transports: list[str]
    # (case, transport) -> (verdict, first divergence or message)
    verdicts: dict[tuple[str, str], tuple[str, str]]
    # case -> expected_sha256, where the file records it
    expected: dict[str, str]
    # (case, transport) -> the field groups that failed, where the file records groups
    failing_groups: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)

    @property
    def cases(self) -> set[str]:
        return {case for case, _ in self.verdicts}


def row_divergence(row: Mapping[str, Any]) -> str:
    """A result's first divergence, as the terminal shows it, in either format."""
    if row.get("first_divergence"):
        return str(row["first_divergence"])
    mismatches = row.get("mismatches") or []
    if mismatches:
        first = mismatches[0]
        return str(Divergence.from_dict(first))
    return str(row.get("message", ""))


def load_run(path: Path) -> RunRecord:
    """A results file or a baseline, checked; ``DiffError`` names what is wrong."""
    try:
        document = read_document(path)
    except OSError as exc:
        raise DiffError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # one line naming the file
        raise DiffError(str(exc)) from None
    return run_record(document, str(path))


def run_record(document: Any, path: str = "(document)") -> RunRecord:
    """The record of an already loaded results or baseline document."""
    if isinstance(document, dict) and "tool" not in document and "transports" in document:
        return _from_baseline(document, path)
    problem = schema_errors("results", document)
    if problem:
        raise DiffError(f"{path}: neither a results file nor a baseline: {problem}")
    verdicts: dict[tuple[str, str], tuple[str, str]] = {}
    expected: dict[str, str] = {}
    for row in document["results"]:
        verdicts[(row["case"], row["transport"])] = (row["verdict"], row_divergence(row))
        expected[row["case"]] = row["expected_sha256"]
    adapter = document["adapter"]
    return RunRecord(
        path,
        "results",
        f"{adapter['name']} {adapter['version']}",
        document["corpus"]["version"],
        document["corpus"]["sha256"],
        list(document["run"]["transports"]),
        verdicts,
        expected,
        _failing_groups(document["results"]),
    )


def _from_baseline(document: dict[str, Any], path: str) -> RunRecord:
    from jsonschema import Draft202012Validator  # only when a baseline is read

    errors = sorted(Draft202012Validator(_BASELINE_SCHEMA).iter_errors(document), key=str)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise DiffError(f"{path}: not a baseline: {where}: {errors[0].message}")
    verdicts = {
        (row["case"], row["transport"]): (row["verdict"], row_divergence(row))
        for row in document["results"]
    }
    adapter = document["adapter"]
    return RunRecord(
        path,
        "baseline",
        f"{adapter['name']} {adapter['version']}",
        document["corpus"]["version"],
        document["corpus"]["sha256"],
        list(document["transports"]),
        verdicts,
        dict(document.get("expected_sha256", {})),
        _failing_groups(document["results"]),
    )


def _failing_groups(rows: list[dict[str, Any]]) -> dict[tuple[str, str], frozenset[str]]:
    """Each row's failing field groups, for the rows that record their groups."""
    return {
        (row["case"], row["transport"]): frozenset(
            g for g, v in row["groups"].items() if v != "pass"
        )
        for row in rows
        if isinstance(row.get("groups"), dict)
    }


def retired_cases(corpus: Corpus | Path | None = None) -> dict[str, str]:
    """The corpus manifest's ``retired``: case id -> the version that retired it."""
    root = corpus.root if isinstance(corpus, Corpus) else (corpus or default_root())
    try:  # through the corpus gate: shape checked, no link or FIFO followed
        retired = read_manifest(root).get("retired", {})
    except CorpusError as exc:
        raise DiffError(str(exc)) from None
    return {str(k): str(v) for k, v in retired.items()}
