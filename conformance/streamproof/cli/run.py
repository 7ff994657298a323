"""``streamproof run``: check the inputs, drive pytest, report, pick the exit status."""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import replace
from pathlib import Path

from ..corpus.cases import SEVERITIES, load_corpus
from ..errors import CommandError, UsageError
from ..harness.engine import plan, select
from ..harness.expectations import load_expectations
from ..harness.protocol import AdapterProcess
from ..harness.transports import TRANSPORTS, parse_transports
from ..live.review import awaiting_notice, awaiting_review
from ..reporting.known_failures import write_expectations
from ..reporting.results import (
    baseline_document,
    exit_status,
    results_document,
    write_baseline,
    write_json,
)
from ..reporting.terminal import print_summary
from .options import add_corpus_option
from .pytest_session import RunOptions, run_through_pytest

__all__ = ["DEFAULT_REPORT", "RunError", "add_arguments", "execute_run", "run"]

# Where a run with no --adapter and no --html writes its report.
DEFAULT_REPORT = "streamproof-report.html"


class RunError(CommandError):
    """The run could not be carried out (exit 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        metavar="SPEC",
        help="built-in name, path/to/adapter.py or a module (default: reference)",
    )
    parser.add_argument(
        "--transport",
        default="all",
        metavar="LIST",
        help=f"'all' or a comma list of {', '.join(TRANSPORTS)}",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cases whose id matches (repeatable)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help="seed of the random transport (default: a new one each run, printed)",
    )
    parser.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="may",
        help="lowest severity whose failures fail the run (default: may)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="per case-run timeout (default: 10 s + 30 s per MB of body)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run N adapter processes in parallel (default: 1)",
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="score the adapter's call(base_url, request) over real HTTP (replay server)",
    )
    parser.add_argument(
        "--expect",
        type=Path,
        metavar="FILE",
        help="known failures: listed failures are xfail, listed passes xpass",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write results JSON here")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="write the verdicts alone (no timings or dates) here, for diffs",
    )
    parser.add_argument("--html", type=Path, metavar="FILE", help="write a pytest-html report here")
    parser.add_argument(
        "--write-expect",
        type=Path,
        metavar="FILE",
        help="write today's failures here as a known-failures file for --expect",
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    adapter_given = args.adapter is not None
    args.adapter = args.adapter or "reference"
    try:
        transports = parse_transports(args.transport)
    except ValueError as exc:
        raise UsageError(f"--transport: {exc}") from None
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    default_report = not adapter_given and args.html is None
    return execute_run(
        RunOptions(
            spec=args.adapter,
            transports=transports,
            cases=args.case,
            corpus=args.corpus,
            seed=args.seed,
            fail_on=args.fail_on,
            timeout=args.timeout,
            jobs=args.jobs,
            expect=args.expect,
            json=args.json,
            baseline=args.baseline,
            http=args.http,
            html=Path(DEFAULT_REPORT) if default_report else args.html,
            junit=args.junit,
            write_expect=args.write_expect,
        )
    )


def execute_run(request: RunOptions) -> int:
    corpus = load_corpus(request.corpus)
    if request.expect:
        load_expectations(request.expect, {c.id for c in corpus.cases})
    cases = select(corpus.cases, request.cases)
    waiting = awaiting_review(corpus.cases, request.cases)
    if not cases and waiting:
        raise RunError(f"nothing to run: {awaiting_notice(len(waiting))}")
    if not cases:
        raise RunError(f"--case {' '.join(request.cases)!r} matches no case")
    # Start the adapter once up front: a broken adapter is one line and exit 2
    # before any case runs, and its handshake names it in the results.
    probe = AdapterProcess(request.spec, timeout=request.timeout)
    probe.start()
    probe.close()
    if request.http and not probe.supports_call:
        raise RunError(
            f"{request.spec}: defines no call(base_url, request), so it cannot be "
            "scored over HTTP (--http is not applicable)"
        )
    seed = request.seed if request.seed is not None else random.randrange(2**31)
    work = plan(cases, request.transports)
    options = replace(request, seed=seed, corpus=corpus.root)
    results, code, output = run_through_pytest(options, len(work))
    if len(results) != len(work):
        tail = " | ".join(line for line in output.strip().splitlines()[-3:])
        raise RunError(
            f"the run stopped after {len(results)} of {len(work)} case runs "
            f"(pytest exit {code}): {tail}"
        )
    order = {(c.id, t): i for i, (c, t) in enumerate(work)}
    results.sort(key=lambda r: order[(r.case.id, r.transport)])
    adapter = {
        "name": probe.name,
        "version": probe.version,
        "spec": request.spec,
        "capabilities": sorted(probe.capabilities),
    }
    print_summary(results, f"{probe.name} {probe.version}", corpus.version, sys.stdout)
    if waiting:
        print(awaiting_notice(len(waiting)))
    if "random" in request.transports:
        print(f"random transport seed {seed} (rerun with --seed {seed})")
    document = results_document(
        results, corpus=corpus, adapter=adapter, transports=request.transports, seed=seed
    )
    if request.json:
        write_json(document, request.json)
        print(f"results: {request.json}")
    if request.write_expect:
        written = write_expectations(document, request.write_expect)
        print(f"expectations: {request.write_expect} ({len(written['expectations'])} entries)")
    if request.baseline:
        write_baseline(
            baseline_document(
                results, corpus=corpus, adapter=adapter, transports=request.transports, seed=seed
            ),
            request.baseline,
        )
        print(f"baseline: {request.baseline}")
    for label, path in (("report", request.html), ("junit", request.junit)):
        if path:
            print(f"{label}: {path}")
    return exit_status(results, request.fail_on)
