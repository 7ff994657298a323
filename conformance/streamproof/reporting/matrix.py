"""The cross-parser matrix: many results files, one self-contained HTML page.

Every results file is one adapter's run (``schemas/results.schema.json``).
The page names the corpus and each run, tabulates pass rates by provider and
adapter, and shows every case × adapter cell, with a pruned view that folds
the cases every adapter handles alike. The HTML comes from
``templates/matrix.html.j2``; this module only shapes the data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..corpus.cases import SEVERITIES, Case, Corpus
from ..corpus.schemas import schema_errors
from ..harness.comparison import Divergence
from ..harness.projection import GROUPS
from ..harness.strict_json import read_document
from .cost import cost_rows, load_scaling
from .render import template
from .wire import wire_view

__all__ = ["WIRE_BUDGET", "WIRE_LIMIT", "MatrixError", "load_results", "write_matrix"]

# A case's wire view shows this many bytes of its body ...
WIRE_LIMIT = 4_000
# ... and all wire views together stay under this many characters.
WIRE_BUDGET = 2_500_000
# A first divergence is cut here: an expected content can be a whole essay.
TEXT_LIMIT = 300
# A pass rate is shown in full colour only over this many case runs, of which
# this share of the field groups the cases state was compared: below either, a
# rate is faint, never solid green over a handful of runs or a sliver of each.
SOLID_RUNS = 20
SOLID_SHARE = 0.5
# Best to worst: a cell shows the worst verdict of its transports.
RANK = ("pass", "skip", "xfail", "xpass", "fail", "timeout", "crash")
_FIRST = {"generic": 0, "sse-spec": 1}


class MatrixError(Exception):
    """A results file cannot be used: one line naming the file."""


def load_results(path: Path) -> dict[str, Any]:
    """A results file, read and checked against its schema; ``MatrixError`` otherwise."""
    try:
        document = read_document(path)
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:  # one line naming the file
        raise MatrixError(str(exc)) from None
    if isinstance(document, dict) and "tool" not in document and "transports" in document:
        document = _from_baseline(document)
    problem = schema_errors("results", document)
    if problem:
        raise MatrixError(f"{path}: not a results file: {_cut(problem)}")
    return dict(document)


def _from_baseline(baseline: dict[str, Any]) -> dict[str, Any]:
    """A normalised baseline (``run --baseline``) read as a results file.

    It keeps verdicts and first divergences only: no timings, date or
    platform, and the first divergence stands in for the mismatches.
    """
    digests = baseline.get("expected_sha256", {})
    results = [
        {
            "case": r["case"],
            "transport": r["transport"],
            "verdict": r["verdict"],
            "severity": "may",
            "expected_sha256": digests.get(r["case"], "0" * 64),
            "mismatches": [],
            "seconds": 0,
            "message": r.get("first_divergence", ""),
            **({"groups": r["groups"]} if "groups" in r else {}),
            **({"not_exposed": r["not_exposed"]} if "not_exposed" in r else {}),
        }
        for r in baseline.get("results", [])
    ]
    return {
        "tool": {"version": "baseline"},
        "corpus": baseline.get("corpus"),
        "adapter": {**baseline.get("adapter", {}), "capabilities": []},
        "run": {
            "transports": baseline.get("transports"),
            "seed": baseline.get("seed"),
            "date": "(baseline)",
            "platform": "(baseline)",
        },
        "summary": baseline.get("summary"),
        "results": results,
    }


@dataclass(frozen=True)
class Run:
    """One results file: one adapter over one corpus."""

    path: Path
    label: str
    document: dict[str, Any]
    rows: dict[str, list[dict[str, Any]]]  # the case's results, in file order
    same_corpus: bool

    @property
    def adapter(self) -> dict[str, Any]:
        return dict(self.document["adapter"])

    @property
    def run(self) -> dict[str, Any]:
        return dict(self.document["run"])

    @property
    def corpus(self) -> dict[str, Any]:
        return dict(self.document["corpus"])

    @property
    def summary(self) -> dict[str, int]:
        return dict(self.document["summary"])


@dataclass(frozen=True)
class Cell:
    """One case under one adapter, across the transports it ran."""

    verdict: str  # the worst of its transports
    failed: tuple[str, ...]  # the transports that did not pass, when verdicts differ
    notes: tuple[str, ...]  # "transports: verdict: first divergence", first one first
    stale: bool  # run against another expectation than the corpus's

    @property
    def key(self) -> str:
        """What the pruned view compares across adapters."""
        return " ".join((self.verdict, *self.failed))

    @property
    def tooltip(self) -> str:
        stale = ["† run against an older expectation of this case"] if self.stale else []
        return "\n".join([*self.notes, *stale])


@dataclass(frozen=True)
class Row:
    id: str
    title: str
    severity: str
    in_corpus: bool
    cells: list[Cell | None]  # one per run; None when the run has no result for the case
    fold: str | None  # the fold line a case every adapter handles alike belongs to
    failing: bool  # some adapter did not pass (or skip) it
    wire: str | None  # its body made visible, when failing and within WIRE_BUDGET


@dataclass(frozen=True)
class Fold:
    id: str
    key: str
    count: int


@dataclass(frozen=True)
class Group:
    provider: str
    category: str
    rows: list[Row]
    folds: list[Fold]


def write_matrix(
    results: list[Path], out: Path, corpus: Corpus, scaling: Path | None = None
) -> None:
    """Render the matrix of ``results`` (one results file per adapter) into ``out``,
    with the cost verdicts and throughput of ``scaling`` (``streamproof scaling --json``)."""
    if not results:
        raise MatrixError("the matrix needs at least one results file")
    runs = _runs(results, corpus)
    cost = (
        cost_rows(load_scaling(scaling), [run.adapter["name"] for run in runs]) if scaling else []
    )
    cases = {c.id: c for c in corpus.cases}
    ids = sorted({i for run in runs for i in run.rows}, key=lambda i: _order(_provider(i), i))
    budget, omitted = WIRE_BUDGET, 0
    groups: dict[str, Group] = {}
    for case_id in ids:
        case = cases.get(case_id)
        cells = [_cell(run.rows[case_id], case) if case_id in run.rows else None for run in runs]
        # A skip or a missing result says nothing about a parser: only the rest are compared.
        keys = {c.key for c in cells if c is not None and c.verdict != "skip"} or {"skip"}
        provider = _provider(case_id)
        group = groups.setdefault(provider, Group(provider, _category(provider), [], []))
        fold = _fold(group, keys.pop()) if len(keys) == 1 else None
        failing = any(c is not None and c.verdict not in ("pass", "skip") for c in cells)
        wire = wire_view(case.body, limit=WIRE_LIMIT) if case is not None and failing else None
        if wire is not None and len(wire) > budget:
            wire, omitted = None, omitted + 1
        budget -= len(wire or "")
        severity = case.severity if case else str(_rows_of(runs, case_id)[0]["severity"])
        title = case.title if case else f"(not in corpus {corpus.version})"
        row = Row(case_id, title, severity, case is not None, cells, fold, failing, wire)
        group.rows.append(row)
    rows = [r for g in groups.values() for r in g.rows]
    html = template("matrix.html.j2").render(
        corpus=corpus,
        runs=runs,
        groups=list(groups.values()),
        rates=_rates(runs, list(groups)),
        group_table=_group_table(runs),
        severities=SEVERITIES,
        total=len(rows),
        telling=sum(1 for r in rows if r.fold is None),
        failing=sum(1 for r in rows if r.failing),
        wire_omitted=omitted,
        wire_limit=WIRE_LIMIT,
        unrun=len(set(cases) - set(ids)),
        cost=cost,
        gone=sum(1 for r in rows if not r.in_corpus),
    )
    write_atomic(out, html)


def _runs(paths: list[Path], corpus: Corpus) -> list[Run]:
    runs: list[Run] = []
    seen: Counter[str] = Counter()
    for path in paths:
        document = load_results(path)
        adapter = document["adapter"]
        label = f"{adapter['name']} {adapter['version']}"
        seen[label] += 1
        if seen[label] > 1:
            label = f"{label} #{seen[label]}"
        rows: dict[str, list[dict[str, Any]]] = {}
        for row in document["results"]:
            rows.setdefault(row["case"], []).append(row)
        same = document["corpus"]["sha256"] == corpus.sha256
        runs.append(Run(path, label, document, rows, same))
    return runs


def _rows_of(runs: list[Run], case_id: str) -> list[dict[str, Any]]:
    return [row for run in runs for row in run.rows.get(case_id, [])]


def _provider(case_id: str) -> str:
    return case_id.split("/", 1)[0]


def _category(provider: str) -> str:
    return provider if provider in _FIRST else "providers"


def _order(provider: str, case_id: str = "") -> tuple[int, str, str]:
    return (_FIRST.get(provider, 2), provider, case_id)


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _divergence(row: dict[str, Any]) -> str:
    if row["mismatches"]:
        first = row["mismatches"][0]
        return _cut(str(Divergence.from_dict(first)))
    return _cut(str(row.get("message", "")))


def _cell(rows: list[dict[str, Any]], case: Case | None) -> Cell:
    verdicts = [str(r["verdict"]) for r in rows]
    worst = max(verdicts, key=RANK.index)
    mixed = len(set(verdicts)) > 1
    failed = tuple(r["transport"] for r in rows if r["verdict"] != "pass") if mixed else ()
    grouped: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row["verdict"] != "pass":
            grouped.setdefault((row["verdict"], _divergence(row)), []).append(row["transport"])
    notes = tuple(
        f"{', '.join(transports)}: {verdict}" + (f": {text}" if text else "")
        for (verdict, text), transports in grouped.items()
    )
    stale = case is not None and any(r["expected_sha256"] != case.expected_sha256 for r in rows)
    return Cell(worst, failed, notes, stale)


def _fold(group: Group, key: str) -> str:
    for i, fold in enumerate(group.folds):
        if fold.key == key:
            group.folds[i] = Fold(fold.id, key, fold.count + 1)
            return fold.id
    fold_id = f"fold-{group.provider}-{len(group.folds)}"
    group.folds.append(Fold(fold_id, key, 1))
    return fold_id


def _rate(counts: Counter[str]) -> dict[str, Any]:
    """A pass rate with the share of the stated field groups compared behind it."""
    ran = counts["runs"] - counts["skip"] if counts else 0
    rate = counts["pass"] / ran if ran else None
    share = counts["compared"] / counts["stated"] if counts["stated"] else None
    solid = ran >= SOLID_RUNS and (share is None or share >= SOLID_SHARE)
    return {
        "passed": counts["pass"],
        "ran": ran,
        "skipped": counts["skip"],
        "percent": None if rate is None else f"{100 * rate:.1f}".removesuffix(".0"),
        "hue": None if rate is None else round(120 * rate),
        # None where the results file predates field groups
        "compared": None if share is None else f"{100 * share:.0f}",
        "solid": solid,
    }


def _tally(counts: Counter[str], rows: list[dict[str, Any]]) -> None:
    for row in rows:
        counts["runs"] += 1
        counts[str(row["verdict"])] += 1
        if "groups" in row or "not_exposed" in row:
            compared = len(row.get("groups") or {})
            counts["compared"] += compared
            counts["stated"] += compared + len(row.get("not_exposed") or ())


def _rates(runs: list[Run], providers: list[str]) -> dict[str, Any]:
    """Case runs passed / (total - skipped), by provider and adapter, and overall,
    each with the share of the field groups its cases state that was compared."""
    counts = {p: [Counter[str]() for _ in runs] for p in providers}
    overall = [Counter[str]() for _ in runs]
    for i, run in enumerate(runs):
        for case_id, rows in run.rows.items():
            _tally(counts[_provider(case_id)][i], rows)
            _tally(overall[i], rows)
    return {
        "rows": [(p, [_rate(c) for c in counts[p]]) for p in providers],
        "overall": [_rate(c) for c in overall],
    }


def _group_table(runs: list[Run]) -> list[tuple[str, list[dict[str, int] | None]]]:
    """Adapter × field group: cases that stated the group, were compared, were right."""
    table: list[tuple[str, list[dict[str, int] | None]]] = []
    figures: list[dict[str, Any]] = []
    for run in runs:
        stated: dict[str, set[str]] = {g: set() for g in GROUPS}
        compared: dict[str, dict[str, bool]] = {g: {} for g in GROUPS}
        known = False
        for case_id, rows in run.rows.items():
            for row in rows:
                if "groups" not in row and "not_exposed" not in row:
                    continue
                known = True
                for group, verdict in (row.get("groups") or {}).items():
                    if group in compared:
                        stated[group].add(case_id)
                        ok = compared[group].get(case_id, True)
                        compared[group][case_id] = ok and verdict == "pass"
                for group in row.get("not_exposed") or ():
                    if group in stated:
                        stated[group].add(case_id)
        figures.append(
            {
                g: {
                    "stated": len(stated[g]),
                    "compared": len(compared[g]),
                    "passed": sum(compared[g].values()),
                }
                for g in GROUPS
            }
            if known
            else {}
        )
    for group in GROUPS:
        cells = [f.get(group) if f else None for f in figures]
        if any(c and c["stated"] for c in cells):
            table.append((group, cells))
    return table
