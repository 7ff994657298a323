"""What changed between two runs: ``streamproof diff OLD NEW``.

Either side is a results file (``run --json``) or a normalised baseline
(``run --baseline``). Verdicts are compared per case × transport, over the
transports both runs have. A regression is a pass (or xpass) that now fails,
crashes, times out or is a known failure; timeouts are kept apart, since a
slow machine makes them as well as a parser. A case whose expectation
changed between the two corpora (its ``expected_sha256``) is listed apart
too, with its verdict changes: those follow the corpus, not the parser, and
are not regressions. Cases only in the old run are retired (the corpus
manifest's ``retired`` names them) or gone without retirement. A pass that
became an xpass, or a fail an xfail (and back), differs only by an
``--expect`` file: it is counted as relabelled, not listed.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .chunking import TRANSPORTS
from .comparison import Divergence
from .corpus import Corpus, default_root
from .schemas import schema_errors

__all__ = [
    "Change",
    "Diff",
    "DiffError",
    "ExpectationChange",
    "RunRecord",
    "add_diff_arguments",
    "cmd_diff",
    "diff",
    "load_run",
    "retired_cases",
    "row_divergence",
]

PASSING = frozenset({"pass", "xpass"})
FAILING = frozenset({"fail", "crash", "timeout", "xfail"})
_DETAIL_LIMIT = 160
# Verdict pairs that differ only by a known-failures file (--expect), not by the parser.
_RELABELLED = ({"pass", "xpass"}, {"fail", "xfail"})

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

    @property
    def cases(self) -> set[str]:
        return {case for case, _ in self.verdicts}


@dataclass(frozen=True)
class Change:
    """One case × transport whose verdict changed."""

    case: str
    transport: str
    old: str
    new: str
    detail: str  # the failing side's first divergence or message

    def __str__(self) -> str:
        text = f"{self.case} [{self.transport}] {self.old} → {self.new}"
        return f"{text}: {self.detail}" if self.detail else text

    def as_dict(self) -> dict[str, str]:
        return {
            "case": self.case,
            "transport": self.transport,
            "old": self.old,
            "new": self.new,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class ExpectationChange:
    """A case whose expectation differs between the two runs' corpora."""

    case: str
    old_sha256: str
    new_sha256: str
    changes: list[Change]

    def as_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "old_sha256": self.old_sha256,
            "new_sha256": self.new_sha256,
            "changes": [c.as_dict() for c in self.changes],
        }


