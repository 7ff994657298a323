"""The evidence rule (docs/evidence.md): severity bounded by what backs a case.

Each check of ``streamproof validate`` is planted in a copy of two shipped
cases, and the whole shipped corpus is held to the rule.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import load_corpus
from streamproof.corpus.cases import default_root
from streamproof.corpus.evidence import evidence_bound
from streamproof.corpus.validate import check_corpus, write_manifest

CASE = "generic/text-split-per-token"
OTHER = "generic/cjk-characters-split-across-reads"
CAPTURE = {"kind": "capture", "url": "https://github.com/o/r/blob/0123abc/t.yaml", "note": "n"}
REPORT = {"kind": "report", "url": "https://github.com/o/r/issues/1", "note": "n"}
SPEC = {"kind": "spec", "url": "https://html.spec.whatwg.org/", "note": "n"}
LOSSLESS = {"basis": "lossless", "section": "semantics §6.3"}


def corpus_with(tmp_path: Path, **changes: Any) -> Path:
    """Two shipped cases; ``changes`` replace top-level keys of the first one's case.json."""
    shipped = default_root()
    root = tmp_path / "corpus"
    for case_id in (CASE, OTHER):
        shutil.copytree(shipped / "cases" / case_id, root / "cases" / case_id)
    for name in ("VERSION", "FORMAT"):
        shutil.copy(shipped / name, root / name)
    other = root / "cases" / OTHER / "case.json"
    parent = json.loads(other.read_text(encoding="utf-8"))
    parent["evidence"] = {"shape": [CAPTURE], "reading": LOSSLESS}  # a parent of must
    other.write_text(json.dumps(parent, indent=2, ensure_ascii=False), encoding="utf-8")
    path = root / "cases" / CASE / "case.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    write_manifest(root)
    return root


def problems_of(root: Path) -> list[str]:
    return [p.split("case.json: ", 1)[-1] for p in check_corpus(root) if f"{CASE}/" in p]


def test_the_shipped_cases_pass_unchanged(tmp_path: Path) -> None:
    assert check_corpus(corpus_with(tmp_path)) == []


@pytest.mark.parametrize(
    ("evidence", "severity", "message"),
    [
        (
            {"shape": [REPORT], "reading": LOSSLESS},
            "must",
            "severity 'must' exceeds its evidence (bound 'should': no observed shape)",
        ),
        (
            {"shape": [CAPTURE], "reading": {"basis": "project", "section": "semantics §6.3"}},
            "should",
            "severity 'should' exceeds its evidence "
            "(bound 'may': the reading is the project's own)",
        ),
        (
            {"shape": [CAPTURE], "reading": LOSSLESS, "assumptions": ["a role on every delta"]},
            "must",
            "severity 'must' exceeds its evidence "
            "(bound 'may': the body adds assumptions to its sources)",
        ),
        (
            {"shape": [{"kind": "none", "note": "written for a rule"}], "reading": LOSSLESS},
            "should",
            "severity 'should' exceeds its evidence (bound 'may': no shape known)",
        ),
        (
            {"shape": [CAPTURE], "reading": LOSSLESS, "variant_of": OTHER},
            "must",
            "severity 'must' exceeds its evidence "
            f"(bound 'should': a byte-level variant of {OTHER})",
        ),
        (
            {"shape": [{"kind": "capture", "note": "a cassette"}], "reading": LOSSLESS},
            "must",
            "evidence shape item 1 has no url",
        ),
        (
            {"shape": [CAPTURE], "reading": {"basis": "spec"}},
            "must",
            "evidence reading with basis 'spec' has no url",
        ),
        (
            {"shape": [CAPTURE], "reading": {"basis": "lossless"}},
            "must",
            "evidence reading with basis 'lossless' names no section of docs/semantics.md",
        ),
        (
            {
                "shape": [CAPTURE],
                "reading": LOSSLESS,
                "disputed": [{"url": "https://github.com/o/r/issues/2", "note": "reads it as two"}],
            },
            "may",
            "evidence is disputed but the case has no expected_any",
        ),
        (
            {"shape": [CAPTURE], "reading": LOSSLESS, "variant_of": "generic/no-such-case"},
            "should",
            "evidence variant_of 'generic/no-such-case' is no case of this corpus",
        ),
        (
            {"shape": [CAPTURE, {"kind": "none", "note": "n"}], "reading": LOSSLESS},
            "must",
            "evidence shape 'none' cannot stand beside other shapes",
        ),
    ],
)
def test_validate_refuses_each_violation_in_one_line(
    tmp_path: Path, evidence: dict[str, Any], severity: str, message: str
) -> None:
    root = corpus_with(tmp_path, evidence=evidence, severity=severity)
    assert problems_of(root) == [message]


