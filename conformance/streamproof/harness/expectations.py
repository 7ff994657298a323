"""Known failures as data: ``--expect FILE`` (schemas/expectations.schema.json).

Entries are keyed by case id and optionally transport. A listed case that
fails, crashes or times out is ``xfail``; a listed case that passes is
``xpass`` and fails the run, so the file never goes stale silently. An entry
naming a case the corpus does not have is an error for the same reason.

An entry of the ``random`` transport may name the seeds it was seen to fail
and to pass under (``failing_seeds``, ``passing_seeds``: a case that fails
under some seeds only, recorded by ``run --seeds … --write-expect``). Such an
entry is judged seed by seed, so no run flaps and no regression hides:

- under a seed listed as failing, a failure is ``xfail`` and a pass ``xpass``;
- under a seed listed as passing, a pass passes and a failure fails;
- under any other seed, a failure is ``xfail`` and a pass passes;
- a run over several seeds in which the case fails under every one of them
  fails, unless each of those seeds is listed as failing.

An entry may name the field groups that fail (``groups``, docs/semantics.md
§12.6): then a failure in a group it does not list fails the run (a new
regression in a case that already failed on another group), and a listed
group that now passes is ``xpass``. An entry without ``groups`` keeps the
older meaning (any failure of the case is the known one); a file with such
entries is named in one warning line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..corpus.cases import CorpusError
from ..corpus.schemas import schema_errors
from .strict_json import read_document
from .verdicts import Result, Verdict

__all__ = [
    "Expectation",
    "Expectations",
    "by_group",
    "load_expectations",
    "merged_groups",
    "merged_seeds",
]


@dataclass(frozen=True)
class Expectation:
    case: str
    transport: str
    reason: str
    issue: str | None = None
    #: ``None``: the case fails under every seed; else the seeds it failed under
    failing_seeds: frozenset[int] | None = None
    passing_seeds: frozenset[int] = frozenset()
    #: The groups known to fail; ``None``: any failure of the case (an older file)
    groups: frozenset[str] | None = None

    def expected_to_fail(self, seed: int) -> bool:
        """Whether a failure under ``seed`` is this known failure (else it fails the run)."""
        return self.failing_seeds is None or seed not in self.passing_seeds

    def expected_to_pass(self, seed: int) -> bool:
        """Whether a pass under ``seed`` is expected (else it is ``xpass``)."""
        return self.failing_seeds is not None and seed not in self.failing_seeds

    def all_failing_is_regression(self, tried: list[int]) -> bool:
        """Whether failing under every seed of a run over ``tried`` (2 or more) is a regression."""
        return self.failing_seeds is not None and not set(tried) <= self.failing_seeds


class Expectations:
    """Lookup of the known failures of one adapter."""

    def __init__(self, entries: list[Expectation]) -> None:
        self.entries = entries
        self._by_key = {(e.case, e.transport): e for e in entries}

    def warning(self, path: Path) -> str | None:
        """One line about entries that name no groups, or ``None``."""
        bare = sum(1 for e in self.entries if e.groups is None)
        if not bare:
            return None
        return (
            f"streamproof: warning: {path}: {bare} of {len(self.entries)} known failures name no "
            "field groups, so any failure of those cases counts as known; run --write-expect "
            "again to record them"
        )

    def find(self, case_id: str, transport: str) -> Expectation | None:
        return self._by_key.get((case_id, transport)) or self._by_key.get((case_id, "all"))


def load_expectations(path: Path, known_ids: set[str]) -> Expectations:
    """Read and check the file; ``CorpusError`` (exit 2) with one line per problem."""
    try:
        data = read_document(path)
    except (OSError, ValueError) as exc:  # (a ValueError's line names the file already)
        reason = exc.strerror if isinstance(exc, OSError) else str(exc).removeprefix(f"{path}: ")
        raise CorpusError([f"{path}: cannot read expectations: {reason or exc}"]) from None
    problem = schema_errors("expectations", data)
    if problem:
        raise CorpusError([f"{path}: {problem}"])
    entries, problems, seen = [], [], set()
    for raw in data["expectations"]:
        failing = raw.get("failing_seeds")
        entry = Expectation(
            raw["case"],
            raw.get("transport", "all"),
            raw["reason"],
            raw.get("issue"),
            None if failing is None else frozenset(failing),
            frozenset(raw.get("passing_seeds", ())),
            frozenset(raw["groups"]) if "groups" in raw else None,
        )
        key = (entry.case, entry.transport)
        both = entry.passing_seeds & (entry.failing_seeds or frozenset())
        if both:
            problems.append(
                f"{path}: {entry.case!r}: seeds {sorted(both)} are listed as failing and passing"
            )
        if entry.case not in known_ids:
            problems.append(
                f"{path}: {entry.case!r} is not a case of this corpus "
                "(retired or misspelled? remove the entry)"
            )
        if key in seen:
            problems.append(f"{path}: {entry.case!r} [{entry.transport}] is listed twice")
        seen.add(key)
        entries.append(entry)
    if problems:
        raise CorpusError(problems)
    return Expectations(entries)


def merged_seeds(
    entry: Expectation | None, failing: list[int], passing: list[int]
) -> dict[str, list[int]]:
    """What is known of a case under each seed: the entry's seeds, updated by a run's."""
    seen = set(failing) | set(passing)
    known_failing: set[int] = set()
    known_passing: set[int] = set()
    if entry is not None and entry.failing_seeds is not None:
        known_failing = set(entry.failing_seeds) - seen
        known_passing = set(entry.passing_seeds) - seen
    return {
        "failing": sorted(known_failing | set(failing)),
        "passing": sorted(known_passing | set(passing)),
    }


def merged_groups(results: Iterable[Result]) -> dict[str, str] | None:
    """The groups of a run over several seeds: a group fails when it failed under any."""
    merged: dict[str, str] = {}
    for result in results:
        for group, verdict in (result.groups or {}).items():
            if merged.get(group) != "fail":
                merged[group] = verdict
    return merged or None


def by_group(result: Result, entry: Expectation) -> Result | None:
    """A failure judged against the groups its entry lists: a group not listed that
    fails is a regression, a listed one that passes is ``xpass``; ``None`` when the
    failure is exactly the known one (or the entry names no groups)."""
    if entry.groups is None or result.groups is None:
        return None
    failing = {g for g, v in result.groups.items() if v == "fail"}
    new = sorted(failing - entry.groups)
    if new:
        note = (
            f"{', '.join(new)} now fail{'s' * (len(new) == 1)} too "
            f"(known failure lists {', '.join(sorted(entry.groups))}): "
            f"{result.verdict.value}: {result.first_divergence}"
        )
        return replace(result, message=note)
    fixed = sorted(g for g in entry.groups if result.groups.get(g) == "pass")
    # Under random, a group may pass under one seed and fail under another.
    if fixed and entry.failing_seeds is None and result.transport != "random":
        note = (
            f"listed as a known failure of {', '.join(sorted(entry.groups))} ({entry.reason}), "
            f"but {', '.join(fixed)} pass{'es' * (len(fixed) == 1)}: update the entry"
        )
        return replace(result, verdict=Verdict.XPASS, message=note)
    return None
