from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest
from commands import streamproof

from streamproof.corpus import load_corpus
from streamproof.corpus.schemas import schema_errors
from streamproof.resources import data_path

ADAPTERS = Path(__file__).parent / "adapters"


@pytest.fixture
def broken_corpus(tmp_path: Path) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), corpus)
    bad = corpus / "cases/generic/finish-without-done/case.json"
    bad.write_text('{"id": "generic/finish-without-done", ')
    return corpus, bad


def test_run_reference_over_four_transports_writes_valid_json(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    proc = streamproof(
        "run",
        "--adapter",
        "reference",
        "--transport",
        "whole,lines,bytes,random",
        "--seed",
        "7",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    document = json.loads(out.read_text())
    assert schema_errors("results", document) is None
    summary = document["summary"]
    assert summary["failed"] == summary["errors"] == 0
    assert summary["passed"] == summary["total"] - summary["skipped"] >= 40 * 4
    # Only the faults on a real connection skip: they need run --http.
    skipped = {r["case"].split("/")[0] for r in document["results"] if r["verdict"] == "skip"}
    assert skipped == {"wire"}
    assert {r["transport"] for r in document["results"]} == {"whole", "lines", "bytes", "random"}
    assert document["corpus"]["version"] == (data_path("corpus") / "VERSION").read_text().strip()
    assert "0 failed" in proc.stdout
    assert document["run"]["seed"] == 7
    assert "--seed 7" in proc.stdout


def test_failing_adapter_exits_1_with_first_divergences() -> None:
    proc = streamproof("run", "--adapter", ADAPTERS / "naive_lines.py", "--transport", "whole")
    assert proc.returncode == 1
    line = next(x for x in proc.stdout.splitlines() if "sse-spec/cr-line-endings" in x)
    assert line.startswith(("FAIL", "CRASH"))
    assert "choices[0]" in line or "Error" in line
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("adapter", "verdict", "detail"),
    [
        ("raises", "CRASH", "ValueError: parser exploded on two lines"),
        ("hangs", "TIMEOUT", "no reply within 0.5 s"),
        ("returns_list", "FAIL", "adapter returned list, not an outcome object"),
        ("exits", "CRASH", "adapter process died (exit code 3): parser giving up"),
    ],
)
def test_misbehaving_adapters_finish_the_run(adapter: str, verdict: str, detail: str) -> None:
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / f"{adapter}.py",
        "--transport",
        "whole",
        "--case",
        "generic/http-*",
        "--timeout",
        "0.5",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = [x for x in proc.stdout.splitlines() if x.startswith(verdict)]
    cases = [c.id for c in load_corpus().cases if fnmatch.fnmatch(c.id, "generic/http-*")]
    assert len(lines) == len(cases) >= 5, proc.stdout  # every case reported, the run went on
    assert all(detail in x for x in lines)
    assert "Traceback" not in proc.stdout + proc.stderr


def test_expectations_turn_failures_into_xfail_and_passes_into_xpass(tmp_path: Path) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(
        json.dumps(
            {
                "expectations": [
                    {
                        "case": "sse-spec/cr-line-endings",
                        "reason": "splits on LF only",
                        "issue": "https://example.org/issues/1",
                    },
                    {
                        "case": "generic/text-split-per-token",
                        "transport": "whole",
                        "reason": "stale",
                    },
                ]
            }
        )
    )
    out = tmp_path / "out.json"
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "naive_lines.py",
        "--transport",
        "whole",
        "--case",
        "sse-spec/cr-line-endings",
        "--case",
        "generic/text-split-per-token",
        "--expect",
        expect,
        "--json",
        out,
    )
    assert proc.returncode == 1, proc.stdout
    verdicts = {r["case"]: r["verdict"] for r in json.loads(out.read_text())["results"]}
    assert verdicts == {
        "sse-spec/cr-line-endings": "xfail",
        "generic/text-split-per-token": "xpass",
    }
    assert "XPASS   generic/text-split-per-token" in proc.stdout
    assert "remove the entry" in proc.stdout


def test_expectations_naming_an_unknown_case_are_a_usage_error(tmp_path: Path) -> None:
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps({"expectations": [{"case": "generic/gone", "reason": "x"}]}))
    proc = streamproof("run", "--expect", expect)
    assert proc.returncode == 2
    assert "'generic/gone' is not a case of this corpus" in proc.stderr


