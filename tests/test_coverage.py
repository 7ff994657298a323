"""Coverage is part of every result: terminal, results JSON, HTML, badge, verify, exit status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from commands import dump, load, streamproof

from streamproof.corpus import load_corpus
from streamproof.corpus.schemas import schema_errors
from streamproof.harness.projection import plan_groups
from streamproof.reporting.coverage import coverage, coverage_line, nothing_scored
from streamproof.reporting.verify import badge_document, verify

ADAPTERS = Path(__file__).parent / "adapters"
TEXT_ONLY = ADAPTERS / "text_only.py"  # content and finish_reason only: many skips
LINE = re.compile(
    r"^  (must|should|may) (\d+) passed of (\d+) scored \((\d+) case runs"
    r"(?:, none skipped|; (\d+) skipped: (.*))\)$"
)


# the figures


def test_coverage_counts_runs_scored_passed_and_skips_by_capability() -> None:
    figures = coverage(
        [
            ("must", "pass", ()),
            ("must", "fail", ()),
            ("must", "xpass", ()),
            ("must", "skip", ["http_error"]),
            ("must", "skip", ["tool_calls", "http_error"]),
            ("should", "skip", ["usage"]),
            ("should", "crash", ()),
        ]
    )
    assert figures["by_severity"] == {
        "must": {
            "runs": 5,
            "scored": 3,
            "passed": 1,
            "skipped": 2,
            "skipped_lacking": {"http_error": 2, "tool_calls": 1},
        },
        "should": {
            "runs": 2,
            "scored": 1,
            "passed": 0,
            "skipped": 1,
            "skipped_lacking": {"usage": 1},
        },
        "may": {"runs": 0, "scored": 0, "passed": 0, "skipped": 0, "skipped_lacking": {}},
    }
    # most first, then by name; a run lacking two capabilities counts under both
    assert list(figures["skipped_lacking"].items()) == [
        ("http_error", 2),
        ("tool_calls", 1),
        ("usage", 1),
    ]
    assert coverage_line("must", figures["by_severity"]["must"]) == (
        "must 1 passed of 3 scored (5 case runs; 2 skipped: http_error 2, tool_calls 1)"
    )
    assert coverage_line("may", {**figures["by_severity"]["may"], "runs": 4}) == (
        "may 0 passed of 0 scored (4 case runs, none skipped)"
    )
    assert nothing_scored(figures) is None


def test_nothing_scored_says_why() -> None:
    skipped = coverage([("must", "skip", ["usage"]), ("may", "skip", ["usage", "role"])])
    assert nothing_scored(skipped) == (
        "nothing was scored: all 2 case runs were skipped for capabilities "
        "the adapter lacks (usage 2, role 1)"
    )
    assert nothing_scored(coverage([]), ["recorded"]) == (
        "nothing was scored: no selected case runs under --transport recorded "
        "(recorded runs only the cases that have a chunks.json)"
    )


# a run with skips


@pytest.fixture(scope="module")
def skipping_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """text_only over generic/* (whole, lines): everything it runs passes; the HTTP error
    cases and the JSON answers to non-stream requests skip (it lacks http_error and
    non_streaming), and the rest are judged on the content and finish reason they state."""
    folder = tmp_path_factory.mktemp("skips")
    out = folder / "results.json"
    proc = streamproof(
        "run",
        "--adapter",
        TEXT_ONLY,
        "--case",
        "generic/*",
        "--transport",
        "whole,lines",
        "--json",
        out,
        "--html",
        folder / "report.html",
        cwd=folder,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc.stdout


def test_results_json_carries_the_coverage_figures(skipping_run: tuple[Path, str]) -> None:
    document = load(skipping_run[0])
    assert schema_errors("results", document) is None
    summary = document["summary"]
    rows = document["results"]
    for severity, figures in summary["by_severity"].items():
        mine = [r for r in rows if r["severity"] == severity]
        assert figures["runs"] == len(mine)
        assert figures["skipped"] == sum(r["verdict"] == "skip" for r in mine)
        assert figures["scored"] == figures["runs"] - figures["skipped"]
        assert figures["passed"] == sum(r["verdict"] == "pass" for r in mine)
    must = summary["by_severity"]["must"]
    assert must["scored"] > must["skipped"] > 0 and must["passed"] == must["scored"]
    lacking = summary["skipped_lacking"]
    assert "content" not in lacking and "finish_reason" not in lacking
    corpus = {c.id: c for c in load_corpus().cases}
    http = sum(1 for r in rows if r["verdict"] == "skip" and corpus[r["case"]].status >= 400)
    assert lacking["http_error"] == http > 0
    # A case that states neither content nor a finish reason (only usage, say) skips too.
    for row in rows:
        case = corpus[row["case"]]
        plan = plan_groups(case, {"content", "finish_reason"})
        assert (row["verdict"] == "skip") == (bool(plan.gap) or not plan.exposed), row["case"]
    groups = summary["groups"]
    assert groups["finish_reason"]["compared"] > 0 and groups["usage"]["compared"] == 0
    assert groups["usage"]["stated"] > 0  # stated, not exposed: said, never hidden
    # The capability gaps: each capability text_only lacks, with the cases that need it.
    gaps = document["capability_gaps"]
    assert "content" not in gaps and "finish_reason" not in gaps
    states_usage = {r["case"] for r in rows if "usage" in r["not_exposed"]}
    assert set(gaps["usage"]) == states_usage and states_usage
    http = {r["case"] for r in rows if corpus[r["case"]].status >= 400}
    assert set(gaps["http_error"]) == http
    assert verify(skipping_run[0]) == []


def test_terminal_and_html_say_how_much_was_scored(skipping_run: tuple[Path, str]) -> None:
    out, stdout = skipping_run
    summary = load(out)["summary"]
    lines = [line for line in stdout.splitlines() if LINE.match(line)]
    assert [LINE.match(line).group(1) for line in lines] == ["must", "should", "may"]  # type: ignore[union-attr]
    for line in lines:
        severity, passed, scored, runs, skipped, reasons = LINE.match(line).groups()  # type: ignore[union-attr]
        figures = summary["by_severity"][severity]
        assert (int(passed), int(scored), int(runs)) == (
            figures["passed"],
            figures["scored"],
            figures["runs"],
        )
        assert int(skipped) == figures["skipped"]
        shown = dict(item.rsplit(" ", 1) for item in reasons.split(", "))
        assert {k: int(v) for k, v in shown.items()} == figures["skipped_lacking"]
    html = (out.parent / "report.html").read_text(encoding="utf-8")
    assert f"<li>{lines[0].strip()}</li>" in html
    # Per field group, in the terminal and the report alike.
    judged = [line.strip() for line in stdout.splitlines() if "cases compared" in line]
    assert any(line.startswith("content right on ") for line in judged)
    assert "    usage not exposed: " in stdout
    for line in judged:
        assert f"<li>{line}</li>" in html


def test_verify_rejects_edited_coverage_figures(
    skipping_run: tuple[Path, str], tmp_path: Path
) -> None:
    document = load(skipping_run[0])
    document["summary"]["by_severity"]["must"]["skipped"] -= 5
    document["summary"]["by_severity"]["must"]["scored"] += 5
    document["summary"]["skipped_lacking"]["http_error"] = 0
    del document["summary"]["by_severity"]["should"]["skipped_lacking"]["http_error"]
    problems = verify(dump(document, tmp_path / "edited.json"))
    real = load(skipping_run[0])["summary"]
    assert sorted(p.split(": ", 1)[1] for p in problems) == sorted(
        [
            f"summary.by_severity.must.scored: the file says "
            f"{real['by_severity']['must']['scored'] + 5}, its results add up to "
            f"{real['by_severity']['must']['scored']}",
            f"summary.by_severity.must.skipped: the file says "
            f"{real['by_severity']['must']['skipped'] - 5}, its results add up to "
            f"{real['by_severity']['must']['skipped']}",
            f"summary.by_severity.should.skipped_lacking.http_error: the file says nothing, "
            f"its results add up to "
            f"{real['by_severity']['should']['skipped_lacking']['http_error']}",
            f"summary.skipped_lacking.http_error: the file says 0, its results add up to "
            f"{real['skipped_lacking']['http_error']}",
        ]
    ), problems
    proc = streamproof("verify", tmp_path / "edited.json", "--badge", tmp_path / "badge.json")
    assert proc.returncode == 1 and not (tmp_path / "badge.json").exists()


def test_a_file_without_coverage_figures_still_verifies(
    skipping_run: tuple[Path, str], tmp_path: Path
) -> None:
    document = load(skipping_run[0])
    del document["summary"]["by_severity"], document["summary"]["skipped_lacking"]
    assert schema_errors("results", document) is None  # files from before the figures
    assert verify(dump(document, tmp_path / "old.json")) == []


# the badge


def test_badge_of_a_run_with_skipped_must_cases_shows_the_scored_share(tmp_path: Path) -> None:
    corpus = load_corpus()
    out = tmp_path / "results.json"
    proc = streamproof("run", "--adapter", TEXT_ONLY, "--transport", "whole", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    must = [c for c in corpus.cases if c.runnable and c.severity == "must"]
    caps = {"content", "finish_reason"}
    plans = [plan_groups(c, caps) for c in must]
    scored = [p for p in plans if not p.gap and p.exposed]
    assert 0 < len(scored) < len(must)
    badge = tmp_path / "badge.json"
    proc = streamproof("verify", out, "--badge", badge)
    assert proc.returncode == 0, proc.stderr
    share = len(scored) * 100 // len(must)
    skipped = len(must) - len(scored)
    compared = sum(len(p.exposed) for p in scored)
    stated = sum(len(p.stated) for p in plans)
    fields = compared * 100 // stated
    assert 0 < fields < 100
    assert load(badge)["message"] == (
        f"must {len(scored)}/{len(scored)} cases, {share}% scored ({skipped} skipped), "
        f"{fields}% of fields compared"
    )
    assert load(badge)["color"] == "yellow"  # every scored case passed, yet not a full pass


def test_badge_share_rounds_down_and_never_reads_full() -> None:
    corpus = load_corpus()
    must = [c for c in corpus.cases if c.runnable and c.severity == "must"]
    rows = [
        {"case": c.id, "transport": "whole", "severity": "must", "verdict": "pass"} for c in must
    ]
    document = {"corpus": {"version": corpus.version}, "results": rows}
    assert badge_document(document, corpus)["message"] == f"must {len(must)}/{len(must)} cases"
    assert badge_document(document, corpus)["color"] == "green"
    rows[0]["verdict"] = "skip"  # one skipped case of hundreds: 99%, not 100%
    badge = badge_document(document, corpus)
    assert badge["message"] == (
        f"must {len(must) - 1}/{len(must) - 1} cases, 99% scored (1 skipped)"
    )
    assert badge["color"] == "yellow"
    for row in rows[1:]:
        row["verdict"] = "skip"
    rows[1]["verdict"] = "pass"
    assert badge_document(document, corpus)["message"] == (
        f"must 1/1 cases, <1% scored ({len(must) - 1} skipped)"
    )


# a run that scores nothing


def test_a_run_where_every_case_is_skipped_exits_2(tmp_path: Path) -> None:
    """content_only lacks http_error: every HTTP error case is a capability gap."""
    out = tmp_path / "results.json"
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "content_only.py",
        "--case",
        "generic/http-*",
        "--transport",
        "whole",
        "--json",
        out,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert re.fullmatch(
        r"streamproof: nothing was scored: all (\d+) case runs were skipped for capabilities "
        r"the adapter lacks \(http_error \1\)\n",
        proc.stderr,
    ), proc.stderr
    summary = load(out)["summary"]  # the files say so too
    assert summary["skipped"] == summary["total"] > 0
    assert "must 0 passed of 0 scored" in proc.stdout


def test_a_run_with_no_case_run_exits_2(tmp_path: Path) -> None:
    proc = streamproof("run", "--case", "sse-spec/*", "--transport", "recorded", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == (
        "streamproof: nothing was scored: no selected case runs under --transport recorded "
        "(recorded runs only the cases that have a chunks.json)\n"
    )