def test_recorded_provenance_needs_a_capture(tmp_path: Path) -> None:
    provenance = {
        "kind": "recorded",
        "source": "streamproof record",
        "observed": "2026-11-30",
        "recorded_at": "2026-11-30T10:00:00Z",
        "endpoint": "api.example.com",
    }
    root = corpus_with(
        tmp_path, provenance=provenance, evidence={"shape": [REPORT], "reading": LOSSLESS}
    )
    assert "recorded provenance without a capture item in evidence shape" in problems_of(root)


def test_a_case_without_evidence_is_refused_by_the_schema(tmp_path: Path) -> None:
    root = corpus_with(tmp_path, evidence=None)
    (line,) = [p for p in check_corpus(root) if CASE in p]
    assert "'evidence' is a required property" in line


def test_a_corpus_without_format_says_how_to_migrate_in_one_line(tmp_path: Path) -> None:
    root = corpus_with(tmp_path)
    (root / "FORMAT").unlink()
    (line,) = [p for p in check_corpus(root) if "FORMAT" in p]
    assert line.endswith(
        "FORMAT: missing; a corpus of format 1 (before corpus 2.0.0) has no evidence "
        "in its cases: see corpus/README.md, 'Migrating from format 1'"
    )


def test_a_disputed_case_with_its_alternatives_may_stand_as_may(tmp_path: Path) -> None:
    case = json.loads((default_root() / "cases" / CASE / "case.json").read_text(encoding="utf-8"))
    expected = case["expected"]
    merged = {**expected, "status": "truncated"}
    evidence = {
        "shape": [CAPTURE],
        "reading": LOSSLESS,
        "disputed": [{"url": "https://github.com/o/r/issues/2", "note": "reads it otherwise"}],
    }
    root = corpus_with(
        tmp_path,
        evidence=evidence,
        severity="may",
        expected=None,
        expected_any=[expected, merged],
        requires=[*case["requires"], "truncation"],
    )
    assert problems_of(root) == []


@pytest.mark.parametrize(
    ("evidence", "parent", "bound"),
    [
        ({"shape": [CAPTURE], "reading": LOSSLESS}, None, "must"),
        ({"shape": [SPEC], "reading": {"basis": "spec", "url": "https://x.y/"}}, None, "should"),
        (
            {"shape": [CAPTURE], "reading": LOSSLESS, "variant_of": "p"},
            {"shape": [CAPTURE]},
            "should",
        ),
        (
            {"shape": [CAPTURE], "reading": LOSSLESS, "variant_of": "p"},
            {"shape": [{"kind": "none"}], "reading": LOSSLESS},
            "may",
        ),
    ],
)
def test_the_bound(evidence: dict[str, Any], parent: dict[str, Any] | None, bound: str) -> None:
    parents = {"p": {"reading": LOSSLESS, **parent}} if parent else {}
    assert evidence_bound(evidence, parents).severity == bound


def test_every_shipped_case_is_within_its_bound_and_few_mutation_cases_stay_must() -> None:
    """At most three of the cases written to kill mutants (corpus 1.4.0 and 1.5.0) stay
    ``must``, each with an observed shape named."""
    corpus = load_corpus()
    by_id = {c.id: c.data for c in corpus.cases}
    parents = {i: d["evidence"] for i, d in by_id.items()}
    for case_id, data in by_id.items():
        bound = evidence_bound(data["evidence"], parents).severity
        rank = {"may": 0, "should": 1, "must": 2}
        assert rank[data["severity"]] <= rank[bound], case_id
    changelog = (corpus.root / "CHANGELOG.md").read_text(encoding="utf-8")
    written_for_mutants = _listed_under(changelog, ("## 1.4.0", "## 1.5.0"))
    assert len(written_for_mutants) == 33
    severities = Counter(by_id[c]["severity"] for c in written_for_mutants if c in by_id)
    assert severities["must"] <= 3
    for case_id in written_for_mutants:
        if case_id in by_id and by_id[case_id]["severity"] == "must":
            kinds = {item["kind"] for item in by_id[case_id]["evidence"]["shape"]}
            assert kinds & {"capture", "server-source", "provider-docs"}, case_id


def _listed_under(changelog: str, headings: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for heading in headings:
        section = changelog.split(heading, 1)[1].split("\n## ", 1)[0]
        found += [line[3:-1] for line in section.splitlines() if line.startswith("- `")]
    return found
