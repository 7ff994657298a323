"""The cross-parser matrix over results files of real runs (streamproof.matrix)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from browser import MISSING, Browser

from streamproof.corpus import Corpus, load_corpus
from streamproof.reporting.matrix import WIRE_LIMIT, MatrixError, write_matrix

ADAPTERS = Path(__file__).parent / "adapters"
CR = "sse-spec/cr-line-endings"  # events framed by lone CRs: the naive parser crashes
CRLF = "sse-spec/crlf-line-endings"  # every adapter passes
EMPTY = "sse-spec/empty-lines-before-first-event"  # every adapter passes (severity should)
INCREMENTAL = "generic/content-surfaces-per-event"  # buffers fails it under bytes only
NULL = "generic/content-null-in-delta"  # every adapter passes
CASES = [CR, CRLF, EMPTY, INCREMENTAL, NULL]
# (adapter spec, results file name); content_only declares only `content`, so
# it is judged on the content (and the status) of each case, not its finish reason.
# The buffering parser claims incremental, so under bytes it fails every streamed
# case; it runs on INCREMENTAL alone (a missing result tells no parsers apart).
RUNS = [
    ("reference", "reference.json", CASES),
    (str(ADAPTERS / "naive_lines.py"), "naive.json", CASES),
    (str(ADAPTERS / "buffers.py"), "buffers.json", [INCREMENTAL]),
    (str(ADAPTERS / "content_only.py"), "content_only.json", CASES),
]


class Page(HTMLParser):
    """The elements of a page by tag: (attributes, text inside) each, plus the tags seen."""

    VOID = frozenset({"meta", "input", "br", "hr", "img", "link"})

    def __init__(self, html: str) -> None:
        super().__init__()
        self.html = html
        self.open: list[tuple[str, dict[str, str], list[str]]] = []
        self.found: list[tuple[str, dict[str, str], str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.open.append((tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            name, attrs, text = self.open.pop()
            self.found.append((name, attrs, "".join(text)))
            if self.open:
                self.open[-1][2].extend(text)
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1][2].append(data)

    def all(self, tag: str, **wanted: str) -> list[tuple[dict[str, str], str]]:
        return [
            (attrs, text)
            for name, attrs, text in self.found
            if name == tag and all(attrs.get(k.replace("_", "-")) == v for k, v in wanted.items())
        ]

    def one(self, tag: str, **wanted: str) -> tuple[dict[str, str], str]:
        found = self.all(tag, **wanted)
        assert len(found) == 1, (tag, wanted, found)
        return found[0]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("results")
    paths = []
    for spec, name, cases in RUNS:
        out = folder / name
        proc = subprocess.run(
            [sys.executable, "-m", "streamproof", "run", "--adapter", spec, "--json", str(out)]
            + ["--transport", "whole,bytes", "--seed", "1", "--html", str(folder / "r.html")]
            + [arg for case in cases for arg in ("--case", case)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        paths.append(out)
    return paths


@pytest.fixture(scope="module")
def matrix(results: list[Path], corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("matrix") / "matrix.html"
    write_matrix(results, out, corpus)
    return out


@pytest.fixture(scope="module")
def page(matrix: Path) -> Page:
    return Page(matrix.read_text(encoding="utf-8"))


def row_cells(page: Page, case: str) -> list[tuple[dict[str, str], str]]:
    """The verdict cells of a case's row, one per adapter, in file order."""
    html = page.html
    start = html.index(f'id="case-{case}"')
    row = Page(html[html.rindex("<tr", 0, start) : html.index("</tr>", start) + 5])
    return [cell for cell in row.all("td") if "v" in cell[0].get("class", "").split()]


def test_one_self_contained_file(matrix: Path, corpus: Corpus) -> None:
    html = matrix.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "<link" not in html and "url(" not in html and "@import" not in html
    assert "<script src" not in html and html.count("<script>") == 1
    assert list(matrix.parent.iterdir()) == [matrix]
    assert corpus.version in html and corpus.sha256 in html


def test_header_names_each_adapter_and_its_run(page: Page, results: list[Path]) -> None:
    rows = page.all("tr")
    for path in results:
        document = json.loads(path.read_text())
        row = next(text for _, text in rows if path.name in text)
        assert document["adapter"]["name"] in row
        assert document["run"]["date"] in row
        assert "whole, bytes" in row and "1" in row  # transports and seed


