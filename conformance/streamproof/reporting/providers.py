"""The provider report: what ``streamproof lint`` finds in each provider's cases.

For every provider of the corpus: the quirks lint sees in its bodies, each
with its severity and the date of the catalogue's evidence for that provider
(or a note that the catalogue does not list the provider for it), whether it
is one of the provider's baselines, and the cases that show it; and the
deviations per severity. One self-contained HTML page (a jinja2 template,
autoescaped, inline CSS, no external asset) and the same data as JSON.

Nothing in the output depends on the clock, so rebuilding it from the same
corpus gives the same bytes.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..__about__ import __version__
from ..atomic import write_atomic
from ..checks.report import LintReport, lint_case
from ..corpus.breadth import breadth
from ..corpus.cases import SEVERITIES, Case, Corpus, CorpusError
from ..corpus.quirks import Catalogue, load_quirks
from .render import template

__all__ = ["provider_report", "write_provider_report"]

_RANK = {severity: i for i, severity in enumerate(SEVERITIES)}


@dataclass
class _Provider:
    name: str
    cases: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    deviations: Counter[str] = field(default_factory=Counter)  # by severity
    worst: Counter[str] = field(default_factory=Counter)  # cases by their worst severity
    clean: int = 0
    found: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def provider_report(corpus: Corpus, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """Lint every case and sum it up per provider (the JSON document of the report)."""
    if catalogue is None:
        catalogue, problems = load_quirks(corpus.root)
        if catalogue is None:
            raise CorpusError(problems)
    providers: dict[str, _Provider] = {}
    severity: dict[str, str] = {}
    for case in corpus.cases:
        report = lint_case(case, catalogue)
        _count(providers.setdefault(case.provider, _Provider(case.provider)), case, report)
        severity.update((d.quirk, d.severity) for d in report.deviations)
    rows = [_provider_row(p, catalogue, severity) for _, p in sorted(providers.items())]
    wide = {row.provider: row.as_dict() for row in breadth(corpus.cases)}
    for row in rows:
        row["breadth"] = wide.get(row["provider"])
    seen = sorted(severity, key=lambda q: (_RANK[severity[q]], q))
    return {
        "tool": {"name": "streamproof", "version": __version__},
        "corpus": {"version": corpus.version, "sha256": corpus.sha256},
        "severities": list(SEVERITIES),
        "totals": {
            "cases": sum(p["cases"] for p in rows),
            "deviations": {s: sum(p["deviations"][s] for p in rows) for s in SEVERITIES},
        },
        "quirks": [
            {
                "quirk": quirk,
                "severity": severity[quirk],
                "description": _description(catalogue, quirk),
                "catalogued": quirk in catalogue.quirks,
                "providers": [p["provider"] for p in rows if quirk in p["quirk_ids"]],
            }
            for quirk in seen
        ],
        "providers": [{k: v for k, v in p.items() if k != "quirk_ids"} for p in rows],
    }


def _count(provider: _Provider, case: Case, report: LintReport) -> None:
    provider.cases += 1
    provider.kinds[report.kind] += 1
    provider.deviations.update(d.severity for d in report.deviations)
    if report.deviations:
        provider.worst[min((d.severity for d in report.deviations), key=_RANK.__getitem__)] += 1
    else:
        provider.clean += 1
    for quirk in sorted(report.quirks):
        provider.found[quirk].append(case.id)


def _provider_row(
    provider: _Provider, catalogue: Catalogue, severity: dict[str, str]
) -> dict[str, Any]:
    baselines = set(catalogue.baselines.get(provider.name, []))
    quirks = []
    for quirk in sorted(provider.found, key=lambda q: (_RANK[severity[q]], q)):
        evidence = catalogue.quirks.get(quirk, {}).get("providers", {}).get(provider.name)
        quirks.append(
            {
                "quirk": quirk,
                "severity": severity[quirk],
                "observed": evidence["observed"] if evidence else None,
                "catalogued": evidence is not None,
                "baseline": quirk in baselines,
                "cases": provider.found[quirk],
            }
        )
    return {
        "provider": provider.name,
        "cases": provider.cases,
        "kinds": {kind: provider.kinds[kind] for kind in sorted(provider.kinds)},
        "clean": provider.clean,
        "deviations": {s: provider.deviations[s] for s in SEVERITIES},
        "cases_by_worst": {s: provider.worst[s] for s in SEVERITIES},
        "baselines": sorted(baselines),
        "quirks": quirks,
        "quirk_ids": set(provider.found),
    }


def _description(catalogue: Catalogue, quirk: str) -> str:
    known = catalogue.quirks.get(quirk)
    return "" if known is None else str(known["description"])


def write_provider_report(corpus: Corpus, out_html: Path, out_json: Path) -> dict[str, Any]:
    """Write the report as HTML and JSON; return the JSON document."""
    data = provider_report(corpus)
    out_json.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out_json, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    out_html.parent.mkdir(parents=True, exist_ok=True)
    cells = {p["provider"]: {q["quirk"]: q for q in p["quirks"]} for p in data["providers"]}
    html = template("providers.html.j2").render(**data, cells=cells, json_name=out_json.name)
    write_atomic(out_html, html)
    return data
