"""``streamproof run``: check the inputs, run the plan (through pytest for its reports),
report, pick the exit status."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO, cast

from ..atomic import Batch, held_open, staged_together
from ..corpus.cases import SEVERITIES, Corpus, load_corpus
from ..errors import CommandError, UsageError
from ..harness.engine import Result
from ..harness.expectations import Expectations, load_expectations
from ..harness.protocol import AdapterProcess, close_all
from ..harness.selection import Selection, awaiting_notice, awaiting_review
from ..harness.sharding import Shard, plan_digest
from ..harness.trace import TraceFile
from ..harness.transports import (
    DEFAULT_SEED,
    TRANSPORTS,
    draw_seed,
    parse_seed,
    parse_seeds,
    seed_words,
)
from ..reporting.coverage import nothing_scored
from ..reporting.results import (
    baseline_document,
    coverage_of,
    exit_status,
    results_document,
    summarize,
    write_baseline,
    write_json,
)
from ..reporting.terminal import print_summary
from .direct import RunStopped, run_directly
from .inputs import MAX_JOBS, MAX_TIMEOUT, check_run_inputs
from .options import add_corpus_option
from .run_options import RunInterrupted, RunOptions, plan_record
from .run_signals import ClosedQuietly, terminate_interrupts
from .selecting import add_selection_arguments, selection_of, shard_of, shard_share

__all__ = ["DEFAULT_REPORT", "RunError", "add_arguments", "execute_run", "run"]

# Where a run writes its HTML report unless --html names another file or --no-html.
DEFAULT_REPORT = "streamproof-report.html"


class RunError(CommandError):
    """The run could not be carried out (exit 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        metavar="SPEC",
        help="built-in name, path/to/adapter.py, a module, or cmd:COMMAND for a program "
        "in any language speaking the protocol of docs/protocol.md (default: reference)",
    )
    add_selection_arguments(parser)
    parser.add_argument(
        "--seed",
        metavar="N|random",
        help=f"seed of the random transport (default: {DEFAULT_SEED}, so a plain run "
        "is reproducible; 'random' draws one and prints it)",
    )
    parser.add_argument(
        "--seeds",
        metavar="SPEC",
        help="run the random transport once per seed, e.g. 1-20 or 1,5,9; a case that "
        "fails under some seeds only is reported with them, and --write-expect records them",
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
        help=f"per case-run timeout, at most {MAX_TIMEOUT} (a day; "
        "default: 10 s + 30 s per MB of body)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help=f"run N adapter processes in parallel (default: 1, at most {MAX_JOBS})",
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
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="write every protocol line to and from the adapter here, one JSON line each "
        "(docs/protocol.md)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write results JSON here")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="write the verdicts alone (no timings or dates) here, for diffs",
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help=f"write the HTML report here (default: {DEFAULT_REPORT})",
    )
    parser.add_argument("--no-html", action="store_true", help="write no HTML report")
    parser.add_argument(
        "--write-expect",
        type=Path,
        metavar="FILE",
        help="write today's failures here as a known-failures file for --expect",
    )
    parser.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    check_run_inputs(args)
    args.adapter = args.adapter or "reference"
    transports, _ = selection_of(args)  # checked here, applied by execute_run
    seed, seeds = _seed_options(args, transports)
    shard = shard_of(args)
    return execute_run(
        RunOptions(
            spec=args.adapter,
            transports=transports,
            cases=args.case,
            providers=args.provider,
            keyword=args.keyword or "",
            exitfirst=args.exitfirst,
            verbosity=args.verbose - args.quiet,
            corpus=args.corpus,
            seed=seed,
            seeds=seeds,
            fail_on=args.fail_on,
            timeout=args.timeout,
            jobs=args.jobs,
            expect=args.expect,
            json=args.json,
            baseline=args.baseline,
            http=args.http,
            html=None if args.no_html else args.html or Path(DEFAULT_REPORT),
            junit=args.junit,
            write_expect=args.write_expect,
            trace=args.trace,
            shard=shard,
        )
    )


def _seed_options(args: argparse.Namespace, transports: list[str]) -> tuple[int | None, list[int]]:
    """``--seed`` (``None``: draw one) and ``--seeds`` (empty unless given)."""
    if args.seeds is None:
        try:
            return parse_seed(args.seed) if args.seed is not None else DEFAULT_SEED, []
        except ValueError as exc:
            raise UsageError(f"--seed: {exc}") from None
    if args.seed is not None:
        raise UsageError("--seed and --seeds exclude each other: give one of them")
    if "random" not in transports:
        raise UsageError("--seeds runs the random transport: add random to --transport")
    if args.http:
        raise UsageError("--seeds runs in-process only, not with --http")
    try:
        seeds = parse_seeds(args.seeds)
    except ValueError as exc:
        raise UsageError(f"--seeds: {exc}") from None
    return seeds[0], seeds


