"""The engine: every case × transport through one adapter, as result values.

The runner knows adapters only through ``Adapter.run`` and knows parsers not
at all. Each result is a value (``Result``) from which the terminal summary,
the JSON file and later reports are all rendered.
"""

from __future__ import annotations

import fnmatch
import queue
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..corpus.cases import Case
from ..corpus.checked import outcome_text, schema_problem
from .expectations import Expectation, Expectations, by_group, merged_groups, merged_seeds
from .incremental import check_deltas
from .loader import AdapterError
from .messages import run_message
from .projection import CAPABILITIES, GroupPlan, judge_groups, plan_groups
from .protocol import AdapterProcess
from .trace import TraceFile
from .transports import boundaries, seed_words
from .verdicts import Result, Verdict

__all__ = [
    "Engine",
    "Result",
    "Verdict",
    "default_timeout",
    "judge",
    "plan",
    "run_all",
    "select",
    "skip_result",
]


def transports_for(case: Case, wanted: Iterable[str]) -> list[str]:
    """The transports of ``wanted`` that apply to ``case`` (``recorded`` needs chunks)."""
    return [t for t in wanted if t != "recorded" or case.has_chunks]


def select(cases: Iterable[Case], globs: list[str]) -> list[Case]:
    """Runnable cases whose id matches any glob (all when there are none)."""
    chosen = [c for c in cases if c.runnable]
    if globs:
        chosen = [c for c in chosen if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    return chosen


def plan(cases: Iterable[Case], transports: Iterable[str]) -> list[tuple[Case, str]]:
    wanted = list(transports)
    return [(case, t) for case in cases for t in transports_for(case, wanted)]


def default_timeout(case: Case) -> float:
    """Seconds a case may take: 10, plus 30 for every MB of body (the bytes
    transport of a large body is a million reads for a parser in Python)."""
    return 10.0 + 30.0 * len(case.body) / 1_000_000


# The replies that carry no outcome to judge.
_VERDICTS = {"crash": Verdict.CRASH, "timeout": Verdict.TIMEOUT, "invalid": Verdict.FAIL}


class Engine:
    """Runs cases through one adapter in its own restartable process."""

    def __init__(
        self,
        spec: str,
        *,
        seed: int = 0,
        seeds: Sequence[int] | None = None,
        timeout: float | None = None,
        expectations: Expectations | None = None,
        http: Callable[[str, str], str] | None = None,
        trace: str | Path | None = None,
        process: AdapterProcess | None = None,
    ) -> None:
        """``trace``: a file the protocol traffic is appended to (``TraceFile``)."""
        self.seed = seed
        # The random transport runs once per seed when several are given.
        self.seeds = list(seeds) if seeds else [seed]
        self.timeout = timeout
        self.expectations = expectations
        self.http = http  # over real HTTP: the base URL that replays (case id, transport)
        # The handshake's time limit follows --timeout (see AdapterProcess).
        self.trace = TraceFile(Path(trace)) if trace is not None else None
        # ``process``: one already started for ``spec`` (``streamproof run``'s probe).
        if process is None:
            process = AdapterProcess(spec, timeout=timeout, trace=self.trace)
            try:
                process.start()
            except AdapterError:
                self._close_trace()
                raise
        self.process = process
        self._plans: dict[tuple[str, str], GroupPlan] = {}
        if http is not None and not self.process.supports_call:
            self.close()
            raise AdapterError(
                f"{spec}: defines no call(base_url, request), so it cannot "
                "be scored over HTTP (--http is not applicable)"
            )

    @property
    def capabilities(self) -> frozenset[str]:
        return self.process.capabilities

    def close(self) -> None:
        self.process.close()
        self._close_trace()

    def _close_trace(self) -> None:
        if self.trace is not None:
            self.trace.close()

    def run(self, case: Case, transport: str) -> Result:
        """One case under one transport, with known failures applied.

        Under ``random`` with several seeds, the case runs once per seed and
        the one result says which seeds it failed and passed under.
        """
        if transport == "random" and len(self.seeds) > 1:
            return self._run_seeds(case)
        return self._expect(self._run(case, transport, self.seed), self.seed)

    def _run_seeds(self, case: Case) -> Result:
        runs: list[tuple[int, Result]] = []
        for seed in self.seeds:
            result = self._run(case, "random", seed)
            if result.verdict is Verdict.SKIP:  # the same under every seed
                return result
            runs.append((seed, result))
        entry = self.expectations.find(case.id, "random") if self.expectations else None
        failing = [s for s, r in runs if r.verdict is not Verdict.PASS]
        passing = [s for s, r in runs if r.verdict is Verdict.PASS]
        seeds = merged_seeds(entry, failing, passing)
        seconds = sum(r.seconds for _, r in runs)
        judged = [(s, r, self._expect(r, s)) for s, r in runs]
        if entry is not None and not passing and entry.all_failing_is_regression(self.seeds):
            seed, raw = next((s, r) for s, r in runs if s not in (entry.failing_seeds or ()))
            note = (
                f"listed as failing under {seed_words(sorted(entry.failing_seeds or ()))} only, "
                f"now fails under every seed tried ({seed_words(self.seeds)})"
            )
            chosen = replace(raw, message=f"{note}; {raw.verdict.value}: {raw.first_divergence}")
            return replace(chosen, seeds=seeds, seconds=seconds)
        for wanted in (_FAILED, {Verdict.XPASS}, {Verdict.XFAIL}, {Verdict.PASS}):
            found = next((j for _, _, j in judged if j.verdict in wanted), None)
            if found is not None:
                break
        assert found is not None
        if found.verdict is Verdict.XPASS and entry is not None and failing:
            found = replace(
                found,
                message=f"listed as a known failure ({entry.reason}) but passed under "
                f"{seed_words(passing)}: it fails under some seeds only, record them "
                "(run --seeds … --write-expect)",
            )
        return replace(
            found, seeds=seeds, seconds=seconds, groups=merged_groups(r for _, r in runs)
        )

    def _run(self, case: Case, transport: str, seed: int) -> Result:
        plan = self._plan(case)
        skipped = skip_result(plan, transport)
        if skipped is not None:
            return skipped
        ends = boundaries(case.body, transport, seed=seed, case_dir=case.dir)
        if self.http is not None:
            message = {
                "cmd": "call",
                "base_url": self.http(case.id, transport),
                "request": case.request,
            }
        else:
            message = run_message(
                case.id,
                transport,
                case.status,
                case.headers,
                case.request,
                case.body,
                ends,
                compact=self.process.compact_boundaries,
            )
        started = time.perf_counter()
        reply = self.process.run(message, self.timeout or default_timeout(case))
        seconds = time.perf_counter() - started
        verdict = _VERDICTS.get(reply.kind)
        if verdict is not None:
            groups, _, _ = judge_groups(plan, None)  # wrong for every group it would judge
            return Result(
                case,
                transport,
                verdict,
                message=reply.message,
                seconds=seconds,
                output=reply.output,
                traceback=reply.traceback,
                frames=reply.frames,
                at_byte=reply.at_byte,
                groups=groups,
                not_exposed=tuple(sorted(plan.not_exposed)),
            )
        # Incremental delivery is checked in-process only (semantics §11): over a
        # socket nobody knows how many bytes the client had read.
        result = judge(
            case,
            transport,
            reply.outcome,
            seconds,
            None if self.http else ends,
            claims_incremental="incremental" in self.capabilities,
            plan=plan,
        )
        return replace(result, output=reply.output) if reply.output else result

    def _plan(self, case: Case) -> GroupPlan:
        """The groups this adapter is judged on for ``case`` (kept per case)."""
        key = (case.id, case.expected_sha256)
        found = self._plans.get(key)
        if found is None:
            found = plan_groups(case, self.capabilities, in_process=self.http is None)
            self._plans[key] = found
        return found

    def _expect(self, result: Result, seed: int) -> Result:
        entry = self.expectations and self.expectations.find(result.case.id, result.transport)
        if not entry or result.verdict is Verdict.SKIP:
            return result
        if entry.failing_seeds is not None:
            return _expect_by_seed(result, entry, seed)
        if result.verdict is Verdict.PASS:
            note = f"listed as a known failure ({entry.reason}) but passed: remove the entry"
            return replace(result, verdict=Verdict.XPASS, message=note)
        return _known(result, entry)


_FAILED = frozenset({Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT})


def _expect_by_seed(result: Result, entry: Expectation, seed: int) -> Result:
    """A known failure that names its seeds, judged under ``seed`` (expectations.py)."""
    passed = result.verdict is Verdict.PASS
    seeds = merged_seeds(entry, [] if passed else [seed], [seed] if passed else [])
    if passed and not entry.expected_to_pass(seed):
        note = (
            f"listed as a known failure under seed {seed} ({entry.reason}) but passed: "
            "record the seeds again (run --seeds … --write-expect)"
        )
        return replace(result, verdict=Verdict.XPASS, message=note, seeds=seeds)
    if not passed and entry.expected_to_fail(seed):
        return replace(_known(result, entry), seeds=seeds)
    return replace(result, seeds=seeds)


def _known(result: Result, entry: Expectation) -> Result:
    """``result``, a failure, as the known failure ``entry`` (``xfail``), unless its
    groups tell otherwise (``_by_group``)."""
    judged = by_group(result, entry)
    if judged is not None:
        return judged
    note = f"known failure: {entry.reason}" + (f" ({entry.issue})" if entry.issue else "")
    detail = result.first_divergence
    return replace(
        result, verdict=Verdict.XFAIL, message=f"{note}; {result.verdict.value}: {detail}"
    )


def skip_result(plan: GroupPlan, transport: str) -> Result | None:
    """The skip of a run whose case the adapter is judged on nothing of (semantics §12.6)."""
    case = plan.case
    if plan.gap == "real-connection":  # semantics §5.4: wire/ cases
        assert case.fault is not None
        what = f"fault {case.fault['kind']} after byte {case.fault['after_byte']}"
        reason = f"{what} exists only on a real connection; run --http scores it"
        return Result(
            case, transport, Verdict.SKIP, message=reason, not_exposed=tuple(sorted(plan.stated))
        )
    if plan.gap or not plan.exposed:
        lacking = ", ".join(plan.lacking) or "every capability its expectation needs"
        return Result(
            case,
            transport,
            Verdict.SKIP,
            message=f"adapter lacks {lacking}",
            not_exposed=tuple(sorted(plan.stated)),
        )
    return None


def judge(
    case: Case,
    transport: str,
    outcome: Any,
    seconds: float,
    ends: list[int] | None = None,
    *,
    claims_incremental: bool = False,
    capabilities: frozenset[str] = CAPABILITIES,
    plan: GroupPlan | None = None,
) -> Result:
    """Compare what the adapter returned with the case's expectation, group by group.

    Each field group the case states and the adapter exposes is compared on its
    own (``harness.projection``, semantics §12.6); the run fails when any does. The
    deltas are checked (semantics §11) on a case that states them, and on every
    streamed case when the adapter claims ``incremental`` and reports deltas;
    ``Result.incremental`` says the check ran.
    """
    if plan is None:
        caps = capabilities - {"incremental"} | ({"incremental"} if claims_incremental else set())
        plan = plan_groups(case, caps, in_process=ends is not None)
    not_exposed = tuple(sorted(plan.not_exposed))
    if not isinstance(outcome, dict):
        return Result(
            case,
            transport,
            Verdict.FAIL,
            seconds=seconds,
            message=f"adapter returned {type(outcome).__name__}, not an outcome object",
            groups=judge_groups(plan, None)[0],
            not_exposed=not_exposed,
        )
    problem = schema_problem("outcome", outcome, outcome_text(outcome))
    if problem:
        return Result(
            case,
            transport,
            Verdict.FAIL,
            seconds=seconds,
            outcome=outcome,
            message=f"outcome does not match the outcome schema: {problem}",
            groups=judge_groups(plan, None)[0],
            not_exposed=not_exposed,
        )
    checked = (
        ends is not None and plan.checks_deltas and ("deltas" in plan.stated or "deltas" in outcome)
    )
    late = None
    if checked and ends is not None:
        late = check_deltas(case.body, ends, outcome.get("deltas"), outcome)
    groups, mismatches, _ = judge_groups(
        plan, outcome, deltas_checked=checked, deltas_problem=late or None
    )
    failed = any(v == "fail" for v in groups.values())
    if not failed:
        return Result(
            case,
            transport,
            Verdict.PASS,
            seconds=seconds,
            outcome=outcome,
            incremental=checked,
            groups=groups,
            not_exposed=not_exposed,
        )
    # The incremental check's finding is a message, as it always was; the
    # divergences are those of the other groups.
    shown = [m for m in mismatches if not (late and m.path == "deltas")]
    return Result(
        case,
        transport,
        Verdict.FAIL,
        shown,
        message=f"incremental: {late}" if late and not shown else "",
        seconds=seconds,
        outcome=outcome,
        incremental=checked,
        groups=groups,
        not_exposed=not_exposed,
    )


def run_all(
    engines: list[Engine],
    work: list[tuple[Case, str]],
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Run ``work`` over as many engines as given (one thread each), in plan order."""
    results: list[Result | None] = [None] * len(work)
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(work)):
        todo.put(i)
    lock = threading.Lock()

    def drain(engine: Engine) -> None:
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            result = engine.run(*work[i])
            results[i] = result
            if on_result is not None:
                with lock:
                    on_result(result)

    threads = [threading.Thread(target=drain, args=(e,), daemon=True) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for r in results if r is not None]
