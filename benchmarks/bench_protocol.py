"""A persistent adapter process against one process per case, on the same cases.

streamproof keeps one adapter process alive across cases (docs/protocol.md);
toml-test and JSONTestSuite start a new process for every case. This runs
the same case-runs both ways, in one run on one machine, and reports the
medians and the ratio.

It then reads replies of 1, 10 and 100 MB (1 and 10 with --quick) through
the harness's line reader from a pipe, and through a whole exchange with a
``cmd:`` adapter, and prints how time grows with size: linear reading makes
the 100 MB reply take about 10x the 10 MB one (appending to ``bytes`` and
searching from the start made it about 100x).

    python benchmarks/bench_protocol.py [--adapter SPEC] [--repeat N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from streamproof.corpus import Case, load_corpus
from streamproof.harness.engine import Engine, Result, Verdict, select
from streamproof.harness.lines import LineReader
from streamproof.harness.messages import run_message
from streamproof.harness.protocol import AdapterProcess

MB = 1_000_000

# A cmd: adapter whose outcome carries an id of the size given on its command line.
BIG_REPLY_ADAPTER = """\
import json, sys
size = int(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        print(json.dumps({"name": "big-reply", "version": "1"}), flush=True)
    elif message["cmd"] == "run":
        outcome = {"status": "complete", "choices": [], "id": "x" * size}
        print(json.dumps({"seq": message["seq"], "outcome": outcome}), flush=True)
    else:
        break
"""


def _check(results: list[Result]) -> None:
    bad = [r for r in results if r.verdict not in (Verdict.PASS, Verdict.SKIP)]
    if bad:
        print(f"DATA MISMATCH: {bad[0].case.id}: {bad[0].first_divergence}")
        sys.exit(1)


def persistent(spec: str, cases: list[Case], transport: str) -> float:
    started = time.perf_counter()
    engine = Engine(spec, seed=1)
    try:
        _check([engine.run(case, transport) for case in cases])
    finally:
        engine.close()
    return time.perf_counter() - started


def per_case(spec: str, cases: list[Case], transport: str) -> float:
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


def read_through_pipe(size: int) -> float:
    """Seconds for the line reader to take one ``size``-byte line from a pipe."""
    read_end, write_end = os.pipe()
    line = b"x" * size + b"\n"

    def write() -> None:
        with os.fdopen(write_end, "wb") as out:
            out.write(line)

    writer = threading.Thread(target=write)
    started = time.perf_counter()
    writer.start()
    got = LineReader(read_end).read_line(time.monotonic() + 600)
    seconds = time.perf_counter() - started
    writer.join()
    os.close(read_end)
    if len(got) != size:
        print(f"DATA MISMATCH: read {len(got)} bytes of {size}")
        sys.exit(1)
    return seconds


def exchange(size: int, folder: Path) -> float:
    """Seconds for one run whose reply carries ``size`` bytes, through a cmd: adapter."""
    script = folder / "big_reply.py"
    script.write_text(BIG_REPLY_ADAPTER)
    process = AdapterProcess(f"cmd:{shlex.join([sys.executable, str(script), str(size)])}")
    process.start()
    try:
        started = time.perf_counter()
        reply = process.run(run_message("c", "whole", 200, {}, {}, b"", []), 600)
        seconds = time.perf_counter() - started
    finally:
        process.close()
    if reply.kind != "outcome" or len(reply.outcome["id"]) != size:
        print(f"DATA MISMATCH: {reply.kind}: {reply.message}")
        sys.exit(1)
    return seconds


def reply_sizes(sizes: list[int], repeat: int) -> dict[str, dict[int, float]]:
    timings: dict[str, dict[int, float]] = {"reader": {}, "exchange": {}}
    with tempfile.TemporaryDirectory() as name:
        for size in sizes:
            timings["reader"][size] = statistics.median(
                read_through_pipe(size) for _ in range(repeat)
            )
            timings["exchange"][size] = statistics.median(
                exchange(size, Path(name)) for _ in range(repeat)
            )
    print(f"replies of {', '.join(f'{s // MB} MB' for s in sizes)}; median of {repeat}")
    for what, by_size in timings.items():
        cells = "  ".join(f"{s // MB:>4} MB {t:7.3f} s" for s, t in by_size.items())
        print(f"  {what:<9} {cells}")
        first, last = sizes[0], sizes[-1]
        print(
            f"  {what:<9} {last // MB}x the size takes {by_size[last] / by_size[first]:.1f}x "
            f"the time (linear: {last / first:.0f}x)"
        )
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", default="reference")
    parser.add_argument("--transport", default="whole")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10 cases, one pass")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cases = [c for c in select(load_corpus().cases, []) if "fault" not in c.data]
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
    sizes = [1 * MB, 10 * MB] if args.quick else [1 * MB, 10 * MB, 100 * MB]
    replies = reply_sizes(sizes, repeat)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "runs": runs,
                    "medians": medians,
                    "ratio": ratio,
                    "timings": timings,
                    "replies": {k: {str(s): t for s, t in v.items()} for k, v in replies.items()},
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