def test_provider_by_adapter_pass_rates(page: Page) -> None:
    def rate(provider: str, adapter: str) -> tuple[str, str, str, str]:
        attrs, text = page.one("td", data_provider=provider, data_adapter=adapter)
        shown = " ".join(text.split())
        return attrs["data-passed"], attrs["data-ran"], attrs["data-skipped"], shown

    # sse-spec: 3 cases × whole, bytes; the naive parser crashes both runs of CR.
    # It declares no capabilities, so it has them all: every field stated is compared.
    assert rate("sse-spec", "naive-lines unknown") == (
        "4",
        "6",
        "0",
        "66.7% 4/6 · 100% of fields compared",
    )
    assert rate("sse-spec", "reference 0.1.0")[:3] == ("6", "6", "0")
    # generic: the buffering parser fails INCREMENTAL under bytes, passes it under whole.
    assert rate("generic", "buffers unknown") == (
        "1",
        "2",
        "0",
        "50% 1/2 · 100% of fields compared",
    )
    # content_only is judged on the content and the status of each case, not
    # its finish reason: a pass rate, with the share of the fields compared.
    assert rate("sse-spec", "content_only unknown") == (
        "6",
        "6",
        "0",
        "100% 6/6 · 67% of fields compared",
    )
    assert rate("(overall)", "naive-lines unknown")[:3] == ("6", "10", "0")
    assert rate("(overall)", "content_only unknown")[:3] == ("10", "10", "0")


def test_a_rate_over_few_runs_or_few_fields_is_never_solid(page: Page) -> None:
    """Ten case runs, or two thirds of the fields, make a faint cell whatever the rate."""
    for attrs, _ in page.all("td"):
        classes = attrs.get("class", "").split()
        if "rate" in classes and "none" not in classes and attrs.get("data-ran"):
            assert "faint" in attrs["class"].split(), attrs
            assert " 20% " in attrs["style"], attrs


def test_the_group_table_counts_cases_per_group(page: Page) -> None:
    content = page.all("td", data_group="content")
    # reference, naive-lines, content_only: 5 cases state content; buffers ran 1
    assert [(a["data-stated"], a["data-compared"], a["data-passed"]) for a, _ in content] == [
        ("5", "5", "5"),
        ("5", "5", "4"),  # CR crashes; INCREMENTAL fails on its deltas, not its text
        ("1", "1", "1"),
        ("5", "5", "5"),
    ]
    finish = [a for a, t in page.all("td", data_group="finish_reason") if "not exposed" in t]
    assert len(finish) == 1  # content_only does not expose finish reasons


def test_pruned_view_folds_cases_every_adapter_handles_alike(page: Page) -> None:
    fold, text = page.one("tr", **{"class": "fold", "data_count": "2"})
    assert fold["id"].startswith("fold-sse-spec-")
    assert " ".join(text.split()).endswith("2 cases alike in every adapter: pass")
    # content_only passes what it is judged on: CRLF and EMPTY fold.
    folded = {a["id"] for a, _ in page.all("tr") if a.get("data-fold") == fold["id"]}
    assert folded == {f"case-{CRLF}", f"case-{EMPTY}"}
    telling = {a["id"] for a, _ in page.all("tr") if "case" in a.get("class", "").split()}
    telling -= {a["id"] for a, _ in page.all("tr") if "data-fold" in a}
    assert telling == {f"case-{CR}", f"case-{INCREMENTAL}"}


def test_failing_cell_carries_its_first_divergence(page: Page, results: list[Path]) -> None:
    reference, naive, buffers, content_only = row_cells(page, INCREMENTAL)
    assert reference[1].strip() == "pass" and "title" not in reference[0]
    # Mixed transports: the worst verdict and the transports that failed.
    assert buffers[0]["class"] == "v v-fail"
    assert buffers[1].split()[:2] == ["fail", "bytes"]
    assert buffers[0]["title"].startswith("bytes: fail: incremental: choice 0:")
    assert buffers[0]["title"] in buffers[1]  # the expandable detail says the same
    # Failed under every transport: the verdict alone, the transports in the detail.
    assert naive[1].split()[:2] == ["fail", "whole,"]
    assert naive[0]["title"].startswith("whole, bytes: fail: ")
    # The same divergence under every transport: said once.
    naive_rows = [r for r in json.loads(results[1].read_text())["results"] if r["case"] == CR]
    cell = row_cells(page, CR)[1]
    assert cell[0]["title"] == f"whole, bytes: crash: {naive_rows[0]['message']}"
    assert content_only[0]["class"] == "v v-pass"  # judged on its content alone


def test_wire_view_only_for_cases_some_adapter_did_not_pass(page: Page, corpus: Corpus) -> None:
    wires = page.all("pre", **{"class": "wire"})
    assert len(wires) == 2  # CR and INCREMENTAL
    html = page.html
    cr = html.index(f'id="case-{CR}"')
    assert html.index('class="wire-row"', cr) < html.index('<tr class="case', cr + 1)
    body = next(c for c in corpus.cases if c.id == CR).body
    assert len(body) < WIRE_LIMIT and b"\r" in body
    wire = next(text for _, text in wires if "\\r\n" in text)
    assert "\r" not in wire and wire.count("\\r") == body.count(b"\r")
    assert "only for the 2 cases" in " ".join(html.split())


