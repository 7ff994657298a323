"""Case-runs per second of the reference adapter: direct, through the engine, and a full run.

    python benchmarks/bench_runs.py [--repeat N] [--json FILE] [--quick]

For each transport, over every runnable case of the shipped corpus with the
built-in ``reference`` adapter, in one run on one machine:

(a) direct: replay and ``load_adapter("reference").run`` in this process, then ``judge``;
(b) engine: ``Engine("reference").run``: the adapter in a worker process over JSON lines;
(c) full: ``streamproof run --adapter reference --transport T --seed 1`` as a subprocess,
    and the same command with one case (its start-up cost).

Figures are medians of N timed passes. Every verdict of (a) and (b) must be
``pass`` or ``skip`` and every command of (c) must exit 0; otherwise the
script prints DATA MISMATCH and exits with status 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from streamproof.corpus import Case, load_corpus
from streamproof.harness.engine import Engine, Result, Verdict, judge, select
from streamproof.harness.loader import Adapter, ReplayResponse, load_adapter
from streamproof.harness.transports import boundaries

TRANSPORTS = ("whole", "lines", "bytes", "random")
QUICK_TRANSPORTS = ("whole", "bytes")
SEED = 1
ONE_CASE = "generic/finish-without-done"
ACCEPTED = (Verdict.PASS, Verdict.SKIP)
TIMES = "\u00d7"


def direct(adapter: Adapter, case: Case, transport: str) -> Result:
    """What the engine does for one case-run, minus the worker process."""
    missing = case.requires - adapter.capabilities
    if missing:
        return Result(case, transport, Verdict.SKIP, message=f"lacks {', '.join(sorted(missing))}")
    ends = boundaries(case.body, transport, seed=SEED, case_dir=case.dir)
    response = ReplayResponse(
        status=case.status,
        headers=case.headers,
        request=case.request,
        case_id=case.id,
        transport=transport,
        body=case.body,
        ends=ends,
    )
    started = time.perf_counter()
    try:
        outcome = adapter.run(response)
    except Exception as exc:  # as the worker would report it
        return Result(case, transport, Verdict.CRASH, message=f"{type(exc).__name__}: {exc}")
    return judge(case, transport, outcome, time.perf_counter() - started, ends)


def timed_pass(
    run: Callable[[Case, str], Result], cases: list[Case], transport: str
) -> tuple[float, list[str]]:
    """Seconds to run every case once under ``transport``, and the runs that went wrong."""
    gc.collect()
    started = time.perf_counter()
    results = [run(case, transport) for case in cases]
    elapsed = time.perf_counter() - started
    wrong = [
        f"{r.case.id} [{transport}]: {r.verdict.value}: {r.first_divergence}"
        for r in results
        if r.verdict not in ACCEPTED
    ]
    return elapsed, wrong


def command(transport: str, case: str | None, expected: int, folder: str) -> tuple[float, str]:
    """Wall seconds of one ``streamproof run`` subprocess, and what went wrong ("" if nothing)."""
    argv = [sys.executable, "-m", "streamproof", "run", "--adapter", "reference", "--no-html"]
    argv += ["--transport", transport, "--seed", str(SEED)]
    argv += ["--case", case] if case else []
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=folder, check=False)
    elapsed = time.perf_counter() - started
    found = re.search(r" of (\d+) case runs? \(", proc.stdout)  # "… of N case runs (M cases)"
    runs = int(found.group(1)) if found else -1
    if proc.returncode != 0 or runs != expected:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])
        what = f"{case or 'all cases'} [{transport}]"
        return elapsed, f"streamproof run {what}: exit {proc.returncode}, {runs} runs: {tail}"
    return elapsed, ""


def measure(
    adapter: Adapter,
    engine: Engine,
    cases: list[Case],
    transports: tuple[str, ...],
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, list[float]]], list[str]]:
    """Seconds per pass for each transport and mode; everything takes turns within a round."""
    seconds: dict[str, dict[str, list[float]]] = {
        t: {"a": [], "b": [], "c": [], "c1": []} for t in transports
    }
    problems: list[str] = []

    def note(found: list[str]) -> None:
        problems.extend(p for p in found if p and p not in problems)

    modes: dict[str, Callable[[Case, str], Result]] = {
        "a": lambda case, t: direct(adapter, case, t),
        "b": engine.run,
    }
    with tempfile.TemporaryDirectory(prefix="bench-runs-") as folder:
        for round_ in range(args.warmup + args.repeat):
            timed = round_ >= args.warmup
            for transport in transports:
                for mode, run in modes.items():
                    elapsed, wrong = timed_pass(run, cases, transport)
                    note(wrong)
                    if timed:
                        seconds[transport][mode].append(elapsed)
                if not timed:
                    continue
                if not args.quick:
                    elapsed, failed = command(transport, None, len(cases), folder)
                    note([failed])
                    seconds[transport]["c"].append(elapsed)
                elapsed, failed = command(transport, ONE_CASE, 1, folder)
                note([failed])
                seconds[transport]["c1"].append(elapsed)
    return seconds, problems


def figures(seconds: dict[str, list[float]], n: int) -> dict[str, Any]:
    """Runs/s, the engine's overhead over direct, and the full run's figures for one transport."""
    med = {k: statistics.median(v) for k, v in seconds.items() if v}
    row: dict[str, Any] = {
        "direct_runs_per_s": round(n / med["a"], 1),
        "engine_runs_per_s": round(n / med["b"], 1),
        "overhead_us_per_run": round((med["b"] - med["a"]) / n * 1e6, 1),
        "overhead_ratio": round(med["b"] / med["a"], 3),
        "startup_s": round(med["c1"], 4),
        "full_s": None,
        "full_runs_per_s": None,
        "full_net_runs_per_s": None,
    }
    if "c" in med:
        row["full_s"] = round(med["c"], 4)
        row["full_runs_per_s"] = round(n / med["c"], 1)
        if n > 1 and med["c"] > med["c1"]:
            row["full_net_runs_per_s"] = round((n - 1) / (med["c"] - med["c1"]), 1)
    row["seconds"] = {k: [round(s, 6) for s in v] for k, v in seconds.items()}
    return row


def show(value: float | None, width: int, digits: int = 1) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:>{width},.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed passes (default 5)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke check: 1 pass, no warm-up, whole and bytes, (c) only with one case",
    )
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    args.repeat, args.warmup = (1, 0) if args.quick else (args.repeat, 1)
    transports = QUICK_TRANSPORTS if args.quick else TRANSPORTS

    corpus = load_corpus()
    # wire/ cases exist only on a real connection: a replay in-process skips them
    cases = [c for c in select(corpus.cases, []) if "fault" not in c.data]
    adapter = load_adapter("reference")
    n = len(cases)
    body_bytes = sum(len(case.body) for case in cases)
    print(
        f"corpus {corpus.version} ({corpus.sha256[:12]}): {n} runnable cases, "
        f"{body_bytes:,} body bytes; adapter {adapter.name} {adapter.version}"
    )
    print(
        f"python {platform.python_version()}, streamproof {metadata.version('streamproof')}; "
        f"median of {args.repeat} pass(es) after {args.warmup} warm-up, seed {SEED}"
    )
    engine = Engine("reference", seed=SEED)  # started here, so no pass pays the handshake
    try:
        seconds, problems = measure(adapter, engine, cases, transports, args)
    finally:
        engine.close()
    rows = {t: figures(seconds[t], n) for t in transports}

    print(f"\n{'':<9} {'(a) direct':>11} {'(b) engine':>11}  (b) over (a)")
    print(f"{'transport':<9} {'runs/s':>11} {'runs/s':>11} {'µs/run':>8} {'ratio':>7}")
    for t, r in rows.items():
        print(
            f"{t:<9} {show(r['direct_runs_per_s'], 11)} {show(r['engine_runs_per_s'], 11)} "
            f"{show(r['overhead_us_per_run'], 8)} {r['overhead_ratio']:>6.2f}{TIMES}"
        )
    print(f"\n(c) streamproof run --adapter reference --transport T --seed {SEED} (subprocess)")
    print(f"{'transport':<9} {'command s':>10} {'runs/s':>8} {'start-up s':>11} {'net runs/s':>11}")
    for t, r in rows.items():
        print(
            f"{t:<9} {show(r['full_s'], 10, 3)} {show(r['full_runs_per_s'], 8)} "
            f"{show(r['startup_s'], 11, 3)} {show(r['full_net_runs_per_s'], 11)}"
        )
    print(f"start-up: the command with --case {ONE_CASE}; net: (runs - 1) / (command - start-up)")

    if args.json is not None:
        document = {
            "corpus": {"version": corpus.version, "sha256": corpus.sha256, "cases": n},
            "body_bytes": body_bytes,
            "adapter": f"{adapter.name} {adapter.version}",
            "repeat": args.repeat,
            "warmup": args.warmup,
            "seed": SEED,
            "python": platform.python_version(),
            "results": [{"transport": t, **r} for t, r in rows.items()],
            "problems": problems,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if problems:
        print("\nDATA MISMATCH: the reference adapter did not pass every run", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"\nevery run passed ({n} cases {TIMES} {len(transports)} transports)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
