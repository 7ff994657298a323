"""reports/FINDINGS.md agrees with the baselines: every count comes from them.

``scripts/findings`` writes the counts; these tests run its check on the
repository, and show that the check catches a count edited by hand, an entry
whose case no longer fails, and a failing case no entry explains.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    path = ROOT / "scripts" / "findings"
    loader = importlib.machinery.SourceFileLoader("findings_script", str(path))
    spec = importlib.util.spec_from_loader("findings_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


findings = _script()


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A repository root with its own reports/ and the real corpus."""
    shutil.copytree(ROOT / "reports", tmp_path / "reports")
    (tmp_path / "corpus").symlink_to(ROOT / "corpus")
    return tmp_path


def _edit_baseline(root: Path, adapter: str, change: Any) -> None:
    path = root / "reports" / "baselines" / f"{adapter}.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_findings_agree_with_the_baselines() -> None:
    assert findings.check() == []


def test_every_entry_is_a_known_kind_and_the_conventions_are_gone() -> None:
    document = json.loads((ROOT / "reports" / "findings.json").read_text(encoding="utf-8"))
    kinds = {entry["kind"] for entry in document["entries"]}
    assert kinds <= {"defect", "departure", "deliberate", "adapter"}
    ids = {entry["id"] for entry in document["entries"]}
    # Conventions of semantics §12.5, no longer failures (corpus 1.1.0).
    assert ids.isdisjoint({"OP-5", "OP-7", "N-1", "N-3", "V-2", "V-3", "LC-6", "LC-7"})
    text = (ROOT / "reports" / "FINDINGS.md").read_text(encoding="utf-8")
    assert "## Deliberate behaviour (not defects)" in text
    assert "## Departures on unobserved or disputed shapes" in text


def test_a_count_edited_by_hand_is_caught(copy: Path) -> None:
    path = copy / "reports" / "FINDINGS.md"
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("| openai-python |"))
    cells = line.split(" | ")
    cells[2] = str(int(cells[2]) + 6)  # the pass count
    path.write_text(text.replace(line, " | ".join(cells)), encoding="utf-8")
    assert findings.check(copy) == ["FINDINGS.md: block table differs from the baselines"]


def test_an_entry_whose_case_passes_is_caught(copy: Path) -> None:
    def passes(document: dict[str, Any]) -> None:
        for row in document["results"]:
            if row["case"] == "sse-spec/bom-at-start":
                row["verdict"] = "pass"
                row.pop("first_divergence", None)

    _edit_baseline(copy, "httpx-sse", passes)
    found = findings.check(copy)
    assert "H-1: sse-spec/bom-at-start does not fail in httpx-sse's baseline" in found


def test_a_failure_no_entry_explains_is_caught(copy: Path) -> None:
    def fails(document: dict[str, Any]) -> None:
        row = next(r for r in document["results"] if r["case"] == "generic/finish-reason-length")
        row["verdict"] = "fail"
        row["first_divergence"] = "choices[0].finish_reason: want 'length', got 'stop'"

    _edit_baseline(copy, "reference", fails)
    found = findings.check(copy)
    assert any(
        line.startswith("reference: generic/finish-reason-length fails") for line in found
    ), found


def test_write_regenerates_what_check_wants(copy: Path) -> None:
    path = copy / "reports" / "FINDINGS.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("| reference |", "| reference (edited) |"),
        encoding="utf-8",
    )
    assert findings.check(copy) != []
    document = json.loads((copy / "reports" / "findings.json").read_text(encoding="utf-8"))
    baselines = findings.load_baselines(copy / "reports" / "baselines")
    text = findings.render(
        path.read_text(encoding="utf-8"), document, baselines, findings.severities(copy)
    )
    path.write_text(text, encoding="utf-8")
    assert findings.check(copy) == []


