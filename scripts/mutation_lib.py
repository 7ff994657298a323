"""Mutation testing of the reference parser, with the corpus as the only test.

The mutants (``mutation_mutants`` makes them) each change one thing in one
function of ``streamproof/reference/`` (``sse``, ``chat``, ``choices``,
``reader``); here the reference modules are executed afresh in this process with the mutant in
place, and every corpus case is replayed through the mutated
``ResponseReader`` under ``whole``, a few fixed ``random`` seeds and
``bytes``. A mutant is killed by the first case run whose outcome the
harness would fail (``comparison.best_alternative``, and
``incremental.check_deltas`` on a streamed body, since the reference adapter
claims ``incremental``), or that raises, or that takes too long.

Why not mutmut or cosmic-ray: both rewrite the file on disk and run a test
command per mutant in a new process, so each mutant pays the interpreter
start, the package import and the corpus load (about 1.5 s here) before its
first case; here one worker loads the corpus once, swaps only the module
objects, and most mutants die on the first cases.

``scripts/mutation`` runs it all and writes ``reports/mutation.md`` with
``mutation_report``;
``tests/test_mutation.py`` runs a handful of mutants.
"""

from __future__ import annotations

import resource
import signal
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mutation_mutants import (
    ROOT,
    SECTIONS,
    SOURCE_DIR,
    TARGETS,
    Mutant,
    mutants,
    mutated_source,
    source_of,
)

__all__ = [
    "ROOT",
    "SECTIONS",
    "TARGETS",
    "TRANSPORTS",
    "Mutant",
    "Result",
    "Run",
    "check_mutant",
    "corpus_runs",
    "load_reference",
    "mutants",
    "mutated_source",
    "run_mutants",
    "source_of",
    "verdict",
]

PACKAGE = "streamproof.reference"
#: Every module of the reference parser, in the order they import each other.
LOAD_ORDER = ("fastjson", "sse", "choices", "chat", "reader")
TRANSPORTS = ("whole", "random:1", "random:2", "random:3", "bytes")
#: Seconds one case run of a mutant may take before it counts as killed (a hang).
RUN_SECONDS = 5.0


# -- loading a variant of the reference parser --------------------------------


def load_reference(replaced: dict[str, str] | None = None) -> dict[str, types.ModuleType]:
    """The reference modules executed afresh, ``replaced`` (module -> code) in place.

    They are registered in ``sys.modules`` while they run, so their relative
    imports find each other; the previous entries are put back after.
    """
    replaced = replaced or {}
    saved = {name: sys.modules.get(f"{PACKAGE}.{name}") for name in LOAD_ORDER}
    loaded: dict[str, types.ModuleType] = {}
    try:
        for name in LOAD_ORDER:
            path = SOURCE_DIR / f"{name}.py"
            module = types.ModuleType(f"{PACKAGE}.{name}")
            module.__file__ = str(path)
            module.__package__ = PACKAGE
            sys.modules[module.__name__] = module
            code = replaced.get(name)
            text = code if code is not None else source_of(name)
            exec(compile(text, str(path), "exec"), module.__dict__)
            loaded[name] = module
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(f"{PACKAGE}.{name}", None)
            else:
                sys.modules[f"{PACKAGE}.{name}"] = old
    return loaded


# -- the corpus as the test ---------------------------------------------------


@dataclass(frozen=True)
class Run:
    case: str
    transport: str
    status: int
    headers: dict[str, str]
    request: dict[str, Any]
    body: bytes
    reads: list[bytes]
    alternatives: list[Any]
    incremental: bool  # a streamed body: the deltas are checked


def corpus_runs(
    transports: tuple[str, ...] = TRANSPORTS, cases: list[str] | None = None
) -> list[Run]:
    """Every case under every transport, transport by transport (the quick ones first).

    A ``wire/`` case (one with a ``fault``) is left out: its outcome comes
    from a broken connection, which only ``run --http`` produces, and an
    in-process run skips it just the same.
    """
    from streamproof.corpus import load_corpus
    from streamproof.harness.incremental import covers
    from streamproof.harness.transports import boundaries, split

    corpus = load_corpus()
    chosen = [c for c in corpus.cases if (cases is None or c.id in cases) and c.fault is None]
    runs: list[Run] = []
    for transport in transports:
        name, _, seed = transport.partition(":")
        for case in chosen:
            ends = boundaries(case.body, name, seed=int(seed or 0), case_dir=case.dir)
            runs.append(
                Run(
                    case.id,
                    transport,
                    case.status,
                    case.headers,
                    case.request,
                    case.body,
                    split(case.body, ends),
                    case.alternatives,
                    covers(case.status, case.headers, case.request),
                )
            )
    return runs


