"""The HTML report's pieces, built from results: failures by case, where a
failure arises in the body, the marked JSON, the skips and the page's size.

The browser's view of the same pieces is in ``test_report_browser.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamproof.corpus import Case, Corpus, load_corpus
from streamproof.harness.comparison import MISSING, Divergence, compare
from streamproof.harness.engine import Result, Verdict
from streamproof.reporting.failure_groups import (
    anchor,
    case_groups,
    reproduce,
    skipped_by_capability,
)
from streamproof.reporting.fragments import failure_html, failures_html, summary_html
from streamproof.reporting.json_view import json_lines, marked_paths
from streamproof.reporting.pinpoint import pinpoint
from streamproof.reporting.wire import event_spans, wire_window

CR = "sse-spec/cr-line-endings"  # six events framed by lone CRs; content in events 2, 3 and 4
# Where CR's events stop (each ends with the CR of its blank line), read off its bytes.
CR_EVENTS = [195, 375, 556, 739, 905, 919]
# The report's own pieces for a 1000-failure run stay under this many bytes per
# failure (about 3,600 with the shipped corpus; benchmarks/bench_report.py
# gives the figure for a whole page, pytest-html's rows included).
BYTES_PER_FAILURE = 5_000


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def cr(corpus: Corpus) -> Case:
    return next(c for c in corpus.cases if c.id == CR)


def failed(case: Case, transport: str, outcome: dict[str, object] | None) -> Result:
    mismatches = compare(case.data["expected"], outcome) if outcome is not None else []
    verdict = Verdict.FAIL if outcome is not None else Verdict.CRASH
    return Result(case, transport, verdict, mismatches, "" if outcome else "boom", 0.0, outcome)


def lost_last_piece(finish: str | None = "stop") -> dict[str, object]:
    choice: dict[str, object] = {"index": 0, "content": "One, two,"}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"status": "complete", "choices": [choice]}


# -- the wire window ---------------------------------------------------------


def test_events_end_with_their_blank_line(cr: Case) -> None:
    assert [stop for _, stop in event_spans(cr.body)] == CR_EVENTS
    assert event_spans(b'{"not": "a stream"}') == [(0, 19)]
    assert event_spans(b"data: a\n\ndata: b") == [(0, 9), (9, 16)]  # an unclosed tail


def test_window_centres_on_the_event_and_marks_reads_only_inside(cr: Case) -> None:
    every_byte = list(range(1, len(cr.body) + 1))
    window = wire_window(cr.body, every_byte, 600, around=1)
    assert (window.focus_start, window.focus_stop) == (556, 739)
    assert (window.start, window.stop) == (375, 905)  # one event each side
    assert window.focus.startswith("d¦a¦t¦a¦:¦ ¦{") and "t¦h¦r¦e¦e¦." in window.focus
    assert "¦" not in window.before and "¦" not in window.after
    assert window.reads == 905 - 375 - 1  # every byte boundary inside the window
    assert window.before.startswith("data: {") and window.after.endswith("data: [DONE]\\r\n\\r\n")


def test_window_collapses_far_bytes_and_cuts_a_long_event() -> None:
    body = b"x" * 10_000
    window = wire_window(body, [5_000], 5_000, window=400, rest=100)
    assert (window.start, window.stop) == (4_800, 5_200)
    assert window.reads == 1 and "¦" in window.focus
    assert window.before.startswith("… 4700 earlier bytes not shown\n")
    assert window.after.endswith("… 4700 more bytes not shown")


def test_window_of_an_empty_body() -> None:
    window = wire_window(b"", None, 0)
    assert (window.lead, window.focus, window.tail, window.reads) == ("", "", "", 0)


# -- where a failure arises ----------------------------------------------------


def test_pinpoint_follows_the_deltas_at_byte(cr: Case) -> None:
    outcome = {
        **lost_last_piece(),
        "deltas": [
            {"choice": 0, "content": "One,", "at_byte": 375},
            {"choice": 0, "content": " TWO,", "at_byte": 556},
        ],
    }
    place = pinpoint(cr.body, failed(cr, "whole", outcome))
    assert place.at == 555 and "at_byte 556" in place.how


def test_pinpoint_finds_the_event_whose_content_was_lost(cr: Case) -> None:
    place = pinpoint(cr.body, failed(cr, "whole", lost_last_piece()))
    assert place.at == 738  # the last byte of the event carrying " three."


def test_pinpoint_finds_the_key_near_its_expected_value(cr: Case) -> None:
    outcome = {"status": "complete", "choices": [{"index": 0, "content": "One, two, three."}]}
    result = failed(cr, "whole", outcome)
    assert result.mismatches[0] == Divergence("choices[0].finish_reason", "stop", MISSING)
    place = pinpoint(cr.body, result)
    assert cr.body[place.at :].startswith(b'"finish_reason":"stop"')
    assert 739 <= place.at < 905  # inside the finish event


def test_pinpoint_falls_back_to_the_end_of_the_body(cr: Case) -> None:
    assert pinpoint(cr.body, failed(cr, "whole", None)).at == len(cr.body) - 1
    truncated = {"status": "truncated", "choices": [{"index": 0, "content": "One, two, three."}]}
    result = failed(cr, "whole", {**truncated, "choices": [{**truncated["choices"][0]}]})  # type: ignore[dict-item]
    assert result.mismatches[0].path == "status"
    assert pinpoint(cr.body, result).how.startswith("the end of the body")


# -- expected against actual ---------------------------------------------------


def test_json_lines_mark_the_diverging_paths_and_show_absent_keys() -> None:
    divergences = [
        Divergence("choices[0].content", "a", "b"),
        Divergence("choices[0].finish_reason", "stop", MISSING),
    ]
    actual = {"status": "complete", "choices": [{"index": 0, "content": "b"}]}
    lines = json_lines(
        actual, marked_paths(divergences), [d.path for d in divergences if d.actual is MISSING]
    )
    assert [(line.text.strip(), line.marked) for line in lines] == [
        ("{", False),
        ('"status": "complete",', False),
        ('"choices": [', False),
        ("{", False),
        ('"index": 0,', False),
        ('"content": "b",', True),
        ('"finish_reason": <absent>', True),
        ("}", False),
        ("]", False),
        ("}", False),
    ]


def test_a_length_divergence_marks_the_whole_list() -> None:
    lines = json_lines({"choices": [1, 2]}, marked_paths([Divergence("choices.length", 1, 2)]))
    assert [line.marked for line in lines] == [False, True, True, True, True, False]


def test_json_lines_are_cut_past_the_limit() -> None:
    lines = json_lines(list(range(500)), set(), limit=10)
    assert len(lines) == 11 and lines[-1].text == "… 492 more lines"


# -- failures by case, skips -----------------------------------------------------


def test_one_group_per_case_with_every_transport_verdict(cr: Case) -> None:
    passed = Result(cr, "lines", Verdict.PASS)
    results = [
        failed(cr, "whole", lost_last_piece()),
        passed,
        failed(cr, "bytes", None),
    ]
    outcomes = {(CR, "whole"): lost_last_piece()}
    (group,) = case_groups(results, outcomes, spec="adapters/x.py", seed=7, quirks={"cr"})
    assert group.anchor == "case-sse-spec-cr-line-endings"
    assert group.verdicts == [("whole", "fail"), ("lines", "pass"), ("bytes", "crash")]
    assert [run.transport for run in group.runs] == ["whole", "bytes"]
    assert group.tags == [("cr", True), ("line-endings", False)]
    assert group.spec[0] == ("semantics §3.1", False) and group.spec[-1][1] is True
    whole, crashed = group.runs
    marked = [line.text.strip() for line in whole.expected if line.marked]
    assert marked == ['"content": "One, two, three.",']
    assert [line.text.strip() for line in whole.actual or [] if line.marked] == [
        '"content": "One, two,",'
    ]
    assert crashed.actual is None and crashed.divergence == "boom"


def test_reproduce_lines_quote_the_id_and_seed_only_what_needs_it() -> None:
    debug, run = reproduce("p/a case", "whole", "my adapter.py", 42)
    assert debug == "streamproof debug 'p/a case [whole]' --adapter 'my adapter.py'"
    assert run == "streamproof run --case 'p/a case [whole]' --adapter 'my adapter.py' --seed 42"
    assert reproduce("p/c", "random", "x.py", 42)[0].endswith("--adapter x.py --seed 42")


def test_skips_are_counted_by_capability_with_their_cases(corpus: Corpus) -> None:
    a, b = corpus.cases[:2]
    results = [
        Result(a, "whole", Verdict.SKIP, message="adapter lacks http_error, usage"),
        Result(a, "bytes", Verdict.SKIP, message="adapter lacks http_error"),
        Result(b, "whole", Verdict.SKIP, message="adapter lacks usage"),
        Result(b, "bytes", Verdict.PASS),
    ]
    summary = [(s.capability, s.runs, s.cases) for s in skipped_by_capability(results)]
    assert summary == [("http_error", 2, [a.id]), ("usage", 2, sorted({a.id, b.id}))]


# -- the rendered fragments ------------------------------------------------------


def test_failures_section_links_quirks_and_marks_the_window(corpus: Corpus, cr: Case) -> None:
    tagged = next(c for c in corpus.cases if "no-done" in c.data["tags"] and "expected" in c.data)
    results = [
        failed(cr, "bytes", lost_last_piece(finish=None)),
        failed(tagged, "whole", None),
        Result(tagged, "lines", Verdict.SKIP, message="adapter lacks stream_error"),
    ]
    outcomes = {(CR, "bytes"): lost_last_piece(finish=None)}
    html = failures_html(results, outcomes, spec="x.py", seed=1, corpus_root=corpus.root)
    assert f'id="{anchor(CR)}"' in html and f'id="{anchor(tagged.id)}"' in html
    assert '<a class="tag quirk" href="#quirk-no-done">no-done</a>' in html
    assert 'id="quirk-no-done"' in html
    assert '<span class="diff">' in html and "&lt;absent&gt;" in html
    window = re.search(r'<pre class="window">(.*?)</pre>', html, re.S)
    assert window is not None and "<mark>" in window.group(1) and "¦" in window.group(1)
    shown = re.findall(r"<pre>(.*?)</pre>", html, re.S)  # the collapsed bytes, the JSON
    assert shown and not any("¦" in text for text in shown)  # read marks only in the window
    skips = html[html.index('id="skips"') :]
    assert '<td><code>stream_error</code></td><td class="count">1</td>' in skips
    assert f"<code>{tagged.id}</code>" in skips and "('" not in skips
    assert "<style" not in html and "<script" not in html


def test_a_failing_row_extra_is_short_and_styled_by_the_page(cr: Case) -> None:
    html = failure_html(failed(cr, "whole", lost_last_piece()), spec="x.py", seed=3)
    assert "<style" not in html and f'href="#{anchor(CR)}"' in html
    assert "streamproof debug &#39;sse-spec/cr-line-endings [whole]&#39; --adapter x.py" in html
    assert len(html) < 600


def thousand_failures(corpus: Corpus) -> Iterator[tuple[Result, dict[str, object]]]:
    """1000 failing runs over the corpus's cases that have one expectation."""
    cases = [c for c in corpus.cases if "expected" in c.data]
    transports = ["whole", "lines", "bytes", "random"]
    n = 0
    while True:
        for case in cases:
            for transport in transports:
                outcome: dict[str, object] = {"status": "error", "choices": []}
                yield failed(case, transport, outcome), outcome
                n += 1
                if n == 1000:
                    return