def test_diff_lists_the_convention_and_the_changed_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1.0.1-style baseline against the shipped one shows what 1.1.0 changed."""
    from streamproof.cli import main

    new = ROOT / "reports" / "baselines" / "openai-python.json"
    old = json.loads(new.read_text(encoding="utf-8"))
    old["corpus"]["version"] = "1.0.1"
    old["expected_sha256"]["generic/empty-id-on-every-chunk"] = "0" * 64
    for row in old["results"]:
        if row["case"] == "snowflake/empty-id-and-created-zero":
            row["verdict"] = "fail"
            row["first_divergence"] = "id: want null, got ''"
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    assert main(["diff", str(tmp_path / "old.json"), str(new)]) == 0
    out = capsys.readouterr().out
    assert "snowflake/empty-id-and-created-zero [whole] fail → pass" in out
    assert "generic/empty-id-on-every-chunk" in out
    assert "1 changed expectation" in out


def test_the_http_baselines_are_read_as_http_adapters() -> None:
    baselines = findings.load_baselines(ROOT / "reports" / "baselines")
    over_http = {name for name in baselines if name.startswith("http/")}
    on_disk = {f"http/{p.stem}" for p in (ROOT / "reports" / "baselines" / "http").glob("*.json")}
    assert over_http == on_disk and over_http
    # The in-process baseline of the same adapter stays apart.
    assert baselines["node-openai"] is not baselines["http/node-openai"]


def test_an_http_failure_no_entry_explains_is_caught(copy: Path) -> None:
    path = copy / "reports" / "findings.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    entries = document["entries"]
    document["entries"] = [e for e in entries if "http/node-openai" not in e["adapters"]]
    path.write_text(json.dumps(document), encoding="utf-8")
    baselines = findings.load_baselines(copy / "reports" / "baselines")
    found = findings.problems(document, baselines, findings.severities())
    assert any(
        line.startswith("http/node-openai: wire/reset-after-finish-before-usage fails (crash")
        for line in found
    ), found


def test_a_repro_over_http_names_the_adapter_and_http() -> None:
    rows = [{"case": "wire/x", "transport": "lines", "verdict": "crash", "first_divergence": "E"}]
    line = findings.repro("http/node-openai", "wire/x", rows, 1, "must")
    assert line.startswith(
        "`streamproof run --adapter node-openai --case 'wire/x [lines]' --http --no-html`"
    ), line
    plain = findings.repro("litellm", "wire/x", rows, 1, "must")
    assert plain.startswith("`streamproof run --adapter litellm --case 'wire/x [lines]' --no-html`")
    seeded = findings.repro("litellm", "c", [{**rows[0], "transport": "random"}], 7, "must")
    assert "--case 'c [random]' --seed 7 --no-html" in seeded


def _entry(document: dict[str, Any], entry_id: str) -> dict[str, Any]:
    return next(e for e in document["entries"] if e["id"] == entry_id)


def test_a_defect_resting_on_may_cases_alone_is_caught() -> None:
    """docs/evidence.md: a defect names a failing must or should case."""
    document = json.loads((ROOT / "reports" / "findings.json").read_text(encoding="utf-8"))
    severity = findings.severities()
    departure = next(e for e in document["entries"] if e["kind"] == "departure")
    departure["kind"] = "defect"
    defect = next(
        e
        for e in document["entries"]
        if e["kind"] == "defect" and any(severity[c] != "may" for c in e["cases"])
    )
    defect["kind"] = "departure"
    found = findings.problems(
        document, findings.load_baselines(ROOT / "reports/baselines"), severity
    )
    needs = "a defect needs a failing must or should case"
    assert f"{departure['id']}: {needs}; its cases are all 'may' (make it a departure)" in found
    assert any(
        line.startswith(f"{defect['id']}: a departure names may cases only") for line in found
    )


def test_a_crash_counted_as_a_defect_needs_the_library_s_error_contract() -> None:
    document = json.loads((ROOT / "reports" / "findings.json").read_text(encoding="utf-8"))
    del document["error_contracts"]["openai-python"]
    found = findings.problems(
        document, findings.load_baselines(ROOT / "reports/baselines"), findings.severities()
    )
    assert any(
        "crashes in openai-python, and error_contracts cites no documented error contract" in line
        for line in found
    ), found


def test_every_defect_names_a_failing_must_or_should_case() -> None:
    document = json.loads((ROOT / "reports" / "findings.json").read_text(encoding="utf-8"))
    severity = findings.severities()
    for entry in document["entries"]:
        graded = [c for c in entry["cases"] if severity[c] in ("must", "should")]
        if entry["kind"] in ("defect", "departure"):
            assert bool(graded) == (entry["kind"] == "defect"), entry["id"]


def test_a_history_line_says_since_when_and_where_it_changed() -> None:
    records = [
        ("1.9.0", {"a": "fail", "b": "pass", "c": "pass"}),
        ("1.10.0", {"a": "crash", "b": "fail", "c": "pass"}),
        ("1.11.0", {"a": "fail", "b": "fail", "c": "pass"}),
    ]
    line = findings.history_line("lib", ["a", "b", "c"], records)
    assert line.startswith("- History (lib 1.9.0 to 1.11.0, 3 releases, `whole`): ")
    assert "1 fail in every release (present since at least 1.9.0)" in line
    assert "`b` first fails in 1.10.0" in line
    assert "1 case passes under `whole` in every release" in line
    fixed = findings.history_line("lib", ["b"], [("2", {"b": "fail"}), ("10", {"b": "pass"})])
    assert "`b` first passes in 10" in fixed  # releases in numeric order, not as text
    assert "(read from the records)" in line and "(read from the records)" in fixed
    checked = {"1.10.0": {"found": "its changelog", "source": "CHANGELOG"}}
    assert "(checked by hand" in findings.history_line("lib", ["a", "b"], records, checked)


def test_history_on_another_corpus_is_left_out(copy: Path) -> None:
    baseline = json.loads((copy / "reports/baselines/litellm.json").read_text(encoding="utf-8"))
    sha = baseline["corpus"]["sha256"]
    assert "litellm" in findings.load_history(copy, sha)
    for path in (copy / "reports/history/litellm").glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        record["corpus"]["sha256"] = "0" * 64
        path.write_text(json.dumps(record), encoding="utf-8")
    assert "litellm" not in findings.load_history(copy, sha)


def test_a_history_that_changes_is_caught(copy: Path) -> None:
    path = copy / "reports/history/litellm/1.108.10.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    failing = next(case for case, verdict in record["cases"].items() if verdict == "fail")
    record["cases"][failing] = "pass"  # an older release now passes: a change to report
    path.write_text(json.dumps(record), encoding="utf-8")
    assert any(line.startswith("FINDINGS.md: block entry:") for line in findings.check(copy))