def test_a_buffering_parser_that_claims_incremental_fails_stream_cases_under_bytes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.json"
    proc = streamproof(
        "run", "--adapter", ADAPTERS / "buffers.py", "--transport", "whole,bytes", "--json", out
    )
    assert proc.returncode == 1
    document = json.loads(out.read_text())
    results = document["results"]
    failed = {(r["case"], r["transport"]) for r in results if r["verdict"] not in ("pass", "skip")}
    incremental = {
        "generic/content-surfaces-per-event",
        "generic/two-choices-surface-per-event",
        "sse-spec/crlf-content-surfaces-per-event",
    }
    # The check covers every streamed case for an adapter that claims
    # incremental, not only the three that require it; under whole nothing
    # can be late.
    assert {(case, "bytes") for case in incremental} < failed
    assert ("generic/text-split-per-token", "bytes") in failed
    assert {t for _, t in failed} == {"bytes"}
    assert all(
        r["message"].startswith("incremental: ")
        for r in results
        if r["verdict"] not in ("pass", "skip")
    )
    checked = [r for r in results if r.get("incremental")]
    assert document["summary"]["incremental_checked"] == len(checked) > len(failed)


def test_jobs_give_the_same_verdicts(tmp_path: Path) -> None:
    verdicts = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.json"
        streamproof(
            "run",
            "--adapter",
            ADAPTERS / "naive_lines.py",
            "--transport",
            "whole,bytes,random",
            "--seed",
            "5",
            "--jobs",
            jobs,
            "--json",
            out,
        )
        # Everything but the time each run took is the same with a pool of processes.
        verdicts.append(
            [
                {k: v for k, v in r.items() if k != "seconds"}
                for r in json.loads(out.read_text())["results"]
            ]
        )
    assert verdicts[0] == verdicts[1]
    assert {r["verdict"] for r in verdicts[0]} >= {"pass", "fail", "crash"}


