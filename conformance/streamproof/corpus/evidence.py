"""The evidence a case rests on, and the severity it allows (docs/evidence.md).

A ``must`` failure tells a maintainer that their library is broken, so it
needs an observed shape (a capture, the server's source or the provider's
documentation), a reading that is not the project's own, and nothing that
disputes it or that the body adds beyond its sources. ``should`` allows a
shape known from a report or a normative spec instead. Everything else is
``may``. A byte-level variant of another case (its CR twin, its BOM variant)
is bounded by its parent and by ``should``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "OBSERVED_SHAPES",
    "SEVERITY_RANK",
    "Bound",
    "evidence_bound",
    "evidence_problems",
]

#: Shape kinds that show a server sending the bytes.
OBSERVED_SHAPES = frozenset({"capture", "server-source", "provider-docs"})
#: Shape kinds that show the bytes are sent or allowed, without a server seen sending them.
KNOWN_SHAPES = frozenset({"report", "spec"})
#: Reading bases that cite a URL; the others cite a section of docs/semantics.md.
URL_BASES = frozenset({"spec", "openai-reference", "openai-sdk"})
SEVERITY_RANK = {"may": 0, "should": 1, "must": 2}


class Bound:
    """The highest severity a case's evidence allows, and why not higher."""

    __slots__ = ("severity", "why")

    def __init__(self, severity: str, why: str = "") -> None:
        self.severity = severity
        self.why = why

    def __repr__(self) -> str:
        return f"Bound({self.severity!r}, {self.why!r})"

    def lower(self, other: Bound) -> Bound:
        if SEVERITY_RANK[other.severity] < SEVERITY_RANK[self.severity]:
            return other
        return self


def own_bound(evidence: Mapping[str, Any]) -> Bound:
    """The bound from the case's own evidence, before any parent is looked at."""
    kinds = {item.get("kind") for item in evidence.get("shape", [])}
    basis = evidence.get("reading", {}).get("basis")
    if basis == "project":
        return Bound("may", "the reading is the project's own")
    if evidence.get("disputed"):
        return Bound("may", "its reading is disputed")
    if evidence.get("assumptions"):
        return Bound("may", "the body adds assumptions to its sources")
    if kinds & OBSERVED_SHAPES:
        return Bound("must")
    if kinds & KNOWN_SHAPES:
        return Bound("should", "no observed shape")
    return Bound("may", "no shape known")


def evidence_bound(
    evidence: Mapping[str, Any], parents: Mapping[str, Mapping[str, Any]] | None = None
) -> Bound:
    """The bound of a case's evidence; a variant's parent is looked up in ``parents`` (id → evidence)."""
    bound = own_bound(evidence)
    parent_id = evidence.get("variant_of")
    if parent_id is None:
        return bound
    variant = Bound("should", f"a byte-level variant of {parent_id}")
    bound = bound.lower(variant)
    parent = (parents or {}).get(parent_id)
    if parent is not None and parent.get("variant_of") is None:
        inherited = own_bound(parent)
        if SEVERITY_RANK[inherited.severity] < SEVERITY_RANK[bound.severity]:
            bound = Bound(inherited.severity, f"its parent {parent_id}: {inherited.why}")
    return bound


def evidence_problems(
    name: str,
    data: Mapping[str, Any],
    parents: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """Every way the case at ``name`` breaks the evidence rule, one line each."""
    evidence = data.get("evidence")
    if not isinstance(evidence, Mapping):
        return []  # the schema reports a missing object
    problems = []
    for key in ("shape", "disputed"):
        for number, item in enumerate(evidence.get(key, []), 1):
            if item.get("kind") != "none" and not item.get("url"):
                problems.append(f"{name}: evidence {key} item {number} has no url")
    reading = evidence.get("reading", {})
    basis = reading.get("basis")
    if basis in URL_BASES and not reading.get("url"):
        problems.append(f"{name}: evidence reading with basis {basis!r} has no url")
    if basis not in URL_BASES and not reading.get("section"):
        problems.append(
            f"{name}: evidence reading with basis {basis!r} names no section of docs/semantics.md"
        )
    if evidence.get("disputed") and "expected_any" not in data:
        problems.append(f"{name}: evidence is disputed but the case has no expected_any")
    kinds = {item.get("kind") for item in evidence.get("shape", [])}
    if data.get("provenance", {}).get("kind") == "recorded" and "capture" not in kinds:
        problems.append(f"{name}: recorded provenance without a capture item in evidence shape")
    if "none" in kinds and len(kinds) > 1:
        problems.append(f"{name}: evidence shape 'none' cannot stand beside other shapes")
    parent_id = evidence.get("variant_of")
    if parent_id is not None:
        if parent_id == data.get("id"):
            problems.append(f"{name}: evidence variant_of names the case itself")
        elif parent_id not in parents:
            problems.append(f"{name}: evidence variant_of {parent_id!r} is no case of this corpus")
    severity = data.get("severity")
    bound = evidence_bound(evidence, parents)
    if severity in SEVERITY_RANK and SEVERITY_RANK[severity] > SEVERITY_RANK[bound.severity]:
        problems.append(
            f"{name}: severity {severity!r} exceeds its evidence "
            f"(bound {bound.severity!r}: {bound.why})"
        )
    return problems
