"""A persistent adapter process against one process per case, on the same cases.

streamproof keeps one adapter process alive across cases (CONTRACT §4);
toml-test and JSONTestSuite start a new process for every case. This runs
the same case-runs both ways, in one run on one machine, and reports the
medians and the ratio.

    python benchmarks/bench_protocol.py [--adapter SPEC] [--repeat N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from streamproof.corpus import load_corpus
from streamproof.harness.engine import Engine, Result, Verdict, select


def _check(results: list[Result]) -> None:
    bad = [r for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    if bad:
        print(f"DATA MISMATCH: {bad[0].case.id}: {bad[0].first_divergence}")
        sys.exit(1)


def persistent(spec: str, cases: list, transport: str) -> float:
    started = time.perf_counter()
    engine = Engine(spec, seed=1)
    try:
        _check([engine.run(case, transport) for case in cases])
    finally:
        engine.close()
    return time.perf_counter() - started


def per_case(spec: str, cases: list, transport: str) -> float:
    started = time.perf_counter()
    results = []
    for case in cases:
        engine = Engine(spec, seed=1)
        try:
            results.append(engine.run(case, transport))
        finally:
            engine.close()
    _check(results)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", default="reference")
    parser.add_argument("--transport", default="whole")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10 cases, one pass")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cases = select(load_corpus().cases, [])
    repeat = 1 if args.quick else args.repeat
    if args.quick:
        cases = cases[:10]
    timings: dict[str, list[float]] = {"persistent": [], "per-case": []}
    for _ in range(repeat):  # the two designs take turns within each round
        timings["persistent"].append(persistent(args.adapter, cases, args.transport))
        timings["per-case"].append(per_case(args.adapter, cases, args.transport))
    medians = {name: statistics.median(values) for name, values in timings.items()}
    runs = len(cases)
    print(f"{runs} case-runs ({args.transport}) through adapter {args.adapter}; median of {repeat}")
    for name, seconds in medians.items():
        print(
            f"  {name:<11} {seconds:8.3f} s  {runs / seconds:9.1f} runs/s  "
            f"{1e3 * seconds / runs:7.2f} ms/run"
        )
    ratio = medians["per-case"] / medians["persistent"]
    print(f"one process per case takes {ratio:.1f}× as long as one persistent process")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"runs": runs, "medians": medians, "ratio": ratio, "timings": timings}, indent=2
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
