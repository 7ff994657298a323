"""The comparison rules (docs/semantics.md §12); the one place they live.

``compare(expected, actual)`` returns every divergence in document order;
the first one is what a report shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["MISSING", "Divergence", "best_alternative", "compare"]

# Text fields where null, a missing key and "" mean the same (semantics §12.3).
_TEXT_FIELDS = frozenset({"content", "reasoning", "refusal"})


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where an outcome differs from the expectation."""

    path: str
    expected: Any
    actual: Any
    rule: str = "equal"

    def __str__(self) -> str:
        want = f"contains {self.expected!r}" if self.rule == "contains" else repr(self.expected)
        return f"{self.path or '(outcome)'}: want {want}, got {self.actual!r}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.path,
            "expected": self.expected,
            "actual": None if self.actual is MISSING else self.actual,
        }


def compare(expected: Any, actual: Any, path: str = "") -> list[Divergence]:
    """Every divergence of ``actual`` from the subset ``expected``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [Divergence(path, expected, actual)]
        found: list[Divergence] = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else key
            got = actual.get(key, MISSING)
            if key in _TEXT_FIELDS:
                want = "" if want is None else want
                got = "" if got is None or got is MISSING else got
            if key == "message" and path.endswith("error") and isinstance(want, str):
                if not (isinstance(got, str) and want in got):
                    found.append(Divergence(sub, want, got, rule="contains"))
                continue
            found.extend(compare(want, got, sub))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [Divergence(path, expected, actual)]
        if len(expected) != len(actual):
            return [Divergence(f"{path}.length", len(expected), len(actual))]
        found = []
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found.extend(compare(want, got, f"{path}[{i}]"))
        return found
    if _same_scalar(expected, actual):
        return []
    return [Divergence(path, expected, actual)]


def _same_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return expected == actual
    return type(expected) is type(actual) and bool(expected == actual)


def best_alternative(alternatives: list[Any], actual: Any) -> list[Divergence]:
    """The divergences from the closest of several acceptable expectations.

    Empty when any alternative matches.
    """
    best: list[Divergence] | None = None
    for want in alternatives:
        found = compare(want, actual)
        if not found:
            return []
        if best is None or len(found) < len(best):
            best = found
    return best or []
