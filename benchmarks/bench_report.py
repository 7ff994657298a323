"""Size of the HTML report: bytes per failure, for a real run and for 1000 synthetic failures.

    python benchmarks/bench_report.py [--json FILE] [--quick]

(a) a run: ``streamproof run --adapter tests/adapters/naive_lines.py --transport all
    --seed 1 --html FILE --json FILE`` (``--quick``: the ``sse-spec`` cases only), whose
    failing runs (failed, crashed, timed out, xpassed) divide the report's bytes;
(b) fragments: the report's own pieces (summary, failures by case, one extra per row)
    rendered for 1000 failing runs over the corpus's cases, with no pytest.

Sizes, not times: they depend on the corpus and the templates only. A report
with more than one ``<style>`` block of ours, or a run that does not fail as
the naive adapter must, prints DATA MISMATCH and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from streamproof.corpus import load_corpus
from streamproof.harness.comparison import compare
from streamproof.harness.engine import Result, Verdict
from streamproof.reporting.fragments import failure_html, failures_html, summary_html

ROOT = Path(__file__).resolve().parent.parent
NAIVE = ROOT / "tests" / "adapters" / "naive_lines.py"
FAILING = ("failed", "crashed", "timed_out", "xpassed")


def run_report(quick: bool) -> dict[str, Any]:
    """Bytes of a real run's report, and how many of its runs failed."""
    with tempfile.TemporaryDirectory(prefix="bench-report-") as name:
        html, results = Path(name) / "report.html", Path(name) / "results.json"
        argv = [sys.executable, "-m", "streamproof", "run", "--adapter", str(NAIVE)]
        argv += ["--transport", "all", "--seed", "1", "--html", str(html), "--json", str(results)]
        if quick:
            argv += ["--case", "sse-spec/*"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 1 or not html.exists():
            return {"problem": f"exit {proc.returncode}: {proc.stdout[-300:]}{proc.stderr[-300:]}"}
        summary = json.loads(results.read_text())["summary"]
        text = html.read_text()
        return {
            "bytes": len(text.encode()),
            "failures": sum(summary[key] for key in FAILING),
            "runs": summary["total"],
            "our_styles": text.count(".streamproof-summary table"),
        }


def fragment_bytes(n: int = 1000) -> dict[str, Any]:
    """Bytes of the report's own pieces for ``n`` failing runs."""
    corpus = load_corpus()
    cases = [c for c in corpus.cases if "expected" in c.data]
    results, outcomes = [], {}
    for i in range(n):
        case, transport = cases[(i // 4) % len(cases)], ("whole", "lines", "bytes", "random")[i % 4]
        outcome = {"status": "error", "choices": []}
        mismatches = compare(case.data["expected"], outcome)
        results.append(Result(case, transport, Verdict.FAIL, mismatches, "", 0.0, outcome))
        outcomes[(case.id, transport)] = outcome
    size = len(summary_html(results, adapter="bench", corpus=corpus.version, seed=1))
    size += len(failures_html(results, outcomes, spec="x.py", seed=1, corpus_root=corpus.root))
    size += sum(len(failure_html(r, spec="x.py", seed=1)) for r in results)
    return {"bytes": size, "failures": n}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the figures here")
    parser.add_argument("--quick", action="store_true", help="the sse-spec cases only in (a)")
    args = parser.parse_args()
    run, pieces = run_report(args.quick), fragment_bytes()
    problems = []
    if "problem" in run:
        problems.append(run["problem"])
    elif run["our_styles"] != 1 or not run["failures"]:
        problems.append(f"{run['our_styles']} style blocks of ours, {run['failures']} failures")
    if problems:
        print("DATA MISMATCH: " + "; ".join(problems))
        return 1
    print(f"(a) run of naive_lines over --transport all{' (sse-spec only)' if args.quick else ''}:")
    print(
        f"    {run['bytes']:,} bytes, {run['failures']} failing of {run['runs']} runs: "
        f"{run['bytes'] / run['failures']:,.0f} bytes per failure"
    )
    print(f"(b) the report's own pieces for {pieces['failures']} synthetic failures:")
    print(f"    {pieces['bytes']:,} bytes: {pieces['bytes'] / pieces['failures']:,.0f} per failure")
    if args.json:
        args.json.write_text(json.dumps({"run": run, "fragments": pieces}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
