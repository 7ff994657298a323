"""What changed between two runs: ``streamproof diff OLD NEW``.

Either side is a results file (``run --json``) or a normalised baseline
(``run --baseline``). Verdicts are compared per case × transport, over the
transports both runs have. A regression is a pass (or xpass) that now fails,
crashes, times out or is a known failure, and so is a field group that
starts failing in a run that already failed on another (both sides record
their groups: docs/semantics.md §12.6); timeouts are kept apart, since a
slow machine makes them as well as a parser. A case whose expectation
changed between the two corpora (its ``expected_sha256``) is listed apart
too, with its verdict changes: those follow the corpus, not the parser, and
are not regressions. Cases only in the old run are retired (the corpus
manifest's ``retired`` names them) or gone without retirement. A pass that
became an xpass, or a fail an xfail (and back), differs only by an
``--expect`` file: it is counted as relabelled, not listed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.cases import Corpus
from ..harness.transports import TRANSPORTS
from .run_files import DiffError, RunRecord, load_run, retired_cases
from .wire import terminal_safe

__all__ = [
    "Change",
    "Diff",
    "DiffError",
    "ExpectationChange",
    "RunRecord",
    "diff",
    "load_run",
    "retired_cases",
]

PASSING = frozenset({"pass", "xpass"})
FAILING = frozenset({"fail", "crash", "timeout", "xfail"})
_DETAIL_LIMIT = 160
# Verdict pairs that differ only by a known-failures file (--expect), not by the parser.
_RELABELLED = ({"pass", "xpass"}, {"fail", "xfail"})


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
        return "\n".join(terminal_safe(line) for line in lines)


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
        {k: v for k, v in run.failing_groups.items() if keep(k[0])},
    )


def _started_failing(before: RunRecord, after: RunRecord, key: tuple[str, str]) -> set[str]:
    """The groups failing after and not before, when both sides record groups."""
    if key not in before.failing_groups or key not in after.failing_groups:
        return set()
    return set(after.failing_groups[key] - before.failing_groups[key])


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
        started = _started_failing(before, after, key)
        if was in FAILING and now in FAILING and started and key[0] not in changed:
            groups = ", ".join(sorted(started))
            detail = _cut(f"{groups} now fail{'s' * (len(started) == 1)} too: {new_detail}")
            result.regressions.append(Change(key[0], key[1], was, now, detail))
            continue
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
