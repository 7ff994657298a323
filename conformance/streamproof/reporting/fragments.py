"""HTML fragments for the pytest-html report, rendered through jinja2 templates.

pytest-html builds its result rows with JavaScript; its summary is plain HTML.
So the summary carries what a reader needs without scripts: the verdicts by
severity, capability, provider and transport, then the failures grouped by
case (``failure_groups``), the skips by missing capability and the quirks the
failures name. A failing row's own extra is short: the commands that rerun
it and a link to its case (its log already shows the divergence). The styles
come once, with the summary.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from html import escape
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ..corpus.quirks import load_quirks
from ..harness.engine import Result, Verdict
from .coverage import coverage_line
from .failure_groups import anchor, case_groups, corpus_of, reproduce, skipped_by_capability
from .groups import group_lines, profile_lines
from .render import template
from .results import coverage_of, groups_of

__all__ = ["environment_html", "failure_html", "failures_html", "summary_html"]
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
    figures = groups_of(results)
    judged = any(r.verdict.value != "skip" for r in results)
    return template("summary.html.j2", trim=False).render(
        coverage=[coverage_line(s, f) for s, f in by_severity.items() if f["runs"]],
        field_groups=group_lines(figures["groups"]),
        profiles=profile_lines(figures["profiles"]) if judged else [],
        adapter=adapter,
        corpus=corpus,
        seed=seed,
        seeds=", ".join(map(str, seeds)) if seeds and len(seeds) > 1 else "",
        total=len(results),
        totals=[(v, totals[v]) for v in present],
        verdicts=present,
        groups=rows,
    )


def _text(value: str) -> Markup:
    """``value`` escaped for an element's content: ``&``, ``<`` and ``>`` only."""
    return Markup(escape(value, quote=False))


def environment_html(environment: Mapping[str, Any]) -> dict[str, Any]:
    """pytest-metadata's values as pytest-html's environment table must get them.

    pytest-html 4 builds that table in the browser, each value (and the keys
    and values of an object value) through ``innerHTML``: a corpus VERSION, an
    adapter spec or a CI variable holding ``<img onerror=…>`` would run there.
    Escaped, each reads as the text it is. A number, a boolean or null holds
    no markup and stays; the page sets a row's name as text, so names stay.
    """
    return {str(name): _environment_value(value, top=True) for name, value in environment.items()}


def _environment_value(value: Any, *, top: bool = False) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if top and isinstance(value, Mapping):  # one level down the page shows "key: value"
        return {escape(str(k)): _environment_value(v) for k, v in value.items()}
    if top and isinstance(value, (list, tuple)):
        return [_environment_value(v) for v in value]
    return escape(str(value))  # (deeper than that the page shows an object as one string)


def failure_html(result: Result, *, spec: str, seed: int) -> str:
    """A failing row's extra: how to rerun it, and a link to its case in the
    failures by case (styles and details are there, once)."""
    case = result.case
    return template("failure.html.j2", trim=False).render(
        case_id=case.id,
        commands=reproduce(case.id, result.transport, spec, seed, corpus=corpus_of(case)),
        anchor=anchor(case.id),
    )


def failures_html(
    results: Iterable[Result],
    outcomes: Mapping[tuple[str, str], Any],
    *,
    spec: str,
    seed: int,
    corpus_root: Path,
) -> str:
    """The failures grouped by case, the skips by capability, and the quirks
    the failing cases name, as plain HTML for the report's summary."""
    results = list(results)
    catalogue, _ = load_quirks(corpus_root)
    known = catalogue.quirks if catalogue is not None else {}
    groups = case_groups(results, outcomes, spec=spec, seed=seed, quirks=known)
    named = sorted({tag for g in groups for tag, quirk in g.tags if quirk})
    return template("failures.html.j2").render(
        text=_text,
        groups=groups,
        failed_runs=sum(len(g.runs) for g in groups),
        skipped=skipped_by_capability(results),
        quirks=[
            {"id": q, "severity": known[q]["severity"], "description": known[q]["description"]}
            for q in named
        ],
    )
