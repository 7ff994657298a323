"""A run's failures as a reader debugs them: one group per case, every transport's
verdict side by side, and for each failing transport what differs and where.

The values here are what ``templates/failures.html.j2`` renders; nothing here
writes HTML.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..corpus.cases import Case, default_root
from ..harness.comparison import MISSING, compare
from ..harness.crash_site import Frame
from ..harness.engine import Result, Verdict
from ..harness.transports import boundaries
from .coverage import lacking_from_message
from .json_view import Line, json_lines, marked_paths
from .pinpoint import pinpoint
from .wire import WireWindow, wire_window

__all__ = [
    "FAILING",
    "CaseGroup",
    "FailedRun",
    "Skipped",
    "anchor",
    "case_groups",
    "reproduce",
    "skipped_by_capability",
]

FAILING = frozenset({Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.XPASS})
_SPEC_SECTION = re.compile(r"^semantics §")


@dataclass(frozen=True)
class FailedRun:
    """One failing transport of a case."""

    transport: str
    verdict: str
    divergence: str
    commands: list[str]
    expected: list[Line]
    actual: list[Line] | None  # None: the adapter gave no outcome (a crash, a timeout)
    wire: WireWindow
    located: str  # how the window's centre was found
    traceback: str = ""  # where the adapter raised (a crash it reported)
    output: str = ""  # what the adapter printed during this run (bounded)
    frames: tuple[Frame, ...] = ()  # the same place, outermost first, when the adapter sent them
    raised_in: Frame | None = None  # the innermost frame outside the runtime and streamproof
    same_as: str | None = None  # an earlier transport with the same expected and actual


@dataclass(frozen=True)
class CaseGroup:
    case: Case
    anchor: str
    verdicts: list[tuple[str, str]]  # (transport, verdict) for every transport run
    runs: list[FailedRun]
    tags: list[tuple[str, bool]]  # (tag, whether the quirk catalogue has it)
    spec: list[tuple[str, bool]]  # (reference, whether it is a link)


@dataclass(frozen=True)
class Skipped:
    capability: str
    runs: int
    cases: list[str]


def anchor(case_id: str) -> str:
    """The report's anchor of a case group: its id with ``/`` and odd bytes made ``-``."""
    return "case-" + re.sub(r"[^A-Za-z0-9_.-]", "-", case_id)


def corpus_of(case: Case) -> Path | None:
    """The corpus folder ``case`` came from, when it is not the shipped one."""
    root = case.dir
    for _ in range(case.id.count("/") + 2):  # cases/PROVIDER/NAME
        root = root.parent
    return None if root.resolve() == default_root().resolve() else root.resolve()


def reproduce(
    case_id: str, transport: str, spec: str, seed: int | None, *, corpus: Path | None = None
) -> list[str]:
    """The two command lines that rerun one failure: ``debug`` and ``run --case``.

    ``corpus`` (absolute) is named when the case is not the shipped corpus's,
    so the lines rerun the same bytes from any folder.
    """
    target = shlex.quote(f"{case_id} [{transport}]")
    seeded = f" --seed {seed}" if seed is not None else ""
    where = f" --corpus {shlex.quote(str(corpus))}" if corpus is not None else ""
    return [
        f"streamproof debug {target} --adapter {shlex.quote(spec)}{where}"
        + (seeded if transport == "random" else ""),
        f"streamproof run --case {target} --adapter {shlex.quote(spec)}{where}{seeded}",
    ]


def case_groups(
    results: Iterable[Result],
    outcomes: Mapping[tuple[str, str], Any],
    *,
    spec: str,
    seed: int,
    quirks: Iterable[str] = (),
) -> list[CaseGroup]:
    """The failing cases of ``results`` in run order, each with all its verdicts.

    ``outcomes`` maps (case id, transport) to the outcome the adapter returned,
    which results that crossed a process boundary no longer carry.
    """
    known = set(quirks)
    by_case: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_case[result.case.id].append(result)
    groups = []
    for runs in by_case.values():
        failing = [r for r in runs if r.verdict in FAILING]
        if not failing:
            continue
        case = runs[0].case
        groups.append(
            CaseGroup(
                case=case,
                anchor=anchor(case.id),
                verdicts=[(r.transport, r.verdict.value) for r in runs],
                runs=_deduplicated(
                    [
                        _failed_run(r, outcomes.get((case.id, r.transport), r.outcome), spec, seed)
                        for r in failing
                    ]
                ),
                tags=[(tag, tag in known) for tag in case.data.get("tags", [])],
                spec=[(ref, ref.startswith(("https://", "http://"))) for ref in _spec(case)],
            )
        )
    return groups


def _deduplicated(runs: list[FailedRun]) -> list[FailedRun]:
    """The runs, each whose expected and actual an earlier one shows pointing to it."""
    shown: dict[tuple[tuple[Line, ...], tuple[Line, ...] | None], str] = {}
    out = []
    for run in runs:
        key = (tuple(run.expected), None if run.actual is None else tuple(run.actual))
        if key in shown:
            run = replace(run, same_as=shown[key])
        else:
            shown[key] = run.transport
        out.append(run)
    return out


def _spec(case: Case) -> list[str]:
    refs = [str(ref) for ref in case.data.get("spec", [])]
    return sorted(refs, key=lambda ref: not _SPEC_SECTION.match(ref))


def _failed_run(result: Result, outcome: Any, spec: str, seed: int) -> FailedRun:
    case = result.case
    ends = boundaries(case.body, result.transport, seed=seed, case_dir=case.dir)
    if outcome is not None and result.outcome is None:
        result = replace(result, outcome=outcome)
    place = pinpoint(case.body, result)
    expected = _expected(case, outcome, result)
    marked = marked_paths(result.mismatches)
    absent = [d.path for d in result.mismatches if d.actual is MISSING]
    return FailedRun(
        transport=result.transport,
        verdict=result.verdict.value,
        divergence=result.first_divergence,
        commands=reproduce(case.id, result.transport, spec, seed, corpus=corpus_of(case)),
        expected=json_lines(expected, marked),
        actual=None if outcome is None else json_lines(outcome, marked, absent),
        wire=wire_window(case.body, ends, place.at),
        located=place.how,
        traceback=result.traceback,
        output=result.output,
        frames=result.frames,
        raised_in=result.raised_in,
    )


def _expected(case: Case, outcome: Any, result: Result) -> Any:
    """The expectation the divergences are about: of several, the one that matched best."""
    if "expected" in case.data:
        return case.data["expected"]
    alternatives = case.alternatives
    for alternative in alternatives:
        if outcome is not None and compare(alternative, outcome) == result.mismatches:
            return alternative
    return alternatives[0] if alternatives else None


def skipped_by_capability(results: Iterable[Result]) -> list[Skipped]:
    """Skipped runs counted by the capability the adapter lacks, with their cases."""
    runs: dict[str, int] = defaultdict(int)
    cases: dict[str, set[str]] = defaultdict(set)
    for result in results:
        for capability in lacking_from_message(result.verdict.value, result.message):
            runs[capability] += 1
            cases[capability].add(result.case.id)
    return [
        Skipped(name, runs[name], sorted(cases[name]))
        for name in sorted(runs, key=lambda n: (-runs[n], n))
    ]
