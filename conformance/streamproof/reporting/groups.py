"""What a run judged, field group by field group, and the profiles' figures.

A run judges each field group a case states and the adapter exposes
(``harness.projection``). These figures say, per group, how many case runs
(and cases) stated it, how many were compared, and how many were right; and
for each profile (a named capability set with a fixed denominator) how many
of the (case run, group) pairs it judges this adapter got right. They are
computed from plain rows, so ``verify`` recomputes them from a results file
exactly as the run computed them.

A case counts as right on a group when every run that compared the group
got it right.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..corpus.cases import Case
from ..harness.projection import GROUPS, PROFILES, plan_groups, profile_pairs

__all__ = [
    "GroupRow",
    "capability_gaps",
    "group_figures",
    "group_lines",
    "profile_figures",
    "profile_lines",
]

#: (case id, the groups compared with their verdicts or None, the groups not judged)
GroupRow = tuple[str, Mapping[str, str] | None, Sequence[str]]


def group_figures(rows: Iterable[GroupRow]) -> dict[str, dict[str, Any]]:
    """Per group: ``stated``, ``compared`` and ``passed`` case runs, and the same over cases."""
    runs: dict[str, dict[str, int]] = {g: {"stated": 0, "compared": 0, "passed": 0} for g in GROUPS}
    cases: dict[str, dict[str, list[bool]]] = {g: defaultdict(list) for g in GROUPS}
    stating: dict[str, set[str]] = {g: set() for g in GROUPS}
    for case_id, groups, not_exposed in rows:
        for group, verdict in (groups or {}).items():
            if group not in runs:
                continue
            runs[group]["stated"] += 1
            runs[group]["compared"] += 1
            runs[group]["passed"] += verdict == "pass"
            cases[group][case_id].append(verdict == "pass")
            stating[group].add(case_id)
        for group in not_exposed:
            if group in runs:
                runs[group]["stated"] += 1
                stating[group].add(case_id)
    figures: dict[str, dict[str, Any]] = {}
    for group in GROUPS:
        compared = cases[group]
        figures[group] = {
            **runs[group],
            "cases": {
                "stated": len(stating[group]),
                "compared": len(compared),
                "passed": sum(all(v) for v in compared.values()),
            },
        }
    return figures


def profile_figures(
    rows: Iterable[tuple[Case, Mapping[str, str] | None]], *, in_process: bool = True
) -> dict[str, dict[str, Any]]:
    """Per profile: the (case run, group) pairs it judges, from the case files alone
    (a fixed denominator), and how many of them this run got right."""
    rows = list(rows)
    figures: dict[str, dict[str, Any]] = {}
    for name, capabilities in PROFILES.items():
        pairs: dict[str, frozenset[str]] = {}
        judged = passed = 0
        for case, groups in rows:
            wanted = pairs.get(case.id)
            if wanted is None:
                wanted = pairs[case.id] = profile_pairs(case, capabilities, in_process=in_process)
            judged += len(wanted)
            passed += sum((groups or {}).get(g) == "pass" for g in wanted)
        figures[name] = {
            "capabilities": sorted(capabilities),
            "judged": judged,
            "passed": passed,
            "cases": sum(bool(w) for w in pairs.values()),
        }
    return figures


def capability_gaps(
    cases: Iterable[Case], capabilities: Iterable[str], *, in_process: bool = True
) -> dict[str, list[str]]:
    """Per capability the adapter does not declare, the cases whose stated groups need
    it (or that a precondition on it leaves out), in corpus order."""
    caps = frozenset(capabilities)
    gaps: dict[str, list[str]] = {}
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            continue
        seen.add(case.id)
        plan = plan_groups(case, caps, in_process=in_process)
        for capability in plan.missing:
            if capability != "real-connection":
                gaps.setdefault(capability, []).append(case.id)
    return dict(sorted(gaps.items()))


_NAMES = {
    "finish_reason": "finish reason",
    "tool_calls": "tool calls",
    "function_call": "function call",
    "custom_tool_calls": "custom tool calls",
}


def group_lines(figures: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The figures in words, one line per group a case stated.

    ``content right on 272 of 301 cases compared (1120 of 1180 case runs)``,
    or ``finish reason not exposed: 389 cases``.
    """
    lines = []
    for group in GROUPS:
        f = figures.get(group)
        if not f or not f["stated"]:
            continue
        name = _NAMES.get(group, group)
        cases = f["cases"]
        if not f["compared"]:
            lines.append(f"{name} not exposed: {_n(cases['stated'], 'case')} state it")
            continue
        line = (
            f"{name} right on {cases['passed']} of {_n(cases['compared'], 'case')} compared "
            f"({f['passed']} of {_n(f['compared'], 'case run')})"
        )
        unjudged = cases["stated"] - cases["compared"]
        if unjudged:
            line += f"; not judged on {_n(unjudged, 'more case')}"
        lines.append(line)
    return lines


def profile_lines(figures: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``profile text (content, usage): 1890 of 2016 judged pairs right (93.8%)``."""
    lines = []
    for name, f in figures.items():
        share = f"{100 * f['passed'] / f['judged']:.1f}%" if f["judged"] else "nothing judged"
        caps = ", ".join(f["capabilities"]) if name != "full" else "every capability"
        lines.append(
            f"profile {name} ({caps}): {f['passed']} of {f['judged']} "
            f"(case run, group) pairs right ({share}) over {_n(f['cases'], 'case')}"
        )
    return lines


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