def execute_run(request: RunOptions) -> int:
    """Run, report and write the outputs, all together or none of them.

    On SIGINT (Ctrl-C) or SIGTERM: one line saying how far the run got, exit
    128 + the signal's number. The outputs are renamed into place together after
    the last case run (a signal waits for the renames); the line names those written.
    A closed standard output loses no output, nor the verdicts' exit status.
    """
    received: list[int] = []
    quiet = cast(TextIO, ClosedQuietly(sys.stdout))
    with terminate_interrupts(received), contextlib.redirect_stdout(quiet):
        try:
            with held_open(request.trace):  # (opened by the probe, then by the session)
                return _execute(request)
        except RunInterrupted as exc:
            line = f"{exc}; no results written"
        except _WritingInterrupted as exc:
            line = str(exc)
        except KeyboardInterrupt:
            line = "interrupted before the run finished; no results written"
        finally:
            close_all()  # no adapter process (nor its children) outlives the run
            sys.stdout.flush()  # (a closed pipe found here, where it ends quietly)
    print(f"streamproof: {line}", file=sys.stderr)
    return 128 + (received[0] if received else signal.SIGINT)


class _WritingInterrupted(Exception):
    """Interrupted after the last case run, while the outputs were being written."""


def _execute(request: RunOptions) -> int:
    corpus = load_corpus(request.corpus)
    known = None
    if request.expect:
        known = load_expectations(request.expect, {c.id for c in corpus.cases})
        warning = known.warning(request.expect)
        if warning:
            print(warning, file=sys.stderr)
    selection = Selection.parse(request.cases, request.providers, request.keyword)
    work = selection.plan(corpus.cases, request.transports)
    planned, work = plan_digest(work), shard_share(work, request.shard)  # (the whole plan's)
    waiting = awaiting_review(corpus.cases, [glob for glob, _ in selection.cases])
    if not work and waiting:
        raise RunError(f"nothing to run: {awaiting_notice(len(waiting))}")
    if not work and selection.plan(corpus.cases, TRANSPORTS):
        # Runs were selected, but none under these transports (recorded, say).
        raise RunError(
            nothing_scored({"by_severity": {}}, request.transports) or "nothing was scored"
        )
    if not work:
        raise RunError(f"{selection.describe()} matches no case run")
    # Start the adapter once up front: a broken adapter is one line and exit 2
    # before any case runs, and its handshake names it in the results.
    trace = TraceFile(request.trace, append=False) if request.trace else None
    probe = AdapterProcess(request.spec, timeout=request.timeout, trace=trace)
    try:
        probe.start()
    except BaseException:
        if trace is not None:
            trace.close()
        raise
    # The probe goes on as the run's adapter process unless the session needs its own
    # (a server for --http, a trace file the session writes).
    handed = not request.http and trace is None
    if not handed:
        probe.close()
        if trace is not None:
            trace.close()
    if request.http and not probe.supports_call:
        raise RunError(
            f"{request.spec}: defines no call(base_url, request), so it cannot be "
            "scored over HTTP (--http is not applicable)"
        )
    drawn = request.seed is None
    seed = draw_seed() if request.seed is None else request.seed
    options = replace(request, seed=seed, corpus=corpus.root, plan_sha256=planned)
    outputs = Batch()
    try:
        with staged_together(outputs):
            process = probe if handed else None  # (taken over, as the corpus, not started again)
            ran = _run_plan(options, work, corpus, known, process, outputs)
            results, summary, lines = _report(
                options, ran, work, corpus, probe, outputs, waiting, drawn
            )
    except KeyboardInterrupt:  # (one during the case runs is RunInterrupted)
        raise _WritingInterrupted(_unfinished(request, outputs)) from None
    for target in outputs.written:  # (staged by _write_outputs, which named them)
        print(lines.get(target, f"output: {target}"))
    # A run that scored nothing is no result at all, whatever the files say (a shard is
    # a share of one: its merged run is judged so).
    unscored = nothing_scored(summary, request.transports)
    if unscored and (request.shard or Shard(1, 1)).count == 1:
        raise RunError(unscored)
    return exit_status(results, request.fail_on)


def _run_plan(
    options: RunOptions,
    work: list[Any],
    corpus: Corpus,
    known: Expectations | None,
    process: AdapterProcess | None,
    outputs: Batch,
) -> tuple[list[Result], int, str]:
    """Run the plan: through pytest when it writes the HTML report or JUnit XML
    (pytest-html and pytest's own writer make them, staged in ``outputs``), else
    straight (``cli.direct``), with the known failures the run loaded."""
    if options.html is None and options.junit is None:
        try:
            return run_directly(options, work, corpus=corpus, expectations=known, process=process)
        except RunStopped as exc:
            raise RunError(str(exc)) from None
    from .pytest_session import run_through_pytest  # (pytest loads only for its reports)

    return run_through_pytest(options, len(work), corpus=corpus, process=process, outputs=outputs)


