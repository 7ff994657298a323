"""``streamproof run``: check the inputs, drive pytest, report, pick the exit status."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

from .corpus import load_corpus
from .expect_writer import write_expectations
from .expectations import load_expectations
from .harness import RunOptions, run_through_pytest
from .process import AdapterProcess
from .results import (
    baseline_document,
    exit_status,
    results_document,
    write_baseline,
    write_json,
)
from .review import awaiting_notice, awaiting_review
from .runner import plan, select
from .terminal import print_summary

__all__ = ["DEFAULT_REPORT", "RunError", "execute_run"]

# Where a run with no --adapter and no --html writes its report.
DEFAULT_REPORT = "streamproof-report.html"


class RunError(Exception):
    """The run could not be carried out (exit 2)."""


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
    probe = AdapterProcess(request.spec)
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
