"""The engine: every case × transport through one adapter, as result values.

The runner knows adapters only through ``Adapter.run`` and knows parsers not
at all. Each result is a value (``Result``) from which the terminal summary,
the JSON file and later reports are all rendered.
"""

from __future__ import annotations

import enum
import fnmatch
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .adapter import Adapter, ReplayResponse
from .chunking import boundaries
from .comparison import Divergence, best_alternative
from .corpus import Case
from .schemas import schema_errors

__all__ = ["DEFAULT_TRANSPORTS", "Result", "Verdict", "plan", "run_case", "run_plan"]

DEFAULT_TRANSPORTS = ("whole", "lines", "bytes", "random", "recorded")


class Verdict(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    CRASH = "crash"
    TIMEOUT = "timeout"
    XFAIL = "xfail"
    XPASS = "xpass"


@dataclass(frozen=True)
class Result:
    """The verdict on one case under one transport."""

    case: Case
    transport: str
    verdict: Verdict
    mismatches: list[Divergence] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0
    outcome: dict[str, Any] | None = None

    @property
    def first_divergence(self) -> str:
        if self.mismatches:
            return str(self.mismatches[0])
        return self.message

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case": self.case.id,
            "transport": self.transport,
            "verdict": self.verdict.value,
            "severity": self.case.severity,
            "expected_sha256": self.case.expected_sha256,
            "mismatches": [m.as_dict() for m in self.mismatches],
            "seconds": round(self.seconds, 6),
        }
        if self.message:
            data["message"] = self.message
        return data


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


def run_case(adapter: Adapter, case: Case, transport: str, *, seed: int = 0) -> Result:
    """Run one case under one transport; never raises for the adapter's faults."""
    missing = case.requires - adapter.capabilities
    if missing:
        return Result(
            case, transport, Verdict.SKIP, message=f"adapter lacks {', '.join(sorted(missing))}"
        )
    response = ReplayResponse(
        status=case.status,
        headers=case.headers,
        request=case.request,
        case_id=case.id,
        transport=transport,
        body=case.body,
        ends=boundaries(case.body, transport, seed=seed, case_dir=case.dir),
    )
    started = time.perf_counter()
    try:
        outcome = adapter.run(response)
    except Exception as exc:  # the adapter's fault is a verdict, never ours
        return Result(
            case,
            transport,
            Verdict.CRASH,
            message=_one_line(exc),
            seconds=time.perf_counter() - started,
        )
    seconds = time.perf_counter() - started
    return judge(case, transport, outcome, seconds)


def judge(case: Case, transport: str, outcome: Any, seconds: float) -> Result:
    """Compare what the adapter returned with the case's expectation."""
    if not isinstance(outcome, dict):
        return Result(
            case,
            transport,
            Verdict.FAIL,
            seconds=seconds,
            message=f"adapter returned {type(outcome).__name__}, not an outcome object",
        )
    problem = schema_errors("outcome", outcome)
    if problem:
        return Result(
            case,
            transport,
            Verdict.FAIL,
            seconds=seconds,
            outcome=outcome,
            message=f"outcome does not match the outcome schema: {problem}",
        )
    mismatches = best_alternative(case.alternatives, outcome)
    verdict = Verdict.FAIL if mismatches else Verdict.PASS
    return Result(case, transport, verdict, mismatches, seconds=seconds, outcome=outcome)


def run_plan(
    adapter: Adapter,
    work: list[tuple[Case, str]],
    *,
    seed: int = 0,
    on_result: Callable[[Result], None] | None = None,
) -> Iterator[Result]:
    for case, transport in work:
        result = run_case(adapter, case, transport, seed=seed)
        if on_result is not None:
            on_result(result)
        yield result


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
