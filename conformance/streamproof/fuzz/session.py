"""One fuzzing session: draw, render, run through the adapter, judge, shrink.

The adapter runs in its own process (``harness.protocol.AdapterProcess``),
exactly as ``streamproof run`` runs it, and every outcome is judged by
``harness.engine.judge`` against the model's expectation, so the comparison
module's conventions (semantics §12.5) apply and a convention is never reported.
Everything random comes from one ``random.Random(seed)``: the same seed
draws the same responses and the same reads.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..harness.engine import Result, Verdict, judge
from ..harness.messages import run_message
from ..harness.protocol import AdapterProcess
from ..harness.transports import boundaries
from .case import event_count, judgeable, replay_transport, to_case, write_candidate
from .generate import draw
from .model import Response
from .shrink import shrink_reads, shrink_response

__all__ = ["Finding", "Fuzzer", "Report"]

TRANSPORTS = ("whole", "lines", "bytes", "random")
#: Adapter runs the shrinker may spend on one disagreement.
SHRINK_BUDGET = 600


@dataclass(frozen=True)
class Finding:
    """A shrunk disagreement and where its candidate case was written."""

    example: int
    response: Response
    ends: list[int]
    result: Result
    folder: Path | None

    @property
    def events(self) -> int:
        return event_count(self.response)

    def summary(self, adapter: str) -> str:
        """One line; with a written candidate, its run id (``CASE [TRANSPORT]``, the
        reads that show the divergence) and the corpus folder it is in."""
        where = ""
        if self.folder is not None:
            case_id = f"{self.folder.parent.name}/{self.folder.name}"
            corpus = self.folder.parent.parent.parent
            where = f" -> {case_id} [{replay_transport(self.ends)}] in {corpus}"
        return (
            f"{adapter}: disagreement at example {self.example}, shrunk to "
            f"{self.events} event(s) in {len(self.ends)} read(s): {_detail(self.result)}{where}"
        )


@dataclass(frozen=True)
class Report:
    examples: int
    skipped: int
    findings: list[Finding]

    @property
    def finding(self) -> Finding | None:
        return self.findings[0] if self.findings else None


def _detail(result: Result) -> str:
    if result.verdict in (Verdict.CRASH, Verdict.TIMEOUT):
        return f"{result.verdict.value}: {result.message}"
    return result.first_divergence


def _signature(result: Result) -> str:
    """How a run disagrees, as coarsely as shrinking must keep it: the verdict,
    and for a fail the first divergence's field group (``choices.tool_calls``)."""
    if result.verdict is not Verdict.FAIL:
        return str(result.verdict.value)
    if result.mismatches:
        path = re.sub(r"\[\d+\]", "", result.mismatches[0].path)
        return ".".join(path.split(".")[:2])
    return result.message.split(":")[0]


class Fuzzer:
    """Draws responses for one adapter process and judges its outcomes."""

    def __init__(self, process: AdapterProcess, *, seed: int = 0, timeout: float = 10.0) -> None:
        self.process = process
        self.seed = seed
        self.timeout = timeout
        self.rng = random.Random(seed)
        self.capabilities = process.capabilities

    def check(self, response: Response, ends: list[int]) -> Result:
        """One run of ``response`` cut at ``ends``, judged against the model."""
        case = to_case(response, self.capabilities)
        message = run_message(
            case.id, "fuzz", case.status, case.headers, case.request, case.body, ends
        )
        started = time.perf_counter()
        reply = self.process.run(message, self.timeout)
        seconds = time.perf_counter() - started
        if reply.kind in ("crash", "timeout"):
            verdict = Verdict.CRASH if reply.kind == "crash" else Verdict.TIMEOUT
            return Result(case, "fuzz", verdict, message=reply.message, seconds=seconds)
        if reply.kind == "invalid":
            return Result(case, "fuzz", Verdict.FAIL, message=reply.message, seconds=seconds)
        return judge(case, "fuzz", reply.outcome, seconds, ends, capabilities=self.capabilities)

    def reads(self, response: Response, transport: str, seed: int) -> list[int]:
        body = to_case(response, self.capabilities).body
        return boundaries(body, transport, seed=seed) or [0]

    def run(
        self,
        *,
        max_examples: int = 200,
        seconds: float | None = None,
        out: Path | None = None,
        adapter: str = "adapter",
        keep_going: int = 1,
    ) -> Report:
        """Examples until ``keep_going`` distinct disagreements, ``max_examples``
        or ``seconds``; each disagreement is shrunk (and written under ``out``).

        Two disagreements are the same when they shrink to the same signature
        and quirks; one whose signature is known and whose response has the
        known one's quirks is taken for it without shrinking.
        """
        deadline = None if seconds is None else time.monotonic() + seconds
        skipped = 0
        findings: list[Finding] = []
        known: set[tuple[str, frozenset[str]]] = set()
        example = 0
        while example < max_examples and len(findings) < keep_going:
            if deadline is not None and time.monotonic() > deadline:
                break
            example += 1
            response = draw(self.rng, self.capabilities)
            transport = self.rng.choice(TRANSPORTS)
            cut_seed = self.rng.randrange(1 << 30)
            if not judgeable(response, self.capabilities):
                skipped += 1
                continue
            result = self.check(response, self.reads(response, transport, cut_seed))
            if result.verdict is Verdict.PASS:
                continue
            if any(_signature(result) == s and q <= response.quirks for s, q in known):
                continue
            finding = self.shrink(example, response, transport, cut_seed, result)
            key = (_signature(finding.result), finding.response.quirks)
            if key in known:
                continue
            known.add(key)
            if out is not None:
                finding = self._write(out, finding, adapter)
            findings.append(finding)
        return Report(example, skipped, findings)

    def _write(self, out: Path, finding: Finding, adapter: str) -> Finding:
        folder = write_candidate(
            out,
            finding.response,
            finding.ends,
            adapter=adapter,
            seed=self.seed,
            example=finding.example,
            divergence=_detail(finding.result),
        )
        return Finding(finding.example, finding.response, finding.ends, finding.result, folder)

    def shrink(
        self, example: int, response: Response, transport: str, cut_seed: int, first: Result
    ) -> Finding:
        """The smallest response and fewest reads found that disagree as ``first`` did."""
        want = _signature(first)
        results: dict[str, Result] = {}

        def same(candidate: Response, ends: list[int]) -> bool:
            result = self.check(candidate, ends)
            if result.verdict is Verdict.PASS or _signature(result) != want:
                return False
            results["last"] = result
            return True

        # The simplest reads that still show it, then the response under them.
        recipe = transport
        for simpler in ("whole", "lines"):
            if simpler == transport:
                break
            if same(response, self.reads(response, simpler, cut_seed)):
                recipe = simpler
                break
        cut: Callable[[Response], list[int]] = lambda r: self.reads(r, recipe, cut_seed)  # noqa: E731
        response, budget = shrink_response(
            response, lambda r: judgeable(r, self.capabilities) and same(r, cut(r)), SHRINK_BUDGET
        )
        ends, _ = shrink_reads(cut(response), lambda e: same(response, e), budget)
        same(response, ends)  # the result of exactly what is reported
        return Finding(example, response, ends, results.get("last", first), None)
