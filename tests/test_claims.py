"""verify, its badge, diff and run --write-expect: the claims a results file makes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from commands import dump, load, streamproof

from streamproof.corpus import load_corpus
from streamproof.corpus.schemas import schema_errors
from streamproof.harness.expectations import load_expectations
from streamproof.reporting.diff import diff
from streamproof.reporting.known_failures import expectations_document, write_expectations
from streamproof.reporting.results import write_baseline
from streamproof.reporting.run_files import load_run, run_record
from streamproof.reporting.verify import badge_document, verify
from streamproof.resources import data_path

ADAPTERS = Path(__file__).parent / "adapters"
SUBSET = "sse-spec/*"  # 40 cases: quick, and naive_lines passes some and fails others


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference parser over the whole corpus, whole reads: every case passes."""
    folder = tmp_path_factory.mktemp("reference")
    out = folder / "results.json"
    proc = streamproof("run", "--transport", "whole", "--seed", "1", "--json", out, cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def passing_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """naive_lines over SUBSET (whole, bytes) and two cases it passes under both."""
    folder = tmp_path_factory.mktemp("naive")
    out = folder / "before.json"
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "naive_lines.py",
        "--transport",
        "whole,bytes",
        "--case",
        SUBSET,
        "--seed",
        "1",
        "--json",
        out,
        cwd=folder,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # it fails some cases
    verdicts: dict[str, set[str]] = {}
    for row in load(out)["results"]:
        verdicts.setdefault(row["case"], set()).add(row["verdict"])
    passing = sorted(case for case, found in verdicts.items() if found == {"pass"})
    assert len(passing) >= 2
    return out, passing[0], passing[1]


VARIANT = '''
import time

{naive}

_naive_parse = parse
BREAK, HANG = {broken!r}, {hanging!r}


def parse(response):
    """naive_lines, deliberately broken: one case under bytes, one hangs under whole."""
    if response.case_id == HANG and response.transport == "whole":
        while True:
            time.sleep(60)
    outcome = _naive_parse(response)
    if response.case_id == BREAK and response.transport == "bytes":
        outcome["status"] = "truncated"
    return outcome
'''


@pytest.fixture(scope="module")
def regressed_run(
    tmp_path_factory: pytest.TempPathFactory, passing_pair: tuple[Path, str, str]
) -> Path:
    """The same run of a variant of naive_lines that regressed on two cases."""
    _, broken, hanging = passing_pair
    folder = tmp_path_factory.mktemp("variant")
    naive = (ADAPTERS / "naive_lines.py").read_text(encoding="utf-8")
    variant = folder / "naive_variant.py"
    variant.write_text(VARIANT.format(naive=naive, broken=broken, hanging=hanging))
    out = folder / "after.json"
    proc = streamproof(
        "run",
        "--adapter",
        variant,
        "--transport",
        "whole,bytes",
        "--case",
        SUBSET,
        "--seed",
        "1",
        "--timeout",
        "2",
        "--json",
        out,
        cwd=folder,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return out


# verify


def test_verify_accepts_an_untouched_results_file(reference_run: Path) -> None:
    assert verify(reference_run) == []
    proc = streamproof("verify", reference_run)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"verified: {reference_run}")


def test_verify_catches_a_hand_edited_summary(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    document["results"][0]["verdict"] = "fail"  # one failure, the summary left as it was
    edited = dump(document, tmp_path / "edited.json")
    problems = verify(edited)
    assert any("summary.passed" in p for p in problems), problems
    assert any("summary.failed: the file says 0, its results add up to 1" in p for p in problems)
    document = load(reference_run)
    document["summary"]["total"] += 1
    problems = verify(dump(document, tmp_path / "total.json"))
    assert len(problems) == 1 and "summary.total" in problems[0], problems


def test_verify_catches_another_corpus_digest(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    document["corpus"]["sha256"] = "0" * 64
    proc = streamproof("verify", dump(document, tmp_path / "digest.json"))
    assert proc.returncode == 1
    assert "corpus.sha256" in proc.stderr and "not verified: 1 problem(s)" in proc.stderr


def test_verify_catches_another_corpus_version(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    document["corpus"]["version"] = "0.0.1"
    problems = verify(dump(document, tmp_path / "version.json"))
    assert len(problems) == 1 and "corpus.version" in problems[0], problems


def test_verify_catches_an_edited_expectation_digest(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    row = document["results"][3]
    row["expected_sha256"] = "f" * 64
    problems = verify(dump(document, tmp_path / "expected.json"))
    assert len(problems) == 1, problems
    assert row["case"] in problems[0] and "the expectation was changed" in problems[0]


def test_verify_catches_severity_skip_and_schema_edits(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    rows = document["results"]
    first_must = next(r for r in rows if r["severity"] == "must")
    first_must["severity"] = "may"  # a must case passed off as a may one
    rows[1]["verdict"] = "skip"  # and a skip the capabilities do not explain
    document["summary"].update(passed=364, skipped=2)
    rows[2]["verdict"] = "skip"
    problems = verify(dump(document, tmp_path / "edited.json"))
    assert any("severity 'may', the case says 'must'" in p for p in problems), problems
    assert (
        sum("skip, yet the adapter exposes groups the case states" in p for p in problems) == 2
    ), problems
    del document["summary"]
    problems = verify(dump(document, tmp_path / "schema.json"))
    assert problems and all("schema:" in p for p in problems), problems


def test_verify_against_a_corpus_whose_expectation_changed(
    reference_run: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), corpus)
    changed = _change_expectation(corpus, "generic/finish-without-done")
    problems = verify(reference_run, corpus)
    assert any("corpus.sha256" in p for p in problems)
    digests = [p for p in problems if "expected_sha256" in p]
    assert len(digests) == 1 and changed in digests[0], problems
    proc = streamproof("verify", reference_run, "--corpus", corpus)
    assert proc.returncode == 1


def test_verify_usage_errors_exit_2(tmp_path: Path) -> None:
    assert streamproof("verify", tmp_path / "missing.json").returncode == 2
    (tmp_path / "r.json").write_text("{}")
    assert streamproof("verify", tmp_path / "r.json", "--corpus", tmp_path).returncode == 2
    assert streamproof("verify").returncode == 2
    (tmp_path / "bad.json").write_text("not json")
    proc = streamproof("verify", tmp_path / "bad.json")
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr


# badge


def test_badge_of_a_verified_run(reference_run: Path, tmp_path: Path) -> None:
    corpus = load_corpus()
    must = sum(1 for c in corpus.cases if c.runnable and c.severity == "must")
    badge = tmp_path / "badge.json"
    proc = streamproof("verify", reference_run, "--badge", badge)
    assert proc.returncode == 0, proc.stderr
    assert load(badge) == {
        "schemaVersion": 1,
        "label": f"streamproof corpus {corpus.version}",
        "message": f"must {must}/{must} cases",
        "color": "green",
    }


def test_badge_counts_failures_skips_and_cases_not_run(passing_pair: tuple[Path, str, str]) -> None:
    corpus = load_corpus()
    document = load(passing_pair[0])
    must = [c for c in corpus.cases if c.runnable and c.severity == "must"]
    ran = {r["case"] for r in document["results"] if r["severity"] == "must"}
    passed = {
        case
        for case in ran
        if all(r["verdict"] == "pass" for r in document["results"] if r["case"] == case)
    }
    badge = badge_document(document, corpus)
    unrun = len(must) - len(ran)
    assert badge["message"] == f"must {len(passed)}/{len(must)} cases ({unrun} not run)"
    assert badge["color"] == "red"
    for row in document["results"]:  # as if the adapter lacked what the failures need
        if row["case"] not in passed:
            row["verdict"] = "skip"
    badge = badge_document(document, corpus)
    skipped = len(ran) - len(passed)
    share = len(passed) * 100 // len(must)  # the scored share, rounded down
    assert badge["message"] == (
        f"must {len(passed)}/{len(passed) + unrun} cases, {share}% scored "
        f"({unrun} not run, {skipped} skipped)"
    )


def test_no_badge_for_an_unverified_file(reference_run: Path, tmp_path: Path) -> None:
    document = load(reference_run)
    document["summary"]["passed"] -= 1
    badge = tmp_path / "badge.json"
    proc = streamproof("verify", dump(document, tmp_path / "r.json"), "--badge", badge)
    assert proc.returncode == 1
    assert "no badge written" in proc.stderr
    assert not badge.exists()


# diff


def test_diff_lists_exactly_the_regression_and_the_timeout_apart(
    passing_pair: tuple[Path, str, str], regressed_run: Path, tmp_path: Path
) -> None:
    before, broken, hanging = passing_pair
    result = diff(before, regressed_run)
    assert [(c.case, c.transport, c.old, c.new) for c in result.regressions] == [
        (broken, "bytes", "pass", "fail")
    ]
    assert "status: want 'complete', got 'truncated'" in result.regressions[0].detail
    assert [(c.case, c.transport, c.old, c.new) for c in result.timeouts] == [
        (hanging, "whole", "pass", "timeout")
    ]
    assert result.progressions == result.other_changes == []
    assert result.new_cases == result.gone == [] and result.retired == {}
    assert result.has_regression
    report = tmp_path / "diff.json"
    proc = streamproof("diff", before, regressed_run, "--json", report)
    assert proc.returncode == 1, proc.stderr
    assert "regressions (1):" in proc.stdout
    assert "timeouts (pass → timeout, reported apart) (1):" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("1 regression, 1 new timeout, 0 progressions")
    data = load(report)
    assert data["regression"] is True
    assert data["counts"]["regressions"] == data["counts"]["timeouts"] == 1
    assert [c["case"] for c in data["timeouts"]] == [hanging]
    # the other way round, the same case runs are progressions and nothing regressed
    back = streamproof("diff", regressed_run, before, "--json", "-")
    assert back.returncode == 0, back.stderr
    assert sorted(c["case"] for c in json.loads(back.stdout)["progressions"]) == sorted(
        [broken, hanging]
    )


def test_diff_reads_baselines_and_results_alike(
    passing_pair: tuple[Path, str, str], regressed_run: Path, tmp_path: Path
) -> None:
    document = load(regressed_run)
    baseline = {
        "adapter": {"name": document["adapter"]["name"], "version": "x"},
        "corpus": document["corpus"],
        "transports": document["run"]["transports"],
        "seed": 1,
        "summary": document["summary"],
        "expected_sha256": {r["case"]: r["expected_sha256"] for r in document["results"]},
        "results": [
            {"case": r["case"], "transport": r["transport"], "verdict": r["verdict"]}
            for r in document["results"]
        ],
    }
    write_baseline(baseline, tmp_path / "after.baseline.json")
    assert load_run(tmp_path / "after.baseline.json").kind == "baseline"
    [problem] = verify(tmp_path / "after.baseline.json")
    assert "a baseline (run --baseline) has no severities" in problem
    from_results = diff(passing_pair[0], regressed_run)
    from_baseline = diff(passing_pair[0], tmp_path / "after.baseline.json")
    assert [(c.case, c.new) for c in from_baseline.regressions + from_baseline.timeouts] == [
        (c.case, c.new) for c in from_results.regressions + from_results.timeouts
    ]


def test_diff_usage_errors_exit_2(reference_run: Path, tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"hello": 1}')
    proc = streamproof("diff", reference_run, tmp_path / "other.json")
    assert proc.returncode == 2 and "neither a results file nor a baseline" in proc.stderr
    assert streamproof("diff", reference_run, tmp_path / "missing.json").returncode == 2
    assert streamproof("diff", reference_run).returncode == 2
    assert streamproof("diff", reference_run, reference_run).returncode == 0


def _change_expectation(corpus: Path, case: str) -> str:
    path = corpus / "cases" / case / "case.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    key = "expected" if "expected" in data else "expected_any"
    target = data[key] if key == "expected" else data[key][0]
    target["choices"][0]["finish_reason"] = "length"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return case


def test_diff_across_corpus_versions(tmp_path: Path) -> None:
    """New, retired, gone and changed-expectation cases, with a corpus copy as version 2."""
    picked = [
        "generic/finish-without-done",  # expectation changes: reference now fails it
        "sse-spec/crlf-line-endings",  # retired in 1.1.0
        "sse-spec/unknown-field-ignored",  # removed without retirement
        "sse-spec/many-tiny-events",  # unchanged
    ]
    corpus = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), corpus)
    _change_expectation(corpus, picked[0])
    for case in picked[1:3]:
        shutil.rmtree(corpus / "cases" / case)
    added = corpus / "cases/sse-spec/many-tiny-events-again"
    shutil.copytree(corpus / "cases/sse-spec/many-tiny-events", added)
    data = json.loads((added / "case.json").read_text(encoding="utf-8"))
    data["id"] = "sse-spec/many-tiny-events-again"
    (added / "case.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    manifest["retired"] = {picked[1]: "1.1.0"}
    (corpus / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (corpus / "VERSION").write_text("1.1.0\n")
    (corpus / "FORMAT").write_text("2\n")

    globs = [a for case in picked for a in ("--case", case)]
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    first = streamproof("run", "--transport", "whole,lines", "--json", old, *globs, cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    second = streamproof(
        "run",
        "--corpus",
        corpus,
        "--transport",
        "whole,lines",
        "--json",
        new,
        *globs,
        "--case",
        "sse-spec/many-tiny-events-again",
        cwd=tmp_path,
    )
    assert second.returncode == 1, second.stdout + second.stderr  # the changed expectation

    result = diff(old, new, corpus)
    assert result.new_cases == ["sse-spec/many-tiny-events-again"]
    assert result.retired == {picked[1]: "1.1.0"}
    assert result.gone == [picked[2]]
    [changed] = result.expectation_changed
    assert changed.case == picked[0] and changed.old_sha256 != changed.new_sha256
    assert [(c.transport, c.old, c.new) for c in changed.changes] == [
        ("whole", "pass", "fail"),
        ("lines", "pass", "fail"),
    ]
    # a verdict that follows a changed expectation is not the parser's regression
    assert result.regressions == result.timeouts == [] and not result.has_regression
    proc = streamproof("diff", old, new, "--corpus", corpus)
    assert proc.returncode == 0, proc.stderr
    assert f"{picked[1]} (retired in 1.1.0)" in proc.stdout
    assert "cases gone without retirement (1):" in proc.stdout
    assert "expectation changed" in proc.stdout and "new cases (1):" in proc.stdout
    # the shipped corpus retires nothing, so both missing cases are gone there
    assert diff(old, new).gone == sorted(picked[1:3])
    # restricted to some cases, the rest is neither new nor gone
    only = diff(old, new, corpus, cases=["generic/*"])
    assert only.new_cases == only.gone == [] and len(only.expectation_changed) == 1


def test_a_change_between_pass_and_xpass_is_only_relabelled(
    passing_pair: tuple[Path, str, str],
) -> None:
    document = load(passing_pair[0])
    relabelled = json.loads(json.dumps(document))
    for row in relabelled["results"]:
        row["verdict"] = {"pass": "xpass", "fail": "xfail"}.get(row["verdict"], row["verdict"])
    result = diff(run_record(document), run_record(relabelled))
    assert not result.has_regression and result.other_changes == []
    assert result.relabelled == sum(r["verdict"] in ("pass", "fail") for r in document["results"])


# write-expect


def test_write_expect_lists_todays_failures(
    passing_pair: tuple[Path, str, str], regressed_run: Path, tmp_path: Path
) -> None:
    _, broken, hanging = passing_pair
    document = load(regressed_run)
    path = tmp_path / "expect.json"
    written = write_expectations(document, path)
    assert schema_errors("expectations", load(path)) is None
    assert load(path) == written
    entries = {(e["case"], e.get("transport", "all")): e for e in written["expectations"]}
    failing = {r["case"] for r in document["results"] if r["verdict"] in ("fail", "crash")}
    # a case failing under both transports is one "all" entry; the broken and the
    # hanging case fail under one transport each, so they name it
    assert (broken, "bytes") in entries and (hanging, "whole") in entries
    assert (broken, "all") not in entries and (hanging, "all") not in entries
    assert {case for case, t in entries if t == "all"} == failing - {broken, hanging}
    # The reason names the failing groups and the divergence; the groups are listed.
    assert entries[(broken, "bytes")]["reason"] == (
        "status fails: status: want 'complete', got 'truncated'"
    )
    assert entries[(broken, "bytes")]["groups"] == ["status"]
    hung = entries[(hanging, "whole")]
    assert "timeout: " in hung["reason"] and "status" in hung["groups"]  # wrong on every group
    assert all(e["groups"] for e in written["expectations"])
    assert all("issue" not in e for e in written["expectations"])
    corpus_ids = {c.id for c in load_corpus().cases}
    loaded = load_expectations(path, corpus_ids)
    assert loaded.find(broken, "bytes") is not None and loaded.find(broken, "whole") is None
    assert len(loaded.entries) == len(written["expectations"])


def test_write_expect_round_trips_through_run(tmp_path: Path) -> None:
    """run --write-expect, then run --expect with it: all failures xfail, exit 0, same file."""
    first, second = tmp_path / "expect.json", tmp_path / "expect-again.json"
    common: list[str | Path] = ["--adapter", ADAPTERS / "naive_lines.py", "--case", SUBSET]
    common += ["--transport", "whole"]
    proc = streamproof("run", *common, "--write-expect", first, cwd=tmp_path)
    assert proc.returncode == 1 and f"expectations: {first}" in proc.stdout, proc.stderr
    document = load(first)
    assert document["expectations"] and {e["transport"] for e in document["expectations"]} == {
        "all"
    }
    document["expectations"][0]["reason"] = "splits on LF only"
    document["expectations"][0]["issue"] = "https://example.org/issues/1"
    dump(document, first)
    again = tmp_path / "results.json"
    proc = streamproof(
        "run", *common, "--expect", first, "--write-expect", second, "--json", again, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = load(again)["summary"]
    assert summary["xfailed"] == len(document["expectations"]) and summary["failed"] == 0
    # the known reason and issue are kept when the file is written again
    assert load(second)["expectations"] == document["expectations"]


def test_expectations_document_of_no_failures(reference_run: Path) -> None:
    document = expectations_document(load(reference_run))
    assert document["expectations"] == [] and schema_errors("expectations", document) is None


def _baseline(rows: list[dict[str, object]]) -> dict[str, object]:
    corpus = load_corpus()
    return {
        "adapter": {"name": "a", "version": "1"},
        "corpus": {"version": corpus.version, "sha256": corpus.sha256},
        "transports": ["whole"],
        "seed": 1,
        "summary": {},
        "results": rows,
    }


def test_diff_counts_a_group_that_starts_failing_as_a_regression() -> None:
    """A run already failing on its usage that now fails on its content too regressed."""
    case = "generic/usage-in-finish-chunk"
    old = _baseline(
        [{"case": case, "transport": "whole", "verdict": "fail", "groups": {"usage": "fail"}}]
    )
    groups = {"usage": "fail", "content": "fail"}
    new = _baseline([{"case": case, "transport": "whole", "verdict": "fail", "groups": groups}])
    found = diff(run_record(old), run_record(new))
    assert [str(c) for c in found.regressions] == [
        f"{case} [whole] fail → fail: content now fails too:"
    ]
    assert found.has_regression
    # The same failing groups: nothing changed.
    assert not diff(run_record(new), run_record(new)).regressions