class _Hang(BaseException):
    """A case run took longer than RUN_SECONDS (a BaseException: no ``except`` takes it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang


def verdict(reader_class: Any, run: Run) -> str | None:
    """Why the harness would fail this run of the parser, or ``None`` when it passes."""
    from streamproof.corpus.schemas import schema_errors
    from streamproof.harness.comparison import best_alternative
    from streamproof.harness.incremental import check_deltas

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    ends: list[int] = []
    try:
        reader = reader_class(run.status, run.headers, run.request)
        deltas = []
        at = 0
        for data in run.reads:
            at += len(data)
            ends.append(at)
            for choice, text in reader.feed(data):
                deltas.append({"choice": choice, "content": text, "at_byte": at})
        outcome = reader.close()
    except _Hang:
        return f"hangs for more than {RUN_SECONDS:g}s"
    except (Exception, RecursionError) as exc:  # a crash is a failure the harness reports
        return f"raises {type(exc).__name__}: {str(exc)[:80]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    try:
        if run.transport == "whole":  # the outcome's shape, checked once per case as judge does
            problem = schema_errors("outcome", outcome)
            if problem:
                return f"outcome does not match the outcome schema: {problem[:80]}"
        found = best_alternative(run.alternatives, outcome)
        if found:
            return str(found[0])[:120]
        if run.incremental:
            late = check_deltas(run.body, ends, deltas, outcome)
            if late:
                return f"incremental: {late[:100]}"
    except Exception as exc:  # an outcome the harness cannot even read
        return f"outcome not readable: {type(exc).__name__}"
    return None


@dataclass(frozen=True)
class Result:
    mutant: Mutant
    killed_by: str | None  # "case [transport]", or None when it survived
    reason: str


def check_mutant(mutant: Mutant, runs: list[Run]) -> Result:
    """Run the corpus against one mutant; stop at the first run that fails."""
    try:
        code, _ = mutated_source(mutant)
        modules = load_reference({mutant.module: code})
    except Exception as exc:  # the mutant does not even load: killed at import
        return Result(mutant, "(import)", f"{type(exc).__name__}: {exc}")
    reader_class = modules["reader"].ResponseReader
    for run in runs:
        why = verdict(reader_class, run)
        if why is not None:
            return Result(mutant, f"{run.case} [{run.transport}]", why)
    return Result(mutant, None, "")


_RUNS: list[Run] = []


def _init_worker(cases: list[str] | None) -> None:
    global _RUNS
    # A mutant that grows a buffer for ever fails with MemoryError, not the machine.
    limit = 3 * 1024**3
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    _RUNS = corpus_runs(cases=cases)


def _check_in_worker(mutant: Mutant) -> Result:
    return check_mutant(mutant, _RUNS)


def run_mutants(
    chosen: list[Mutant],
    jobs: int = 2,
    cases: list[str] | None = None,
    progress: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Check every mutant in ``chosen``, in ``jobs`` processes (at most 2).

    Raises ``ValueError`` when the parser as it is fails a run: a mutant
    "killed" by a run that fails anyway says nothing.
    """
    jobs = max(1, min(jobs, 2))
    reader = load_reference()["reader"].ResponseReader
    failing = [(r, why) for r in corpus_runs(cases=cases) if (why := verdict(reader, r))]
    if failing:
        run, why = failing[0]
        raise ValueError(
            f"the unmutated parser fails {len(failing)} runs, e.g. {run.case} "
            f"[{run.transport}]: {why}"
        )
    results: list[Result] = []
    if jobs == 1:
        runs = corpus_runs(cases=cases)
        for mutant in chosen:
            results.append(check_mutant(mutant, runs))
            if progress:
                progress(results[-1])
        return results
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_init_worker, initargs=(cases,)) as pool:
        for result in pool.imap(_check_in_worker, chosen, chunksize=4):
            results.append(result)
            if progress:
                progress(result)
    return results
