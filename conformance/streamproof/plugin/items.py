"""The collector and the test item of one case under one transport."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..corpus.cases import SEVERITIES, Case, CorpusError
from ..harness.engine import Result, Verdict
from ..harness.transports import seed_words
from ..reporting.wire import terminal_safe

__all__ = ["StreamproofCollector", "StreamproofFailure", "StreamproofItem"]


class StreamproofFailure(Exception):
    """A case × transport that did not pass; carries its result."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.first_divergence)
        self.result = result


class StreamproofCollector(pytest.Collector):
    streamproof: Any  # the StreamproofSession (plugin.session, which imports this module)

    def collect(self) -> list[pytest.Item]:
        session = self.streamproof
        items: list[pytest.Item] = []
        for case, transport in session.plan():
            name = f"{case.id}[{transport}]"
            # The node id is given whole so that it parses back to the same id
            # that --lf and xdist keep (a bracketed name otherwise does not).
            item = StreamproofItem.from_parent(self, name=name, nodeid=f"{self.nodeid}::{name}")
            item.setup_case(session, case, transport)
            items.append(item)
        return items


class StreamproofItem(pytest.Item):
    """One case under one transport."""

    def setup_case(self, session: Any, case: Case, transport: str) -> None:
        self.streamproof = session
        self.case = case
        self.transport = transport
        self.result: Result | None = None

    def listextrakeywords(self) -> set[str]:
        # -k matches a run by its severity, provider and transport too; worked
        # out when asked rather than kept in a set by each of thousands of items.
        return {
            *super().listextrakeywords(),
            self.case.severity,
            self.case.provider,
            self.transport,
        }

    def runtest(self) -> None:
        try:
            result = self.result = self.streamproof.engine().run(self.case, self.transport)
        except CorpusError as exc:  # a case file changed since the corpus was loaded
            message = "streamproof: " + "; ".join(exc.problems)
            pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)
        if result.verdict is Verdict.PASS:
            return
        if result.verdict is Verdict.SKIP:
            pytest.skip(result.message)
        if result.verdict is Verdict.XFAIL:
            pytest.xfail(result.message)
        fail_on = self.streamproof.fail_on
        if SEVERITIES.index(self.case.severity) > SEVERITIES.index(fail_on):
            pytest.xfail(
                f"{self.case.severity} case below --streamproof-fail-on {fail_on}: "
                f"{result.verdict.value}: {result.first_divergence}"
            )
        raise StreamproofFailure(result)

    def drop_outcome(self) -> None:
        """The outcome served this run's report; thousands of items need not keep it."""
        if self.result is not None:
            self.result = self.result.without_outcome()

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, StreamproofFailure):
            result = excinfo.value.result
            lines = [
                f"{result.verdict.value} [{self.case.severity}] {self.case.id} "
                f"under {self.transport}: {self.case.title}",
                f"  {result.first_divergence}",
            ]
            if self.transport == "random":
                if result.partial and result.seeds is not None:
                    failing = seed_words(result.seeds["failing"])
                    passing = seed_words(result.seeds["passing"])
                    lines.append(f"  fails under {failing}; passes under {passing}")
                seed = self.streamproof.reproducing_seed(result)
                lines.append(f"  reproduce with --seed {seed}")
            return "\n".join(terminal_safe(line) for line in lines)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.case.dir / "case.json", None, f"{self.case.id} [{self.transport}]"

    @property
    def location(self) -> tuple[str, int | None, str]:
        # pytest's, with the case file's path relative to the root worked out
        # once per case rather than once per transport.
        known = self.streamproof.relative_paths
        relative = known.get(self.case.id)
        if relative is None:
            relative = known[self.case.id] = super().location[0]
        return relative, None, f"{self.case.id} [{self.transport}]"