@dataclass
class Diff:
    """Everything that changed from ``old`` to ``new``."""

    old: RunRecord
    new: RunRecord
    regressions: list[Change] = field(default_factory=list)  # pass → fail, crash, xfail
    timeouts: list[Change] = field(default_factory=list)  # pass → timeout
    progressions: list[Change] = field(default_factory=list)
    other_changes: list[Change] = field(default_factory=list)  # e.g. pass → skip, fail → crash
    new_cases: list[str] = field(default_factory=list)
    retired: dict[str, str] = field(default_factory=dict)  # case -> the version retiring it
    gone: list[str] = field(default_factory=list)  # only in old, not retired
    expectation_changed: list[ExpectationChange] = field(default_factory=list)
    compared: int = 0  # case × transport pairs in both runs
    relabelled: int = 0  # pass ↔ xpass, fail ↔ xfail: only the --expect file differs

    @property
    def has_regression(self) -> bool:
        return bool(self.regressions or self.timeouts)

    def counts(self) -> dict[str, int]:
        return {
            "regressions": len(self.regressions),
            "timeouts": len(self.timeouts),
            "progressions": len(self.progressions),
            "other_changes": len(self.other_changes),
            "new_cases": len(self.new_cases),
            "retired": len(self.retired),
            "gone": len(self.gone),
            "expectation_changed": len(self.expectation_changed),
            "compared": self.compared,
            "relabelled": self.relabelled,
        }

    def as_dict(self) -> dict[str, Any]:
        def side(run: RunRecord) -> dict[str, Any]:
            return {
                "path": run.path,
                "kind": run.kind,
                "adapter": run.adapter,
                "corpus": {"version": run.corpus_version, "sha256": run.corpus_sha256},
                "transports": run.transports,
            }

        return {
            "old": side(self.old),
            "new": side(self.new),
            "regression": self.has_regression,
            "counts": self.counts(),
            "regressions": [c.as_dict() for c in self.regressions],
            "timeouts": [c.as_dict() for c in self.timeouts],
            "progressions": [c.as_dict() for c in self.progressions],
            "other_changes": [c.as_dict() for c in self.other_changes],
            "new_cases": self.new_cases,
            "retired": self.retired,
            "gone": self.gone,
            "expectation_changed": [e.as_dict() for e in self.expectation_changed],
        }

    def summary_line(self) -> str:
        c = self.counts()
        parts = [
            _plural(c["regressions"], "regression"),
            _plural(c["timeouts"], "new timeout"),
            _plural(c["progressions"], "progression"),
        ]
        labels = (
            ("other_changes", "other change"),
            ("expectation_changed", "changed expectation"),
            ("new_cases", "new case"),
            ("retired", "retired case"),
            ("gone", "case|cases gone without retirement"),
        )
        parts += [_plural(c[key], label) for key, label in labels if c[key]]
        tail = f"{c['compared']} case runs compared"
        if c["relabelled"]:
            tail += f", {c['relabelled']} only relabelled by an --expect file"
        return f"{', '.join(parts)} ({tail})"

    def render(self) -> str:
        """The diff as text, one line per change."""
        old, new = self.old, self.new
        lines = [f"old: {_describe(old)}", f"new: {_describe(new)}"]
        if old.corpus_sha256 != new.corpus_sha256:
            lines.append(
                f"corpus changed: {old.corpus_version} → {new.corpus_version} "
                f"(sha256 {old.corpus_sha256[:12]}… → {new.corpus_sha256[:12]}…)"
            )
        only_old = [t for t in old.transports if t not in new.transports]
        only_new = [t for t in new.transports if t not in old.transports]
        if only_old or only_new:
            lines.append(
                "transports compared: "
                + ", ".join(t for t in old.transports if t in new.transports)
                + (f"; only in old: {', '.join(only_old)}" if only_old else "")
                + (f"; only in new: {', '.join(only_new)}" if only_new else "")
            )
        if not old.expected or not new.expected:
            lines.append("(a side records no expectation digests: changed expectations unknown)")
        sections: list[tuple[str, list[str]]] = [
            ("regressions", [str(c) for c in self.regressions]),
            ("timeouts (pass → timeout, reported apart)", [str(c) for c in self.timeouts]),
            ("progressions", [str(c) for c in self.progressions]),
            ("other verdict changes", [str(c) for c in self.other_changes]),
            (
                "expectation changed (verdict changes here follow the corpus, not the parser)",
                [_expectation_line(e) for e in self.expectation_changed],
            ),
            ("new cases", self.new_cases),
            ("retired cases", [f"{c} (retired in {v})" for c, v in self.retired.items()]),
            ("cases gone without retirement", self.gone),
        ]
        for title, entries in sections:
            if entries:
                lines.append(f"{title} ({len(entries)}):")
                lines.extend(f"  {entry}" for entry in entries)
        lines.append(self.summary_line())
        return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    """``n`` and ``word``; ``"one|many rest"`` picks a form, else an s is added."""
    if "|" in word:
        one, rest = word.split("|", 1)
        many, _, tail = rest.partition(" ")
        return f"{n} {one if n == 1 else many} {tail}"
    return f"{n} {word}" + ("" if n == 1 else "s")


def _describe(run: RunRecord) -> str:
    return (
        f"{run.path} ({run.kind}): {run.adapter}, corpus {run.corpus_version} "
        f"(sha256 {run.corpus_sha256[:12]}…), {len(run.verdicts)} case runs"
    )


def _expectation_line(change: ExpectationChange) -> str:
    text = f"{change.case} ({change.old_sha256[:12]}… → {change.new_sha256[:12]}…)"
    if change.changes:
        text += ": " + "; ".join(f"[{c.transport}] {c.old} → {c.new}" for c in change.changes)
    return text


def _cut(text: str, limit: int = _DETAIL_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def row_divergence(row: Mapping[str, Any]) -> str:
    """A result's first divergence, as the terminal shows it, in either format."""
    if row.get("first_divergence"):
        return str(row["first_divergence"])
    mismatches = row.get("mismatches") or []
    if mismatches:
        first = mismatches[0]
        return str(Divergence(first["field"], first["expected"], first["actual"]))
    return str(row.get("message", ""))


def load_run(path: Path) -> RunRecord:
    """A results file or a baseline, checked; ``DiffError`` names what is wrong."""
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise DiffError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DiffError(f"{path}: not valid JSON: {exc}") from None
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
    )


def _from_baseline(document: dict[str, Any], path: str) -> RunRecord:
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
    )


