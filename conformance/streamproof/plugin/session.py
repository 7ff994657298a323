"""One pytest process's streamproof state: corpus, options, engine, results, report hooks."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ..cli.engines import RunEngines
from ..cli.handover import handed_over
from ..corpus.cases import Case, CorpusError, load_corpus
from ..harness.engine import Engine, Result, Verdict
from ..harness.expectations import Expectations, load_expectations
from ..harness.loader import AdapterError
from ..harness.pool import EnginePool
from ..harness.protocol import close_all
from ..harness.selection import KeywordError, Selection
from ..harness.transports import (
    seed_words,
)
from .items import StreamproofCollector, StreamproofItem
from .options import seeds_of, shard_of, transports_of
from .protocol import lean_protocol_applies, run_lean

__all__ = ["StreamproofSession"]


_FAILING = (Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.XPASS)
_PROPERTY = "streamproof"


class StreamproofSession:
    """The state of one pytest process: corpus, options, and the adapter engine."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.relative_paths: dict[str, str] = {}  # case id -> its case.json from the rootdir
        self.spec = str(config.getoption("streamproof"))
        self.transports = transports_of(config.getoption("streamproof_transport"))
        self.timeout: float | None = config.getoption("streamproof_timeout")
        self.fail_on: str = config.getoption("streamproof_fail_on")
        self.http: bool = bool(config.getoption("streamproof_http"))
        corpus_dir = config.getoption("streamproof_corpus")
        handed, self._process = handed_over(config, self.spec, corpus_dir)
        try:
            self.corpus = handed or load_corpus(Path(corpus_dir) if corpus_dir else None)
            self.by_id = {c.id: c for c in self.corpus.cases}
            expect = config.getoption("streamproof_expect")
            self.expectations: Expectations | None = (
                load_expectations(Path(expect), set(self.by_id)) if expect else None
            )
            warning = self.expectations.warning(Path(expect)) if self.expectations else None
            if warning and handed is None:  # (streamproof run said it already)
                sys.stderr.write(warning + "\n")
        except CorpusError as exc:
            raise pytest.UsageError("streamproof: " + "; ".join(exc.problems)) from None
        try:
            self.selection = Selection.parse(
                config.getoption("streamproof_case"),
                config.getoption("streamproof_provider"),
                config.getoption("streamproof_keyword") or "",
            )
        except KeywordError as exc:
            raise pytest.UsageError(f"streamproof: {exc}") from None
        self.shard = shard_of(config.getoption("streamproof_shard"))
        worker_input = getattr(config, "workerinput", None)
        self.seed, self.seeds = seeds_of(config)
        if worker_input is not None and "streamproof_seed" in worker_input:
            self.seed = worker_input["streamproof_seed"]
            self.seeds = self.seeds if len(self.seeds) > 1 else [self.seed]
        if self.http and len(self.seeds) > 1:
            raise pytest.UsageError(
                "streamproof: --streamproof-seeds runs in-process only, not with --streamproof-http"
            )
        if worker_input is not None:
            _end_with_controller()
        self.jobs: int = config.getoption("streamproof_jobs")
        if self.jobs < 1:
            raise pytest.UsageError("streamproof: --streamproof-jobs must be at least 1")
        self.results: list[Result] = []
        self.adapter_name = self.spec
        self._order: list[tuple[Case, str]] = []  # the runs, in the order the items run
        self._engines = RunEngines(
            self.spec,
            self.corpus,
            seed=self.seed,
            seeds=self.seeds,
            timeout=self.timeout,
            expectations=self.expectations,
            http=self.http,
            trace=config.getoption("streamproof_trace"),
            jobs=self.jobs,
            process=self._process,
        )

    def plan(self) -> list[tuple[Case, str]]:
        """The runs this session makes: the selection's, or its shard's share of them."""
        plan = self.selection.plan(self.corpus.cases, self.transports)
        return plan if self.shard is None else self.shard.take(plan)

    # -- engine -----------------------------------------------------------

    def engine(self) -> Engine | EnginePool:
        """What runs the items' cases: the engine, or the pool of ``--streamproof-jobs``."""
        try:
            return self._engines.get(self._order)
        except AdapterError as exc:
            pytest.exit(f"streamproof: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
        except OSError as exc:  # --streamproof-trace at a link, a folder, a missing folder
            said = f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)
            pytest.exit(f"streamproof: {said}", returncode=pytest.ExitCode.USAGE_ERROR)

    def pytest_sessionfinish(self) -> None:
        self._stop()

    def pytest_unconfigure(self) -> None:
        # Also when the session never finished (an interrupt during
        # collection, an internal error): the adapter's processes end here.
        self._stop()

    def _stop(self) -> None:
        for fault in self._engines.stop():  # between cases: no case's verdict
            print(f"streamproof: adapter fault {fault}", file=sys.stderr)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["streamproof_seed"] = self.seed  # xdist: one seed for all workers

    # -- collection -------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, items: list[pytest.Item]
    ) -> None:
        collector = StreamproofCollector.from_parent(
            session, name="streamproof", nodeid="streamproof"
        )
        collector.streamproof = self
        ours = collector.collect()
        # Reported like any collector's result, so "collected N items" counts them
        # and -k / --lf deselect from the right total.
        report = pytest.CollectReport(collector.nodeid, "passed", None, list(ours))
        self.config.hook.pytest_collectreport(report=report)
        items.extend(ours)
        self._lean = lean_protocol_applies(self.config, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # The runs in the order they will run, -k and the like applied: the
        # pool of --streamproof-jobs starts them in this order.
        if self.jobs > 1:
            self._order = [
                (item.case, item.transport)
                for item in session.items
                if isinstance(item, StreamproofItem)
            ]

    _lean = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        if not (self._lean and isinstance(item, StreamproofItem)):
            return None  # pytest's own protocol
        run_lean(item)
        return True

    # -- reporting --------------------------------------------------------

    # What the HTML report gathers from its rows, which may come from xdist
    # workers: the outcomes of failing runs (a Result that crossed a process
    # boundary no longer has one) and the adapter's own name.
    _html_outcomes: dict[tuple[str, str], Any] | None = None
    _html_name: str | None = None
    _html_report: Any = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        if call.when != "call" or not isinstance(item, StreamproofItem) or item.result is None:
            return
        result = item.result
        report = outcome.get_result()
        worker = hasattr(self.config, "workerinput")  # (an xdist worker sends reports as JSON)
        # pytest-html is active when its --html option is set, whatever name
        # it was registered under (an entry point, or -p pytest_html.plugin).
        html = bool(self.config.getoption("htmlpath", None))
        # The result as JSON, for whoever reads it from another process or a
        # file: the xdist controller, the HTML report's rows, JUnit's properties.
        junit = self.config.getoption("xmlpath", None)
        if worker or html or junit:
            report.user_properties.append((_PROPERTY, json.dumps(result.as_dict())))
        if junit:  # JUnit keeps one test per case × transport, the groups as properties
            # (JUnit reads the properties of the teardown report, made from the item's)
            found = [
                (f"group.{group}", verdict) for group, verdict in (result.groups or {}).items()
            ]
            if result.not_exposed:
                found.append(("not_exposed", ",".join(result.not_exposed)))
            item.user_properties.extend(found)
            report.user_properties.extend(found)
        if html:
            self._html_extras(report, result)
        # The outcome has served this report: thousands of items need not keep it.
        item.drop_outcome()
        if not worker:  # read back in this process without the JSON
            report.streamproof_result = item.result

    def _html_extras(self, report: Any, result: Result) -> None:
        """What the HTML report shows of a run: the adapter's name, a failure's details."""
        if self._engines.first is not None:
            report.streamproof_adapter = self._engines.first.process.name
        if result.verdict in _FAILING:
            from pytest_html import extras

            from ..reporting.fragments import failure_html

            report.streamproof_outcome = result.outcome
            report.extras = [
                *getattr(report, "extras", []),
                extras.html(
                    failure_html(result, spec=self.spec, seed=self.reproducing_seed(result))
                ),
            ]

    def reproducing_seed(self, result: Result) -> int:
        """The seed that shows ``result`` again with ``--seed``."""
        if result.seeds and result.seeds["failing"] and result.verdict is not Verdict.XPASS:
            return next((s for s in self.seeds if s in result.seeds["failing"]), self.seed)
        if result.seeds and result.seeds["passing"]:
            return next((s for s in self.seeds if s in result.seeds["passing"]), self.seed)
        return self.seed

    def seed_words(self) -> str:
        """``random seed N`` or ``random seeds 1, 2, 3``."""
        if len(self.seeds) > 1:
            return f"random {seed_words(self.seeds)}"
        return f"random seed {self.seed}"

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: pytest.TestReport, data: list[str]) -> None:
        name = getattr(report, "streamproof_adapter", None)
        if name:
            self._html_name = str(name)
        run = dict(report.user_properties).get(_PROPERTY)
        if run is not None and getattr(report, "streamproof_outcome", None) is not None:
            if self._html_outcomes is None:
                self._html_outcomes = {}
            ran = json.loads(str(run))
            self._html_outcomes[(ran["case"], ran["transport"])] = report.streamproof_outcome
        longrepr = report.longrepr
        if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
            # pytest keeps a skip as (file, line, message); a reader wants the message.
            from html import escape

            reason = str(longrepr[2]).removeprefix("Skipped: ")
            data[:] = [escape(f"skipped: {reason} (see the skips by capability in the summary)")]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        result = report.__dict__.pop("streamproof_result", None)
        if isinstance(result, Result):  # made in this process (an xdist worker's is JSON)
            # (popped: the terminal reporter keeps every report to the end)
            self.results.append(result)
            return
        for name, value in report.user_properties:
            if name == _PROPERTY:
                data = json.loads(str(value))
                self.results.append(Result.from_dict(data, self.by_id[data["case"]]))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        from ..reporting.fragments import failures_html, summary_html

        name = self._html_name or self.adapter_name
        if self._html_report is not None:
            self._html_report.title = f"streamproof: {name} on corpus {self.corpus.version}"
            self._escape_environment(self._html_report)  # (xdist workers have added theirs)
        prefix.append(
            summary_html(
                self.results,
                adapter=name,
                corpus=self.corpus.version,
                seed=self.seed if "random" in self.transports else None,
                seeds=self.seeds if "random" in self.transports else None,
            )
        )
        postfix.append(
            failures_html(
                self.results,
                self._html_outcomes or {},
                spec=self.spec,
                seed=self.seed,
                corpus_root=self.corpus.root,
            )
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        # The adapter's own name is known once it has run; the summary sets it.
        self._html_report = report
        report.title = f"streamproof: {self.adapter_name} on corpus {self.corpus.version}"
        self._escape_environment(report)  # pytest-html has just set it

    def _escape_environment(self, report: Any) -> None:
        """pytest-html's environment table from the metadata, every value escaped.

        pytest-html keeps the metadata itself and shows it with ``innerHTML``;
        it gets an escaped copy, so the terminal and JUnit keep the text as is.
        """
        from ..reporting.fragments import environment_html

        metadata = _metadata(self.config)
        if metadata is not None:
            report.set_data("environment", environment_html(metadata))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        metadata = _metadata(self.config)
        if metadata is not None:
            metadata["streamproof"] = _version()
            metadata["corpus"] = f"{self.corpus.version} (sha256 {self.corpus.sha256})"
            metadata["adapter"] = self.spec
            metadata["transports"] = ", ".join(self.transports)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.results:
            counts: dict[str, int] = {}
            for r in self.results:
                counts[r.verdict.value] = counts.get(r.verdict.value, 0) + 1
            line = ", ".join(f"{n} {v}" for v, n in counts.items())
            runs = len(self.results)  # the unit: a case under one transport, not a case
            line += f" of {runs} case run{'' if runs == 1 else 's'}"
            from ..reporting.wire import terminal_safe  # (the spec and VERSION are anyone's text)

            terminalreporter.write_line(
                terminal_safe(
                    f"streamproof {self.spec} on corpus {self.corpus.version}: {line} "
                    f"({self.seed_words()})"
                )
            )


def _metadata(config: pytest.Config) -> dict[str, Any] | None:
    """pytest-metadata's values for this session, if it is installed."""
    try:
        from pytest_metadata.plugin import metadata_key
    except ImportError:
        return None
    return config.stash.get(metadata_key, None)


def _end_with_controller() -> None:
    """On an xdist worker: once the controlling run is gone, end the adapter's
    processes and this worker (a busy worker would otherwise wait out its case)."""
    controller = os.getppid()

    def watch() -> None:
        while os.getppid() == controller:
            time.sleep(0.25)
        close_all()
        os._exit(1)

    threading.Thread(target=watch, name="streamproof-orphan-watch", daemon=True).start()


def _version() -> str:
    from ..__about__ import __version__

    return __version__
