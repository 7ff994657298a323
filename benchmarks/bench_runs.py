"""Case-runs per second of the reference adapter, per transport, in one run.

    python benchmarks/bench_runs.py [--repeat N] [--json FILE] [--quick]

Loads the shipped corpus and the built-in ``reference`` adapter, then for each
transport runs every runnable case once through ``streamproof.runner.run_case``
(replay, parse, schema check and comparison with the expectation) and times
the whole pass. A pass is repeated N times; the figure is the median. Every
verdict must be ``pass`` (or ``skip``): a failing run is a data mismatch, and
the script exits with status 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from streamproof.adapter import Adapter, load_adapter
from streamproof.corpus import Case, load_corpus
from streamproof.runner import Verdict, run_case, select

TRANSPORTS = ("whole", "lines", "bytes", "random")
SEED = 0
TIMES = "\u00d7"  # the multiplication sign of "0.12x whole"
ACCEPTED = (Verdict.PASS, Verdict.SKIP)


def one_pass(adapter: Adapter, cases: list[Case], transport: str) -> tuple[float, list[str]]:
    """Seconds to run every case once under ``transport``, and the runs that went wrong."""
    gc.collect()
    started = time.perf_counter()
    results = [run_case(adapter, case, transport, seed=SEED) for case in cases]
    elapsed = time.perf_counter() - started
    wrong = [
        f"{r.case.id} [{transport}]: {r.verdict.value}: {r.first_divergence}"
        for r in results
        if r.verdict not in ACCEPTED
    ]
    return elapsed, wrong


def measure(
    adapter: Adapter, cases: list[Case], repeat: int, warmup: int
) -> tuple[dict[str, list[float]], list[str]]:
    """Seconds per pass of each transport; the transports take turns within each repeat."""
    seconds: dict[str, list[float]] = {t: [] for t in TRANSPORTS}
    problems: list[str] = []
    for round_ in range(warmup + repeat):
        for transport in TRANSPORTS:
            elapsed, wrong = one_pass(adapter, cases, transport)
            problems.extend(w for w in wrong if w not in problems)
            if round_ >= warmup:
                seconds[transport].append(elapsed)
    return seconds, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed passes per transport (default 7)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument("--quick", action="store_true", help="smoke check: 1 pass, no warm-up")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    repeat, warmup = (1, 0) if args.quick else (args.repeat, 1)

    corpus = load_corpus()
    cases = select(corpus.cases, [])
    adapter = load_adapter("reference")
    body_bytes = sum(len(case.body) for case in cases)
    print(
        f"corpus {corpus.version} ({corpus.sha256[:12]}): {len(cases)} runnable cases, "
        f"{body_bytes:,} body bytes; adapter {adapter.name} {adapter.version}"
    )
    print(
        f"python {platform.python_version()}, streamproof {metadata.version('streamproof')}; "
        f"median of {repeat} pass(es) after {warmup} warm-up, seed {SEED}"
    )

    seconds, problems = measure(adapter, cases, repeat, warmup)
    rate = {t: len(cases) / statistics.median(s) for t, s in seconds.items()}
    print(f"\n{'transport':<10} {'runs/s':>10}  vs whole")
    rows: list[dict[str, Any]] = []
    for transport in TRANSPORTS:
        ratio = rate[transport] / rate["whole"]
        print(f"{transport:<10} {rate[transport]:>10.1f}  {ratio:.3f}{TIMES} whole")
        rows.append(
            {
                "transport": transport,
                "runs_per_s": round(rate[transport], 2),
                "ratio_to_whole": round(ratio, 5),
                "seconds": [round(s, 6) for s in seconds[transport]],
            }
        )
    if args.json is not None:
        figures = {
            "corpus": {
                "version": corpus.version,
                "sha256": corpus.sha256,
                "cases": len(cases),
                "body_bytes": body_bytes,
            },
            "adapter": adapter.name,
            "repeat": repeat,
            "warmup": warmup,
            "seed": SEED,
            "python": platform.python_version(),
            "results": rows,
            "problems": problems,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if problems:
        print("\nDATA MISMATCH: the reference adapter did not pass every run", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"\nevery run passed ({len(cases)} cases x {len(TRANSPORTS)} transports)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