def retired_cases(corpus: Corpus | Path | None = None) -> dict[str, str]:
    """The corpus manifest's ``retired``: case id -> the version that retired it."""
    root = corpus.root if isinstance(corpus, Corpus) else (corpus or default_root())
    manifest = root / "manifest.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DiffError(f"{manifest}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise DiffError(f"{manifest}: not valid JSON: {exc}") from None
    retired = data.get("retired", {}) if isinstance(data, dict) else {}
    if not isinstance(retired, dict):
        raise DiffError(f"{manifest}: 'retired' is not an object")
    return {str(k): str(v) for k, v in retired.items()}


def _filtered(run: RunRecord, globs: Sequence[str]) -> RunRecord:
    if not globs:
        return run

    def keep(case: str) -> bool:
        return any(fnmatch.fnmatchcase(case, g) for g in globs)

    return RunRecord(
        run.path,
        run.kind,
        run.adapter,
        run.corpus_version,
        run.corpus_sha256,
        run.transports,
        {k: v for k, v in run.verdicts.items() if keep(k[0])},
        {k: v for k, v in run.expected.items() if keep(k)},
    )


def _order(key: tuple[str, str]) -> tuple[str, int, str]:
    case, transport = key
    rank = TRANSPORTS.index(transport) if transport in TRANSPORTS else len(TRANSPORTS)
    return (case, rank, transport)


def diff(
    old: RunRecord | Path,
    new: RunRecord | Path,
    corpus: Corpus | Path | None = None,
    *,
    cases: Sequence[str] = (),
) -> Diff:
    """Compare two runs; ``corpus`` (default: the shipped one) names the retired cases.

    ``cases`` (globs) restricts both sides to the matching case ids, so a
    run of a few cases can be compared with a full baseline.
    """
    before = _filtered(old if isinstance(old, RunRecord) else load_run(old), cases)
    after = _filtered(new if isinstance(new, RunRecord) else load_run(new), cases)
    result = Diff(before, after)
    changed = {
        case
        for case in before.cases & after.cases
        if case in before.expected
        and case in after.expected
        and before.expected[case] != after.expected[case]
    }
    by_case: dict[str, list[Change]] = {case: [] for case in changed}
    common = sorted(set(before.verdicts) & set(after.verdicts), key=_order)
    result.compared = len(common)
    for key in common:
        (was, old_detail), (now, new_detail) = before.verdicts[key], after.verdicts[key]
        if was == now:
            continue
        if {was, now} in _RELABELLED:  # the expectations file changed, not the parser
            result.relabelled += 1
            continue
        detail = _cut(new_detail if now in FAILING else old_detail)
        change = Change(key[0], key[1], was, now, detail)
        if key[0] in changed:
            by_case[key[0]].append(change)
        elif was in PASSING and now == "timeout":
            result.timeouts.append(change)
        elif was in PASSING and now in FAILING:
            result.regressions.append(change)
        elif was in FAILING and now in PASSING:
            result.progressions.append(change)
        else:
            result.other_changes.append(change)
    result.expectation_changed = [
        ExpectationChange(case, before.expected[case], after.expected[case], by_case[case])
        for case in sorted(changed)
    ]
    result.new_cases = sorted(after.cases - before.cases)
    missing = sorted(before.cases - after.cases)
    if missing:
        retired = retired_cases(corpus)
        result.retired = {c: retired[c] for c in missing if c in retired}
        result.gone = [c for c in missing if c not in retired]
    return result


def add_diff_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``streamproof diff``."""
    parser.add_argument("old", type=Path, metavar="OLD", help="results file or baseline")
    parser.add_argument("new", type=Path, metavar="NEW", help="results file or baseline")
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus whose manifest lists the retired cases (default: the shipped corpus)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="compare only cases whose id matches (repeatable)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the diff as JSON here ('-' for standard output, instead of the text)",
    )


def cmd_diff(args: argparse.Namespace) -> int:
    """``streamproof diff``: 1 when a case regressed, 0 otherwise, 2 on a usage error."""
    try:
        result = diff(args.old, args.new, args.corpus, cases=args.case)
    except DiffError as exc:
        print(f"streamproof: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(result.as_dict(), indent=2, ensure_ascii=False) + "\n"
    if args.json is not None and str(args.json) == "-":
        sys.stdout.write(text)
    else:
        print(result.render())
        if args.json is not None:
            args.json.write_text(text, encoding="utf-8")
    return 1 if result.has_regression else 0