def test_results_of_another_corpus_are_marked(
    results: list[Path], corpus: Corpus, tmp_path: Path
) -> None:
    document = json.loads(results[1].read_text())
    document["corpus"] = {"version": "0.9.0", "sha256": "0" * 64}
    gone = dict(document["results"][0], case="sse-spec/a-case-since-removed")
    stale = dict(document["results"][0], expected_sha256="f" * 64)
    document["results"] = [stale, gone, *document["results"][1:]]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    out = tmp_path / "matrix.html"
    write_matrix([results[0], old], out, corpus)
    page = Page(out.read_text(encoding="utf-8"))
    assert any("0.9.0, another corpus" in text for _, text in page.all("td"))
    attrs, text = page.one("tr", id="case-sse-spec/a-case-since-removed")
    assert "gone" in attrs["class"] and f"not in corpus {corpus.version}" in text
    first = document["results"][0]["case"]
    assert "older expectation" in row_cells(page, first)[1][0]["title"]
    assert row_cells(page, "sse-spec/a-case-since-removed")[0][1] == "—"  # reference lacks it


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ('{"tool": {"version": "1"}}', "'corpus' is a required property"),
        ("[]", "is not of type 'object'"),
    ],
)
def test_a_bad_results_file_is_a_one_line_error(
    content: str, problem: str, results: list[Path], corpus: Corpus, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(MatrixError) as caught:
        write_matrix([results[0], bad], tmp_path / "m.html", corpus)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{bad}: ") and problem in message
    assert not (tmp_path / "m.html").exists()


def test_a_missing_results_file_is_a_one_line_error(corpus: Corpus, tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match=r"gone\.json: cannot read: No such file"):
        write_matrix([tmp_path / "gone.json"], tmp_path / "m.html", corpus)


@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_toggles_and_filters_in_a_browser(matrix: Path, tmp_path: Path) -> None:
    shown = (
        "return [...document.querySelectorAll('table.matrix tr.case, table.matrix tr.fold')]"
        ".filter(r => r.checkVisibility()).map(r => r.id + ' ' + r.innerText.split(/\\s+/)[0]"
        " + (r.classList.contains('fold') ? ' ' + r.querySelector('.n').innerText : ''))"
    )
    browser = Browser(tmp_path)
    try:
        browser.open(matrix.as_uri())
        pruned: Any = browser.run(shown)
        # generic before sse-spec before the providers
        assert [r.split()[0] for r in pruned if r.startswith("case-")] == [
            f"case-{INCREMENTAL}",
            f"case-{CR}",
        ]
        assert sum(r.startswith("fold-") for r in pruned) == 2  # generic and sse-spec
        browser.run("document.getElementById('view-full').click()")
        assert len([r for r in browser.run(shown) if r.startswith("case-")]) == 5
        browser.run("document.getElementById('view-pruned').click()")
        browser.run("document.querySelector('input[value=should]').click()")  # hide EMPTY
        fold = [r for r in browser.run(shown) if r.startswith("fold-sse-spec")]
        assert fold[0].endswith(" 1")  # the fold counts what the filter leaves
        browser.run(
            "const s = document.getElementById('provider'); s.value = 'generic';"
            "s.dispatchEvent(new Event('change', {bubbles: true}))"
        )
        assert all("generic" in r for r in browser.run(shown))
        wire = "return document.querySelector('tr.wire-row').checkVisibility()"
        assert not browser.run(wire)
        browser.run("document.querySelector('button.wire-toggle').click()")
        assert browser.run(wire)
    finally:
        browser.close()


def _report_wired() -> bool:
    probe = [sys.executable, "-m", "streamproof", "report", "--help"]
    return subprocess.run(probe, capture_output=True, check=False, timeout=60).returncode == 0


@pytest.mark.skipif(not _report_wired(), reason="`streamproof report` is not wired into the CLI")
def test_report_command(results: list[Path], tmp_path: Path) -> None:
    def report(*args: str | Path) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "streamproof", "report", *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)

    out = tmp_path / "matrix.html"
    proc = report(*results, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    proc = report(results[0], bad, "--out", tmp_path / "other.html")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"streamproof: {bad}: not a results file: ")
    assert proc.stderr.count("\n") == 1


def test_a_matrix_can_be_built_from_baselines(tmp_path: Path) -> None:
    import subprocess
    import sys

    from streamproof.corpus import load_corpus
    from streamproof.reporting.matrix import write_matrix

    baseline = tmp_path / "naive.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "streamproof",
            "run",
            "--adapter",
            str(Path(__file__).parent / "adapters" / "naive_lines.py"),
            "--transport",
            "whole",
            "--case",
            "sse-spec/cr-line-endings",
            "--case",
            "generic/text-split-per-token",
            "--baseline",
            str(baseline),
        ],
        capture_output=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    out = tmp_path / "matrix.html"
    write_matrix([baseline], out, load_corpus())
    html = out.read_text(encoding="utf-8")
    assert "naive-lines" in html
    assert "sse-spec/cr-line-endings" in html