def test_default_run_writes_an_html_report_and_reports_junit(tmp_path: Path) -> None:
    proc = streamproof("run", "--transport", "whole", "--junit", tmp_path / "j.xml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "report: streamproof-report.html" in proc.stdout
    html = (tmp_path / "streamproof-report.html").read_text()
    assert "streamproof-summary" in html
    junit = ElementTree.parse(tmp_path / "j.xml").getroot()
    cases = junit.findall(".//testcase")
    assert len(cases) >= 40
    assert not junit.findall(".//failure")


def test_an_adapter_that_cannot_start_is_a_usage_error() -> None:
    proc = streamproof("run", "--adapter", "cmd:/nonexistent/adapter")
    assert proc.returncode == 2
    assert "cannot start '/nonexistent/adapter'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_fail_on_must_ignores_lesser_failures() -> None:
    # The naive parser fails a "may" case; with --fail-on must only musts count.
    proc = streamproof(
        "run",
        "--adapter",
        ADAPTERS / "naive_lines.py",
        "--transport",
        "whole",
        "--case",
        "sse-spec/last-chunk-without-blank-line-no-done",
        "--case",
        "generic/text-split-per-token",
        "--fail-on",
        "must",
    )
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("command", ["run", "validate", "list"])
def test_broken_case_file_is_exit_2_and_one_line(
    command: str, broken_corpus: tuple[Path, Path]
) -> None:
    corpus, bad = broken_corpus
    proc = streamproof(command, "--corpus", corpus)
    assert proc.returncode == 2
    lines = [x for x in proc.stderr.splitlines() if str(bad) in x]
    assert len(lines) == 1 and "not valid JSON" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "--adapter", "nope"), "is not a built-in adapter"),
        (("run", "--transport", "pigeon"), "unknown"),
        (("run", "--case", "zzz/*"), "matches no case"),
        (("show", "zzz/none"), "no case 'zzz/none'"),
        (("run", "--corpus", "/nonexistent"), "not a corpus"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    proc = streamproof(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_ok() -> None:
    proc = streamproof("validate")
    assert proc.returncode == 0
    assert proc.stdout.startswith("ok: ")


def test_show_makes_invisible_bytes_visible() -> None:
    proc = streamproof("show", "sse-spec/crlf-line-endings", "--transport", "lines")
    assert proc.returncode == 0
    assert "\\r\\n" not in proc.stdout  # lines splits CRLF: the mark stands between them
    assert "\\r¦\\n" in proc.stdout
    bom = streamproof("show", "sse-spec/bom-at-start")
    assert "<BOM>data:" in bom.stdout
    assert '"expected"' not in bom.stdout and "--- expected ---" in bom.stdout


def test_show_names_the_route_a_relayed_stream_came_through() -> None:
    # A stream relayed by a router is filed under the backend its route names.
    proc = streamproof("show", "novita/router-stream-sla-metrics-usage-chunk")
    assert proc.returncode == 0
    assert "\nroute: router.huggingface.co/novita/v3/openai\n" in proc.stdout
    direct = streamproof("show", "sse-spec/bom-at-start")
    assert "\nroute: " not in direct.stdout


def test_list_names_every_case() -> None:
    proc = streamproof("list")
    assert proc.returncode == 0
    assert "generic/usage-in-empty-choices-chunk" in proc.stdout


def test_recorded_transport_runs_only_cases_with_chunks(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), corpus)
    case = corpus / "cases/generic/text-split-per-token"
    size = len((case / "response.sse").read_bytes())
    (case / "chunks.json").write_text(json.dumps({"sizes": [7, size - 7]}))
    out = tmp_path / "out.json"
    proc = streamproof(
        "run", "--corpus", corpus, "--transport", "recorded", "--json", out, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads(out.read_text())["results"]
    with_chunks = {
        p.parent.relative_to(corpus / "cases").as_posix()
        for p in (corpus / "cases").glob("*/*/chunks.json")
    }
    assert "generic/text-split-per-token" in with_chunks
    assert {r["case"] for r in results} == with_chunks
    assert {r["transport"] for r in results} == {"recorded"}


def test_list_and_run_one_provider(tmp_path: Path) -> None:
    listed = streamproof("list", "--provider", "deepseek")
    assert listed.returncode == 0
    ids = [line.split()[0] for line in listed.stdout.splitlines()[:-1]]
    assert ids and all(i.startswith("deepseek/") for i in ids)
    out = tmp_path / "out.json"
    proc = streamproof(
        "run",
        "--adapter",
        "reference",
        "--case",
        "deepseek/*",
        "--transport",
        "whole",
        "--json",
        out,
    )
    assert proc.returncode == 0
    assert {r["case"] for r in json.loads(out.read_text())["results"]} == set(ids)
    unknown = streamproof("list", "--provider", "nobody")
    assert unknown.returncode == 2 and "no case of provider" in unknown.stderr


def test_baseline_is_the_same_bytes_when_nothing_changed(tmp_path: Path) -> None:
    files = []
    for jobs in ("1", "2"):
        out = tmp_path / f"baseline{jobs}.json"
        streamproof(
            "run",
            "--adapter",
            ADAPTERS / "naive_lines.py",
            "--transport",
            "whole,random",
            "--seed",
            "9",
            "--jobs",
            jobs,
            "--case",
            "sse-spec/*",
            "--baseline",
            out,
        )
        files.append(out.read_bytes())
    assert files[0] == files[1]
    document = json.loads(files[0])
    assert set(document) == {
        "adapter",
        "corpus",
        "transports",
        "seed",
        "summary",
        "expected_sha256",
        "results",
    }
    row_keys = {"case", "transport", "verdict", "first_divergence", "groups", "not_exposed"}
    assert all(set(r) <= row_keys for r in document["results"])
    # The groups a run compared, with their verdicts, so diff sees one start failing.
    assert all(r["groups"] for r in document["results"] if r["verdict"] != "skip")
    assert all(
        "fail" in r["groups"].values() for r in document["results"] if r["verdict"] == "fail"
    )
    assert any(r["verdict"] == "fail" and r["first_divergence"] for r in document["results"])


def test_http_runs_match_in_process_runs(tmp_path: Path) -> None:
    pytest.importorskip(
        "openai", reason="needs the openai extra: pip install 'streamproof[openai]'"
    )
    verdicts = []
    for extra in ([], ["--http"]):
        out = tmp_path / f"out{len(extra)}.json"
        proc = streamproof(
            "run",
            "--adapter",
            "openai-python",
            "--transport",
            "whole,lines",
            "--case",
            "generic/*",
            *extra,
            "--json",
            out,
        )
        assert proc.returncode in (0, 1), proc.stderr
        verdicts.append(
            {
                (r["case"], r["transport"]): r["verdict"]
                for r in json.loads(out.read_text())["results"]
            }
        )
    assert verdicts[0] == verdicts[1]


def test_http_needs_an_adapter_with_call() -> None:
    proc = streamproof("run", "--adapter", "reference", "--http", "--transport", "whole")
    assert proc.returncode == 2
    assert "--http is not applicable" in proc.stderr
