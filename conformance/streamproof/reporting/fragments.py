"""HTML fragments for the pytest-html report, rendered through jinja2 templates.

The summary groups verdicts by severity, capability, provider and transport;
a failure shows its first divergence, expected against actual, and the wire
view of the body with the transport's reads marked.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from ..harness.engine import Result, Verdict
from ..harness.transports import boundaries
from .coverage import coverage_line
from .render import template
from .results import coverage_of
from .wire import wire_view

__all__ = ["WIRE_LIMIT", "failure_html", "summary_html"]

# A failure's wire view stops here so a large case does not bloat the report.
WIRE_LIMIT = 6_000
_ORDER = [v.value for v in Verdict]


def summary_html(
    results: Iterable[Result],
    *,
    adapter: str,
    corpus: str,
    seed: int | None,
    seeds: list[int] | None = None,
) -> str:
    """The report's opening summary; ``seeds``: the seeds of a run over several."""
    results = list(results)
    groups: dict[str, dict[str, Counter[str]]] = {
        name: defaultdict(Counter) for name in ("severity", "capability", "provider", "transport")
    }
    for r in results:
        verdict = r.verdict.value
        groups["severity"][r.case.severity][verdict] += 1
        groups["provider"][r.case.provider][verdict] += 1
        groups["transport"][r.transport][verdict] += 1
        for capability in sorted(r.case.requires) or ["(none)"]:
            groups["capability"][capability][verdict] += 1
    totals = Counter(r.verdict.value for r in results)
    present = [v for v in _ORDER if totals[v]]
    severity_order = {"must": 0, "should": 1, "may": 2}
    rows = []
    for title, table in groups.items():
        names = sorted(table, key=lambda n: (severity_order.get(n, 9), n))
        rows.append((title, [(name, dict(table[name])) for name in names]))
    by_severity = coverage_of(results)["by_severity"]
    return template("summary.html.j2", trim=False).render(
        coverage=[coverage_line(s, f) for s, f in by_severity.items() if f["runs"]],
        adapter=adapter,
        corpus=corpus,
        seed=seed,
        seeds=", ".join(map(str, seeds)) if seeds and len(seeds) > 1 else "",
        total=len(results),
        totals=[(v, totals[v]) for v in present],
        verdicts=present,
        groups=rows,
    )


def failure_html(result: Result, seed: int) -> str:
    case = result.case
    ends = boundaries(case.body, result.transport, seed=seed, case_dir=case.dir)
    expected: Any = case.data.get("expected", case.data.get("expected_any"))
    return template("failure.html.j2", trim=False).render(
        verdict=result.verdict.value,
        severity=case.severity,
        case_id=case.id,
        transport=result.transport,
        title=case.title,
        first_divergence=result.first_divergence,
        expected=json.dumps(expected, indent=2, ensure_ascii=False),
        actual=(
            json.dumps(result.outcome, indent=2, ensure_ascii=False)
            if result.outcome is not None
            else "(no outcome)"
        ),
        body_name=case.data["response"]["body"],
        body_size=len(case.body),
        wire=wire_view(case.body, ends, limit=WIRE_LIMIT),
        reads="delivered in one read" if len(ends) <= 1 else f"{len(ends)} reads, marked ¦",
    )
