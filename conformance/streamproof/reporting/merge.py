"""Shards joined into one run: ``streamproof merge``.

Each shard (``run --shard K/N --json``) holds its share of one plan. The
merged document is the one the whole run would have written: its results in
plan order, its summary, coverage, groups, profiles and capability gaps worked
out again from them over the corpus, as ``run`` works them out. Only the
timings differ, and ``run.date`` (the latest shard's) with ``run.merged``.

Shards are joined only when they are certainly one run: one tool version, one
corpus, one adapter, the same options, one plan, every shard once, and each
holding exactly its share of the plan. Anything else is a ``MergeError``, one
line naming the file and what differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..corpus.cases import Corpus
from ..corpus.schemas import schema_errors
from ..harness.engine import Result
from ..harness.selection import KeywordError, Selection
from ..harness.sharding import Shard, plan_digest
from .results import results_document

__all__ = ["MergeError", "merge_documents"]


class MergeError(Exception):
    """The files are not the shards of one run: one line saying why (exit 2)."""


# What must be the same in every shard, by what differs when it is not.
_SAME: tuple[tuple[str, Any], ...] = (
    ("tool versions", lambda d: d["tool"]["version"]),
    ("corpora", lambda d: f"{d['corpus']['version']} (sha256 {d['corpus']['sha256']})"),
    (
        "adapters",
        lambda d: (
            f"{d['adapter']['name']} {d['adapter']['version']} "
            f"({d['adapter'].get('spec', '?')}; {','.join(d['adapter']['capabilities'])})"
        ),
    ),
    ("transports", lambda d: ",".join(d["run"]["transports"])),
    ("seeds", lambda d: repr((d["run"]["seed"], d["run"].get("seeds")))),
    ("modes", lambda d: "--http" if d["run"].get("http") else "in-process"),
    ("options", lambda d: repr(d["run"].get("options"))),
    ("shard counts", lambda d: str(d["run"]["shard"]["count"])),
    ("plans", lambda d: d["run"]["shard"]["plan_sha256"]),
)


def merge_documents(shards: Sequence[tuple[str, Any]], corpus: Corpus) -> dict[str, Any]:
    """The results document of the run whose shards are ``shards`` (``(name, document)``).

    ``corpus`` is the corpus they ran on; ``MergeError`` when they are not
    every shard of one run on it.
    """
    if not shards:
        raise MergeError("no shards to merge")
    for name, document in shards:
        _check_shard(name, document)
    for label, key in _SAME:
        _check_same(shards, label, key)
    first = shards[0][1]
    if first["corpus"]["sha256"] != corpus.sha256:
        raise MergeError(
            f"{shards[0][0]}: ran on corpus sha256 {first['corpus']['sha256']}, but the corpus "
            f"at {corpus.root} digests to {corpus.sha256} (give its folder with --corpus)"
        )
    count = first["run"]["shard"]["count"]
    _check_indices(shards, count)
    plan = _plan(first, corpus, shards[0][0])
    by_index = {d["run"]["shard"]["index"]: (name, d) for name, d in shards}
    _check_overlaps(shards)
    cases = {c.id: c for c in corpus.cases}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for index in range(1, count + 1):
        name, document = by_index[index]
        share = {(c.id, t) for c, t in Shard(index, count).take(plan)}
        held = {(r["case"], r["transport"]) for r in document["results"]}
        if held != share:
            extra, missing = sorted(held - share), sorted(share - held)
            what = (
                f"{len(missing)} of its runs missing, first {_run(missing[0])}" if missing else ""
            )
            what = what or f"{len(extra)} runs not of its share, first {_run(extra[0])}"
            raise MergeError(f"{name}: not the share of shard {index}/{count} of the plan: {what}")
        for row in document["results"]:
            case = cases[row["case"]]
            if (row["severity"], row["expected_sha256"]) != (case.severity, case.expected_sha256):
                raise MergeError(
                    f"{name}: {_run((row['case'], row['transport']))}: its severity or "
                    "expected_sha256 is not the corpus's (the file was edited)"
                )
            rows[(row["case"], row["transport"])] = row
    results = [Result.from_dict(rows[(c.id, t)], cases[c.id]) for c, t in plan]
    return _document(shards, results, corpus)


def _check_shard(name: str, document: Any) -> None:
    problem = schema_errors("results", document)
    if problem:
        raise MergeError(f"{name}: not a results file: {problem}")
    run = document["run"]
    if document.get("interrupted") or run.get("interrupted"):
        raise MergeError(f"{name}: its run was interrupted: run that shard again to the end")
    if "shard" not in run:
        raise MergeError(f"{name}: not a shard (run --shard K/N --json writes one)")
    if "options" not in run:
        raise MergeError(f"{name}: records no run.options, so its plan cannot be checked")


def _check_same(shards: Sequence[tuple[str, Any]], label: str, key: Any) -> None:
    first_name, first = shards[0]
    want = key(first)
    for name, document in shards[1:]:
        got = key(document)
        if got != want:
            raise MergeError(f"mixed {label}: {first_name} has {want}, {name} has {got}")


def _check_indices(shards: Sequence[tuple[str, Any]], count: int) -> None:
    seen: dict[int, str] = {}
    for name, document in shards:
        index = document["run"]["shard"]["index"]
        if index > count:
            raise MergeError(f"{name}: shard {index}/{count} is past its count")
        if index in seen:
            raise MergeError(f"overlap: {seen[index]} and {name} are both shard {index}/{count}")
        seen[index] = name
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        shown = ", ".join(f"{i}/{count}" for i in missing)
        raise MergeError(f"gap: shard {shown} missing (no file holds it)")


def _check_overlaps(shards: Sequence[tuple[str, Any]]) -> None:
    owner: dict[tuple[str, str], str] = {}
    for name, document in shards:
        for row in document["results"]:
            run = (row["case"], row["transport"])
            if run in owner:
                where = "twice in " + name if owner[run] == name else f"in {owner[run]} and {name}"
                raise MergeError(f"overlap: {_run(run)} is {where}")
            owner[run] = name


def _plan(document: dict[str, Any], corpus: Corpus, name: str) -> list[Any]:
    """The plan the shards' options make on ``corpus``, checked against their digest."""
    options = document["run"]["options"]
    try:
        selection = Selection.parse(options["cases"], options["providers"], options["keyword"])
    except KeywordError as exc:
        raise MergeError(f"{name}: run.options: {exc}") from None
    plan = selection.plan(corpus.cases, document["run"]["transports"])
    if plan_digest(plan) != document["run"]["shard"]["plan_sha256"]:
        raise MergeError(
            f"{name}: its plan_sha256 is not that of the plan its options make on the "
            f"corpus at {corpus.root} ({len(plan)} runs)"
        )
    return plan


def _document(
    shards: Sequence[tuple[str, Any]], results: list[Result], corpus: Corpus
) -> dict[str, Any]:
    first = shards[0][1]
    run = first["run"]
    document = results_document(
        results,
        corpus=corpus,
        adapter=first["adapter"],
        transports=list(run["transports"]),
        seed=run["seed"],
        in_process=not run.get("http", False),
    )
    merged = document["run"]
    merged["date"] = max(d["run"]["date"] for _, d in shards)
    platforms = sorted({d["run"]["platform"] for _, d in shards})
    merged["platform"] = "; ".join(platforms)
    if "seeds" in run:
        merged["seeds"] = run["seeds"]
    merged["options"] = run["options"]
    merged["merged"] = {"count": run["shard"]["count"], "plan_sha256": run["shard"]["plan_sha256"]}
    return document


def _run(run: tuple[str, str]) -> str:
    return repr(f"{run[0]} [{run[1]}]")
