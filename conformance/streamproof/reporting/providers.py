"""The provider report: what ``streamproof lint`` finds in each provider's cases.

For every provider of the corpus: the quirks lint sees in its bodies, each
with its severity, the number of the provider's cases that show it, the date
of the catalogue's evidence for that provider (or a note that the catalogue
does not list the provider for it) and whether it is one of the provider's
baselines; how many of its cases are clean, and how many have each severity
as their worst. Every figure counts cases or distinct quirks, never
deviations summed over cases, so a provider with many cases does not look
worse for it. A quirk that is the provider's own signalling (an error
reported inside a 200 stream, ``checks.report.SIGNALS``) is a note, not a
deviation. The folders that are not a provider (:data:`LEFT_OUT`) stay out
of every table and are named once with their case counts.

One self-contained HTML page (a jinja2 template, autoescaped, inline CSS,
no external asset) and the same data as JSON. Nothing in the output depends
on the clock, so rebuilding it from the same corpus gives the same bytes.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..__about__ import __version__
from ..atomic import write_atomic
from ..checks.report import NOTE, LintReport, lint_case
from ..corpus.breadth import NOT_PROVIDERS, breadth
from ..corpus.cases import SEVERITIES, Case, Corpus, CorpusError
from ..corpus.quirks import Catalogue, load_quirks
from ..corpus.validate import WIRE_PROVIDER
from .render import template

__all__ = ["LEFT_OUT", "provider_report", "write_provider_report"]

_HOLDS = {
    "generic": "pitfalls seen across providers, not one provider's traffic",
    "sse-spec": "the framing rules of server-sent events",
    WIRE_PROVIDER: "faults of a connection, produced by the replay server",
}
#: Corpus folders that are not a provider, and what they hold instead.
LEFT_OUT: dict[str, str] = {
    name: _HOLDS.get(name, "not a provider") for name in sorted(NOT_PROVIDERS | {WIRE_PROVIDER})
}

#: Severities, then notes: the order quirks are listed in.
_LEVELS = (*SEVERITIES, NOTE)
_RANK = {level: i for i, level in enumerate(_LEVELS)}


@dataclass
class _Provider:
    name: str
    cases: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    worst: Counter[str] = field(default_factory=Counter)  # cases by their worst severity
    clean: int = 0
    found: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    level: dict[str, str] = field(default_factory=dict)  # quirk -> its worst level here


def provider_report(corpus: Corpus, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """Lint every provider's cases and sum them up (the JSON document of the report)."""
    if catalogue is None:
        catalogue, problems = load_quirks(corpus.root)
        if catalogue is None:
            raise CorpusError(problems)
    providers: dict[str, _Provider] = {}
    left_out: Counter[str] = Counter()
    for case in corpus.cases:
        if case.provider in LEFT_OUT:
            left_out[case.provider] += 1
            continue
        provider = providers.setdefault(case.provider, _Provider(case.provider))
        _count(provider, case, lint_case(case, catalogue))
    rows = [_provider_row(p, catalogue) for _, p in sorted(providers.items())]
    wide = {row.provider: row.as_dict() for row in breadth(corpus.cases)}
    for row in rows:
        row["breadth"] = wide.get(row["provider"])
    quirks = _quirks(providers.values(), catalogue)
    return {
        "tool": {"name": "streamproof", "version": __version__},
        "corpus": {"version": corpus.version, "sha256": corpus.sha256},
        "catalogue": {"file": "quirks.json", "sha256": catalogue.sha256},
        "severities": list(SEVERITIES),
        "left_out": [
            {"folder": name, "cases": left_out[name], "holds": LEFT_OUT[name]}
            for name in sorted(LEFT_OUT)
            if left_out[name]
        ],
        "totals": {
            "providers": len(rows),
            "cases": sum(p["cases"] for p in rows),
            "clean": sum(p["clean"] for p in rows),
            "cases_by_worst": {s: sum(p["cases_by_worst"][s] for p in rows) for s in SEVERITIES},
            "quirks": {level: sum(q["severity"] == level for q in quirks) for level in _LEVELS},
        },
        "quirks": quirks,
        "providers": rows,
    }


def _count(provider: _Provider, case: Case, report: LintReport) -> None:
    provider.cases += 1
    provider.kinds[report.kind] += 1
    if report.deviations:
        provider.worst[min((d.severity for d in report.deviations), key=_RANK.__getitem__)] += 1
    else:
        provider.clean += 1
    for entry in (*report.deviations, *report.notes):  # each quirk once per report
        provider.found[entry.quirk].append(case.id)
        known = provider.level.get(entry.quirk, NOTE)
        provider.level[entry.quirk] = min(known, entry.severity, key=_RANK.__getitem__)


def _provider_row(provider: _Provider, catalogue: Catalogue) -> dict[str, Any]:
    baselines = set(catalogue.baselines.get(provider.name, []))
    quirks = []
    for quirk in sorted(provider.found, key=lambda q: (_RANK[provider.level[q]], q)):
        evidence = catalogue.quirks.get(quirk, {}).get("providers", {}).get(provider.name)
        quirks.append(
            {
                "quirk": quirk,
                "severity": provider.level[quirk],
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
        "cases_by_worst": {s: provider.worst[s] for s in SEVERITIES},
        "quirks_by_severity": {
            level: sum(q["severity"] == level for q in quirks) for level in _LEVELS
        },
        "baselines": sorted(baselines),
        "quirks": quirks,
    }


def _quirks(providers: Iterable[_Provider], catalogue: Catalogue) -> list[dict[str, Any]]:
    """Every quirk some provider shows: its worst level, the providers and their cases."""
    level: dict[str, str] = {}
    shown_by: dict[str, list[str]] = defaultdict(list)
    cases: Counter[str] = Counter()
    for provider in sorted(providers, key=lambda p: p.name):
        for quirk, found in provider.found.items():
            known = level.get(quirk, NOTE)
            level[quirk] = min(known, provider.level[quirk], key=_RANK.__getitem__)
            shown_by[quirk].append(provider.name)
            cases[quirk] += len(found)
    return [
        {
            "quirk": quirk,
            "severity": level[quirk],
            "description": _description(catalogue, quirk),
            "catalogued": quirk in catalogue.quirks,
            "providers": shown_by[quirk],
            "cases": cases[quirk],
        }
        for quirk in sorted(level, key=lambda q: (_RANK[level[q]], q))
    ]


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
    html = template("providers.html.j2").render(
        **data, levels=_LEVELS, cells=cells, json_name=out_json.name
    )
    write_atomic(out_html, html)
    return data