def test_a_thousand_failures_stay_under_the_bound(corpus: Corpus) -> None:
    runs = list(thousand_failures(corpus))
    results = [result for result, _ in runs]
    outcomes = {(r.case.id, r.transport): outcome for r, outcome in runs}
    size = len(summary_html(results, adapter="x", corpus=corpus.version, seed=1))
    size += len(failures_html(results, outcomes, spec="x.py", seed=1, corpus_root=corpus.root))
    size += sum(len(failure_html(r, spec="x.py", seed=1)) for r in results)
    assert len(results) == 1000
    assert size < 1000 * BYTES_PER_FAILURE, f"{size / 1000:.0f} bytes per failure"


def test_the_size_benchmark_runs_quick(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_report.py"
    figures = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(script), "--quick", "--json", str(figures)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bytes per failure" in proc.stdout and "MISMATCH" not in proc.stdout
    assert '"our_styles": 1' in figures.read_text()


# -- the page pytest-html writes -----------------------------------------------------

ADAPTERS = Path(__file__).parent / "adapters"


def html_report(pytester: pytest.Pytester, tmp_path: Path, adapter: str, case: str) -> str:
    report = tmp_path / "report.html"
    pytester.runpytest(
        f"--streamproof={ADAPTERS / adapter}",
        "--streamproof-transport=whole,lines",
        f"--streamproof-case={case}",
        f"--html={report}",
        "--self-contained-html",
    )
    return report.read_text()


def test_the_page_is_titled_with_the_adapters_name_and_styled_once(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    html = html_report(pytester, tmp_path, "naive_lines.py", CR)
    assert '<title id="head-title">streamproof: naive-lines on corpus ' in html
    assert "<h2>streamproof: naive-lines on corpus " in html
    assert html.count(".streamproof-summary table") == 1  # our styles, once
    assert html.count(f'<section class="case" id="{anchor(CR)}">') == 1  # one group, two runs
    assert '<td class="v v-crash">crash</td>' in html


def test_a_skip_row_says_why_in_words(pytester: pytest.Pytester, tmp_path: Path) -> None:
    case = "generic/http-429-json"  # an HTTP error: text_only lacks http_error
    html = html_report(pytester, tmp_path, "text_only.py", case)
    assert "skipped: adapter lacks http_error (see the skips by capability" in html
    assert "Skipped: adapter lacks" not in html  # pytest's (file, line, message) tuple
    skips = html[html.index('id="skips"') :]
    assert "<code>http_error</code>" in skips and f"<code>{case}</code>" in skips


def test_pinpoint_finds_a_key_in_a_body_that_is_no_stream(corpus: Corpus) -> None:
    case = next(c for c in corpus.cases if c.id == "anthropic/non-streamed-completion-with-msg-id")
    outcome = {**case.data["expected"], "usage": {**case.data["expected"]["usage"]}}
    outcome["usage"]["prompt_tokens"] = 91
    result = failed(case, "whole", outcome)
    assert [d.path for d in result.mismatches] == ["usage.prompt_tokens"]
    place = pinpoint(case.body, result)
    assert case.body[place.at :].startswith(b'"prompt_tokens":19')
    assert "expected value" in place.how


def test_what_an_adapter_returns_cannot_write_markup(corpus: Corpus, cr: Case) -> None:
    hostile = "</pre><script>alert(1)</script><b>"
    outcome = {"status": "complete", "choices": [{"index": 0, "content": hostile}]}
    results = [failed(cr, "whole", outcome)]
    html = failures_html(
        results, {(CR, "whole"): outcome}, spec="x.py", seed=1, corpus_root=corpus.root
    )
    assert "<script" not in html and "<b>" not in html
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;" in html


def test_pinpoint_finds_an_object_the_outcome_lacks_by_its_key(corpus: Corpus) -> None:
    case = next(c for c in corpus.cases if c.id == "sse-spec/event-error-with-json-error-object")
    expected = case.data["expected"]
    outcome = {"status": "complete", "choices": expected["choices"]}
    result = failed(case, "whole", outcome)
    assert [d.path for d in result.mismatches] == ["status", "error"]  # status: not in the body
    place = pinpoint(case.body, result)
    assert case.body[place.at :].startswith(b'"error":{"message"')
    assert place.how == "the event carrying 'error'"