def _unfinished(request: RunOptions, outputs: Batch) -> str:
    """The line of a run interrupted after its last case run, while its outputs were written."""
    asked = [getattr(request, name) for _, name in _OUTPUTS if getattr(request, name)]
    written = ", ".join(map(str, outputs.written)) or "none"
    unwritten = ", ".join(str(p) for p in asked if p not in outputs.written) or "none"
    return f"interrupted while writing the outputs: written: {written}; not written: {unwritten}"


def _report(
    request: RunOptions,
    ran: tuple[list[Result], int, str],
    work: list[Any],
    corpus: Corpus,
    probe: AdapterProcess,
    outputs: Batch,
    waiting: list[Any],
    drawn: bool,
) -> tuple[list[Result], dict[str, Any], dict[Path, str]]:
    """Check the case runs, print their summary, stage the outputs in ``outputs``;
    the results in order, their summary and the line naming each output."""
    results, code, output = ran
    seed = cast(int, request.seed)  # (drawn by _execute)
    if request.exitfirst and code == 1 and len(results) < len(work):
        print(f"stopped at the first failure (-x) after {len(results)} of {len(work)} case runs")
        work = work[: len(results)]
    if len(results) != len(work):
        tail = " | ".join(line for line in output.strip().splitlines()[-3:])
        raise RunError(
            f"the run stopped after {len(results)} of {len(work)} case runs "
            f"(pytest exit {code})" + (f": {tail}" if tail else "")
        )
    order = {(c.id, t): i for i, (c, t) in enumerate(work)}
    results.sort(key=lambda r: order[(r.case.id, r.transport)])
    adapter = {
        "name": probe.name,
        "version": probe.version,
        "spec": request.spec,
        "capabilities": sorted(probe.capabilities),
    }
    print_summary(
        results,
        f"{probe.name} {probe.version}",
        corpus.version,
        sys.stdout,
        details=request.verbosity >= 0,
        in_process=not request.http,
    )
    if waiting:
        print(awaiting_notice(len(waiting)))
    if "random" in request.transports:
        _print_seeds(results, request.seeds, seed, drawn)
    with outputs.collecting():
        return results, *_write_outputs(request, results, corpus, adapter, seed)


def _print_seeds(results: list[Result], seeds: list[int], seed: int, drawn: bool) -> None:
    if len(seeds) <= 1:
        how = "drawn" if drawn else "default" if seed == DEFAULT_SEED else "given"
        print(f"random transport seed {seed} ({how}; rerun with --seed {seed})")
        return
    partial = [r for r in results if r.partial and r.seeds is not None]
    print(
        f"random transport {seed_words(seeds)}: "
        f"{len(partial)} case{'s' * (len(partial) != 1)} fail under some seeds only"
    )
    for result in partial:
        assert result.seeds is not None
        print(
            f"  {result.case.id}: fails under {seed_words(result.seeds['failing'])}, "
            f"passes under {seed_words(result.seeds['passing'])}"
        )


def _write_outputs(
    request: RunOptions, results: list[Result], corpus: Corpus, adapter: dict[str, Any], seed: int
) -> tuple[dict[str, Any], dict[Path, str]]:
    """Write every output asked for (staged, in ``execute_run``); return the
    results' summary and the line naming each output, to print once it is written."""
    summary: dict[str, Any] = {**summarize(results), **coverage_of(results)}
    asked = ((label, getattr(request, name)) for label, name in _OUTPUTS)
    lines = {path: f"{label}: {path}" for label, path in asked if path}
    # What both documents are made of.
    made_of: dict[str, Any] = {
        "corpus": corpus,
        "adapter": adapter,
        "transports": request.transports,
        "seed": seed,
        "in_process": not request.http,
    }
    if request.json or request.write_expect:  # (the whole document only where it is written)
        document = results_document(results, **made_of)
        if len(request.seeds) > 1:
            document["run"]["seeds"] = request.seeds
        document["run"].update(plan_record(request))  # (options, and the shard of one)
        if request.json:
            write_json(document, request.json)
        if request.write_expect:
            from ..reporting.known_failures import write_expectations  # (--write-expect only)

            written = write_expectations(document, request.write_expect)
            lines[request.write_expect] += f" ({len(written['expectations'])} entries)"
    if request.baseline:
        baseline = baseline_document(results, **made_of)
        if len(request.seeds) > 1:
            baseline["seeds"] = request.seeds
            for row, result in zip(baseline["results"], results, strict=True):
                if result.seeds is not None:
                    row["seeds"] = result.seeds
        write_baseline(baseline, request.baseline)
    return summary, lines


# Each output file a run can write: its label, and the option naming it.
_OUTPUTS = [("results", "json"), ("expectations", "write_expect"), ("baseline", "baseline")]
_OUTPUTS += [("report", "html"), ("junit", "junit")]
