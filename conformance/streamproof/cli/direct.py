"""``streamproof run`` without pytest, for a run that writes neither of pytest's reports.

pytest is what writes the HTML report (pytest-html) and the JUnit XML; a run
asked for neither (``--no-html``, no ``--junit``: results JSON, a baseline, the
terminal alone, each shard of a CI matrix) has no use for it, and importing it
and walking thousands of items through its hooks cost a run a fixed part of a
second and some CPU per case run. Here the plan runs straight through the
engines pytest's items would call (``harness.engines``), in the same order,
under the same rules: a run fails (and stops ``-x``) exactly when its pytest
item would; ``--fail-on`` and known failures are applied by the same code. A
run gives the same results either way but for the time each case run took
(``tests/test_run_direct.py`` holds the two side by side).
"""

from __future__ import annotations

import sys

from ..corpus.cases import SEVERITIES, Case, Corpus, CorpusError
from ..harness.engine import Result, Verdict
from ..harness.expectations import Expectations
from ..harness.loader import AdapterError
from ..harness.protocol import AdapterProcess
from ..reporting.terminal import Progress
from .engines import RunEngines
from .run_options import RunInterrupted, RunOptions

__all__ = ["RunStopped", "fails_the_run", "run_directly"]

# The verdicts pytest reports as passed, skipped or xfailed; any other fails the
# run at or above --fail-on (plugin.items.StreamproofItem.runtest).
_NOT_FAILING = (Verdict.PASS, Verdict.SKIP, Verdict.XFAIL)


class RunStopped(Exception):
    """The run could not go on (an adapter that does not start, a case file that
    changed since the corpus was loaded); the message is one line."""

    def __init__(self, done: int, total: int, reason: str) -> None:
        super().__init__(f"the run stopped after {done} of {total} case runs: {reason}")


def fails_the_run(result: Result, fail_on: str) -> bool:
    """True when ``result`` is a failure of the run, as its pytest item's report says."""
    if result.verdict in _NOT_FAILING:
        return False
    return SEVERITIES.index(result.case.severity) <= SEVERITIES.index(fail_on)


def run_directly(
    options: RunOptions,
    work: list[tuple[Case, str]],
    *,
    corpus: Corpus,
    expectations: Expectations | None = None,
    process: AdapterProcess | None = None,
) -> tuple[list[Result], int, str]:
    """Run ``work``; return the results, 1 if any fails the run else 0, and ``""``.

    The same contract as ``pytest_session.run_through_pytest`` (nothing here is
    staged: pytest's two reports are not written). ``expectations``: the run's
    ``--expect``, as it loaded them. ``RunInterrupted`` when a
    ``KeyboardInterrupt`` stopped the run; ``RunStopped`` when it could not go on.
    """
    seed = options.seed if options.seed is not None else 0  # (drawn by the run)
    engines = RunEngines(
        options.spec,
        corpus,
        seed=seed,
        seeds=options.seeds if len(options.seeds) > 1 else [seed],
        timeout=options.timeout,
        expectations=expectations,
        http=options.http,
        trace=options.trace,
        jobs=options.jobs,
        process=process,
    )
    progress = Progress(len(work), sys.stderr, every=options.verbosity > 0)
    results: list[Result] = []
    failed = 0
    try:
        try:
            runner = engines.get(work)
        except AdapterError as exc:
            raise RunStopped(0, len(work), str(exc)) from None
        except OSError as exc:  # --trace at a link, a folder, a missing folder
            said = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
            raise RunStopped(0, len(work), said) from None
        for case, transport in work:
            try:
                result = runner.run(case, transport)
            except CorpusError as exc:  # a case file changed since the corpus was loaded
                raise RunStopped(len(results), len(work), "; ".join(exc.problems)) from None
            # The outcome has served the run (its verdict is judged): as the pytest
            # path does, thousands of results need not keep it.
            results.append(result.without_outcome())
            progress.step(result)
            if fails_the_run(result, options.fail_on):
                failed = 1
                if options.exitfirst:
                    break
    except KeyboardInterrupt:
        raise RunInterrupted(len(results), len(work)) from None
    finally:
        progress.done()
        for fault in engines.stop():  # between cases: no case's verdict
            print(f"streamproof: adapter fault {fault}", file=sys.stderr)
    return results, failed, ""
