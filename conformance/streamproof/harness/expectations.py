"""Known failures as data: ``--expect FILE`` (schemas/expectations.schema.json).

Entries are keyed by case id and optionally transport. A listed case that
fails, crashes or times out is ``xfail``; a listed case that passes is
``xpass`` and fails the run, so the file never goes stale silently. An entry
naming a case the corpus does not have is an error for the same reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..corpus.cases import CorpusError
from ..corpus.schemas import schema_errors

__all__ = ["Expectation", "Expectations", "load_expectations"]


@dataclass(frozen=True)
class Expectation:
    case: str
    transport: str
    reason: str
    issue: str | None = None


class Expectations:
    """Lookup of the known failures of one adapter."""

    def __init__(self, entries: list[Expectation]) -> None:
        self.entries = entries
        self._by_key = {(e.case, e.transport): e for e in entries}

    def find(self, case_id: str, transport: str) -> Expectation | None:
        return self._by_key.get((case_id, transport)) or self._by_key.get((case_id, "all"))


def load_expectations(path: Path, known_ids: set[str]) -> Expectations:
    """Read and check the file; ``CorpusError`` (exit 2) with one line per problem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CorpusError([f"{path}: cannot read expectations: {exc}"]) from None
    problem = schema_errors("expectations", data)
    if problem:
        raise CorpusError([f"{path}: {problem}"])
    entries, problems, seen = [], [], set()
    for raw in data["expectations"]:
        entry = Expectation(
            raw["case"], raw.get("transport", "all"), raw["reason"], raw.get("issue")
        )
        key = (entry.case, entry.transport)
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
